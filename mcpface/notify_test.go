package mcpface_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// counts records the notifications a client received.
type counts struct {
	mu  sync.Mutex
	got map[string]int
}

func (c *counts) add(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got[kind]++
}

// take returns the counts so far and resets them.
func (c *counts) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = map[string]int{}
	return got
}

// TestNoSpuriousListChanged sets catalog versions and checks which
// notifications reach a subscribed client (hostile tester finding 4: a new
// version with identical content sent tools, prompts and resources
// list_changed). resources/updated is relayed from what the notifier
// publishes for each version (issue 11 item 5). It runs in a synctest bubble
// so that the SDK's debounce timers fire at once and "nothing arrived" is a
// fact, not a timeout.
func TestNoSpuriousListChanged(t *testing.T) {
	for _, mode := range []string{mcpface.CatalogInstructions, mcpface.CatalogToolDescription} {
		t.Run(mode, func(t *testing.T) {
			fx := newFixture(t)
			synctest.Test(t, func(t *testing.T) {
				f := newFacade(t, fx.cat, &mcpface.Options{CatalogMode: mode, Tools: mcpface.ToolsAlways})
				c := &counts{got: map[string]int{}}
				cs := connect(t, f, legacy, &mcp.ClientOptions{
					ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.add("tools") },
					PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.add("prompts") },
					ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.add("resources") },
					ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
						c.add("updated " + r.Params.URI)
					},
				})
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: events.IndexURI}); err != nil {
					t.Fatal(err)
				}
				_, updates := runner(t, f)
				version := fx.cat.Version
				// set serves skills as the next version, with updated the
				// URIs the notifier publishes for it.
				set := func(skills []*events.Skill, updated ...string) map[string]int {
					t.Helper()
					version++
					if !f.SetCatalog(events.NewCatalog(version, false, skills, nil)) {
						t.Fatalf("SetCatalog(%d) = false", version)
					}
					if len(updated) > 0 {
						deliver(t, updates, version, updated...)
					}
					time.Sleep(time.Second) // past the SDK's debounce, in the bubble's clock
					synctest.Wait()
					return c.take()
				}
				c.take()

				if got := set(slices.Clone(fx.cat.Skills)); len(got) != 0 {
					t.Errorf("identical catalog sent %v, want nothing", got)
				}

				// Letting the user invoke a skill adds its prompt and changes
				// its resources' audience; tools and the index stay.
				quiet := fx.skills["skills__quiet"]
				quiet.UserInvocable = true
				skills := slices.Clone(fx.cat.Skills)
				for i := range skills {
					if skills[i].QualifiedName == quiet.QualifiedName {
						skills[i] = quiet
					}
				}
				if diff := cmp.Diff(map[string]int{"prompts": 1, "resources": 1}, set(skills)); diff != "" {
					t.Errorf("user-invocable flag flip: notifications mismatch (-want +got):\n%s", diff)
				}

				// A new listed skill changes every list and the index.
				skills = append(slices.Clone(skills), writeSkill(t, fx.root, skillSpec{dir: "fresh", name: "fresh", desc: "New skill."}))
				want := map[string]int{"prompts": 1, "resources": 1, "updated " + events.IndexURI: 1}
				if mode == mcpface.CatalogToolDescription {
					want["tools"] = 1
				}
				if diff := cmp.Diff(want, set(skills, events.IndexURI)); diff != "" {
					t.Errorf("new skill: notifications mismatch (-want +got):\n%s", diff)
				}
				if got := set(slices.Clone(skills)); len(got) != 0 {
					t.Errorf("identical catalog after a change sent %v, want nothing", got)
				}
			})
		})
	}
}
