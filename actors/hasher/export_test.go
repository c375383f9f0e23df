package hasher

import (
	"context"

	"github.com/skilljack/skilljack-mcp/events"
)

// Rescan runs the incremental rescan [Hasher.Run] does for a files.changed
// message, without the bus, for benchmarks: changed nil means a full scan
// that primes the folder cache.
func (h *Hasher) Rescan(ctx context.Context, src events.Source, changed []string) (events.SourceScanned, error) {
	return h.sc.scanKeep(ctx, src, changed, false)
}
