package actors_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// TestPipelineServesPersistedCatalog is issue 12 "Serve the last catalog at
// once", end to end through the pipeline: a restart publishes the catalog
// the last run persisted before its scan ends, then revalidates it; a
// SKILL.md edited while no process ran becomes the next version, and the
// notifier announces its URI with the usual resources.updated.
func TestPipelineServesPersistedCatalog(t *testing.T) {
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{
		"a/SKILL.md": skilltest.SkillMD("a", "Before."), "a/ref.md": "1",
		"b/SKILL.md": skilltest.SkillMD("b", "Stays."),
	})
	cfg := config.Config{Sources: []events.Source{localSource(root)}}
	run := func() (updates <-chan events.ResourcesUpdated, cats <-chan *events.Catalog, stop func()) {
		ctx, cancel := context.WithCancel(t.Context())
		bus := events.NewBus(nil)
		catCh := make(chan *events.Catalog, 10)
		upCh := make(chan events.ResourcesUpdated, 10)
		cs, err := bus.Subscribe(ctx, events.TopicCatalogChanged)
		if err != nil {
			t.Fatal(err)
		}
		us, err := bus.Subscribe(ctx, events.TopicResourcesUpdated)
		if err != nil {
			t.Fatal(err)
		}
		p, err := actors.NewPipeline(ctx, bus, bus, cfg, &actors.PipelineOptions{DigestCache: cache, NotifyDebounce: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		go func() {
			for m := range cs {
				m.Ack()
				if ev, err := events.Decode[events.CatalogChanged](m); err == nil {
					catCh <- ev.Catalog
				}
			}
		}()
		go func() {
			for m := range us {
				m.Ack()
				if ev, err := events.Decode[events.ResourcesUpdated](m); err == nil {
					upCh <- ev
				}
			}
		}()
		return upCh, catCh, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("pipeline: %v", err)
			}
			bus.Close()
		}
	}
	next := func(ch <-chan *events.Catalog) *events.Catalog {
		select {
		case c := <-ch:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no catalog within 10 s")
			return nil
		}
	}
	desc := func(c *events.Catalog, name string) string {
		if sk := c.SkillByName(name); sk != nil {
			return sk.Description
		}
		return "(none)"
	}

	_, cats, stop := run()
	first := next(cats)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if m, _ := filepath.Glob(filepath.Join(cache, "catalog-*.bin")); len(m) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no persisted catalog within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()

	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "After, edited while no server ran.")})
	updates, cats, stop := run()
	defer stop()
	stale := next(cats)
	if diff := cmp.Diff(first.Skills, stale.Skills); diff != "" {
		t.Errorf("restart's first catalog is not the persisted one (-persisted +served):\n%s", diff)
	}
	fresh := next(cats)
	if fresh.Version != stale.Version+1 || desc(fresh, "skills__a") != "After, edited while no server ran." || desc(fresh, "skills__b") != "Stays." {
		t.Fatalf("revalidated catalog: version %d, a %q, b %q", fresh.Version, desc(fresh, "skills__a"), desc(fresh, "skills__b"))
	}
	select {
	case up := <-updates:
		if want := (events.ResourcesUpdated{Version: fresh.Version, URIs: []string{events.IndexURI, "skill://skills/a/SKILL.md"}}); !cmp.Equal(want, up, cmpopts.EquateEmpty()) {
			t.Errorf("resources.updated = %+v, want %+v", up, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resources.updated for the SKILL.md edited while down")
	}
	if data, err := os.ReadFile(filepath.Join(root, "a", "SKILL.md")); err != nil || fresh.SkillByName("skills__a").Files[0].Digest != skilltest.Digest(string(data)) {
		t.Errorf("revalidated digest does not describe the file on disk (%v)", err)
	}
}
