package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// The config and display tools (issue 14; reference §1.2, §7; spec
// mcp-apps-and-mcpb.md Part A) end to end: the real pipeline with a live
// config file (config actor with Reload, as main runs it), the facade with
// its config inboxes, and go-sdk clients over in-memory transports on both
// protocol eras, with and without the MCP Apps extension.

// appStack is a running pipeline and facade whose configuration is live.
type appStack struct {
	srv    *mcp.Server
	home   string
	cancel context.CancelFunc
	done   chan error
}

// startAppStack serves dirs (none: the config file decides) with HOME at
// home and the environment env, as main does on stdio.
func startAppStack(t testing.TB, home string, env map[string]string, dirs ...string) *appStack {
	t.Helper()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return env[k]
	}
	opts := config.ResolveOptions{Args: dirs, Home: home, Cwd: home, Getenv: getenv}
	cfg, err := config.Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bus := events.NewBus(nil)
	sub := func(topic string) <-chan *message.Message {
		ch, err := bus.Subscribe(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	catalogs, updates := sub(events.TopicCatalogChanged), sub(events.TopicResourcesUpdated)
	applied, views := sub(events.TopicConfigApplied), sub(events.TopicConfigView)
	p, err := actors.NewPipeline(ctx, bus, bus, cfg, &actors.PipelineOptions{
		Bundled: actors.Bundled(),
		Reload:  func() (config.Config, error) { return config.Resolve(opts) },
		// No test here reaches the network: every remote fetch fails.
		HTTPClient: &http.Client{Transport: noNetwork{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always", Bundled: actors.Bundled(), Static: cfg.Static, Publisher: bus})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return facade.Run(gctx, catalogs, updates) })
	g.Go(func() error { return facade.RunConfig(gctx, applied, views) })
	g.Go(func() error { return p.Run(gctx) })
	st := &appStack{home: home, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := g.Wait()
		bus.Close()
		st.done <- err
	}()
	t.Cleanup(func() {
		st.cancel()
		select {
		case err := <-st.done:
			if err != nil {
				t.Errorf("pipeline: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("pipeline did not stop")
		}
	})
	srv, err := facade.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.srv = srv
	return st
}

// uiCaps are the capabilities of a host that renders MCP Apps
// (TV-APPS-01).
func uiCaps() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Extensions: map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}
}

// connect opens a session on era with client capabilities caps (nil: the
// SDK's defaults, no extension).
func (st *appStack) connect(t testing.TB, era string, caps *mcp.ClientCapabilities) *mcp.ClientSession {
	t.Helper()
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := st.srv.Connect(context.Background(), stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "apps-e2e", Version: "v0"}, &mcp.ClientOptions{Capabilities: caps})
	if err := mcp.AddSendingCustomMethod[*skillsParams, *skillsResult](client, "skills/list"); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// toolSet lists the tools of cs by name.
func toolSet(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// call calls the tool name with args and checks its structuredContent
// against the outputSchema tools/list advertised (reference #94/#103): no
// undeclared key, every required one present.
func call(t testing.TB, cs *mcp.ClientSession, tools map[string]*mcp.Tool, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	tool := tools[name]
	if tool == nil || tool.OutputSchema == nil {
		t.Fatalf("%s: no outputSchema advertised", name)
	}
	b, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s outputSchema: %v", name, err)
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(sc, &out); err != nil {
		t.Fatalf("%s structuredContent %s: %v", name, sc, err)
	}
	if err := resolved.Validate(out); err != nil {
		t.Errorf("%s structuredContent does not validate against its outputSchema: %v\n%s", name, err, sc)
	}
	if len(res.Content) == 0 || textOf(res) == "" {
		t.Errorf("%s: no text content for the model", name)
	}
	return res, out
}

// writeSkillDir writes one skill folder name under dir.
func writeSkillDir(t testing.TB, dir, name, desc string) {
	t.Helper()
	p := filepath.Join(dir, name, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\n\nDo it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAppsAddDirectory: skill-config and skill-config-add-directory on both
// eras; the added folder's skills are in the same session's skills/list
// once the tool answers.
func TestAppsAddDirectory(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			home := t.TempDir()
			team := filepath.Join(home, "team")
			writeSkillDir(t, team, "deploy", "Deploy the service.")
			st := startAppStack(t, home, nil)
			cs := st.connect(t, era, uiCaps())
			tools := toolSet(t, cs)
			_, before := call(t, cs, tools, "skill-config", map[string]any{})
			if dirs, _ := before["directories"].([]any); len(dirs) != 0 {
				t.Errorf("skill-config directories before = %v, want none", dirs)
			}
			res, got := call(t, cs, tools, "skill-config-add-directory", map[string]any{"directory": team})
			if res.IsError {
				t.Fatalf("add-directory: %s", textOf(res))
			}
			dirs, _ := got["directories"].([]any)
			if len(dirs) != 1 {
				t.Fatalf("directories after add = %v, want one", got["directories"])
			}
			d := dirs[0].(map[string]any)
			if d["path"] != team || d["source"] != "config" || d["type"] != "local" || d["skillCount"] != float64(1) || d["valid"] != true {
				t.Errorf("directory card = %v, want %s config local 1 skill valid", d, team)
			}
			var uris []string
			list, err := mcp.CallCustomMethod[*skillsParams, *skillsResult](t.Context(), cs, "skills/list", &skillsParams{})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range list.Skills {
				uris = append(uris, e.URI)
			}
			if !slices.Contains(uris, "skill://team/deploy/SKILL.md") {
				t.Errorf("skills/list after add-directory = %v, want skill://team/deploy/SKILL.md", uris)
			}
		})
	}
}

// noNetwork fails every request.
type noNetwork struct{}

func (noNetwork) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, errors.New("no network in this test: " + r.URL.String())
}

// readConfig returns the config file of home as a JSON object, and checks
// that it is 0600 and that no temporary file is left beside it (written
// atomically: a temporary file renamed over it).
func readConfig(t *testing.T, home string) map[string]any {
	t.Helper()
	dir := filepath.Join(home, ".skilljack")
	p := filepath.Join(dir, "config.json")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s mode = %v, want 0600", p, fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", p, err, b)
	}
	return m
}

func writeConfig(t testing.TB, home, body string) {
	t.Helper()
	dir := filepath.Join(home, ".skilljack")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// skillURIs lists the SKILL.md URIs of the session's skills/list.
func skillURIs(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := mcp.CallCustomMethod[*skillsParams, *skillsResult](t.Context(), cs, "skills/list", &skillsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, e := range list.Skills {
		uris = append(uris, e.URI)
	}
	return uris
}

// dirCard returns the directory card of path in a config result.
func dirCard(out map[string]any, path string) map[string]any {
	dirs, _ := out["directories"].([]any)
	for _, d := range dirs {
		if m, _ := d.(map[string]any); m["path"] == path {
			return m
		}
	}
	return nil
}

func strList(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestAppsConfigTools: every skill-config tool on both eras through the
// real config actor: each result validates against the advertised
// outputSchema; config.json is rewritten atomically (0600, no temporary
// file left) keeping the keys this release does not know; the changes are
// served by the time the tool answers (a folder's skills in the same
// session's skills/list); refusals (Already configured, a missing folder,
// a bad origin, a bad org, an entry not in the file) are isError results
// with the reason.
func TestAppsConfigTools(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			home := t.TempDir()
			alpha, team := filepath.Join(home, "alpha"), filepath.Join(home, "team")
			writeSkillDir(t, alpha, "lint", "Lint the code.")
			writeSkillDir(t, team, "deploy", "Deploy the service.")
			writeConfig(t, home, `{"skillDirectories": ["`+alpha+`"], "futureKey": {"kept": [1, 2]}}`)
			st := startAppStack(t, home, nil)
			cs := st.connect(t, era, uiCaps())
			tools := toolSet(t, cs)
			ok := func(name string, args map[string]any) (string, map[string]any) {
				t.Helper()
				res, out := call(t, cs, tools, name, args)
				if res.IsError || out["success"] != true {
					t.Fatalf("%s(%v) = error %q", name, args, textOf(res))
				}
				return textOf(res), out
			}
			refused := func(name string, args map[string]any, want string) {
				t.Helper()
				res, out := call(t, cs, tools, name, args)
				if !res.IsError || out["success"] != false || !strings.Contains(textOf(res), want) || !strings.Contains(out["error"].(string), want) {
					t.Errorf("%s(%v) = isError %v text %q structured %v, want a refusal saying %q", name, args, res.IsError, textOf(res), out, want)
				}
			}

			_, out := ok("skill-config", map[string]any{})
			if c := dirCard(out, alpha); c == nil || c["source"] != "config" || c["type"] != "local" || c["skillCount"] != float64(1) || c["active"] != true {
				t.Errorf("skill-config card of %s = %v, want config local active 1 skill", alpha, c)
			}
			if out["activeSource"] != "config" || out["isOverridden"] != false || out["staticMode"] != false {
				t.Errorf("skill-config = %v, want activeSource config, not overridden, static off", out)
			}

			text, out := ok("skill-config-add-directory", map[string]any{"directory": team})
			if c := dirCard(out, team); c == nil || c["skillCount"] != float64(1) || !strings.Contains(text, "Added directory: "+team) {
				t.Errorf("add-directory = %q %v, want the team card with 1 skill", text, out)
			}
			if uris := skillURIs(t, cs); !slices.Contains(uris, "skill://team/deploy/SKILL.md") {
				t.Errorf("skills/list after add-directory = %v, want the team skill", uris)
			}
			file := readConfig(t, home)
			if got := strList(file["skillDirectories"]); !slices.Equal(got, []string{alpha, team}) {
				t.Errorf("config.json skillDirectories = %v, want [%s %s]", got, alpha, team)
			}
			if kept, _ := json.Marshal(file["futureKey"]); string(kept) != `{"kept":[1,2]}` {
				t.Errorf("config.json futureKey = %s, want the unknown key kept as written", kept)
			}

			refused("skill-config-add-directory", map[string]any{"directory": team}, "Already configured")
			missing := filepath.Join(home, "nowhere")
			refused("skill-config-add-directory", map[string]any{"directory": missing}, missing)
			refused("skill-config-remove-directory", map[string]any{"directory": filepath.Join(home, "other")}, "not in skillDirectories")

			ok("skill-config-remove-directory", map[string]any{"directory": team})
			if uris := skillURIs(t, cs); slices.Contains(uris, "skill://team/deploy/SKILL.md") {
				t.Errorf("skills/list after remove-directory = %v, want no team skill", uris)
			}

			// A GitHub entry is BLOCKED until its owner is allowlisted.
			repo := "github.com/acme/skills"
			_, out = ok("skill-config-add-directory", map[string]any{"directory": repo})
			if c := dirCard(out, repo); c == nil || c["type"] != "github" || c["allowed"] != false {
				t.Errorf("card of %s = %v, want github, not allowed (BLOCKED)", repo, c)
			}
			_, out = ok("skill-config-add-allowed-org", map[string]any{"org": "Acme"})
			if c := dirCard(out, repo); !slices.Equal(strList(out["allowedOrgs"]), []string{"Acme"}) || c == nil || c["allowed"] != true {
				t.Errorf("after add-allowed-org: allowedOrgs %v, card %v; want [Acme] and the repository allowed", out["allowedOrgs"], c)
			}
			refused("skill-config-add-allowed-org", map[string]any{"org": "not an org!"}, "not a GitHub organisation")
			_, out = ok("skill-config-remove-allowed-org", map[string]any{"org": "acme"})
			if len(strList(out["allowedOrgs"])) != 0 {
				t.Errorf("allowedOrgs after remove = %v, want none", out["allowedOrgs"])
			}
			ok("skill-config-remove-directory", map[string]any{"directory": repo})

			_, out = ok("skill-config-add-allowed-origin", map[string]any{"origin": "https://Skills.Example.com/.well-known/agent-skills/index.json"})
			if got := strList(out["allowedOrigins"]); !slices.Equal(got, []string{"https://skills.example.com"}) {
				t.Errorf("allowedOrigins = %v, want the URL reduced to https://skills.example.com", got)
			}
			refused("skill-config-add-allowed-origin", map[string]any{"origin": "http://plain.example.com"}, "WELL_KNOWN_ALLOW_HTTP")
			refused("skill-config-add-allowed-origin", map[string]any{"origin": "not a url"}, "not a url")
			_, out = ok("skill-config-remove-allowed-origin", map[string]any{"origin": "https://skills.example.com"})
			if len(strList(out["allowedOrigins"])) != 0 {
				t.Errorf("allowedOrigins after remove = %v, want none", out["allowedOrigins"])
			}

			text, out = ok("skill-config-set-static-mode", map[string]any{"enabled": true})
			if out["staticMode"] != true || !strings.Contains(text, "restart") || !strings.Contains(out["note"].(string), "next start") {
				t.Errorf("set-static-mode = %q %v, want staticMode true and a restart note", text, out)
			}
			file = readConfig(t, home)
			if file["staticMode"] != true || file["futureKey"] == nil {
				t.Errorf("config.json after set-static-mode = %v, want staticMode true and futureKey kept", file)
			}
			// Not static now: the tools stay (it applies at the next start).
			if _, ok := toolSet(t, cs)["skill-config-add-directory"]; !ok {
				t.Error("set-static-mode took the tools away from the running server")
			}
		})
	}
}

// TestAppsConfigOverridden: sources on the command line win over the
// config file (reference §2.1): skill-config says so (isOverridden, the
// CLI card active, the file's card not), and an added folder is saved with
// a note rather than served.
func TestAppsConfigOverridden(t *testing.T) {
	home := t.TempDir()
	cli, saved, extra := filepath.Join(home, "cli"), filepath.Join(home, "saved"), filepath.Join(home, "extra")
	writeSkillDir(t, cli, "one", "One.")
	writeSkillDir(t, saved, "two", "Two.")
	writeSkillDir(t, extra, "three", "Three.")
	later := filepath.Join(home, "later")
	writeConfig(t, home, `{"skillDirectories": ["`+saved+`", "`+later+`"]}`)
	st := startAppStack(t, home, nil, cli)
	cs := st.connect(t, legacyVersion, uiCaps())
	tools := toolSet(t, cs)
	res, out := call(t, cs, tools, "skill-config", map[string]any{})
	if res.IsError || out["activeSource"] != "cli" || out["isOverridden"] != true {
		t.Fatalf("skill-config = %v, want activeSource cli, overridden", out)
	}
	if c := dirCard(out, cli); c == nil || c["source"] != "cli" || c["active"] != true || c["skillCount"] != float64(1) {
		t.Errorf("CLI card = %v, want cli, active, 1 skill", c)
	}
	if c := dirCard(out, saved); c == nil || c["source"] != "config" || c["active"] != false || c["skillCount"] != float64(0) {
		t.Errorf("config-file card = %v, want config, not active, 0 skills", c)
	}
	if !strings.Contains(textOf(res), "command line or SKILLS_DIR sets the directories") {
		t.Errorf("skill-config text = %q, want the override explained", textOf(res))
	}
	// Validity is checked at each call: a folder made since shows valid.
	if c := dirCard(out, later); c == nil || c["valid"] != false {
		t.Errorf("card of the missing %s = %v, want valid false", later, c)
	}
	if err := os.Mkdir(later, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, out := call(t, cs, tools, "skill-config", map[string]any{}); dirCard(out, later)["valid"] != true {
		t.Errorf("card of %s once made = %v, want valid true", later, dirCard(out, later))
	}
	res, out = call(t, cs, tools, "skill-config-add-directory", map[string]any{"directory": extra})
	if res.IsError || !strings.Contains(out["note"].(string), "command line") {
		t.Errorf("add-directory while overridden = %q %v, want saved with a note naming the command line", textOf(res), out)
	}
	if uris := skillURIs(t, cs); slices.Contains(uris, "skill://extra/three/SKILL.md") {
		t.Errorf("skills/list = %v: a folder saved while the command line wins is served", uris)
	}
}

// instructionsOf returns the instructions a new session gets.
func (st *appStack) instructionsOf(t *testing.T, era string) string {
	t.Helper()
	return st.connect(t, era, nil).InitializeResult().Instructions
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
	}
	return names
}

// TestAppsDisplayOverrides: skill-display and its two app-only tools on
// both eras. assistant=false takes the skill out of the <available_skills>
// of the next session's instructions; user=false takes its prompt out of
// prompts/list (the same session's, once the tool answers); Reset brings
// both back; the overrides are saved in config.json under the qualified
// name; an unknown skill is an isError result.
func TestAppsDisplayOverrides(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			home := t.TempDir()
			alpha := filepath.Join(home, "alpha")
			writeSkillDir(t, alpha, "lint", "Lint the code.")
			writeSkillDir(t, alpha, "fmt", "Format the code.")
			writeConfig(t, home, `{"skillDirectories": ["`+alpha+`"], "futureKey": true}`)
			st := startAppStack(t, home, nil)
			cs := st.connect(t, era, uiCaps())
			tools := toolSet(t, cs)
			const entry = "<name>alpha__lint</name>"
			if in := st.instructionsOf(t, era); !strings.Contains(in, entry) {
				t.Fatalf("instructions before any override lack %s:\n%s", entry, in)
			}

			res, out := call(t, cs, tools, "skill-display", map[string]any{})
			skills, _ := out["skills"].([]any)
			if res.IsError || out["totalCount"] != float64(len(skills)) || len(skills) < 2 {
				t.Fatalf("skill-display = %v", out)
			}
			lint := skills[slices.IndexFunc(skills, func(s any) bool { return s.(map[string]any)["name"] == "alpha__lint" })].(map[string]any)
			if lint["baseName"] != "lint" || lint["sourceType"] != "local" || lint["sourceDisplayName"] != "Local" ||
				lint["path"] != filepath.Join(alpha, "lint", "SKILL.md") || lint["assistantInvocable"] != true || lint["isAssistantOverridden"] != false {
				t.Errorf("skill-display card of alpha__lint = %v", lint)
			}

			res, out = call(t, cs, tools, "skill-display-update-invocation", map[string]any{"skillName": "alpha__lint", "setting": "assistant", "value": false})
			if res.IsError {
				t.Fatalf("update-invocation: %s", textOf(res))
			}
			if c := card(out, "alpha__lint"); c["assistantInvocable"] != false || c["isAssistantOverridden"] != true {
				t.Errorf("card after assistant off = %v, want assistant off, overridden", c)
			}
			if in := st.instructionsOf(t, era); strings.Contains(in, entry) || !strings.Contains(in, "<name>alpha__fmt</name>") {
				t.Errorf("a new session's instructions after assistant off still list alpha__lint (or lost alpha__fmt):\n%s", in)
			}
			res, _ = call(t, cs, tools, "skill-display-update-invocation", map[string]any{"skillName": "alpha__lint", "setting": "user", "value": false})
			if res.IsError {
				t.Fatalf("update-invocation user: %s", textOf(res))
			}
			if names := promptNames(t, cs); slices.Contains(names, "alpha__lint") || !slices.Contains(names, "alpha__fmt") {
				t.Errorf("prompts/list after user off = %v, want alpha__fmt without alpha__lint", names)
			}
			file := readConfig(t, home)
			if ov, _ := json.Marshal(file["skillInvocationOverrides"]); string(ov) != `{"alpha__lint":{"assistant":false,"user":false}}` || file["futureKey"] != true {
				t.Errorf("config.json = %v, want the overrides of alpha__lint and futureKey kept", file)
			}

			res, out = call(t, cs, tools, "skill-display-reset-override", map[string]any{"skillName": "alpha__lint"})
			if c := card(out, "alpha__lint"); res.IsError || c["assistantInvocable"] != true || c["userInvocable"] != true || c["isAssistantOverridden"] != false || c["isUserOverridden"] != false {
				t.Errorf("card after reset = %v (%s), want both back from the frontmatter", c, textOf(res))
			}
			if in := st.instructionsOf(t, era); !strings.Contains(in, entry) {
				t.Errorf("a new session's instructions after reset lack %s", entry)
			}
			if names := promptNames(t, cs); !slices.Contains(names, "alpha__lint") {
				t.Errorf("prompts/list after reset = %v, want alpha__lint back", names)
			}
			if _, has := readConfig(t, home)["skillInvocationOverrides"].(map[string]any)["alpha__lint"]; has {
				t.Error("config.json keeps the override of alpha__lint after reset")
			}

			for _, tc := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"skill-display-update-invocation", map[string]any{"skillName": "nope__nothing", "setting": "user", "value": false}, `unknown skill "nope__nothing"`},
				{"skill-display-reset-override", map[string]any{"skillName": "nope__nothing"}, `unknown skill "nope__nothing"`},
			} {
				res, out := call(t, cs, tools, tc.tool, tc.args)
				if !res.IsError || out["success"] != false || !strings.Contains(textOf(res), tc.want) {
					t.Errorf("%s(%v) = isError %v %q, want a refusal saying %s", tc.tool, tc.args, res.IsError, textOf(res), tc.want)
				}
			}
			// The setting enum is in the input schema: a bad one is refused
			// before the handler runs.
			if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill-display-update-invocation",
				Arguments: map[string]any{"skillName": "alpha__lint", "setting": "both", "value": false}}); err == nil && !res.IsError {
				t.Errorf("update-invocation with setting both = %s, want refused", textOf(res))
			}
		})
	}
}

