package mcpface_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// recorder returns client options that count every notification by kind.
func recorder(c *counts) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { c.add("tools") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.add("prompts") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.add("resources") },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			c.add("updated " + r.Params.URI)
		},
	}
}

// settle lets every goroutine of the bubble run and the SDK's list_changed
// debounce pass (on the bubble's clock), then returns what arrived.
func settle(c *counts) map[string]int {
	time.Sleep(time.Second)
	synctest.Wait()
	return c.take()
}

// rewrite atomically writes b as the file rel of old and returns a copy of old with the manifest
// entry of rel updated to the new bytes (the Files slice is copied).
func rewrite(t *testing.T, old *events.Skill, rel string, b []byte) *events.Skill {
	t.Helper()
	sk := *old // the catalogs holding old keep it
	// Write beside and rename over, so a concurrent reader sees either the
	// old bytes or the new ones.
	p := filepath.Join(sk.Dir, filepath.FromSlash(rel))
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	sk.Files = slices.Clone(sk.Files)
	for i := range sk.Files {
		if sk.Files[i].Path == rel {
			sk.Files[i] = fileOf(rel, b, fi.ModTime())
			if i == 0 {
				sk.SkillMD = b
			}
			return &sk
		}
	}
	t.Fatalf("%s has no file %s", sk.QualifiedName, rel)
	return &sk
}

// replaceSkill returns skills with the skill of sk's qualified name replaced
// by sk (or without it, if drop).
func replaceSkill(skills []*events.Skill, sk *events.Skill, drop bool) []*events.Skill {
	out := make([]*events.Skill, 0, len(skills))
	for _, s := range skills {
		if s.QualifiedName == sk.QualifiedName {
			if drop {
				continue
			}
			s = sk
		}
		out = append(out, s)
	}
	return out
}

// runner runs f.Run in the test and returns the two inboxes; Run is stopped
// and awaited at cleanup.
func runner(t *testing.T, f *mcpface.Facade) (catalogs, updates chan *message.Message) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	catalogs, updates = make(chan *message.Message), make(chan *message.Message)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, catalogs, updates) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	return catalogs, updates
}

// deliver sends a resources.updated event to Run and waits for its ack.
func deliver(t *testing.T, updates chan<- *message.Message, version uint64, uris ...string) {
	t.Helper()
	deliverEvent(t, updates, events.ResourcesUpdated{Version: version, URIs: uris})
}

// deliverEvent sends ev to Run and waits for its ack.
func deliverEvent(t *testing.T, updates chan<- *message.Message, ev events.ResourcesUpdated) {
	t.Helper()
	msg, err := events.Encode(&ev)
	if err != nil {
		t.Fatal(err)
	}
	updates <- msg
	<-msg.Acked()
}

// fileURIs lists, sorted, every file URI c serves.
func fileURIs(c *events.Catalog) []string {
	var uris []string
	for i := range c.Skills {
		for _, f := range c.Skills[i].Files {
			uris = append(uris, c.Skills[i].FileURI(f.Path))
		}
	}
	slices.Sort(uris)
	return slices.Compact(uris)
}

func readDigest(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("ReadResource(%s): %v", uri, err)
	}
	c := res.Contents[0]
	b := c.Blob
	if c.Text != "" {
		b = []byte(c.Text)
	}
	return digest(b)
}

const emailURI = "skill://skills/code-review/templates/email.md"

