package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFile serves the skill folders named by ~/.skilljack/config.json
// (HOME redirected) with its invocation overrides, on both eras: the
// overrides hold from the very first catalog, which fixes the stdio
// instructions (reference §2.3).
func TestConfigFile(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			home := t.TempDir()
			skills := filepath.Join(t.TempDir(), "team")
			for _, name := range []string{"quiet", "hidden-prompt", "plain"} {
				dir := filepath.Join(skills, name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				body := "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\nBody.\n"
				if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := map[string]any{
				"skillDirectories": []string{skills},
				"skillInvocationOverrides": map[string]any{
					"team__quiet":         map[string]any{"assistant": false},
					"team__hidden-prompt": map[string]any{"user": false},
				},
			}
			b, _ := json.Marshal(cfg)
			if err := os.MkdirAll(filepath.Join(home, ".skilljack"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".skilljack", "config.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			s := startServer(t, era, t.TempDir(), []string{"HOME=" + home}, "--tools=always")
			instr := s.cs.InitializeResult().Instructions
			if strings.Contains(instr, "<name>team__quiet</name>") {
				t.Error("assistant:false skill team__quiet is in the catalog")
			}
			for _, q := range []string{"team__hidden-prompt", "team__plain"} {
				if !strings.Contains(instr, "<name>"+q+"</name>") {
					t.Errorf("catalog lacks %s", q)
				}
			}
			if s.hasPrompt("team__hidden-prompt") {
				t.Error("user:false skill team__hidden-prompt has a prompt")
			}
			for _, q := range []string{"team__quiet", "team__plain"} {
				if !s.hasPrompt(q) {
					t.Errorf("prompt %s missing", q)
				}
			}
			// Hiding is not removal: every skill stays in skills/list.
			n := 0
			for _, e := range s.listAll() {
				if strings.HasPrefix(e.URI, "skill://team/") {
					n++
				}
			}
			if n != 3 {
				t.Errorf("skills/list has %d team skills, want 3", n)
			}
		})
	}
}
