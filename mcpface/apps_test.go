package mcpface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
	"github.com/skilljack/skilljack-mcp/mcpface"
	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// The MCP Apps surface of the facade (issue 14; spec mcp-apps-and-mcpb.md
// Part A, reference §1.2, §7). The end-to-end runs with the real config
// actor are in test/apps_test.go.

var (
	uiTools = []string{
		"skill-config", "skill-config-add-allowed-org", "skill-config-add-allowed-origin", "skill-config-add-directory",
		"skill-config-remove-allowed-org", "skill-config-remove-allowed-origin", "skill-config-remove-directory",
		"skill-config-set-static-mode", "skill-display", "skill-display-reset-override", "skill-display-update-invocation",
	}
	modelUITools = []string{"skill-config", "skill-display"}
)

// capsUI is TV-APPS-01: a host that renders MCP Apps.
func capsUI() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Extensions: map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}
}

// appsFacade serves the fixture with the apps on (a publisher, not
// static); its commands go to the returned publisher.
func appsFacade(t *testing.T, fx *fixture) (*mcpface.Facade, *eventstest.Publisher) {
	t.Helper()
	pub := eventstest.NewPublisher()
	return newFacade(t, fx.cat, &mcpface.Options{Tools: "always", Publisher: pub}), pub
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	lr, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lr.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestAppsToolsGolden pins the JSON of the UI tools a UI host sees, and
// checks their _meta (APPS-R10: both keys; APPS-R11: visibility ["app"]
// on the mutation tools only) and annotations.
func TestAppsToolsGolden(t *testing.T) {
	fx := newFixture(t)
	f, _ := appsFacade(t, fx)
	cs := connect(t, f, legacy, &mcp.ClientOptions{Capabilities: capsUI()})
	lr, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ui []*mcp.Tool
	for _, tool := range lr.Tools {
		if !slices.Contains(uiTools, tool.Name) {
			continue
		}
		ui = append(ui, tool)
		uri := apps.ConfigURI
		if strings.HasPrefix(tool.Name, "skill-display") {
			uri = apps.DisplayURI
		}
		meta, _ := tool.Meta["ui"].(map[string]any)
		if meta["resourceUri"] != uri || tool.Meta["ui/resourceUri"] != uri {
			t.Errorf("%s _meta = %v, want ui.resourceUri and ui/resourceUri %s (APPS-R10)", tool.Name, tool.Meta, uri)
		}
		vis, hasVis := meta["visibility"]
		appOnly := !slices.Contains(modelUITools, tool.Name)
		if appOnly && !cmp.Equal(vis, []any{"app"}) {
			t.Errorf("%s _meta.ui.visibility = %v, want [app] (APPS-R11)", tool.Name, vis)
		}
		if !appOnly && hasVis {
			t.Errorf("%s _meta.ui.visibility = %v, want the default (model and app)", tool.Name, vis)
		}
		if a := tool.Annotations; a == nil || a.ReadOnlyHint == appOnly {
			t.Errorf("%s readOnlyHint = %+v, want %v", tool.Name, a, !appOnly)
		}
		if tool.OutputSchema == nil {
			t.Errorf("%s has no outputSchema", tool.Name)
		}
	}
	if len(ui) != len(uiTools) {
		t.Fatalf("UI tools listed = %d, want %d: %v", len(ui), len(uiTools), toolNames(t, cs))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ui); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "apps-tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden (run go test ./mcpface -update): %v", err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("UI tools JSON mismatch (-want +got):\n%s", diff)
	}
}

