package hasher

import (
	"context"
	"time"

	"github.com/skilljack/skilljack-mcp/events"
)

// Rescan runs the incremental rescan [Hasher.Run] does for a files.changed
// message, without the bus, for benchmarks: changed nil means a full scan
// that primes the folder cache.
func (h *Hasher) Rescan(ctx context.Context, src events.Source, changed []string) (events.SourceScanned, error) {
	return h.sc.scanKeep(ctx, src, changed, false)
}

// SetRacySlack sets how much older than a scan a file's change time must
// be for its digest to be persisted, until the test ends.
func SetRacySlack(t interface{ Cleanup(func()) }, d time.Duration) {
	old := racySlack
	racySlack = d
	t.Cleanup(func() { racySlack = old })
}

// SetDeferMin sets how many supporting files a root's first scan must miss
// in its digest cache for their hashing to be deferred, until the test
// ends.
func SetDeferMin(t interface{ Cleanup(func()) }, n int) {
	old := deferMin
	deferMin = n
	t.Cleanup(func() { deferMin = old })
}

// HoldRest makes every complete scan that follows a partial one call hold
// first, until the test ends.
func HoldRest(t interface{ Cleanup(func()) }, hold func(context.Context)) {
	holdRest = hold
	t.Cleanup(func() { holdRest = nil })
}

// ScanFirst is the first scan of a root by a first start
// ([scanner.scanFirst]) without the actor: with no digest cache, the
// folders are read ahead of the walk (readahead.go).
func ScanFirst(ctx context.Context, src events.Source, opts *Options) (events.SourceScanned, error) {
	return newScanner(opts).scanFirst(ctx, src)
}

// Replays returns how many rescans of h replayed the walk before
// (replay.go) instead of walking the root.
func (h *Hasher) Replays() uint64 { return h.sc.replays.Load() }
