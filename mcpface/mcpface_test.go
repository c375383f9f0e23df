package mcpface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestCapabilities pins serverInfo and capabilities on both eras
// (BASE-R04, BASE-R09, BASE-R18, SEP2640-R01, R02, R04, R06).
func TestCapabilities(t *testing.T) {
	fx := newFixture(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			init := cs.InitializeResult()
			if init.ServerInfo == nil || init.ServerInfo.Name != "skilljack-mcp" || init.ServerInfo.Version != "1.2.3" {
				t.Errorf("serverInfo = %+v, want skilljack-mcp 1.2.3", init.ServerInfo)
			}
			caps := init.Capabilities
			got, _ := json.Marshal(caps)
			var m map[string]any
			json.Unmarshal(got, &m)
			want := map[string]any{
				"completions": map[string]any{},
				"extensions":  map[string]any{"io.modelcontextprotocol/skills": map[string]any{"directoryRead": true}},
				// issue 13 item 3: the hidden-tools notice is a log message,
				// which a 2025-11-25 server must declare.
				"logging":   map[string]any{},
				"prompts":   map[string]any{"listChanged": true},
				"resources": map[string]any{"listChanged": true, "subscribe": true},
				"tools":     map[string]any{"listChanged": true},
			}
			if diff := cmp.Diff(want, m); diff != "" {
				t.Errorf("capabilities mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("static", func(t *testing.T) {
		cs := connect(t, newFacade(t, fx.cat, &mcpface.Options{Static: true}), legacy, nil)
		caps := cs.InitializeResult().Capabilities
		if caps.Tools.ListChanged || caps.Prompts.ListChanged || !caps.Resources.ListChanged {
			t.Errorf("static capabilities tools=%+v prompts=%+v resources=%+v", caps.Tools, caps.Prompts, caps.Resources)
		}
	})
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s, %v): %v", name, args, err)
	}
	return res
}

// TestTools covers load-skill and skill-resource, including the BR-21
// refusals, on both eras.
func TestTools(t *testing.T) {
	fx := newFixture(t)
	cr := fx.skills["skills__code-review"]
	md, _ := os.ReadFile(filepath.Join(cr.Dir, "SKILL.md"))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, &mcpface.Options{Tools: "always"}), era, nil)
			tests := []struct {
				name      string
				tool      string
				args      map[string]any
				wantError bool
				want      []string // substrings of the first text item
				exact     string
			}{
				{name: "load", tool: "load-skill", args: map[string]any{"name": "skills__code-review"}, exact: string(md)},
				{name: "load BR-09 name", tool: "load-skill", args: map[string]any{"name": "skills__My-First-Skill"}, want: []string{"name: My First Skill"}},
				{name: "load unknown BR-21", tool: "load-skill", args: map[string]any{"name": "../../etc"}, wantError: true,
					want: []string{`No skill named "../../etc"`, "skills__code-review", "skills__My-First-Skill"}},
				{name: "list files", tool: "skill-resource", args: map[string]any{"skill": "skills__code-review", "path": " "},
					want: []string{"- templates/email.md", "- assets/logo.png"}},
				{name: "text file", tool: "skill-resource", args: map[string]any{"skill": "skills__code-review", "path": "templates/email.md"}, exact: "Dear customer,\n"},
				{name: "sniffed text", tool: "skill-resource", args: map[string]any{"skill": "skills__code-review", "path": "notes.unknownext"}, exact: "plain words\n"},
				{name: "directory", tool: "skill-resource", args: map[string]any{"skill": "skills__code-review", "path": "templates"},
					exact: "--- templates/email.md ---\nDear customer,\n"},
				{name: "too large", tool: "skill-resource", args: map[string]any{"skill": "skills__code-review", "path": "big.txt"}, wantError: true, want: []string{"File too large: 0.00MB"}},
				{name: "missing with suggestions", tool: "skill-resource", args: map[string]any{"skill": "skills__many", "path": "refs/zz.md"}, wantError: true,
					want: []string{"- refs/a.md", "- refs/j.md", "... and 2 more"}},
				{name: "unknown skill", tool: "skill-resource", args: map[string]any{"skill": "nope", "path": "x"}, wantError: true, want: []string{"skills__code-review"}},
			}
			for _, p := range []string{".env", "SKILL.md", "../../../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "/etc/passwd", `..\..\SKILL.md`, "../../SKILL.md", "templates/../SKILL.md"} {
				tests = append(tests, struct {
					name      string
					tool      string
					args      map[string]any
					wantError bool
					want      []string
					exact     string
				}{name: "refuse " + p, tool: "skill-resource", args: map[string]any{"skill": "skills__code-review", "path": p}, wantError: true})
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					res := callTool(t, cs, tc.tool, tc.args)
					if res.IsError != tc.wantError {
						t.Fatalf("IsError = %v, want %v (%+v)", res.IsError, tc.wantError, res.Content)
					}
					if len(res.Content) == 0 {
						t.Fatal("no content")
					}
					text := textOf(t, res.Content[0])
					if tc.exact != "" && text != tc.exact {
						t.Errorf("text = %q, want %q", text, tc.exact)
					}
					for _, w := range tc.want {
						if !strings.Contains(text, w) {
							t.Errorf("text %q lacks %q", text, w)
						}
					}
					if tc.wantError && (strings.Contains(text, "SECRET") || strings.Contains(text, "Do the thing")) {
						t.Errorf("refusal leaked content: %q", text)
					}
				})
			}
			t.Run("binary blob", func(t *testing.T) {
				res := callTool(t, cs, "skill-resource", map[string]any{"skill": "skills__code-review", "path": "assets/logo.png"})
				er, ok := res.Content[0].(*mcp.EmbeddedResource)
				if !ok || res.IsError {
					t.Fatalf("content %T (isError %v), want embedded resource", res.Content[0], res.IsError)
				}
				if er.Resource.URI != "skill://skills/code-review/assets/logo.png" || er.Resource.MIMEType != "image/png" || !bytes.Equal(er.Resource.Blob, pngBytes) {
					t.Errorf("embedded = %+v", er.Resource)
				}
			})
			t.Run("directory binary placeholder", func(t *testing.T) {
				res := callTool(t, cs, "skill-resource", map[string]any{"skill": "skills__code-review", "path": "assets/"})
				if text := textOf(t, res.Content[0]); !strings.HasPrefix(text, "--- assets/logo.png ---\n[Binary file (image/png, 12 bytes). Read it on its own") {
					t.Errorf("text = %q", text)
				}
			})
		})
	}
}