// TestResourcesUpdatedWaitsForCatalog: an events.ResourcesUpdated that
// arrives before the catalog of its version is held until that catalog is
// served, then sent exactly once, and a read after it gets the new bytes
// (BASE-R24, R25; issue: "never notify before the new bytes are readable").
func TestResourcesUpdatedWaitsForCatalog(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			synctest.Test(t, func(t *testing.T) {
				f := newFacade(t, fx.cat, nil)
				c := &counts{got: map[string]int{}}
				cs := connect(t, f, era, recorder(c))
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: emailURI}); err != nil {
					t.Fatal(err)
				}
				_, updates := runner(t, f)
				settle(c)

				newBytes := []byte("Dear client,\nthe new template.\n")
				cr := rewrite(t, fx.skills["skills__code-review"], "templates/email.md", newBytes)
				deliver(t, updates, 2, emailURI)
				if got := settle(c); len(got) != 0 {
					t.Fatalf("before catalog 2: got %v, want nothing", got)
				}
				if !f.SetCatalog(events.NewCatalog(2, false, replaceSkill(fx.cat.Skills, cr, false), nil)) {
					t.Fatal("SetCatalog(2) = false")
				}
				got := settle(c)
				if n := got["updated "+emailURI]; n != 1 {
					t.Errorf("resources/updated for %s sent %d times, want 1 (all: %v)", emailURI, n, got)
				}
				if d := readDigest(t, cs, emailURI); d != digest(newBytes) {
					t.Errorf("read after the notification: digest %s, want %s", d, digest(newBytes))
				}

				// An update for a version already served goes out at once.
				deliver(t, updates, 2, emailURI, events.IndexURI)
				if diff := cmp.Diff(map[string]int{"updated " + emailURI: 1}, settle(c)); diff != "" {
					t.Errorf("update of a served version (-want +got):\n%s", diff)
				}
				// After an unsubscribe nothing is sent.
				if err := cs.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: emailURI}); err != nil {
					t.Fatal(err)
				}
				settle(c)
				deliver(t, updates, 2, emailURI)
				if got := settle(c); len(got) != 0 {
					t.Errorf("after unsubscribe: got %v, want nothing", got)
				}
				if n := mcpface.SubscriptionCount(f); n != 0 {
					t.Errorf("subscriptions after unsubscribe = %d, want 0", n)
				}
			})
		})
	}
}

// TestSubscriptionDroppedWithSkill: when a skill goes, its subscribers get
// resources/updated for the URI once, the subscription is dropped (the
// notifier lists the URI as Gone: issue 11 item 5), and the skill's return
// neither notifies it nor revives it; the per-skill prompt goes and comes
// back.
func TestSubscriptionDroppedWithSkill(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			synctest.Test(t, func(t *testing.T) {
				f := newFacade(t, fx.cat, nil)
				c := &counts{got: map[string]int{}}
				cs := connect(t, f, era, recorder(c))
				esc := fx.skills["skills__escape"]
				for _, uri := range []string{esc.URI, emailURI, events.IndexURI} {
					if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
						t.Fatal(err)
					}
				}
				_, updates := runner(t, f)
				settle(c)

				cat2 := events.NewCatalog(2, false, replaceSkill(fx.cat.Skills, esc, true), nil)
				if !f.SetCatalog(cat2) {
					t.Fatal("SetCatalog(2) = false")
				}
				// What the notifier publishes for the skill's files and the index.
				escURIs := fileURIs(events.NewCatalog(1, false, []*events.Skill{esc}, nil))
				deliverEvent(t, updates, events.ResourcesUpdated{Version: 2, URIs: append([]string{events.IndexURI}, escURIs...), Gone: escURIs})
				want := map[string]int{"prompts": 1, "resources": 1, "updated " + esc.URI: 1, "updated " + events.IndexURI: 1}
				if diff := cmp.Diff(want, settle(c)); diff != "" {
					t.Errorf("skill removed: notifications mismatch (-want +got):\n%s", diff)
				}
				if n := mcpface.SubscriptionCount(f); n != 2 {
					t.Errorf("subscriptions after the skill went = %d, want 2", n)
				}
				if hasPrompt(t, cs, esc.QualifiedName) {
					t.Errorf("prompt %s still listed after its skill went", esc.QualifiedName)
				}

				back := rewrite(t, esc, "SKILL.md", skillMD("escape", "Back again."))
				back.Description = "Back again."
				// Catalog 3 serves nothing: email.md goes with its skill.
				if !f.SetCatalog(events.NewCatalog(3, false, nil, nil)) {
					t.Fatal("SetCatalog(3) = false")
				}
				gone := fileURIs(cat2)
				deliverEvent(t, updates, events.ResourcesUpdated{Version: 3, URIs: append([]string{events.IndexURI}, gone...), Gone: gone})
				want = map[string]int{"prompts": 1, "resources": 1, "updated " + emailURI: 1, "updated " + events.IndexURI: 1}
				if diff := cmp.Diff(want, settle(c)); diff != "" {
					t.Errorf("every skill removed: notifications mismatch (-want +got):\n%s", diff)
				}
				skills := append(replaceSkill(fx.cat.Skills, esc, true), back)
				if !f.SetCatalog(events.NewCatalog(4, false, skills, nil)) {
					t.Fatal("SetCatalog(4) = false")
				}
				deliver(t, updates, 4, back.URI, events.IndexURI)
				want = map[string]int{"prompts": 1, "resources": 1, "updated " + events.IndexURI: 1}
				if diff := cmp.Diff(want, settle(c)); diff != "" {
					t.Errorf("skill back: notifications mismatch (-want +got):\n%s", diff)
				}
				if !hasPrompt(t, cs, esc.QualifiedName) {
					t.Errorf("prompt %s not listed after its skill came back", esc.QualifiedName)
				}
				if n := mcpface.SubscriptionCount(f); n != 1 {
					t.Errorf("subscriptions after catalogs 3 and 4 = %d, want 1 (the index)", n)
				}
			})
		})
	}
}

