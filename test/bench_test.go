package test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// scientificCorpus returns the scientific-skills corpus path or skips.
func scientificCorpus(b *testing.B) string {
	root, err := filepath.Abs(filepath.Join(sharedDir, "corpora", "scientific-skills"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(root); err != nil {
		b.Skipf("scientific corpus not present (%v): ../shared is only in the workplace checkout", err)
	}
	return root
}

// BenchmarkStartupToFirstCatalog measures the pipeline from a fresh bus to
// the first catalog.changed for the scientific corpus (130 skills, 864
// files): config → hasher (cold digest cache; the OS page cache is warm) →
// catalog builder.
func BenchmarkStartupToFirstCatalog(b *testing.B) {
	root := scientificCorpus(b)
	home := b.TempDir()
	skills := 0
	for b.Loop() {
		ctx, cancel := context.WithCancel(b.Context())
		bus := events.NewBus(nil)
		sub := func(topic string) <-chan *message.Message {
			ch, err := bus.Subscribe(ctx, topic)
			if err != nil {
				b.Fatal(err)
			}
			return ch
		}
		cfg, err := actors.LoadConfig(actors.ConfigOptions{Args: []string{root}, Home: home, Getenv: func(string) string { return "" }})
		if err != nil {
			b.Fatal(err)
		}
		hin := sub(events.TopicSourcesConfigured)
		cin := actors.CatalogInboxes{Configured: sub(events.TopicSourcesConfigured), Scanned: sub(events.TopicSourceScanned), Overrides: sub(events.TopicOverridesChanged)}
		out := sub(events.TopicCatalogChanged)
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error {
			return actors.NewHasher(hin, bus, &actors.HasherOptions{Bundled: actors.Bundled()}).Run(gctx)
		})
		g.Go(func() error { return actors.NewCatalogBuilder(cin, bus, nil).Run(gctx) })
		g.Go(func() error { return actors.NewConfigActor(cfg, bus, nil).Run(gctx) })
		msg := <-out
		ev, err := events.Decode[events.CatalogChanged](msg)
		msg.Ack()
		if err != nil {
			b.Fatal(err)
		}
		skills = len(ev.Catalog.Skills)
		cancel()
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		bus.Close()
	}
	b.ReportMetric(float64(skills), "skills")
}

// BenchmarkSkillsListWalk measures a client walking every skills/list page
// (50 entries each, full manifests) of the scientific corpus through the
// facade over in-memory transports.
func BenchmarkSkillsListWalk(b *testing.B) {
	root := scientificCorpus(b)
	cfg, err := actors.LoadConfig(actors.ConfigOptions{Args: []string{root}, Home: b.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := actors.Validate(b.Context(), cfg, &actors.HasherOptions{Bundled: actors.Bundled()})
	if err != nil {
		b.Fatal(err)
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always", Bundled: actors.Bundled()})
	facade.SetCatalog(cat)
	srv, err := facade.Server(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	cs := connectInMemory(b, b.Context(), srv)
	n := 0
	for b.Loop() {
		n = len(walkList(b, b.Context(), cs))
	}
	b.ReportMetric(float64(n), "entries")
}
