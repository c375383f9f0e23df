package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/nats-io/nats.go/jetstream"
)

// names are the JetStream resources of one cluster, all derived from its
// name, so that two deployments can share one NATS.
type names struct {
	lease     string // KV bucket of the leader lease
	blobs     string // object store of file bytes (and of oversized snapshot blobs)
	snapshots string // KV bucket of the snapshot blobs
	pointer   string // stream, and its one subject, of the catalog pointers
}

func namesOf(cluster string) names {
	return names{lease: cluster + "-lease", blobs: cluster + "-blobs", snapshots: cluster + "-snapshots", pointer: cluster + "-pointer"}
}

// leaderKey is the lease's key in the lease bucket.
const leaderKey = "leader"

// pointerHistory is how many pointers the stream keeps: the last one is
// all a replica reads; a few more help whoever debugs a cluster.
const pointerHistory = 16

// resources are the opened JetStream resources of a cluster.
type resources struct {
	js        jetstream.JetStream
	lease     jetstream.KeyValue
	blobs     jetstream.ObjectStore
	snapshots jetstream.KeyValue
	pointer   jetstream.Stream
}

// ensure opens the resources of n, creating those that do not exist yet
// (the first replica creates them; the lease TTL is the one the lease
// bucket was created with). An existing resource is opened as it is,
// never updated: an update races with consumers being created in the
// NATS server itself (seen with its race detector). It fails when NATS
// cannot be reached or has no JetStream.
//
// The order matters on a NATS that lost its storage, where replicas create
// the resources again while others campaign: the object store and the
// snapshot bucket come before the lease bucket, so that no replica takes
// the lease and claims before they exist (nats.go's object store List,
// given a stream created between its two requests, waits forever for its
// last entry); the pointer stream comes last, so that while it is missing
// the importer's poll calls ensure again (see [Importer]) until every
// resource exists, even if an earlier attempt ran out of time midway.
func ensure(ctx context.Context, js jetstream.JetStream, n names, lease time.Duration) (*resources, error) {
	obj, err := openOrCreate(ctx, n.blobs, jetstream.ErrBucketNotFound, jetstream.ErrBucketExists,
		func(ctx context.Context) (jetstream.ObjectStore, error) { return js.ObjectStore(ctx, n.blobs) },
		func(ctx context.Context) (jetstream.ObjectStore, error) {
			return js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: n.blobs, Storage: jetstream.FileStorage})
		})
	if err != nil {
		return nil, err
	}
	snaps, err := openOrCreate(ctx, n.snapshots, jetstream.ErrBucketNotFound, jetstream.ErrBucketExists,
		func(ctx context.Context) (jetstream.KeyValue, error) { return js.KeyValue(ctx, n.snapshots) },
		func(ctx context.Context) (jetstream.KeyValue, error) {
			return js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: n.snapshots, History: 1, Storage: jetstream.FileStorage})
		})
	if err != nil {
		return nil, err
	}
	kv, err := openOrCreate(ctx, n.lease, jetstream.ErrBucketNotFound, jetstream.ErrBucketExists,
		func(ctx context.Context) (jetstream.KeyValue, error) { return js.KeyValue(ctx, n.lease) },
		func(ctx context.Context) (jetstream.KeyValue, error) {
			return js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: n.lease, TTL: lease, History: 1, Storage: jetstream.FileStorage})
		})
	if err != nil {
		return nil, err
	}
	st, err := openOrCreate(ctx, n.pointer, jetstream.ErrStreamNotFound, jetstream.ErrStreamNameAlreadyInUse,
		func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, n.pointer) },
		func(ctx context.Context) (jetstream.Stream, error) {
			return js.CreateStream(ctx, jetstream.StreamConfig{Name: n.pointer, Subjects: []string{n.pointer},
				MaxMsgsPerSubject: pointerHistory, Storage: jetstream.FileStorage})
		})
	if err != nil {
		return nil, err
	}
	return &resources{js: js, lease: kv, blobs: obj, snapshots: snaps, pointer: st}, nil
}

// openOrCreate opens the resource named name, or creates it when open
// fails with notFound; when create fails with exists (another replica
// created it meanwhile), it opens it again.
func openOrCreate[T any](ctx context.Context, name string, notFound, exists error, open, create func(context.Context) (T, error)) (T, error) {
	v, err := open(ctx)
	if errors.Is(err, notFound) {
		v, err = create(ctx)
		if errors.Is(err, exists) {
			v, err = open(ctx)
		}
	}
	if err != nil {
		return v, fmt.Errorf("opening %s: %w", name, err)
	}
	return v, nil
}