// TestToolsModes checks --tools per request: auto hides the tools from a
// client declaring the skills extension, on both eras.
func TestToolsModes(t *testing.T) {
	fx := newFixture(t)
	both := []string{"load-skill", "skill-resource"}
	tests := []struct {
		mode, catalog string
		ext           bool
		want          []string
	}{
		{"auto", "", false, both},
		{"auto", "", true, nil},
		{"always", "", true, both},
		{"never", "", false, nil},
		{"auto", "tool-description", true, both},
	}
	for _, era := range eras {
		for _, tc := range tests {
			t.Run(era+"/"+tc.mode+"/"+tc.catalog+"/ext="+map[bool]string{true: "yes", false: "no"}[tc.ext], func(t *testing.T) {
				copts := &mcp.ClientOptions{}
				if tc.ext {
					copts.Capabilities = &mcp.ClientCapabilities{}
					copts.Capabilities.AddExtension(mcpface.SkillsExtension, nil)
				}
				cs := connect(t, newFacade(t, fx.cat, &mcpface.Options{Tools: tc.mode, CatalogMode: tc.catalog}), era, copts)
				lr, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, tool := range lr.Tools {
					got = append(got, tool.Name)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("tools/list mismatch (-want +got):\n%s", diff)
				}
				_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "skills__code-review"}})
				if hidden := tc.want == nil; hidden != (err != nil) {
					t.Errorf("CallTool(load-skill) error = %v, want error %v", err, hidden)
				}
			})
		}
	}
}

