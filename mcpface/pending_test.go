package mcpface_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// pendingOf returns the catalog the builder makes of a partial scan of
// fx's skills (issue 12): version 1, pending, every supporting file
// without digest, MIME type or text flag.
func pendingOf(fx *fixture) *events.Catalog {
	var skills []*events.Skill
	for _, sk := range fx.cat.Skills {
		files := append([]events.File(nil), sk.Files...)
		for j := 1; j < len(files); j++ {
			files[j].Digest, files[j].MIME, files[j].Text = "", "", false
		}
		c := *sk // fx.cat keeps its own
		c.Files = files
		skills = append(skills, &c)
	}
	c := events.NewCatalog(1, false, skills, nil)
	c.Pending = true
	return c
}

// completeOf returns fx's catalog as the version after the pending one.
func completeOf(fx *fixture) *events.Catalog {
	return events.NewCatalog(2, false, fx.cat.Skills, nil)
}

// servedDigests checks every "digest" field anywhere in a JSON value
// against the file of fx it names by its sibling "uri" (or "url"): the
// digest of its bytes on disk, never empty. It returns how many it saw.
func servedDigests(t *testing.T, fx *fixture, v any) int {
	t.Helper()
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if d, ok := x["digest"].(string); ok {
			n++
			uri, _ := x["uri"].(string)
			if uri == "" {
				uri, _ = x["url"].(string)
			}
			rel := strings.TrimPrefix(uri, "skill://")
			if rel == uri {
				t.Errorf("digest %q beside no skill:// URI in %v", d, x)
				break
			}
			data, err := os.ReadFile(filepath.Join(fx.root, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatalf("%s: %v", uri, err)
			}
			if want := digest(data); d != want {
				t.Errorf("%s served with digest %q, want %s (its bytes)", uri, d, want)
			}
		}
		for _, e := range x {
			n += servedDigests(t, fx, e)
		}
	case []any:
		for _, e := range x {
			n += servedDigests(t, fx, e)
		}
	}
	return n
}

// TestPendingCatalogServesNoPendingDigest is issue 12's "no hashing on
// the way to initialize", facade side: a pending catalog answers
// initialize (its instructions name the skills) and the lists of tools
// and prompts (also server/discover on 2026-07-28), while skills/list, skills/get, resources/list,
// resources/read (the index, a SKILL.md, a supporting file), load-skill
// and prompts/get wait for the complete catalog and then serve only
// digests that match the bytes served (SEP2640-R40); completing the
// catalog sends no list_changed notification.
func TestPendingCatalogServesNoPendingDigest(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) { testPendingCatalog(t, era) })
	}
}

