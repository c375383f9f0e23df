package test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// TestIndexNotifiedWhenItsBodyChanges (issue 11 item 5): the notifier alone
// decides resources/updated for skill://index.json, from the catalog, while
// the facade renders the body. Over the bus, a subscriber hears of the index
// exactly once for each catalog version that changed the body it reads, and
// never otherwise, so the two rules cannot drift apart unnoticed.
func TestIndexNotifiedWhenItsBodyChanges(t *testing.T) {
	skill := func(name, desc, md string, listed bool, files ...string) events.Skill {
		s := events.Skill{QualifiedName: "skills__" + name, Name: name, Description: desc, SkillPath: "skills/" + name,
			URI: "skill://skills/" + name + "/SKILL.md", Dir: "/nonexistent/" + name, Listed: listed, ModelInvocable: true,
			Files: []events.File{{Path: "SKILL.md", Digest: hexDigest([]byte(md)), Size: int64(len(md))}}}
		for _, f := range files {
			s.Files = append(s.Files, events.File{Path: f + ".md", Digest: hexDigest([]byte(f)), Size: int64(len(f))})
		}
		return s
	}
	// cp copies a skill into the next catalog: each version gets its own.
	cp := func(s events.Skill) *events.Skill { return &s }
	a := skill("a", "A.", "a", true, "ref")
	b := skill("b", "B.", "b", true)
	h := skill("h", "Hidden.", "h", false)
	steps := []struct {
		name string
		edit func(a, b, h *events.Skill) []*events.Skill // nil skills: a, b, h as edited
	}{
		{"a supporting file edited", func(a, _, _ *events.Skill) []*events.Skill { a.Files[1].Digest = hexDigest([]byte("ref2")); return nil }},
		{"a's SKILL.md edited", func(a, _, _ *events.Skill) []*events.Skill { a.Files[0].Digest = hexDigest([]byte("a2")); return nil }},
		{"b taken out of skills/list", func(_, b, _ *events.Skill) []*events.Skill { b.Listed = false; return nil }},
		{"an unlisted SKILL.md edited", func(_, _, h *events.Skill) []*events.Skill { h.Files[0].Digest = hexDigest([]byte("h2")); return nil }},
		{"a's description alone changed", func(a, _, _ *events.Skill) []*events.Skill { a.Description = "A, again."; return nil }},
		{"a's description gained blanks", func(a, _, _ *events.Skill) []*events.Skill { a.Description = " A, again.\n"; return nil }},
		{"a flag the index does not show", func(a, _, _ *events.Skill) []*events.Skill { a.UserInvocable = true; return nil }},
		{"an unlisted skill removed", func(a, b, _ *events.Skill) []*events.Skill { return []*events.Skill{cp(*a), cp(*b)} }},
		{"a listed skill added", func(a, b, _ *events.Skill) []*events.Skill {
			return []*events.Skill{cp(*a), cp(*b), cp(skill("c", "C.", "c", true))}
		}},
		{"a listed skill removed", func(a, b, _ *events.Skill) []*events.Skill { return []*events.Skill{cp(*b)} }},
	}

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
		notifierIn := sub(events.TopicCatalogChanged)
		fc, fu := sub(events.TopicCatalogChanged), sub(events.TopicResourcesUpdated)
		facade := mcpface.New(nil)
		var g errgroup.Group
		g.Go(func() error { return notifier.New(notifier.Inboxes{Catalog: notifierIn}, bus, nil).Run(ctx) })
		g.Go(func() error { return facade.Run(ctx, fc, fu) })
		defer func() {
			cancel()
			if err := g.Wait(); err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
			bus.Close()
		}()

		var mu sync.Mutex
		heard := 0
		publish := func(version uint64, skills []*events.Skill) {
			t.Helper()
			if err := events.Publish(bus, events.CatalogChanged{Catalog: events.NewCatalog(version, false, skills, nil)}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second) // past the notifier's debounce, on the bubble's clock
			synctest.Wait()
		}
		publish(1, []*events.Skill{cp(a), cp(b), cp(h)})
		srv, err := facade.Server(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		client := mcp.NewClient(&mcp.Implementation{Name: "index-watcher", Version: "v0"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				if r.Params.URI == events.IndexURI {
					mu.Lock()
					heard++
					mu.Unlock()
				}
			},
		})
		cs, err := client.Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: events.IndexURI}); err != nil {
			t.Fatal(err)
		}
		read := func() string {
			t.Helper()
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: events.IndexURI})
			if err != nil {
				t.Fatal(err)
			}
			return res.Contents[0].Text
		}

		body := read()
		for i, s := range steps {
			a.Files, b.Files, h.Files = slices.Clone(a.Files), slices.Clone(b.Files), slices.Clone(h.Files)
			skills := s.edit(&a, &b, &h)
			if skills == nil {
				skills = []*events.Skill{cp(a), cp(b), cp(h)}
			}
			publish(uint64(i+2), skills)
			next := read()
			mu.Lock()
			got := heard
			heard = 0
			mu.Unlock()
			want := 0
			if next != body {
				want = 1
			}
			if got != want {
				t.Errorf("%s: resources/updated for the index sent %d times, want %d (body changed: %v)", s.name, got, want, next != body)
			}
			body = next
		}
	})
}