// card returns the display card of the skill name.
func card(out map[string]any, name string) map[string]any {
	skills, _ := out["skills"].([]any)
	for _, s := range skills {
		if m, _ := s.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// loadingTools are the names of load-skill and skill-resource among tools:
// the tests of --tools count those (every stdio client also gets
// skill-config and skill-display, issue 14).
func loadingTools(tools *mcp.ListToolsResult) []string {
	var out []string
	for _, tool := range tools.Tools {
		if tool.Name == "load-skill" || tool.Name == "skill-resource" {
			out = append(out, tool.Name)
		}
	}
	return out
}

// TestAppsConfigFileUnparseable: a config file that is not JSON is never
// overwritten by a config tool: the change is refused as an isError result
// naming the backup the config actor made, and the file stays as written.
func TestAppsConfigFileUnparseable(t *testing.T) {
	home := t.TempDir()
	folder := filepath.Join(home, "team")
	writeSkillDir(t, folder, "deploy", "Deploy.")
	const body = `{"skillDirectories": [ oops`
	writeConfig(t, home, body)
	st := startAppStack(t, home, nil)
	cs := st.connect(t, modernVersion, uiCaps())
	res, out := call(t, cs, toolSet(t, cs), "skill-config-add-directory", map[string]any{"directory": folder})
	if !res.IsError || out["success"] != false || !strings.Contains(textOf(res), "config.json.bak-") {
		t.Errorf("add-directory with an unparseable config.json = isError %v %q, want a refusal naming the backup", res.IsError, textOf(res))
	}
	if b, err := os.ReadFile(filepath.Join(home, ".skilljack", "config.json")); err != nil || string(b) != body {
		t.Errorf("config.json = %q, %v; want it left as written", b, err)
	}
}

// BenchmarkAppsAddRemoveDirectory measures a config change end to end as a
// UI host sees it: skill-config-add-directory then -remove-directory of a
// folder with 20 skills, each answering once the catalog of its change is
// served (config actor: file write and re-read; hasher scan; catalog;
// facade swap). Reported per add+remove pair.
func BenchmarkAppsAddRemoveDirectory(b *testing.B) {
	home := b.TempDir()
	folder := filepath.Join(home, "team")
	for i := range 20 {
		writeSkillDir(b, folder, fmt.Sprintf("skill-%02d", i), "A skill.")
	}
	writeConfig(b, home, `{}`)
	st := startAppStack(b, home, nil)
	cs := st.connect(b, legacyVersion, uiCaps())
	for b.Loop() {
		for _, name := range []string{"skill-config-add-directory", "skill-config-remove-directory"} {
			res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"directory": folder}})
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %v", name, err, res)
			}
		}
	}
}