// TestToolsGolden pins the JSON of every tool the model sees.
func TestToolsGolden(t *testing.T) {
	fx := newFixture(t)
	cs := connect(t, newFacade(t, fx.cat, &mcpface.Options{Tools: "always"}), legacy, nil)
	lr, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lr.Tools {
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || !tool.Annotations.IdempotentHint ||
			tool.Annotations.DestructiveHint == nil || *tool.Annotations.DestructiveHint ||
			tool.Annotations.OpenWorldHint == nil || *tool.Annotations.OpenWorldHint {
			t.Errorf("tool %s annotations = %+v, want read-only, idempotent, not destructive, closed world", tool.Name, tool.Annotations)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(lr.Tools); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden (run go test ./mcpface -update): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tools JSON mismatch (-want +got):\n%s", diff)
	}
}

// TestPrompts covers the skill prompt, per-skill prompts and completion
// (BR-09: "first" finds skills__My-First-Skill; BASE-R28, R29).
func TestPrompts(t *testing.T) {
	fx := newFixture(t)
	cr := fx.skills["skills__code-review"]
	md, _ := os.ReadFile(filepath.Join(cr.Dir, "SKILL.md"))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			ctx := t.Context()
			lp, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range lp.Prompts {
				names = append(names, p.Name)
				if p.Name == "skill" {
					if p.Title != "Load Skill" || len(p.Arguments) != 1 || p.Arguments[0].Name != "name" || !p.Arguments[0].Required ||
						!strings.HasPrefix(p.Description, "Load a skill by name with auto-completion.") {
						t.Errorf("skill prompt = %+v", p)
					}
				}
			}
			wantNames := []string{"skill", "skills__My-First-Skill", "skills__code-review", "skills__escape", "skills__many"}
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Errorf("prompts mismatch (-want +got):\n%s", diff)
			}
			for _, get := range []*mcp.GetPromptParams{
				{Name: "skill", Arguments: map[string]string{"name": "skills__code-review"}},
				{Name: "skills__code-review"},
			} {
				res, err := cs.GetPrompt(ctx, get)
				if err != nil {
					t.Fatal(err)
				}
				er, ok := res.Messages[0].Content.(*mcp.EmbeddedResource)
				if !ok || res.Messages[0].Role != "user" {
					t.Fatalf("prompt %s message = %+v", get.Name, res.Messages[0])
				}
				if er.Resource.URI != cr.URI || er.Resource.MIMEType != "text/markdown" || er.Resource.Text != string(md) {
					t.Errorf("prompt %s resource = %+v", get.Name, er.Resource)
				}
				if diff := cmp.Diff(&mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 1}, er.Annotations); diff != "" {
					t.Errorf("annotations mismatch (-want +got):\n%s", diff)
				}
			}
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill", Arguments: map[string]string{"name": "nope"}})
			if err != nil {
				t.Fatal(err)
			}
			if text := textOf(t, res.Messages[0].Content); !strings.Contains(text, "skills__code-review") {
				t.Errorf("unknown-name text = %q", text)
			}

			comp, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "skill"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "first"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"skills__My-First-Skill"}, comp.Completion.Values); diff != "" {
				t.Errorf("completion BR-09 mismatch (-want +got):\n%s", diff)
			}
			comp, err = cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "skill://{+path}"},
				Argument: mcp.CompleteParamsArgument{Name: "path", Value: "EMAIL"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"skills/code-review/templates/email.md"}, comp.Completion.Values); diff != "" {
				t.Errorf("completion of template mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func listAllResources(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Resource {
	t.Helper()
	out := map[string]*mcp.Resource{}
	for r, err := range cs.Resources(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if out[r.URI] != nil {
			t.Errorf("resource %s listed twice", r.URI)
		}
		out[r.URI] = r
	}
	return out
}

// TestResourcesList checks metadata of resources/list (SEP2640-R19,
// BASE-R36) and the template.
func TestResourcesList(t *testing.T) {
	fx := newFixture(t)
	cr := fx.skills["skills__code-review"]
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			all := listAllResources(t, cs)
			nFiles := 0
			for _, s := range fx.cat.Skills {
				nFiles += len(s.Files)
			}
			if len(all) != nFiles+1 {
				t.Errorf("resources/list has %d entries, want %d", len(all), nFiles+1)
			}
			iso := func(f events.File) string { return f.ModTime.UTC().Format("2006-01-02T15:04:05.000Z") }
			want := map[string]*mcp.Resource{
				cr.URI: {URI: cr.URI, Name: "code-review", Description: "Review a diff.", MIMEType: "text/markdown", Size: cr.Files[0].Size,
					Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant", "user"}, Priority: 0.8, LastModified: iso(cr.Files[0])}},
				"skill://skills/code-review/assets/logo.png": {URI: "skill://skills/code-review/assets/logo.png", Name: "code-review/assets/logo.png",
					Description: "Supporting file in code-review", MIMEType: "image/png", Size: int64(len(pngBytes)),
					Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant", "user"}, Priority: 0.3, LastModified: iso(cr.Files[1])}},
				"skill://index.json": {URI: "skill://index.json", Name: "Skill Index", MIMEType: "application/json",
					Description: "Index of the skills this server serves (legacy discovery shape; prefer skills/list).",
					Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant", "user"}, Priority: 0.5}},
			}
			for uri, w := range want {
				if diff := cmp.Diff(w, all[uri]); diff != "" {
					t.Errorf("resource %s mismatch (-want +got):\n%s", uri, diff)
				}
			}
			mimes := map[string]string{
				"skill://skills/code-review/notes.unknownext":    "text/plain",
				"skill://skills/code-review/blob.weird":          "application/octet-stream",
				"skill://skills/code-review/templates/email.md":  "text/markdown",
				"skill://skills/My%20First%20Skill/SKILL.md":     "text/markdown",
				"skill://skills/code-review/templates/sub/x.txt": "text/plain",
			}
			for uri, m := range mimes {
				if r := all[uri]; r == nil || r.MIMEType != m {
					t.Errorf("resource %s = %+v, want mimeType %s", uri, r, m)
				}
			}
			if q := all[fx.skills["skills__quiet"].URI]; q == nil || q.Annotations.Audience != nil {
				t.Errorf("quiet skill resource = %+v, want empty audience", q)
			}
			tl, err := cs.ListResourceTemplates(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "skill://{+path}" || tl.ResourceTemplates[0].Name != "Skill" {
				t.Errorf("templates = %+v", tl.ResourceTemplates)
			}
		})
	}
}

// TestResourcesRead checks exact bytes, text against blob, and refusals
// (BR-21, SEP2640-R57..R60, BASE-R41).
func TestResourcesRead(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			cr := fx.skills["skills__code-review"]
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			ctx := t.Context()
			for _, f := range cr.Files {
				uri := cr.FileURI(f.Path)
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if f.Path == "big.txt" {
					if code := wireCode(err); code != -32603 {
						t.Errorf("read %s: error %v, want -32603", uri, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				c := res.Contents[0]
				b := []byte(c.Text)
				if c.Blob != nil {
					b = c.Blob
				}
				if digest(b) != f.Digest {
					t.Errorf("read %s: digest %s, want %s", uri, digest(b), f.Digest)
				}
				wantBlob := f.Path == "assets/logo.png" || f.Path == "blob.weird"
				if wantBlob != (c.Blob != nil) || wantBlob == (c.Text != "") {
					t.Errorf("read %s: text %q blob %v, want blob %v", uri, c.Text, c.Blob, wantBlob)
				}
			}
			bad := []string{
				"skill://skills/code-review/../../../../etc/passwd",
				"skill://skills/code-review/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
				"skill://skills/code-review//etc/passwd",
				"skill://skills/code-review/..%2f..%2fSKILL.md",
				"skill://code-review/../../../../etc/passwd",
				"skill://skills/code-review/../code-review/SKILL.md",
				"skill://skills/code-review/.env",
				`skill://skills/code-review/..\..\SKILL.md`,
				"skill://skills/my-first-skill/SKILL.md",
				"skill://skills/code-review",
				"skill://nope/SKILL.md",
			}
			for _, uri := range bad {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				we := wireError(t, err)
				var data struct{ URI string }
				json.Unmarshal(we.Data, &data)
				if we.Code != -32602 || !strings.Contains(we.Message, uri) || data.URI != uri {
					t.Errorf("read %s: error %d %q data %s, want -32602 naming the URI", uri, we.Code, we.Message, we.Data)
				}
			}
			// The bytes changed after hashing: never serve them.
			if err := os.WriteFile(filepath.Join(cr.Dir, "templates", "email.md"), []byte("Dear hacker,\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://skills/code-review/templates/email.md"})
			if we := wireError(t, err); we.Code != -32603 || !strings.Contains(we.Message, "changed on disk since it was hashed; retry after the catalog refreshes") {
				t.Errorf("changed file: error %d %q, want -32603", we.Code, we.Message)
			}
			res := callTool(t, cs, "load-skill", map[string]any{"name": "skills__code-review"})
			if res.IsError {
				t.Errorf("load-skill after unrelated change: %+v", res.Content)
			}
		})
	}
}

// TestIndexJSON checks the R0 shape of skill://index.json for listed skills
// only (SEP2640-R83, R84, R88).
func TestIndexJSON(t *testing.T) {
	fx := newFixture(t)
	cs := connect(t, newFacade(t, fx.cat, nil), legacy, nil)
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://index.json"})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contents[0]
	if c.MIMEType != "application/json" || !strings.Contains(c.Text, "\n  \"skills\": [") {
		t.Errorf("index = %s %q", c.MIMEType, c.Text)
	}
	var doc struct {
		Schema string `json:"$schema"`
		Skills []map[string]string
	}
	if err := json.Unmarshal([]byte(c.Text), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "https://schemas.agentskills.io/discovery/0.2.0/schema.json" {
		t.Errorf("$schema = %q", doc.Schema)
	}
	var want []map[string]string
	for _, s := range fx.cat.Skills {
		if s.Listed {
			want = append(want, map[string]string{"name": s.Name, "type": "skill-md", "description": s.Description, "url": s.URI, "digest": s.Files[0].Digest})
		}
	}
	if diff := cmp.Diff(want, doc.Skills); diff != "" {
		t.Errorf("index skills mismatch (-want +got):\n%s", diff)
	}
}

func entryOf(s *events.Skill) map[string]any {
	var fm map[string]any
	json.Unmarshal(s.Frontmatter, &fm)
	var rs []any
	for _, f := range s.Files {
		rs = append(rs, map[string]any{"uri": s.FileURI(f.Path), "digest": f.Digest, "size": float64(f.Size)})
	}
	return map[string]any{"uri": s.URI, "frontmatter": fm, "resources": rs}
}

// TestSkillsListGet checks skills/list and skills/get and the cache fields
// per era (SEP2640-R46..R56, BR-32).
func TestSkillsListGet(t *testing.T) {
	fx := newFixture(t)
	var listed []any
	for _, s := range fx.cat.Skills {
		if s.Listed {
			listed = append(listed, entryOf(s))
		}
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			cache := func(m map[string]any) {
				t.Helper()
				_, hasTTL := m["ttlMs"]
				_, hasScope := m["cacheScope"]
				if era == modern {
					if m["ttlMs"] != float64(0) || m["cacheScope"] != "private" || m["resultType"] != "complete" {
						t.Errorf("modern result: ttlMs=%v cacheScope=%v resultType=%v", m["ttlMs"], m["cacheScope"], m["resultType"])
					}
				} else if hasTTL || hasScope {
					t.Errorf("legacy result has cache fields: %v", m)
				}
				delete(m, "ttlMs")
				delete(m, "cacheScope")
				delete(m, "resultType")
				delete(m, "_meta")
			}
			m, err := call(t, cs, "skills/list", nil)
			if err != nil {
				t.Fatal(err)
			}
			cache(m)
			if diff := cmp.Diff(map[string]any{"skills": listed}, m); diff != "" {
				t.Errorf("skills/list mismatch (-want +got):\n%s", diff)
			}
			cr := fx.skills["skills__code-review"]
			m, err = call(t, cs, "skills/get", &rawParams{URI: cr.URI})
			if err != nil {
				t.Fatal(err)
			}
			cache(m)
			if diff := cmp.Diff(map[string]any{"skill": entryOf(cr)}, m); diff != "" {
				t.Errorf("skills/get mismatch (-want +got):\n%s", diff)
			}
			for _, tc := range []struct{ uri, msg string }{
				{"", "params.uri is required"},
				{"skill://nope/SKILL.md", "Not a skill served here: skill://nope/SKILL.md"},
				{fx.skills["skills__My-First-Skill"].URI, "Not a skill served here: " + fx.skills["skills__My-First-Skill"].URI},
				{"skill://skills/code-review/templates/email.md", "Not a skill served here: skill://skills/code-review/templates/email.md"},
			} {
				_, err := call(t, cs, "skills/get", &rawParams{URI: tc.uri})
				if we := wireError(t, err); we.Code != -32602 || we.Message != tc.msg {
					t.Errorf("skills/get %q: %d %q, want -32602 %q", tc.uri, we.Code, we.Message, tc.msg)
				}
			}
			_, err = call(t, cs, "skills/list", &rawParams{Cursor: "not base64!"})
			if code := wireCode(err); code != -32602 {
				t.Errorf("skills/list bad cursor: %v, want -32602", err)
			}
		})
	}
}

// TestSkillsListPages pages with size 2 while the catalog changes between
// pages: no skill is skipped or repeated (SEP2640-R39, R49).
func TestSkillsListPages(t *testing.T) {
	root := t.TempDir()
	mk := func(names ...string) []*events.Skill {
		var out []*events.Skill
		for _, n := range names {
			out = append(out, writeSkill(t, root, skillSpec{dir: n, name: n, desc: "d " + n}))
		}
		return out
	}
	f := newFacade(t, events.NewCatalog(1, false, mk("a", "b", "c", "d", "e"), nil), &mcpface.Options{PageSize: 2})
	cs := connect(t, f, modern, nil)
	uris := func(m map[string]any) []string {
		var out []string
		for _, s := range m["skills"].([]any) {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(s.(map[string]any)["uri"].(string), "skill://skills/"), "/SKILL.md"))
		}
		return out
	}
	p1, err := call(t, cs, "skills/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, uris(p1)); diff != "" {
		t.Fatalf("page 1 mismatch (-want +got):\n%s", diff)
	}
	// Remove a, add aa (before the cursor) and bb (after it).
	if !f.SetCatalog(events.NewCatalog(2, false, mk("aa", "b", "bb", "c", "d", "e"), nil)) {
		t.Fatal("SetCatalog(2) = false")
	}
	if f.SetCatalog(events.NewCatalog(1, false, mk("a"), nil)) {
		t.Error("SetCatalog(older) = true")
	}
	var got []string
	cursor, _ := p1["nextCursor"].(string)
	for cursor != "" {
		p, err := call(t, cs, "skills/list", &rawParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, uris(p)...)
		if p["cacheScope"] != p1["cacheScope"] {
			t.Errorf("cacheScope differs between pages: %v, %v", p["cacheScope"], p1["cacheScope"])
		}
		cursor, _ = p["nextCursor"].(string)
	}
	if diff := cmp.Diff([]string{"bb", "c", "d", "e"}, got); diff != "" {
		t.Errorf("later pages mismatch (-want +got):\n%s", diff)
	}
}