// TestRelayOnlyWhatTheNotifierSays (issue 11 item 5: one authority for
// resources/updated): the facade sends resources/updated for nothing the
// notifier did not publish, the index included; it drops a Gone URI's
// subscriptions only once it serves the notice's version, after the
// update; and a subscription made once the skill is back (the facade can
// serve a later catalog before the notice arrives) outlives the notice.
// Subscribing anew is done from a second client: a 2026-07-28 client keeps
// its listen stream for a URI whose subscription the server dropped.
func TestRelayOnlyWhatTheNotifierSays(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			synctest.Test(t, func(t *testing.T) {
				f := newFacade(t, fx.cat, nil)
				c := &counts{got: map[string]int{}}
				cs := connect(t, f, era, recorder(c))
				esc := fx.skills["skills__escape"]
				for _, uri := range []string{esc.URI, events.IndexURI} {
					if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
						t.Fatal(err)
					}
				}
				_, updates := runner(t, f)
				settle(c)

				// A new skill changes the index, but no notice came.
				fresh := writeSkill(t, fx.root, skillSpec{dir: "fresh", name: "fresh", desc: "New skill."})
				if !f.SetCatalog(events.NewCatalog(2, false, append(slices.Clone(fx.cat.Skills), fresh), nil)) {
					t.Fatal("SetCatalog(2) = false")
				}
				if diff := cmp.Diff(map[string]int{"prompts": 1, "resources": 1}, settle(c)); diff != "" {
					t.Errorf("catalog without a notice (-want +got):\n%s", diff)
				}

				// The notice that escape went arrives before its catalog.
				without := replaceSkill(fx.cat.Skills, esc, true)
				deliverEvent(t, updates, events.ResourcesUpdated{Version: 3, URIs: []string{esc.URI}, Gone: []string{esc.URI}})
				if got := settle(c); len(got) != 0 {
					t.Errorf("before catalog 3: got %v, want nothing", got)
				}
				if n := mcpface.SubscriptionCount(f); n != 2 {
					t.Errorf("subscriptions before catalog 3 = %d, want 2", n)
				}
				if !f.SetCatalog(events.NewCatalog(3, false, without, nil)) {
					t.Fatal("SetCatalog(3) = false")
				}
				if diff := cmp.Diff(map[string]int{"prompts": 1, "resources": 1, "updated " + esc.URI: 1}, settle(c)); diff != "" {
					t.Errorf("catalog 3 (-want +got):\n%s", diff)
				}
				if n := mcpface.SubscriptionCount(f); n != 1 {
					t.Errorf("subscriptions after catalog 3 = %d, want 1 (the index)", n)
				}

				// escape comes back (4) and goes again (5); the facade serves
				// 4, a second client subscribes, then the notice of 3 comes
				// late, then the notice of 5 before 5's catalog.
				if !f.SetCatalog(events.NewCatalog(4, false, fx.cat.Skills, nil)) {
					t.Fatal("SetCatalog(4) = false")
				}
				c2 := &counts{got: map[string]int{}}
				cs2 := connect(t, f, era, recorder(c2))
				if err := cs2.Subscribe(t.Context(), &mcp.SubscribeParams{URI: esc.URI}); err != nil {
					t.Fatal(err)
				}
				settle(c)
				settle(c2)
				deliverEvent(t, updates, events.ResourcesUpdated{Version: 3, URIs: []string{esc.URI}, Gone: []string{esc.URI}})
				if got := settle(c); len(got) != 0 {
					t.Errorf("a late notice of 3 to the first client: got %v, want nothing", got)
				}
				if diff := cmp.Diff(map[string]int{"updated " + esc.URI: 1}, settle(c2)); diff != "" {
					t.Errorf("a late notice of 3 to the second client (-want +got):\n%s", diff)
				}
				if n := mcpface.SubscriptionCount(f); n != 2 {
					t.Errorf("subscriptions after a late notice of 3 = %d, want 2: the new one was made against 4", n)
				}
				deliverEvent(t, updates, events.ResourcesUpdated{Version: 5, URIs: []string{esc.URI}, Gone: []string{esc.URI}})
				if !f.SetCatalog(events.NewCatalog(5, false, without, nil)) {
					t.Fatal("SetCatalog(5) = false")
				}
				if diff := cmp.Diff(map[string]int{"prompts": 1, "resources": 1, "updated " + esc.URI: 1}, settle(c2)); diff != "" {
					t.Errorf("catalog 5 (-want +got):\n%s", diff)
				}
				if n := mcpface.SubscriptionCount(f); n != 1 {
					t.Errorf("subscriptions after catalog 5 = %d, want 1 (the index)", n)
				}
			})
		})
	}
}