func testPendingCatalog(t *testing.T, era string) {
	fx := newFixture(t)
	synctest.Test(t, func(t *testing.T) {
		f := newFacade(t, pendingOf(fx), &mcpface.Options{Tools: mcpface.ToolsAlways})
		c := &counts{got: map[string]int{}}
		cs := connect(t, f, era, &mcp.ClientOptions{
			ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.add("tools") },
			PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.add("prompts") },
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.add("resources") },
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				c.add("updated " + r.Params.URI)
			},
		})
		if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "skills__code-review") {
			t.Errorf("instructions of the pending catalog do not name skills__code-review:\n%s", ins)
		}
		ctx := t.Context()
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list on a pending catalog: %v", err)
		}
		if _, err := cs.ListPrompts(ctx, nil); err != nil {
			t.Fatalf("prompts/list on a pending catalog: %v", err)
		}
		cr := fx.skills["skills__code-review"]
		email := cr.FileURI("templates/email.md")
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: email}); err != nil {
			t.Fatalf("resources/subscribe on a pending catalog: %v", err)
		}

		type answer struct {
			what string
			v    any
			err  error
		}
		asJSON := func(v any, err error) (any, error) {
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			var out any
			return out, json.Unmarshal(b, &out)
		}
		requests := map[string]func() (any, error){
			"skills/list": func() (any, error) { return asJSON(call(t, cs, "skills/list", nil)) },
			"skills/get":  func() (any, error) { return asJSON(call(t, cs, "skills/get", &rawParams{URI: cr.URI})) },
			"resources/list": func() (any, error) {
				return asJSON(cs.ListResources(ctx, nil))
			},
			"read index": func() (any, error) {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: events.IndexURI})
				if err != nil {
					return nil, err
				}
				var idx any
				return idx, json.Unmarshal([]byte(res.Contents[0].Text), &idx)
			},
			"read file": func() (any, error) {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: email})
				if err != nil {
					return nil, err
				}
				return res.Contents[0].Text, nil
			},
			"load-skill": func() (any, error) {
				return asJSON(cs.CallTool(ctx, &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "skills__code-review"}}))
			},
			"prompts/get": func() (any, error) {
				return asJSON(cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skills__code-review"}))
			},
		}
		answers := make(chan answer, len(requests))
		for what, fn := range requests {
			go func() {
				v, err := fn()
				answers <- answer{what, v, err}
			}()
		}
		synctest.Wait()
		if len(answers) != 0 {
			a := <-answers
			t.Fatalf("%s answered from the pending catalog (error %v): %v", a.what, a.err, a.v)
		}
		if !f.SetCatalog(completeOf(fx)) {
			t.Fatal("SetCatalog(complete) = false")
		}
		digests := 0
		for range requests {
			a := <-answers
			if a.err != nil {
				t.Errorf("%s: %v", a.what, a.err)
				continue
			}
			digests += servedDigests(t, fx, a.v)
			if a.what == "resources/list" {
				b, _ := json.Marshal(a.v)
				if !strings.Contains(string(b), `"mimeType":"image/png"`) {
					t.Errorf("resources/list after completion lacks the PNG's MIME type: %s", b)
				}
			}
			if a.what == "read file" && a.v != "Dear customer,\n" {
				t.Errorf("read %s = %q", email, a.v)
			}
		}
		if digests < 10 {
			t.Errorf("saw %d digests in the answers; want those of skills/list, skills/get and the index", digests)
		}
		time.Sleep(time.Second) // past the SDK's debounce, in the bubble's clock
		synctest.Wait()
		if got := c.take(); len(got) != 0 {
			t.Errorf("completing the pending catalog sent %v; want nothing", got)
		}
		// A pending catalog never replaces a complete one.
		late := pendingOf(fx)
		late.Version = 3
		if f.SetCatalog(late) {
			t.Error("SetCatalog(pending after complete) = true")
		}
	})
}

// TestPendingCatalogFastLane checks the stdio fast lane: on a pending
// catalog it leaves skills/list and resources/read to the SDK's path,
// which waits for the complete catalog (issue 12).
func TestPendingCatalogFastLane(t *testing.T) {
	fx := newFixture(t)
	f := newFacade(t, pendingOf(fx), &mcpface.Options{Tools: mcpface.ToolsAlways})
	s := newRawSession(t, f)
	s.call(t, "initialize", fastInitParams)
	s.notify(t, "notifications/initialized")
	cr := fx.skills["skills__code-review"]
	got := make(chan []byte, 2)
	go func() {
		got <- s.call(t, "skills/list", "{}")
		got <- s.call(t, "resources/read", fmt.Sprintf(`{"uri":%q}`, cr.FileURI("templates/email.md")))
	}()
	select {
	case b := <-got:
		t.Fatalf("answered from the pending catalog: %s", b)
	case <-time.After(300 * time.Millisecond):
	}
	if !f.SetCatalog(completeOf(fx)) {
		t.Fatal("SetCatalog(complete) = false")
	}
	for range 2 {
		var m any
		if err := json.Unmarshal(waitFor(t, got, "an answer"), &m); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(fmt.Sprint(m), "error") {
			t.Errorf("answer: %v", m)
		}
		servedDigests(t, fx, m)
	}
}