// TestDirectoryRead checks resources/directory/read (SEP2640-R64..R68).
func TestDirectoryRead(t *testing.T) {
	fx := newFixture(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			children := func(uri string) []string {
				t.Helper()
				m, err := call(t, cs, "resources/directory/read", &rawParams{URI: uri})
				if err != nil {
					t.Fatalf("directory read %s: %v", uri, err)
				}
				if (era == modern) != (m["resultType"] == "complete") {
					t.Errorf("resultType = %v on %s", m["resultType"], era)
				}
				var out []string
				for _, r := range m["resources"].([]any) {
					r := r.(map[string]any)
					out = append(out, r["uri"].(string)+" "+r["mimeType"].(string))
				}
				return out
			}
			want := []string{
				"skill://skills/code-review/SKILL.md text/markdown",
				"skill://skills/code-review/assets inode/directory",
				"skill://skills/code-review/big.txt text/plain",
				"skill://skills/code-review/blob.weird application/octet-stream",
				"skill://skills/code-review/notes.unknownext text/plain",
				"skill://skills/code-review/templates inode/directory",
			}
			if diff := cmp.Diff(want, children("skill://skills/code-review/")); diff != "" {
				t.Errorf("root mismatch (-want +got):\n%s", diff)
			}
			want = []string{"skill://skills/code-review/templates/email.md text/markdown", "skill://skills/code-review/templates/sub inode/directory"}
			if diff := cmp.Diff(want, children("skill://skills/code-review/templates")); diff != "" {
				t.Errorf("templates mismatch (-want +got):\n%s", diff)
			}
			for _, tc := range []struct{ uri, msg string }{
				{"skill://skills/code-review/SKILL.md", "skill://skills/code-review/SKILL.md is not a directory resource"},
				{"skill://skills/nothing-here", "No such directory: skill://skills/nothing-here"},
				{"skill://skills", "No such directory: skill://skills"},
				{"skill://skills/code-review/..", "No such directory: skill://skills/code-review/.."},
			} {
				_, err := call(t, cs, "resources/directory/read", &rawParams{URI: tc.uri})
				if we := wireError(t, err); we.Code != -32602 || we.Message != tc.msg {
					t.Errorf("directory read %s: %d %q, want -32602 %q", tc.uri, we.Code, we.Message, tc.msg)
				}
			}
		})
	}
}