// TestAppsHiddenWithoutUI: a client that does not declare the UI extension
// with the HTML profile (TV-APPS-02, 03, 04; APPS-R03) lists no app-only
// tool and cannot call one; skill-config and skill-display stay, with text.
func TestAppsHiddenWithoutUI(t *testing.T) {
	fx := newFixture(t)
	cases := []struct {
		name   string
		caps   *mcp.ClientCapabilities
		hidden bool
	}{
		{"TV-APPS-01 supported", capsUI(), false},
		{"TV-APPS-02 other mime type", &mcp.ClientCapabilities{Extensions: map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{"text/uri-list"}}}}, true},
		{"TV-APPS-03 no extension", &mcp.ClientCapabilities{}, true},
		{"TV-APPS-04 experimental only", &mcp.ClientCapabilities{Experimental: map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}, true},
		{"extension without mimeTypes", &mcp.ClientCapabilities{Extensions: map[string]any{apps.ExtensionID: map[string]any{}}}, true},
	}
	for _, era := range eras {
		for _, tc := range cases {
			t.Run(era+"/"+tc.name, func(t *testing.T) {
				f, _ := appsFacade(t, fx)
				cs := connect(t, f, era, &mcp.ClientOptions{Capabilities: tc.caps})
				names := toolNames(t, cs)
				for _, name := range uiTools {
					want := !tc.hidden || slices.Contains(modelUITools, name)
					if slices.Contains(names, name) != want {
						t.Errorf("tools/list has %s = %v, want %v (tools %v)", name, !want, want, names)
					}
				}
				if !slices.Contains(names, "load-skill") {
					t.Errorf("tools/list lost load-skill: %v", names)
				}
				if tc.hidden {
					// (A UI host's call is answered by the config actor:
					// test/apps_test.go.)
					_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill-display-update-invocation",
						Arguments: map[string]any{"skillName": "skills__escape", "setting": "user", "value": false}})
					if err == nil || !strings.Contains(err.Error(), "unknown tool") {
						t.Errorf("call of an app-only tool without the UI extension = %v, want unknown tool", err)
					}
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill-display", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("skill-display = %v, %v", res, err)
				}
				if text := resultText(res); !strings.Contains(text, "skills__code-review") || !strings.Contains(text, "skills__quiet [Local] assistant off, user off") {
					t.Errorf("skill-display text for the model = %q, want every skill with its flags", text)
				}
			})
		}
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestAppsResources reads both views: one text item with the MIME type
// exactly text/html;profile=mcp-app and an HTML document (APPS-R05, R06).
func TestAppsResources(t *testing.T) {
	fx := newFixture(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			f, _ := appsFacade(t, fx)
			cs := connect(t, f, era, &mcp.ClientOptions{Capabilities: capsUI()})
			for uri, html := range map[string]string{apps.ConfigURI: apps.ConfigHTML(), apps.DisplayURI: apps.DisplayHTML()} {
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatalf("resources/read %s: %v", uri, err)
				}
				if len(res.Contents) != 1 {
					t.Fatalf("resources/read %s = %d items, want 1", uri, len(res.Contents))
				}
				c := res.Contents[0]
				if c.URI != uri || c.MIMEType != "text/html;profile=mcp-app" || c.Text != html || c.Blob != nil {
					t.Errorf("resources/read %s = uri %s mime %q text %d bytes blob %d, want the embedded view as text/html;profile=mcp-app", uri, c.URI, c.MIMEType, len(c.Text), len(c.Blob))
				}
				if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Text)), "<!doctype html") {
					t.Errorf("%s is not an HTML5 document: %.40q", uri, c.Text)
				}
			}
		})
	}
}

// TestAppsNotOffered: no UI tool or view in static mode, over HTTP, or
// without a publisher for the commands (reference §6: not registered in
// static mode; stdio only).
func TestAppsNotOffered(t *testing.T) {
	fx := newFixture(t)
	pub := eventstest.NewPublisher()
	check := func(t *testing.T, cs *mcp.ClientSession) {
		t.Helper()
		for _, name := range toolNames(t, cs) {
			if slices.Contains(uiTools, name) {
				t.Errorf("tools/list has %s", name)
			}
		}
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: apps.ConfigURI}); err == nil {
			t.Errorf("resources/read %s succeeded", apps.ConfigURI)
		}
	}
	t.Run("static", func(t *testing.T) {
		check(t, connect(t, newFacade(t, fx.cat, &mcpface.Options{Static: true, Publisher: pub}), legacy, &mcp.ClientOptions{Capabilities: capsUI()}))
	})
	t.Run("no publisher", func(t *testing.T) {
		check(t, connect(t, newFacade(t, fx.cat, nil), legacy, &mcp.ClientOptions{Capabilities: capsUI()}))
	})
	t.Run("http", func(t *testing.T) {
		f := newFacade(t, fx.cat, &mcpface.Options{Publisher: pub})
		ts := httptest.NewServer(f.HTTPHandler(nil))
		t.Cleanup(ts.Close)
		check(t, connectHTTP(t, ts, legacy, &mcp.ClientOptions{Capabilities: capsUI()}, nil))
	})
}

