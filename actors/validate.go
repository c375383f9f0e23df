package actors

import (
	"context"
	"fmt"

	"github.com/skilljack/skilljack-mcp/events"
)

// Validate scans every local and bundled source of cfg once, synchronously,
// and returns the catalog they give (version 1), for the
// `skilljack-mcp validate` command: its Diagnostics hold every warning and
// skip the server would log. Remote sources add one warning each, as this
// release does not serve them. opts may be nil; its Logger receives the
// scan's log lines. It blocks until done and returns an error only when ctx
// is done.
func Validate(ctx context.Context, cfg Config, opts *HasherOptions) (*events.Catalog, error) {
	sc := newScanner(opts)
	scans := map[string]events.SourceScanned{}
	var remote []events.Diagnostic
	for _, src := range cfg.Sources {
		switch src.Kind {
		case events.SourceLocal, events.SourceBundled:
			scan, err := sc.scan(ctx, src)
			if err != nil {
				return nil, fmt.Errorf("validating sources: %w", err)
			}
			scans[src.ID] = scan
		default:
			remote = append(remote, events.Diagnostic{File: src.Location, Level: events.LevelWarn,
				Message: fmt.Sprintf("%s: remote sources are not served by this release yet", src.Location)})
		}
	}
	cat := BuildCatalog(1, events.SourcesConfigured{Seq: 1, Sources: cfg.Sources, Static: cfg.Static}, scans, cfg.Overrides)
	if len(remote) > 0 {
		cat = events.NewCatalog(cat.Version, cat.Static, cat.Skills, append(remote, cat.Diagnostics...))
	}
	return cat, nil
}