// TestCatalogChannel checks the <available_skills> XML, its escaping, and
// that exactly one channel carries it.
func TestCatalogChannel(t *testing.T) {
	fx := newFixture(t)
	esc := fx.skills["skills__escape"]
	wantSkill := "<skill>\n<name>skills__escape</name>\n<description>Use &lt;b&gt; &amp; &quot;quotes&quot; &apos;here&apos;</description>\n" +
		"<location>" + filepath.Join(esc.Dir, "SKILL.md") + "</location>\n<uri>skill://skills/escape/SKILL.md</uri>\n</skill>\n"
	loadDesc := func(cs *mcp.ClientSession) string {
		lr, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range lr.Tools {
			if tool.Name == "load-skill" {
				return tool.Description
			}
		}
		t.Fatal("no load-skill")
		return ""
	}
	for _, era := range eras {
		t.Run(era+"/instructions", func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, &mcpface.Options{Tools: "always"}), era, nil)
			ins := cs.InitializeResult().Instructions
			for _, w := range []string{"# Skills", "<available_skills>\n<skill>", wantSkill, "<name>skills__My-First-Skill</name>",
				"<uri>skill://skills/My%20First%20Skill/SKILL.md</uri>", "call `load-skill`"} {
				if !strings.Contains(ins, w) {
					t.Errorf("instructions lack %q:\n%s", w, ins)
				}
			}
			if strings.Contains(ins, "skills__quiet") {
				t.Error("instructions list a skill that is not model-invocable")
			}
			if d := loadDesc(cs); strings.Contains(d, "<available_skills>\n") {
				t.Errorf("load-skill description carries the catalog too: %q", d)
			}
		})
		t.Run(era+"/tool-description", func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, &mcpface.Options{CatalogMode: "tool-description"}), era, nil)
			if ins := cs.InitializeResult().Instructions; ins != "" {
				t.Errorf("instructions = %q, want none", ins)
			}
			if d := loadDesc(cs); !strings.Contains(d, wantSkill) {
				t.Errorf("load-skill description lacks the catalog: %q", d)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		cs := connect(t, newFacade(t, events.NewCatalog(1, false, nil, nil), &mcpface.Options{Tools: "never"}), legacy, nil)
		ins := cs.InitializeResult().Instructions
		if !strings.HasSuffix(ins, "\n<available_skills>\n</available_skills>") || !strings.Contains(ins, "no skill-loading tool") {
			t.Errorf("instructions = %q", ins)
		}
	})
	t.Run("auto wording", func(t *testing.T) {
		cs := connect(t, newFacade(t, fx.cat, nil), legacy, nil)
		ins := cs.InitializeResult().Instructions
		if !strings.Contains(ins, "io.modelcontextprotocol/skills") || !strings.Contains(ins, "does not offer the `load-skill` tool") || !strings.Contains(ins, "Otherwise call `load-skill`") {
			t.Errorf("auto instructions = %q", ins)
		}
	})
}