// Pointer is the message a leader publishes for every cluster catalog
// version on the pointer stream (issue 16): small, whatever the catalog's
// size, as NATS messages are capped at 1 MiB by default.
type Pointer struct {
	// Version is the cluster-wide catalog version; it only increases. 0 is
	// a new leader's claim on an empty cluster: no catalog yet.
	Version uint64 `json:"version"`
	// Snapshot is the digest of the [events.CatalogSnapshot] JSON in the
	// object store; "" with Version 0.
	Snapshot string `json:"snapshot,omitempty"`
	// Term is the publishing leader's term: the lease revision it was
	// elected at.
	Term uint64 `json:"term"`
	// Node is the publishing leader.
	Node string `json:"node"`
	// Sources are the locations of the sources the publishing leader was
	// started with, in priority order ([Options.Sources]); nil from a
	// leader that does not say. A follower started with others warns.
	Sources []string `json:"sources,omitempty"`
}

// same reports whether p and q are the same pointer.
func (p Pointer) same(q Pointer) bool {
	return p.Version == q.Version && p.Snapshot == q.Snapshot && p.Term == q.Term && p.Node == q.Node &&
		slices.Equal(p.Sources, q.Sources)
}

// lastPointer returns the last pointer of the stream and its sequence; a
// stream without one gives the zero pointer and sequence 0.
func lastPointer(ctx context.Context, st jetstream.Stream, subject string) (Pointer, uint64, error) {
	raw, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Pointer{}, 0, nil
	}
	if err != nil {
		return Pointer{}, 0, fmt.Errorf("reading the last pointer: %w", err)
	}
	var p Pointer
	if err := json.Unmarshal(raw.Data, &p); err != nil {
		return Pointer{}, 0, fmt.Errorf("decoding pointer %d: %w", raw.Sequence, err)
	}
	return p, raw.Sequence, nil
}

// digestOf returns the digest name of data: "sha256:<hex>".
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// getBlob returns the object named digest, checked against it.
func getBlob(ctx context.Context, obj jetstream.ObjectStore, digest string) ([]byte, error) {
	data, err := obj.GetBytes(ctx, digest)
	if err != nil {
		return nil, fmt.Errorf("getting %s from the object store: %w", digest, err)
	}
	if got := digestOf(data); got != digest {
		return nil, fmt.Errorf("object %s holds bytes of digest %s", digest, got)
	}
	return data, nil
}

// maxKVBlob is the largest snapshot blob kept in the snapshot bucket; a
// larger one (a skill with a huge frontmatter) goes to the object store,
// as a NATS message is capped at 1 MiB by default. Snapshot blobs live in
// a KV bucket because a KV read or write is one round trip: measured on
// an embedded server, 2,000 reads of 2.5 KB took 67 ms from KV and 710 ms
// from the object store (which opens a consumer per object), and a
// follower reads one blob per skill when it starts.
const maxKVBlob = 512 << 10

// snapshotKey is the KV key of a snapshot blob: the hex of its digest
// (KV keys allow no ':').
func snapshotKey(digest string) string { return strings.TrimPrefix(digest, "sha256:") }

// putSnapshotBlob stores a snapshot blob under its digest d.
func putSnapshotBlob(ctx context.Context, res *resources, d string, data []byte) error {
	var err error
	if len(data) > maxKVBlob {
		_, err = res.blobs.PutBytes(ctx, d, data)
	} else {
		_, err = res.snapshots.Put(ctx, snapshotKey(d), data)
	}
	if err != nil {
		return fmt.Errorf("storing %s: %w", d, err)
	}
	return nil
}

// getSnapshotBlob returns the snapshot blob named digest, checked
// against it.
func getSnapshotBlob(ctx context.Context, res *resources, digest string) ([]byte, error) {
	e, err := res.snapshots.Get(ctx, snapshotKey(digest))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return getBlob(ctx, res.blobs, digest)
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s from the snapshot bucket: %w", digest, err)
	}
	if got := digestOf(e.Value()); got != digest {
		return nil, fmt.Errorf("snapshot blob %s holds bytes of digest %s", digest, got)
	}
	return e.Value(), nil
}
