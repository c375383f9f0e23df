package actors_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// TestPipeline runs config → hasher → catalog builder → notifier over the
// real bus and checks the first catalog.changed.
func TestPipeline(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	skilltest.WriteTree(t, root, map[string]string{
		"ok/SKILL.md":             skilltest.SkillMD("ok", "A valid sibling."),
		"no-frontmatter/SKILL.md": "# No frontmatter here\n",
		"acme/refunds/SKILL.md":   skilltest.SkillMD("refunds", "Handle a refund."),
	})
	f := false
	cfg := config.Config{
		Sources:   []events.Source{localSource(root), bundledSource()},
		Overrides: map[string]events.Override{"skills__ok": {User: &f}},
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		log, logs := eventstest.CaptureLog()
		bus := events.NewBus(nil)
		sub := func(topic string) <-chan *message.Message {
			ch, err := bus.Subscribe(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		hasherIn := sub(events.TopicSourcesConfigured)
		in := catalog.Inboxes{
			Configured: sub(events.TopicSourcesConfigured),
			Scanned:    sub(events.TopicSourceScanned),
			Overrides:  sub(events.TopicOverridesChanged),
		}
		notifierIn := sub(events.TopicCatalogChanged)
		out := sub(events.TopicCatalogChanged)

		runners := []interface{ Run(context.Context) error }{
			config.New(config.Inboxes{}, bus, &config.Options{Config: cfg, Logger: log}),
			hasher.New(hasher.Inboxes{Configured: hasherIn}, bus, &hasher.Options{Bundled: actors.Bundled(), Logger: log}),
			catalog.New(in, bus, &catalog.Options{Logger: log}),
			notifier.New(notifier.Inboxes{Catalog: notifierIn}, bus, &notifier.Options{Logger: log}),
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(runners))
		for _, r := range runners {
			wg.Go(func() { errs <- r.Run(ctx) })
		}

		msg := <-out
		ev, err := eventstest.DecodeCatalog(nil, msg)
		msg.Ack()
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			URI, QN string
			User    bool
		}
		var got []row
		for _, s := range ev.Catalog.Skills {
			got = append(got, row{s.URI, s.QualifiedName, s.UserInvocable})
		}
		want := []row{
			{"skill://skilljack-docs/SKILL.md", "skilljack-docs", true},
			{"skill://skills/acme/refunds/SKILL.md", "skills__acme__refunds", true},
			{"skill://skills/ok/SKILL.md", "skills__ok", false},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("catalog mismatch (-want +got):\n%s", diff)
		}
		if ev.Catalog.Version != 1 || len(ev.Added) != 3 {
			t.Errorf("Version, Added = %d, %v; want 1, three URIs", ev.Catalog.Version, ev.Added)
		}
		synctest.Wait()
		if n := strings.Count(logs.String(), "no-frontmatter/SKILL.md: no YAML frontmatter"); n != 1 {
			t.Errorf("skip lines = %d, want 1:\n%s", n, logs)
		}

		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		}
		bus.Close()
	})
}

// TestActorsStopOnCancel checks that every Run returns nil promptly after
// its context is cancelled, also while idle.
func TestActorsStopOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		pub := eventstest.NewPublisher()
		ch := func() chan *message.Message { return make(chan *message.Message) }
		runners := map[string]interface{ Run(context.Context) error }{
			"config":   config.New(config.Inboxes{}, pub, &config.Options{Config: config.Config{Sources: []events.Source{bundledSource()}}}),
			"hasher":   hasher.New(hasher.Inboxes{Configured: ch()}, pub, nil),
			"catalog":  catalog.New(catalog.Inboxes{Configured: ch(), Scanned: ch(), Overrides: ch()}, pub, nil),
			"notifier": notifier.New(notifier.Inboxes{Catalog: ch()}, pub, nil),
		}
		returned := make(chan string, len(runners))
		for name, r := range runners {
			go func() {
				if err := r.Run(ctx); err != nil {
					t.Errorf("%s Run = %v, want nil", name, err)
				}
				returned <- name
			}()
		}
		synctest.Wait()
		if len(returned) != 0 {
			t.Fatalf("an actor returned before cancel")
		}
		cancel()
		synctest.Wait()
		if len(returned) != len(runners) {
			t.Errorf("%d of %d actors returned after cancel", len(returned), len(runners))
		}
	})
}

// TestPipelineLiveRefresh wires the hasher's files.changed inbox the way
// main does and follows one edit through hasher, catalog builder and
// notifier: a new catalog version with the skill changed, then one
// resources.updated for the edited file carrying that version.
func TestPipelineLiveRefresh(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d"), "a/ref.md": "1"})
	src := localSource(root)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		bus := events.NewBus(nil)
		sub := func(topic string) <-chan *message.Message {
			ch, err := bus.Subscribe(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			return ch
		}
		hasherIn := sub(events.TopicSourcesConfigured)
		hasherChanges := sub(events.TopicFilesChanged)
		in := catalog.Inboxes{
			Configured: sub(events.TopicSourcesConfigured),
			Scanned:    sub(events.TopicSourceScanned),
			Overrides:  sub(events.TopicOverridesChanged),
		}
		notifierIn := sub(events.TopicCatalogChanged)
		catalogs := sub(events.TopicCatalogChanged)
		updates := sub(events.TopicResourcesUpdated)
		runners := []interface{ Run(context.Context) error }{
			config.New(config.Inboxes{}, bus, &config.Options{Config: config.Config{Sources: []events.Source{src}}}),
			hasher.New(hasher.Inboxes{Configured: hasherIn, Changes: hasherChanges}, bus, nil),
			catalog.New(in, bus, nil),
			notifier.New(notifier.Inboxes{Catalog: notifierIn}, bus, nil),
		}
		var wg sync.WaitGroup
		for _, r := range runners {
			wg.Go(func() {
				if err := r.Run(ctx); err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			})
		}
		var last *events.Catalog
		next := func() eventstest.CatalogDiff {
			m := <-catalogs
			m.Ack()
			ev, err := eventstest.DecodeCatalog(last, m)
			if err != nil {
				t.Fatal(err)
			}
			last = ev.Catalog
			return ev
		}
		first := next()

		ref := filepath.Join(root, "a", "ref.md")
		skilltest.WriteTree(t, root, map[string]string{"a/ref.md": "22"})
		if err := events.Publish(bus, events.FilesChanged{Seq: 1, ConfigSeq: 1, Source: src, Paths: []string{ref}}); err != nil {
			t.Fatal(err)
		}
		second := next()
		if want := []string{"skill://skills/a/SKILL.md"}; second.Catalog.Version != first.Catalog.Version+1 || !cmp.Equal(second.Changed, want) {
			t.Errorf("catalog after the edit: version %d, Changed %v; want %d, %v", second.Catalog.Version, second.Changed, first.Catalog.Version+1, want)
		}
		m := <-updates
		m.Ack()
		up, err := events.Decode[events.ResourcesUpdated](m)
		if err != nil {
			t.Fatal(err)
		}
		want := events.ResourcesUpdated{Version: second.Catalog.Version, URIs: []string{"skill://skills/a/ref.md"}}
		if diff := cmp.Diff(want, up); diff != "" {
			t.Errorf("resources.updated mismatch (-want +got):\n%s", diff)
		}
		if f, _ := second.Catalog.File("skill://skills/a/ref.md"); f.File.Digest != skilltest.Digest("22") {
			t.Errorf("served digest = %s, want the edited file's", f.File.Digest)
		}
		cancel()
		wg.Wait()
		bus.Close()
	})
}