// TestPanicRecovered makes a handler path panic: the client gets -32603 and
// the server keeps answering.
func TestPanicRecovered(t *testing.T) {
	fx := newFixture(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			f := newFacade(t, fx.cat, nil)
			mcpface.SetPanicHook(f, func(method string) {
				if method == "prompts/list" {
					panic("boom")
				}
			})
			cs := connect(t, f, era, nil)
			_, err := cs.ListPrompts(t.Context(), nil)
			if code := wireCode(err); code != -32603 {
				t.Errorf("ListPrompts after panic: %v, want -32603", err)
			}
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Errorf("ListTools after panic: %v", err)
			}
		})
	}
}

// TestSubscribe accepts served URIs only (DESIGN: cheap -32602 for unknown).
func TestSubscribe(t *testing.T) {
	fx := newFixture(t)
	cs := connect(t, newFacade(t, fx.cat, nil), legacy, nil)
	ctx := t.Context()
	for _, uri := range []string{"skill://index.json", fx.skills["skills__code-review"].URI, "skill://skills/code-review/templates/email.md"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Errorf("Subscribe(%s): %v", uri, err)
		}
	}
	for _, uri := range []string{"skill://nope/SKILL.md", "skill://skills/code-review/../code-review/SKILL.md", "file:///etc/passwd"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); wireCode(err) != -32602 {
			t.Errorf("Subscribe(%s) = %v, want -32602", uri, err)
		}
	}
}

