// Package cluster runs skilljack as one of N HTTP replicas sharing one
// catalog through NATS JetStream (issue 16): one producer at a time polls
// upstream and watches the sources; every replica serves the same catalog
// version, numbered cluster-wide.
//
// # Parts
//
//   - The lease ([Node]): a JetStream KV bucket "<name>-lease" whose key
//     "leader" lives for the lease TTL. A replica creates it when absent and
//     then renews it every third of the TTL by compare-and-set on its
//     revision; a renewal refused (someone else holds it) steps down at
//     once, and one that cannot reach NATS steps down two thirds of the TTL
//     after the last renewal that worked. The revision at which the lease
//     was taken is the leader's term. While leading, the replica runs the
//     pipeline's producers ([Options.Lead]: config, watcher, fetchers,
//     hasher, builder) and the [Exporter]; it stops them when the lease is
//     lost. At shutdown a leader deletes the lease, so the next one takes
//     over at once.
//   - The [Exporter] (leader only) takes the local builder's catalogs,
//     uploads file bytes not stored yet to the object store "<name>-blobs"
//     (named by their digest, "sha256:<hex>"), stores the catalog as a
//     content-addressed snapshot ([events.WriteCatalogSnapshot]: a
//     one-skill change moves that skill, its chunk of about 64 skill
//     digests and the snapshot's list of chunk digests) in the KV bucket
//     "<name>-snapshots" (keyed by the digest's hex; a KV read is one round
//     trip, ten times faster than an object store read, and a follower
//     starts by reading one blob per skill), and publishes a
//     [Pointer] {version, snapshot digest, term} on the stream
//     "<name>-pointer" through watermill-nats. Versions only increase,
//     also across leaders: a new leader first re-publishes the last
//     pointer under its own term (the claim) and numbers its catalogs from
//     that version; a catalog whose snapshot equals the current one is not
//     published. Fencing: every publish expects the stream's last sequence
//     to be the one this leader last saw (Nats-Expected-Last-Subject-Sequence),
//     so a deposed leader's publish is refused once the new one has
//     claimed, and the refusal stops it ([ErrFenced]). A new leader
//     holds each remote source's skills (GitHub, publishers) as the
//     cluster serves them until its own fetcher has synced that source in
//     this term and a catalog built from a later scan arrives: it never
//     polled while it followed, so its copies are empty or old, and
//     upstream may be down (hold.go).
//   - The [Importer] (every replica, the leader too) takes the last pointer
//     at start, fetches its snapshot and publishes it as the catalog to
//     serve ([events.TopicCatalogServed]), then follows new pointers,
//     dropping any whose version is not above the one served (a
//     redelivered or late message). It follows through a watermill-nats
//     subscriber (deliver last per subject, explicit acks after the import)
//     and also reads the last pointer every reconcile period, so that it
//     converges after NATS restarts even if its consumer was lost. A
//     follower started with other sources than the leader (each pointer
//     carries its leader's, [Options.Sources]) warns once per leader.
//   - The [FileSource] serves file bytes to the facade by digest from the
//     object store, each checked and cached on disk under a size cap.
//
// # NATS unreachable
//
// A replica that cannot reach NATS at start serves nothing: /healthz stays
// 503 "starting" and the replica retries, logging why, until NATS answers.
// One that NATS refuses (its token, credentials or certificate) is treated
// alike: it retries, logging the reason and the setting to check once
// ([Connect]), and joins once NATS accepts it.
// It keeps no local copy of the last snapshot, so it never serves a
// catalog of unknown age that the cluster may have replaced. A replica
// that loses NATS while running keeps serving its last catalog (and the
// files it has cached) and converges when NATS is back; a leader that
// cannot renew its lease steps down, as another replica may take it.
package cluster