func hasPrompt(t *testing.T, cs *mcp.ClientSession, name string) bool {
	t.Helper()
	lp, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(lp.Prompts, func(p *mcp.Prompt) bool { return p.Name == name })
}

// capCatalog serves the fixture plus a skill with n extra manifest entries,
// returned as URIs (the files are not on disk: subscribing reads nothing).
func capCatalog(t *testing.T, fx *fixture, n int) (*events.Catalog, []string) {
	t.Helper()
	big := writeSkill(t, fx.root, skillSpec{dir: "big", name: "big", desc: "Many files."})
	var uris []string
	for i := range n {
		rel := fmt.Sprintf("refs/f%04d.md", i)
		big.Files = append(big.Files, events.File{Path: rel, Digest: digest([]byte(rel)), Size: int64(len(rel))})
		uris = append(uris, big.FileURI(rel))
	}
	return events.NewCatalog(1, false, append(slices.Clone(fx.cat.Skills), big), nil), uris
}

// TestSubscribeLimits: an unknown URI gets -32602 and leaves no state; a
// session holds at most 1000 subscriptions; unsubscribing from what was
// never subscribed is harmless (2025-11-25, through the SDK client).
func TestSubscribeLimits(t *testing.T) {
	fx := newFixture(t)
	cat, uris := capCatalog(t, fx, 1001)
	f := newFacade(t, cat, nil)
	cs := connect(t, f, legacy, nil)
	ctx := t.Context()
	for _, uri := range []string{"skill://nope/SKILL.md", "file:///etc/passwd", "skill://skills/code-review/../code-review/SKILL.md",
		"skill://skills/code-review/%zz", "skill://" + strings.Repeat("a/", 1<<19)} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); wireCode(err) != -32602 {
			t.Errorf("Subscribe(%.60s) = %v, want -32602", uri, err)
		}
	}
	for _, uri := range []string{"skill://nope/SKILL.md", emailURI, "not a uri"} {
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Errorf("Unsubscribe(%s) never subscribed = %v, want nil", uri, err)
		}
	}
	if n := mcpface.SubscriptionCount(f); n != 0 {
		t.Fatalf("subscriptions after refusals = %d, want 0", n)
	}
	for _, uri := range uris[:1000] {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("Subscribe(%s): %v", uri, err)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uris[1000]}); wireCode(err) != -32602 {
		t.Errorf("1001st Subscribe = %v, want -32602", err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uris[0]}); err != nil {
		t.Errorf("Subscribe again to a held URI at the cap = %v, want nil", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uris[0]}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uris[1000]}); err != nil {
		t.Errorf("Subscribe after an unsubscribe = %v, want nil", err)
	}
	if n := mcpface.SubscriptionCount(f); n != 1000 {
		t.Errorf("subscriptions = %d, want 1000", n)
	}
}

const rawMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

func listenLine(id int, uris []string) string {
	b, _ := json.Marshal(uris)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":%s},%s}}`, id, b, rawMeta)
}