// TestNotifications checks that a new catalog, delivered through Run, reaches
// the client as list_changed notifications, and that resources.updated
// events, the index's included, reach subscribers (BASE-R22, R24; issue 11
// item 5: the notifier alone decides them). The catalog sits in the load-skill description, so that a new skill
// changes the tools list too.
func TestNotifications(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			f := newFacade(t, fx.cat, &mcpface.Options{CatalogMode: mcpface.CatalogToolDescription})
			tools, prompts, resources := make(chan struct{}, 10), make(chan struct{}, 10), make(chan struct{}, 10)
			updated := make(chan string, 10)
			// On 2026-07-28, subscriptions ride on subscriptions/listen
			// streams that the client opens without waiting; the server's
			// acknowledgement says the subscription is in place.
			acks := make(chan struct{}, 10)
			ackWatcher := func(c *mcp.Client) {
				c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "notifications/subscriptions/acknowledged" {
							acks <- struct{}{}
						}
						return next(ctx, method, req)
					}
				})
			}
			cs := connect(t, f, era, &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts <- struct{}{} },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					updated <- r.Params.URI
				},
			}, ackWatcher)
			if era == modern {
				waitFor(t, acks, "list_changed listen acknowledgement")
			}
			email := "skill://skills/code-review/templates/email.md"
			for _, uri := range []string{events.IndexURI, email} {
				if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
					t.Fatal(err)
				}
				if era == modern {
					waitFor(t, acks, "subscription acknowledgement")
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			catalogs, updates := make(chan *message.Message), make(chan *message.Message)
			done := make(chan error, 1)
			go func() { done <- f.Run(ctx, catalogs, updates) }()

			skills := slices.Clone(fx.cat.Skills)
			skills = append(skills, writeSkill(t, fx.root, skillSpec{dir: "fresh", name: "fresh", desc: "New skill."}))
			msg, err := events.Encode(&events.CatalogChanged{Catalog: events.NewCatalog(2, false, skills, nil)})
			if err != nil {
				t.Fatal(err)
			}
			catalogs <- msg
			waitFor(t, msg.Acked(), "catalog message ack")
			// What the notifier publishes for the new skill.
			msg, _ = events.Encode(&events.ResourcesUpdated{Version: 2, URIs: []string{events.IndexURI}})
			updates <- msg
			waitFor(t, tools, "tools/list_changed")
			waitFor(t, prompts, "prompts/list_changed")
			waitFor(t, resources, "resources/list_changed")
			if got := waitFor(t, updated, "resources/updated"); got != events.IndexURI {
				t.Errorf("resources/updated uri = %s, want %s", got, events.IndexURI)
			}
			lp, err := cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(lp.Prompts, func(p *mcp.Prompt) bool { return p.Name == "skills__fresh" }) {
				t.Error("new skill has no prompt after the refresh")
			}

			msg, _ = events.Encode(&events.ResourcesUpdated{Version: 2, URIs: []string{email}})
			updates <- msg
			if got := waitFor(t, updated, "resources/updated of a file"); got != email {
				t.Errorf("resources/updated uri = %s, want %s", got, email)
			}
			cancel()
			if err := waitFor(t, done, "Run to return"); err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		})
	}
}

