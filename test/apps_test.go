package test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
func startAppStack(t *testing.T, home string, env map[string]string, dirs ...string) *appStack {
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
func (st *appStack) connect(t *testing.T, era string, caps *mcp.ClientCapabilities) *mcp.ClientSession {
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
func toolSet(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
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
func call(t *testing.T, cs *mcp.ClientSession, tools map[string]*mcp.Tool, name string, args any) (*mcp.CallToolResult, map[string]any) {
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
func writeSkillDir(t *testing.T, dir, name, desc string) {
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
