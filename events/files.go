package events

// TopicFilesChanged is the topic of [FilesChanged].
const TopicFilesChanged = "files.changed"

// FilesChanged is published by the watcher once per debounce window
// (500 ms) and source root: what changed on disk under one local source.
// Consumed by the hasher, which rescans only the skills under Paths (or the
// whole root when Rescan is set) and publishes a new [SourceScanned].
type FilesChanged struct {
	// Seq increases with every FilesChanged the watcher publishes.
	Seq uint64 `json:"seq"`
	// ConfigSeq is the [SourcesConfigured.Seq] the watch was set up for; the
	// hasher ignores changes for a configuration it no longer serves.
	ConfigSeq uint64 `json:"config_seq"`
	// Source is the source whose root the paths are under.
	Source Source `json:"source"`
	// Paths are the absolute paths that were created, written, removed or
	// renamed (files or folders), de-duplicated and sorted. A folder path
	// stands for everything below it.
	Paths []string `json:"paths,omitempty"`
	// Rescan asks for a scan of the whole root: the root appeared or
	// vanished, events may have been dropped, or a periodic reconcile tick
	// fired.
	Rescan bool `json:"rescan,omitempty"`
}
