package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// TestRunAppsTools: the program as main runs it (config actor with a live
// config file, the facade's config inboxes) serves the config tools on
// both eras to a host that renders MCP Apps: skill-config-add-directory
// saves the folder in ~/.skilljack/config.json and its skill is served
// (resources/list) by the time the tool answers; a client without the UI
// extension sees skill-config and skill-display but no app-only tool
// (issue 14). test/apps_test.go covers every tool.
func TestRunAppsTools(t *testing.T) {
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			home := t.TempDir()
			folder := filepath.Join(home, "team")
			writeFile(t, filepath.Join(folder, "deploy", "SKILL.md"), skillBody("deploy", "Deploy the service."))
			ui := &mcp.ClientCapabilities{Extensions: map[string]any{apps.ExtensionID: map[string]any{"mimeTypes": []string{apps.MIMEType}}}}
			r := startRun(t, version, map[string]string{"HOME": home}, &mcp.ClientOptions{Capabilities: ui})
			res, err := r.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "skill-config-add-directory", Arguments: map[string]any{"directory": folder}})
			if err != nil || res.IsError {
				t.Fatalf("skill-config-add-directory = %+v, %v\nstderr:\n%s", res, err, r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(home, ".skilljack", "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var file struct {
				SkillDirectories []string `json:"skillDirectories"`
			}
			if err := json.Unmarshal(b, &file); err != nil || !slices.Equal(file.SkillDirectories, []string{folder}) {
				t.Errorf("config.json = %s (%v), want skillDirectories [%s]", b, err, folder)
			}
			lr, err := r.cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(lr.Resources, func(res *mcp.Resource) bool { return res.URI == "skill://team/deploy/SKILL.md" }) {
				t.Errorf("resources/list after add-directory lacks skill://team/deploy/SKILL.md")
			}
			r.stop(t)

			text := startRun(t, version, map[string]string{"HOME": home}, nil)
			tools, err := text.cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			for _, name := range names {
				if strings.HasPrefix(name, "skill-config-") || strings.HasPrefix(name, "skill-display-") {
					t.Errorf("a client without the UI extension lists %s (tools %v)", name, names)
				}
			}
			if !slices.Contains(names, "skill-config") || !slices.Contains(names, "skill-display") {
				t.Errorf("tools = %v, want skill-config and skill-display for a text client", names)
			}
			text.stop(t)
		})
	}
}
