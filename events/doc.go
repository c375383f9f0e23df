// Package events is the vocabulary of the skilljack actor pipeline: the
// event structs that actors publish on the bus, their topic constants, the
// one codec that turns them into watermill messages and back, the bus
// itself, the [Catalog] value the MCP facade serves, and the trace recorder
// and replayer.
//
// # Flow
//
//	config ── sources.configured ──> watcher ── files.changed ──> hasher
//	config ── sources.configured ──> hasher ── source.scanned ──> catalog builder
//	config ── overrides.changed ──────────────────────────────> catalog builder
//	catalog builder ── catalog.changed ──> notifier, MCP facade
//	notifier ── resources.updated ──> MCP facade
//
// Every event is immutable once published: publishers do not touch it
// afterwards and consumers treat it, including its slices and maps, as
// read-only. The two big ones, [CatalogChanged] and [SourceScanned], are
// not even copied: the message carries a reference to the published value
// and every subscriber decodes that same value (ref.go); a trace records
// them as content-addressed snapshots, each distinct skill once
// (snapshot.go).
//
// # Bus
//
// [Bus] never makes a publisher wait for a consumer: Publish queues the
// message for every current subscriber and returns, and each subscription
// is delivered in order by its own goroutine, one message per ack. Order is
// kept per topic (one publisher's events arrive in the order it published
// them, at every subscriber), not across topics nor between publishers: an
// actor with several inboxes, or fed by several publishers (the hasher's
// scan jobs), sees them interleaved in any order. So every event still
// carries a sequence or version number that consumers compare before
// overwriting state. The bus is not persistent (subscribe before anything
// publishes), and [Bus.Close] drops what is still queued.
//
// This package imports no other package of this module.
package events