// TestServerWaitsForCatalog checks that Server blocks until the first catalog
// (or ctx).
func TestServerWaitsForCatalog(t *testing.T) {
	f := mcpface.New(nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.Server(ctx); err == nil {
		t.Error("Server(cancelled ctx) before any catalog = nil error")
	}
	select {
	case <-f.Ready():
		t.Fatal("Ready before SetCatalog")
	default:
	}
	f.SetCatalog(events.NewCatalog(1, false, nil, nil))
	waitFor(t, f.Ready(), "Ready")
	if _, err := f.Server(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestNestedBundledAndPaging serves a nested skill (BR-18), a bundled skill
// read from an fs.FS, and enough files that resources/list pages (BR-35).
func TestNestedBundledAndPaging(t *testing.T) {
	root := t.TempDir()
	assets := map[string][]byte{"inner/SKILL.md": skillMD("inner", "Nested."), "inner/refs/note.md": []byte("note\n")}
	for i := range 600 {
		assets[fmt.Sprintf("assets/icon-%03d.bin", i)] = []byte{0xff, byte(i), byte(i >> 8)}
	}
	outer := writeSkill(t, root, skillSpec{dir: "outer", name: "outer", desc: "Enclosing.", files: assets})
	in := *outer
	inner := &in
	inner.QualifiedName, inner.Name, inner.Description = "skills__outer__inner", "inner", "Nested."
	inner.SkillPath, inner.URI, inner.Dir = "skills/outer/inner", "skill://skills/outer/inner/SKILL.md", filepath.Join(outer.Dir, "inner")
	inner.Frontmatter = json.RawMessage(`{"name":"inner","description":"Nested."}`)
	inner.Files, inner.SkillMD = nil, assets["inner/SKILL.md"]
	for _, f := range outer.Files {
		if rel, ok := strings.CutPrefix(f.Path, "inner/"); ok {
			f.Path = rel
			inner.Files = append(inner.Files, f)
		}
	}

	bmd := skillMD("bundled", "Ships with the binary.")
	bundled := &events.Skill{
		QualifiedName: "bundled", Name: "bundled", Description: "Ships with the binary.", SkillPath: "bundled",
		URI: "skill://bundled/SKILL.md", Source: events.Source{ID: "bundled", Kind: events.SourceBundled, Root: "."},
		Dir: "skills/bundled", Frontmatter: json.RawMessage(`{"name":"bundled","description":"Ships with the binary."}`),
		Listed: true, ModelInvocable: true, UserInvocable: true,
		Files:   []events.File{fileOf("SKILL.md", bmd, time.Time{})},
		SkillMD: bmd,
	}
	fsys := fstest.MapFS{"skills/bundled/SKILL.md": {Data: bmd}}
	cat := events.NewCatalog(1, false, []*events.Skill{outer, inner, bundled}, nil)
	f := newFacade(t, cat, &mcpface.Options{Bundled: fsys, Tools: "always"})
	cs := connect(t, f, modern, nil)

	all := listAllResources(t, cs)
	if want := len(outer.Files) + 2; len(all) != want {
		t.Errorf("resources/list has %d URIs, want %d", len(all), want)
	}
	if r := all[inner.URI]; r == nil || r.Name != "inner" || r.Annotations.Priority != 0.8 {
		t.Errorf("nested SKILL.md resource = %+v, want inner's own", r)
	}
	if r := all["skill://skills/outer/assets/icon-000.bin"]; r == nil || r.MIMEType != "application/octet-stream" || r.Size != 3 {
		t.Errorf("icon resource = %+v", r)
	}
	res := callTool(t, cs, "load-skill", map[string]any{"name": "bundled"})
	if res.IsError || textOf(t, res.Content[0]) != string(bmd) {
		t.Errorf("load-skill bundled = %+v", res.Content)
	}
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "<name>bundled</name>\n<description>Ships with the binary.</description>\n<uri>") {
		t.Errorf("bundled catalog entry should have no <location>:\n%s", ins)
	}
	m, err := call(t, cs, "resources/directory/read", &rawParams{URI: "skill://skills/outer/inner"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m["resources"].([]any)); n != 2 {
		t.Errorf("inner directory has %d children, want 2 (SKILL.md, refs)", n)
	}
	m, err = call(t, cs, "skills/get", &rawParams{URI: outer.URI})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m["skill"].(map[string]any)["resources"].([]any)); n != len(outer.Files) {
		t.Errorf("outer manifest has %d elements, want %d (nested files included)", n, len(outer.Files))
	}
}
