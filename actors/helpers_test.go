package actors_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
)

func testContextCancelled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

func localSource(root string) events.Source {
	return events.Source{ID: "0", Kind: events.SourceLocal, Location: root, Root: root, Prefix: filepath.Base(root)}
}

// bundledSource is the bundled source as the configuration lists it.
func bundledSource() events.Source {
	return events.Source{ID: config.BundledSourceID, Kind: events.SourceBundled, Location: "bundled", Root: "."}
}
