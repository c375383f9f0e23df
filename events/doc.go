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
// read-only. The bus does not guarantee order, so every event carries a
// sequence or version number that consumers compare before overwriting
// state.
//
// This package imports no other package of this module.
package events
