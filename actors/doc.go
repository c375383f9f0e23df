// Package actors wires the actors of the skilljack pipeline: [NewPipeline]
// subscribes every inbox and builds the actors, [Pipeline.Run] runs them,
// and [Validate] runs the scan and build once, without a bus, for the
// `skilljack-mcp validate` command. [Bundled] is the file system of the
// skills embedded in the binary.
//
// # Layout
//
// This package is the wiring only. Each actor has a package of its own
// below actors/:
//
//   - config: the one owner of the configuration: the settings table of
//     every flag, environment variable and config-file key
//     ([config.Load], [config.Resolve]), and the config actor, which
//     watches ~/.skilljack/config.json, applies config.command events and
//     publishes sources.configured and overrides.changed;
//   - watch: watches every local source root (rjeczalik/notify, imported
//     nowhere else) and publishes debounced files.changed events, plus a
//     periodic rescan;
//   - hasher: scans sources for skill folders and hashes their files, with
//     a digest cache; on files.changed it rescans only the folders a change
//     touched, with the same result as a full scan;
//   - catalog: validates the scanned skills and publishes each new catalog
//     version ([catalog.Build] is its core), only when something changed,
//     with a fixed skill set in static mode; it persists the last catalog
//     and, at a start with the same sources, publishes it before any scan
//     (stale-while-revalidate: the scans then publish what differs);
//   - notifier: turns catalog versions into resource update notices, a
//     URI's first change at once and later ones at most once per window
//     ([notifier.DefaultDebounce]): the one component
//     that decides which resources (skill://index.json included) clients
//     hear changed, and which went with their skill;
//   - remote/wellknown and remote/github: the publisher fetcher and the
//     GitHub poller, which keep the cache folders of remote sources in
//     sync and publish source.synced; both also obey sync.requested;
//   - cluster (issue 16, with --cluster only): the lease, the leader's
//     exporter and every replica's importer over NATS JetStream
//     ([cluster.Node]). It departs from the one shape below in one way: it
//     subscribes the exporter's inbox itself each time the replica becomes
//     leader, as the leader's producers are subscribed and run ([NewPipeline]
//     hands it a function that does so) only while it leads.
//
// Two packages hold no actor: actors/skill, the pure rules several actors
// share (frontmatter, names, skill paths and URIs, discovery predicates,
// containment, the one file opener), and actors/remote, the cache plumbing
// both fetchers share (folder claims and swaps, atomic writes, tree stamps,
// crash-leftover cleanup). An actor package imports events, fetch, archive,
// actors/skill, actors/remote and actors/config's types, never another
// actor package; actors/skill and actors/remote import no actor package;
// imports_test.go checks it.
//
// # One actor shape
//
// Every actor package follows the same shape:
//
//	type Inboxes struct{ Configured, ... <-chan *message.Message }
//	type Options struct{ Logger *slog.Logger; ... }
//	func New(in Inboxes, pub message.Publisher, opts *Options) *Actor
//	func (a *Actor) Run(ctx context.Context) error
//
// with these rules:
//
//   - Inboxes holds the subscriptions the actor reads. Actors do not
//     subscribe: the wiring ([NewPipeline], or a test) subscribes every
//     inbox before anything publishes, because the bus is not persistent.
//     New panics on a nil required inbox or a nil publisher.
//   - Options is copied; nil means defaults, a nil Logger discards. The
//     caller scopes the logger (log.With("actor", "hasher")).
//   - Run handles messages until ctx is done or every inbox is closed and
//     then returns nil; an error only for a fault that should stop the
//     process. It does not return while a goroutine it started is alive.
//   - The actor's state lives in Run's goroutine (a run struct or locals
//     that only Run touches); nothing else reads or writes it, and the
//     actor exposes no method other code calls to change it: a command is
//     an event on the bus.
//   - Each message is acked exactly once, promptly, and never nacked. A
//     loop case is one line with [events.Receive], which decodes and acks;
//     [events.Handle] is for the rare case that must finish its work before
//     the ack (the watcher sets its watches before it acks a
//     configuration).
//   - Handlers are idempotent and do not assume arrival order: they compare
//     sequence numbers (Seq, ConfigSeq, Version) before overwriting state.
//   - Publishing goes through [message.Publisher] and never waits for a
//     consumer ([events.Bus]).
package actors