// TestListenLimits: the same rules on 2026-07-28, where subscriptions ride
// on subscriptions/listen (raw stdio, since the SDK client does not wait for
// a listen's answer): an unknown URI fails the listen with -32602 before any
// acknowledgement; the cap counts every stream of the session; a listen that
// fails or ends leaves none of its subscriptions behind.
func TestListenLimits(t *testing.T) {
	fx := newFixture(t)
	cat, uris := capCatalog(t, fx, 1001)
	f := newFacade(t, cat, nil)
	s := serveStdio(t, t.Context(), f, nil)
	expectError := func(what string, id int) {
		t.Helper()
		line := <-s.lines
		r := decodeReply(t, line)
		if string(r.ID) != strconv.Itoa(id) || r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("%s: got %s, want a -32602 answer to %d", what, line, id)
		}
	}
	expectAck := func(what string, id int) {
		t.Helper()
		line := <-s.lines
		r := decodeReply(t, line)
		if r.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(line, fmt.Sprintf(`"io.modelcontextprotocol/subscriptionId":%d`, id)) {
			t.Errorf("%s: got %s, want the acknowledgement of %d", what, line, id)
		}
	}

	s.send(t, listenLine(1, []string{fx.skills["skills__escape"].URI, "skill://nope/SKILL.md"}))
	expectError("unknown URI", 1)
	s.send(t, listenLine(2, uris))
	expectError("1001 URIs in one listen", 2)
	if n := mcpface.SubscriptionCount(f); n != 0 {
		t.Fatalf("subscriptions after failed listens = %d, want 0", n)
	}
	s.send(t, listenLine(3, uris[:1000]))
	expectAck("1000 URIs", 3)
	s.send(t, listenLine(4, uris[1000:]))
	expectError("a 1001st URI on a second stream", 4)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	if r := s.next(t); string(r.ID) != "3" || r.Error != nil {
		t.Errorf("cancelled listen answered %s, want its result", r.line)
	}
	if n := mcpface.SubscriptionCount(f); n != 0 {
		t.Errorf("subscriptions after the listen ended = %d, want 0", n)
	}
	s.send(t, listenLine(5, uris[1000:]))
	expectAck("after the first stream ended", 5)
}

// TestStatic: with Options.Static the tools and prompts stay as the first
// catalog made them, with listChanged false and no list_changed, while
// resources track the catalog and subscribers still get resources/updated
// (reference §6).
func TestStatic(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			synctest.Test(t, func(t *testing.T) {
				f := newFacade(t, fx.cat, &mcpface.Options{Static: true, CatalogMode: mcpface.CatalogToolDescription})
				c := &counts{got: map[string]int{}}
				cs := connect(t, f, era, recorder(c))
				caps := cs.InitializeResult().Capabilities
				if caps.Tools == nil || caps.Tools.ListChanged || caps.Prompts == nil || caps.Prompts.ListChanged {
					t.Errorf("static capabilities tools %+v prompts %+v, want listChanged false", caps.Tools, caps.Prompts)
				}
				if caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged {
					t.Errorf("static capabilities resources %+v, want subscribe and listChanged", caps.Resources)
				}
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: emailURI}); err != nil {
					t.Fatal(err)
				}
				_, updates := runner(t, f)
				settle(c)
				toolsBefore, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}

				newBytes := []byte("Dear static reader,\n")
				cr := rewrite(t, fx.skills["skills__code-review"], "templates/email.md", newBytes)
				fresh := writeSkill(t, fx.root, skillSpec{dir: "fresh", name: "fresh", desc: "New skill."})
				skills := append(replaceSkill(fx.cat.Skills, cr, false), fresh)
				if !f.SetCatalog(events.NewCatalog(2, true, skills, nil)) {
					t.Fatal("SetCatalog(2) = false")
				}
				deliver(t, updates, 2, emailURI, events.IndexURI)
				want := map[string]int{"resources": 1, "updated " + emailURI: 1}
				if diff := cmp.Diff(want, settle(c)); diff != "" {
					t.Errorf("static refresh: notifications mismatch (-want +got):\n%s", diff)
				}
				toolsAfter, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(toolsBefore.Tools, toolsAfter.Tools); diff != "" {
					t.Errorf("static tools changed (-before +after):\n%s", diff)
				}
				if hasPrompt(t, cs, fresh.QualifiedName) {
					t.Error("static server registered a prompt for a later skill")
				}
				if _, ok := listAllResources(t, cs)[fresh.URI]; !ok {
					t.Error("static resources/list does not track the catalog")
				}
				if d := readDigest(t, cs, emailURI); d != digest(newBytes) {
					t.Errorf("static read: digest %s, want %s", d, digest(newBytes))
				}
			})
		})
	}
}
