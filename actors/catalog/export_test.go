package catalog

import (
	"log/slog"
	"time"

	"github.com/skilljack/skilljack-mcp/events"
)

// BenchBuilder drives a [Builder] without a bus, for benchmarks.
type BenchBuilder struct{ b *Builder }

// NewBenchBuilder returns a builder holding cfg and no overrides.
func NewBenchBuilder(cfg events.SourcesConfigured) *BenchBuilder {
	b := &Builder{scans: map[string]events.SourceScanned{}, logged: map[diagKey]bool{}, log: discardLogger(), memo: memo{sources: map[string]*sourceMemo{}}}
	b.cfg = cfg
	b.overrides = events.OverridesChanged{Seq: 1}
	return &BenchBuilder{b}
}

// Scan takes scan and returns the catalog version it builds, or nil when
// it builds none. Nothing is published.
func (bb *BenchBuilder) Scan(scan events.SourceScanned) *events.Catalog {
	if !bb.b.takeScan(scan) {
		return nil
	}
	return bb.b.next()
}

// Patched reports whether the last Scan took the builder's incremental
// path (patch.go).
func (bb *BenchBuilder) Patched() bool { return bb.b.patched }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// SetPersistDelay sets how long after a publish the catalog is persisted,
// for the duration of the test.
func SetPersistDelay(t interface{ Cleanup(func()) }, d time.Duration) {
	old := persistDelay
	persistDelay = d
	t.Cleanup(func() { persistDelay = old })
}
