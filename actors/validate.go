package actors

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/events"
)

// Validate scans every source of cfg once, synchronously — a remote source
// in its cache folder, without fetching — and returns the catalog they give
// (version 1), for the `skilljack-mcp validate` command: its Diagnostics
// hold every warning and skip the server would log. A remote source with no
// cached copy yet adds one warning. opts may be nil; its Logger receives the
// scan's log lines. It blocks until done and returns an error only when ctx
// is done.
func Validate(ctx context.Context, cfg config.Config, opts *hasher.Options) (*events.Catalog, error) {
	scans := map[string]events.SourceScanned{}
	var remote []events.Diagnostic
	for _, src := range cfg.Sources {
		scan, err := hasher.Scan(ctx, src, opts)
		if err != nil {
			return nil, fmt.Errorf("validating sources: %w", err)
		}
		scans[src.ID] = scan
		if src.Kind == events.SourceGitHub || src.Kind == events.SourceWellKnown {
			if _, err := os.Stat(src.Root); err != nil {
				remote = append(remote, events.Diagnostic{File: src.Location, Level: events.LevelWarn, Rule: events.RuleNotCached,
					Message: fmt.Sprintf("%s: no cached copy at %s yet; validate checks the cache and does not fetch (the server syncs it)", src.Location, src.Root)})
			}
		}
	}
	cat := catalog.Build(1, events.SourcesConfigured{Seq: 1, Sources: cfg.Sources, Static: cfg.Static}, scans, cfg.Overrides)
	if len(remote) > 0 {
		cat = events.NewCatalog(cat.Version, cat.Static, cat.Skills, append(remote, cat.Diagnostics...))
	}
	return cat, nil
}

// Counts says how many skills of cat come from each source of cfg, the
// bundled ones apart: "3 skills from ~/my-skills, 1 bundled" (issue 13
// item 1), with "0 skills from X" for a configured source that serves
// none, so a source that yields nothing is visible in the count.
func Counts(cat *events.Catalog, sources []events.Source) string {
	n := map[string]int{}
	if cat != nil {
		for _, sk := range cat.Skills {
			n[sk.Source.ID]++
		}
	}
	var parts []string
	bundled := 0
	for _, src := range sources {
		if src.Kind == events.SourceBundled {
			bundled += n[src.ID]
			continue
		}
		parts = append(parts, fmt.Sprintf("%s from %s", plural(n[src.ID], "skill"), src.Location))
	}
	parts = append(parts, fmt.Sprintf("%d bundled", bundled))
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// SourceDiagnostics splits the warnings of [config.Load] for validate and
// list: each warning about one configured source that cites a rule (a
// source refused, [events.RuleSourceRefused]; a prefix renamed) becomes a
// finding about that source as written, Unserved when the source is
// refused; rest are the other warnings, for the log.
func SourceDiagnostics(warnings []config.Warning) (diags []events.Diagnostic, rest []config.Warning) {
	for _, w := range warnings {
		if w.Source == "" || w.Rule == "" {
			rest = append(rest, w)
			continue
		}
		diags = append(diags, events.Diagnostic{File: w.Source, Level: events.LevelWarn, Rule: w.Rule,
			Unserved: w.Rule == events.RuleSourceRefused, Message: w.Message})
	}
	return diags, rest
}