// fakeConfig answers the facade's config commands like the config actor:
// each command read from pub gets the answer answer(cmd) on the applied
// channel handed to RunConfig, after the views of view(cmd) (if any).
func fakeConfig(t *testing.T, f *mcpface.Facade, pub *eventstest.Publisher, answer func(events.ConfigCommand) events.ConfigApplied) chan<- *message.Message {
	t.Helper()
	applied := make(chan *message.Message, 10)
	views := make(chan *message.Message, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- f.RunConfig(ctx, applied, views) }()
	go func() {
		for {
			select {
			case <-ctx.Done():
				done <- nil
				return
			case m := <-pub.C:
				cmd, err := events.Decode[events.ConfigCommand](m)
				if err != nil {
					continue
				}
				applied <- eventstest.Encode(t, answer(cmd))
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("RunConfig = %v", err)
			}
		}
	})
	views <- eventstest.Encode(t, events.ConfigView{Seq: 1, ActiveSource: "config", ConfigPath: "/home/u/.skilljack/config.json"})
	return views
}

// TestAppsWaitForServedCatalog: a mutation answers only once the catalog
// built from its change is served (Catalog.OverridesSeq), with that
// catalog's flags; a refusal is an isError result whose structuredContent
// is success false with the config actor's reason.
func TestAppsWaitForServedCatalog(t *testing.T) {
	fx := newFixture(t)
	f, pub := appsFacade(t, fx)
	fakeConfig(t, f, pub, func(cmd events.ConfigCommand) events.ConfigApplied {
		if cmd.Skill == "skills__many" {
			return events.ConfigApplied{ID: cmd.ID, Op: cmd.Op, Error: "config file not changed: it is a symbolic link"}
		}
		return events.ConfigApplied{ID: cmd.ID, Op: cmd.Op, ConfigSeq: 1, OverridesSeq: 2, ViewSeq: 1}
	})
	cs := connect(t, f, legacy, &mcp.ClientOptions{Capabilities: capsUI()})
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill-display-update-invocation",
			Arguments: map[string]any{"skillName": "skills__escape", "setting": "assistant", "value": false}})
		got <- result{res, err}
	}()
	select {
	case r := <-got:
		t.Fatalf("the tool answered before the catalog of its change was served: %+v %v", r.res, r.err)
	case <-time.After(300 * time.Millisecond):
		// Not a timing assertion of the code under test: the answer must
		// not come at all until the catalog below is set.
	}
	skills := slices.Clone(fx.cat.Skills)
	for i := range skills {
		if skills[i].QualifiedName == "skills__escape" {
			skills[i].ModelInvocable, skills[i].AssistantOverridden = false, true
		}
	}
	next := events.NewCatalog(2, false, skills, nil)
	next.ConfigSeq, next.OverridesSeq = 1, 2
	f.SetCatalog(next)
	var r result
	select {
	case r = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no answer after the catalog was served")
	}
	if r.err != nil || r.res.IsError {
		t.Fatalf("update-invocation = %+v, %v", r.res, r.err)
	}
	var out struct {
		Success bool `json:"success"`
		Skills  []struct {
			Name                  string `json:"name"`
			AssistantInvocable    bool   `json:"assistantInvocable"`
			IsAssistantOverridden bool   `json:"isAssistantOverridden"`
		} `json:"skills"`
	}
	b, _ := json.Marshal(r.res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(out.Skills, func(s struct {
		Name                  string `json:"name"`
		AssistantInvocable    bool   `json:"assistantInvocable"`
		IsAssistantOverridden bool   `json:"isAssistantOverridden"`
	}) bool {
		return s.Name == "skills__escape"
	})
	if !out.Success || i < 0 || out.Skills[i].AssistantInvocable || !out.Skills[i].IsAssistantOverridden {
		t.Errorf("update-invocation structuredContent = %s, want skills__escape assistant off, overridden", b)
	}

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill-display-reset-override", Arguments: map[string]any{"skillName": "skills__many"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(res.StructuredContent)
	if !res.IsError || !strings.Contains(resultText(res), "symbolic link") || string(b) != `{"error":"Failed to reset skill override: config file not changed: it is a symbolic link","success":false}` {
		t.Errorf("refused reset = isError %v text %q structured %s, want the config actor's reason", res.IsError, resultText(res), b)
	}
}
