package events

import "time"

// TopicSourceSynced is the topic of [SourceSynced].
const TopicSourceSynced = "source.synced"

// SourceSynced is published by a remote fetcher (the well-known fetcher or
// the GitHub poller) after a sync that changed the cached copy of a remote
// source on disk under [Source.Root]. Consumed by the hasher, which rescans
// the paths that changed (or the whole root when Rescan is set) and
// publishes a new [SourceScanned]. A sync that found nothing new (304, same
// digests, same commit) publishes nothing; one that changed nothing but
// failed for some skills publishes Errors with no Paths.
type SourceSynced struct {
	// Seq increases with every SourceSynced one fetcher publishes.
	Seq uint64 `json:"seq"`
	// ConfigSeq is the [SourcesConfigured.Seq] the source belongs to; the
	// hasher ignores syncs for a configuration it no longer serves.
	ConfigSeq uint64 `json:"config_seq"`
	// Source is the synced source, as configured.
	Source Source `json:"source"`
	// Revision identifies what is now cached: "sha256:…" of the publisher's
	// index, or the commit SHA of a GitHub repository.
	Revision string `json:"revision"`
	// Paths are the absolute folders under Source.Root that were replaced,
	// added or removed (one per skill), sorted. A folder stands for
	// everything below it.
	Paths []string `json:"paths,omitempty"`
	// Rescan asks for a scan of the whole root (the whole tree was swapped).
	Rescan bool `json:"rescan,omitempty"`
	// Synced names the skills (index entry names) written by this sync.
	Synced []string `json:"synced,omitempty"`
	// Removed names the skills pruned because the index dropped them.
	Removed []string `json:"removed,omitempty"`
	// Errors maps a skill name to why it was not updated (its previous copy,
	// if any, is kept).
	Errors map[string]string `json:"errors,omitempty"`
	// SyncedAt is when the sync finished.
	SyncedAt time.Time `json:"synced_at"`
}

// TopicSourceFailed is the topic of [SourceFailed].
const TopicSourceFailed = "source.failed"

// SourceFailed is published by a remote fetcher when a sync of a source
// failed as a whole (network, status, disallowed redirect, bad index, bad
// archive, rate limit). The last good copy stays cached and served; nothing
// consumes it in the pipeline but traces and tests.
type SourceFailed struct {
	// Seq increases with every SourceFailed one fetcher publishes.
	Seq uint64 `json:"seq"`
	// ConfigSeq is the [SourcesConfigured.Seq] the source belongs to.
	ConfigSeq uint64 `json:"config_seq"`
	// Source is the source whose sync failed.
	Source Source `json:"source"`
	// Error says what failed, naming the URL; it never holds a token.
	Error string `json:"error"`
	// RetryAt is when the next attempt is due (the next poll, or later when
	// a rate limit said so); zero when polling is off.
	RetryAt time.Time `json:"retry_at"`
	// FailedAt is when the sync failed.
	FailedAt time.Time `json:"failed_at"`
}

// TopicSyncRequested is the topic of [SyncRequested].
const TopicSyncRequested = "sync.requested"

// SyncRequested is a command: sync remote sources now rather than at the
// next poll. Published by tests (and a future refresh command); consumed
// by the well-known fetcher and the GitHub poller, each of which syncs the
// matching sources of its current configuration. A request made while a
// sync of a source runs gives one more sync after it; requests coalesce. A
// pinned GitHub source already cached is not checked, and one under a rate
// limit ignores the request until the limit's reset time. A request that
// arrives before the first configuration is covered by the first sync.
type SyncRequested struct {
	// SourceID names the one source to sync ([Source.ID]); empty asks for
	// every remote source.
	SourceID string `json:"source_id,omitempty"`
	// RequestedAt is when the sync was asked for.
	RequestedAt time.Time `json:"requested_at"`
}
