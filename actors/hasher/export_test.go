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
