// Package actors holds the actors of the skilljack pipeline, one per file,
// and the pure helpers they need:
//
//   - [ConfigActor] publishes the configuration [LoadConfig] worked out;
//   - [Watcher] watches every local source root (rjeczalik/notify) and
//     publishes debounced files.changed events, plus a periodic rescan;
//   - [Hasher] scans local and bundled sources for skill folders and hashes
//     their files, with a digest cache; on files.changed it rescans only
//     the folders a change touched, with the same result as a full scan;
//   - [CatalogBuilder] validates the scanned skills and publishes each new
//     catalog version ([catalog.Build] is its pure core), only when something
//     changed, with a fixed skill set in static mode;
//   - [Notifier] turns catalog versions into resource update notices,
//     debounced per URI ([notifier.DefaultDebounce]): the one component that
//     decides which resources (skill://index.json included) clients hear
//     changed, and which went with their skill.
//
// Actors talk only through the bus of package events: every inbox is
// subscribed before any actor starts, and the channels are passed in.
// [NewPipeline] does that wiring for main and the end-to-end tests. Each Run loop
// owns its actor's state, acks every message exactly once and never nacks.
// [Validate] runs the scan and build once, without a bus, for the
// `skilljack-mcp validate` command. [Bundled] is the file system of the
// skills embedded in the binary.
//
// Loggers passed in are used as they are: the caller scopes them
// (log.With("actor", "hasher")); nil discards.
package actors
