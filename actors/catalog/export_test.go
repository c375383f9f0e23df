package catalog

import (
	"log/slog"

	"github.com/skilljack/skilljack-mcp/events"
)

// DiffCatalogs lists the SKILL.md URIs added to, removed from and changed
// between prev (nil: nothing before) and next. The builder published these
// lists with every catalog until the notifier became the one authority on
// what changed (issue 11 item 5); tests still check the builder's versions
// by them.
func DiffCatalogs(prev, next *events.Catalog) (added, removed, changed []string) {
	if prev == nil {
		for _, s := range next.Skills {
			added = append(added, s.URI)
		}
		return added, nil, nil
	}
	for _, s := range next.Skills {
		old := prev.SkillByURI(s.URI)
		switch {
		case old == nil:
			added = append(added, s.URI)
		case !sameSkill(old, &s):
			changed = append(changed, s.URI)
		}
	}
	for _, s := range prev.Skills {
		if next.SkillByURI(s.URI) == nil {
			removed = append(removed, s.URI)
		}
	}
	return added, removed, changed
}

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

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
