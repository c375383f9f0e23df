package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// fixtureBackend answers the host with fixed tool results in the shapes of
// the TypeScript reference (reference §1.2: lower-case source and type, no
// totalSkills, a set-static-mode result of {success, staticMode} only), for
// the states the real server cannot be brought into in a test: an empty
// catalog (the bundled skill is always served), 60 skills, a result that
// omits an emptied list. The views are read from mcpface/apps, the files the
// binary embeds.
type fixtureBackend struct {
	mu      sync.Mutex
	results map[string]string // tool name -> CallToolResult JSON
}

func (f *fixtureBackend) raw(_ context.Context, method string, params any) (json.RawMessage, error) {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	b, _ := params.(json.RawMessage)
	json.Unmarshal(b, &p)
	switch method {
	case "tools/list":
		return json.RawMessage(`{"tools":[
			{"name":"skill-config","_meta":{"ui":{"resourceUri":"ui://skill-config/mcp-app.html"}}},
			{"name":"skill-display","_meta":{"ui":{"resourceUri":"ui://skill-display/skill-display.html"}}},
			{"name":"skill-config-set-static-mode","_meta":{"ui":{"resourceUri":"ui://skill-config/mcp-app.html","visibility":["app"]}}},
			{"name":"skill-config-remove-allowed-org","_meta":{"ui":{"resourceUri":"ui://skill-config/mcp-app.html","visibility":["app"]}}}]}`), nil
	case "resources/read":
		file := map[string]string{
			"ui://skill-config/mcp-app.html":        "../../mcpface/apps/skill-config.html",
			"ui://skill-display/skill-display.html": "../../mcpface/apps/skill-display.html",
		}[p.URI]
		html, err := os.ReadFile(file)
		if err != nil {
			return nil, &rpcError{Code: -32002, Message: "no resource " + p.URI}
		}
		return json.Marshal(map[string]any{"contents": []any{map[string]any{"uri": p.URI, "mimeType": uiMIMEType, "text": string(html)}}})
	case "tools/call":
		f.mu.Lock()
		defer f.mu.Unlock()
		if r, ok := f.results[p.Name]; ok {
			return json.RawMessage(r), nil
		}
		return nil, &rpcError{Code: -32602, Message: "fixture has no result for " + p.Name}
	}
	return json.RawMessage(`{}`), nil
}

func toolResult(structured string) string {
	return `{"content":[{"type":"text","text":"fixture"}],"structuredContent":` + structured + `}`
}

// TestViewsReferenceShapes renders the reference's result shapes and the
// edge states: counts and badges, an emptied list omitted from a snapshot,
// a partial static-mode result, the 50-skill warnings, the empty catalog.
func TestViewsReferenceShapes(t *testing.T) {
	js := bundleHost(t)
	browser := newBrowser(t)
	snapshot := func(head, orgs string) string {
		return toolResult(`{` + head + `"directories":[
			{"path":"/home/u/skills","source":"config","type":"local","valid":true,"allowed":true,"skillCount":40},
			{"path":"github.com/acme/skills","source":"config","type":"github","valid":true,"allowed":false,"skillCount":0},
			{"path":"/home/u/gone","source":"config","type":"local","valid":false,"allowed":true,"skillCount":0},
			{"path":"https://example.com/.well-known/agent-skills/","source":"config","type":"well-known","valid":true,"allowed":true,"skillCount":12}],
			"activeSource":"config","isOverridden":false,"staticMode":false` + orgs + `,"allowedUsers":[],"allowedOrigins":["https://example.com"]}`)
	}

	t.Run("config", func(t *testing.T) {
		fb := &fixtureBackend{results: map[string]string{
			"skill-config":                    snapshot("", `,"allowedOrgs":["acme"]`),
			"skill-config-set-static-mode":    toolResult(`{"success":true,"staticMode":true}`),
			"skill-config-remove-allowed-org": snapshot(`"success":true,`, ""),
		}}
		v := openView(t, browser, startHost(t, fb, js), "skill-config", "light", "allow-scripts")
		v.wait(`document.querySelectorAll("#dirs li").length === 4`, "four cards")
		if got, want := v.text("#stats"), "4 directories, 52 skills total (1 missing)"; got != want {
			t.Errorf("stats = %q, want %q", got, want)
		}
		for path, want := range map[string][]string{
			"/home/u/skills":         {"CONFIG", "LOCAL", "40 skills", "Remove"},
			"github.com/acme/skills": {"GITHUB", "BLOCKED"},
			"/home/u/gone":           {"missing"},
			"https://example.com/.well-known/agent-skills/": {"WELL-KNOWN", "12 skills"},
		} {
			got := v.text(`#dirs li[data-path=` + jsq(path) + `]`)
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("card %s = %q, want %q in it", path, got, w)
				}
			}
		}
		if !eval[bool](v, `!document.getElementById("many").hidden`) {
			t.Error("no warning at 52 skills")
		}
		v.do(`document.getElementById("static").click()`)
		v.wait(`document.getElementById("toast").textContent.includes("Restart")`, "the restart toast")
		if !eval[bool](v, `document.getElementById("static").checked && document.querySelectorAll("#dirs li").length === 4`) {
			t.Error("a partial static-mode result unchecked the box or dropped the directories")
		}
		v.do(`document.querySelector("#orgs li button").click()`)
		v.wait(`document.querySelectorAll("#orgs li").length === 0`, "the org list to empty (the snapshot omits allowedOrgs)")
	})

	t.Run("display", func(t *testing.T) {
		var skills []string
		for i := range 60 {
			skills = append(skills, fmt.Sprintf(`{"name":"s%02d","baseName":"s%02d","description":"skill %d","path":"/p/s%02d/SKILL.md","assistantInvocable":true,"userInvocable":true,"isAssistantOverridden":false,"isUserOverridden":false,"sourceType":"github","sourceDisplayName":"acme/skills","sourceOwner":"acme","sourceRepo":"skills"}`, i, i, i, i))
		}
		fb := &fixtureBackend{results: map[string]string{
			"skill-display": toolResult(`{"skills":[` + strings.Join(skills, ",") + `],"totalCount":60}`),
		}}
		v := openView(t, browser, startHost(t, fb, js), "skill-display", "light", "allow-scripts")
		v.wait(`document.querySelectorAll("#skills li").length === 60`, "60 cards")
		if !eval[bool](v, `!document.getElementById("many").hidden`) {
			t.Error("no warning at 60 assistant-invocable skills")
		}
		if got := v.text(`#skills li[data-skill="s07"] .badge`); got != "acme/skills" {
			t.Errorf("GitHub source badge = %q, want acme/skills", got)
		}
	})

	t.Run("display empty", func(t *testing.T) {
		fb := &fixtureBackend{results: map[string]string{"skill-display": toolResult(`{"totalCount":0}`)}}
		v := openView(t, browser, startHost(t, fb, js), "skill-display", "dark", "allow-scripts")
		v.wait(`!document.getElementById("empty").hidden`, "the empty state")
		if got := v.text("#empty"); !strings.Contains(got, "skill-config") {
			t.Errorf("empty state = %q, want a pointer to the skill-config app", got)
		}
	})
}
