package test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestIssue13StaticRename is issue 13 item 12: with --static the skill set
// is fixed at startup, so a skill whose frontmatter name changes keeps
// serving under its startup name and URI — prompt, load-skill, resources —
// with its new content, is left out of skills/list (its frontmatter no
// longer matches its URI) and is warned about; the new name is not served
// until a restart, which then serves it.
func TestIssue13StaticRename(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "lib")
			md := filepath.Join(root, "s", "SKILL.md")
			writeFile(t, md, skillBody("s", "Before."))
			n := newNotes()
			s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", "--static", root)
			const uri = "skill://lib/s/SKILL.md"
			s.subscribe(uri)
			if s.entry(uri) == nil {
				t.Fatalf("skills/list has no %s at startup", uri)
			}

			renamed := skillBody("renamed", "After.")
			writeFile(t, md, renamed)
			for got := ""; got != uri; {
				got = wait(t, n.updated, "resources/updated for "+uri, s.stderr)
			}
			if b, _, err := s.readBytes(uri); err != nil || string(b) != renamed {
				t.Errorf("resources/read %s = %q, %v; want the renamed SKILL.md", uri, b, err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			pr, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "lib__s"})
			if err != nil || len(pr.Messages) != 1 {
				t.Fatalf("prompts/get lib__s = %+v, %v", pr, err)
			}
			if er, ok := pr.Messages[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource.Text != renamed {
				t.Errorf("prompt lib__s after the rename = %+v; want the renamed SKILL.md, not a \"removed\" message", pr.Messages[0].Content)
			}
			if res := s.callTool("load-skill", map[string]any{"name": "lib__s"}); res.IsError || !strings.Contains(textOf(res), "After.") {
				t.Errorf("load-skill lib__s = %q (error %v), want the new content", textOf(res), res.IsError)
			}
			if !s.hasPrompt("lib__s") || s.hasPrompt("lib__renamed") {
				t.Errorf("prompts/list: lib__s %v, lib__renamed %v; want the startup name only", s.hasPrompt("lib__s"), s.hasPrompt("lib__renamed"))
			}
			if s.entry(uri) != nil || s.entry("skill://lib/renamed/SKILL.md") != nil {
				t.Error("skills/list lists the renamed skill; its frontmatter name no longer matches its URI")
			}
			if res := s.callTool("load-skill", map[string]any{"name": "lib__renamed"}); !res.IsError && strings.Contains(textOf(res), "After.") {
				t.Errorf("load-skill lib__renamed served the skill under its new name before a restart: %q", textOf(res))
			}
			stderr := s.close()
			if !strings.Contains(stderr, "renamed to lib__renamed after startup") || !strings.Contains(stderr, "restart the server to serve it as lib__renamed") {
				t.Errorf("no rename warning on stderr:\n%s", stderr)
			}

			// After a restart the new name is what is served.
			s2 := startServer(t, era, base, noReconcile, "--tools=always", "--static", root)
			if s2.entry("skill://lib/renamed/SKILL.md") == nil || !s2.hasPrompt("lib__renamed") || s2.hasPrompt("lib__s") {
				t.Error("after a restart the skill is not served under its new name")
			}
		})
	}
}
