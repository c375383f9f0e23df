package test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLiveConfigFile is issue 11 item 4's end-to-end run on the built
// binary, both eras, one process throughout: ~/.skilljack/config.json
// edited by hand adds a folder (its skills appear, with list_changed),
// removes it (gone), adds an allowlisted GitHub repository (synced from a
// fake GitHub API over TLS and served), sets an override (the skill leaves
// the catalog and its prompt goes), and finally becomes corrupt (one clear
// warning naming the file, the last good configuration keeps serving, the
// file is not overwritten). GITHUB_TOKEN reaches neither the log nor the
// trace.
func TestLiveConfigFile(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			gh := newFakeGitHub(t)
			gh.push("acme", "skills", "main", false, map[string]string{"gamma/SKILL.md": skillBody("gamma", "From GitHub.")})
			base := t.TempDir()
			home := filepath.Join(base, "home")
			cfgPath := filepath.Join(home, ".skilljack", "config.json")
			lib := filepath.Join(base, "lib")
			writeFile(t, filepath.Join(lib, "alpha", "SKILL.md"), skillBody("alpha", "A local skill."))
			certFile := filepath.Join(base, "fake-github.pem")
			cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gh.srv.Certificate().Raw})
			if err := os.WriteFile(certFile, cert, 0o644); err != nil {
				t.Fatal(err)
			}
			trace := filepath.Join(base, "trace.jsonl")
			edit := func(v any) []byte {
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				// write + rename, as an editor saves
				writeFile(t, cfgPath+".edit", string(b))
				if err := os.Rename(cfgPath+".edit", cfgPath); err != nil {
					t.Fatal(err)
				}
				return b
			}
			edit(map[string]any{"theme": "kept"})

			n := newNotes()
			s := startServerNotes(t, era, base, []string{
				"HOME=" + home,
				"SKILLJACK_CACHE_DIR=" + filepath.Join(base, "cache"),
				"GITHUB_API_URL=" + gh.srv.URL,
				"GITHUB_TOKEN=" + ghToken,
				"GITHUB_POLL_INTERVAL_MS=0",
				"SSL_CERT_FILE=" + certFile,
			}, n, "--tools=always", "--catalog=tool-description", "--trace="+trace)

			alpha := "skill://lib/alpha/SKILL.md"
			gamma := "skill://acme-skills/gamma/SKILL.md"
			drain(n)
			edit(map[string]any{"theme": "kept", "skillDirectories": []string{lib}})
			wait(t, n.resources, "resources list_changed after adding a folder", s.stderr)
			s.eventually("the added folder's skill served", func() bool { return s.entry(alpha) != nil && s.hasPrompt("lib__alpha") })

			drain(n)
			edit(map[string]any{"theme": "kept", "skillDirectories": []string{}})
			wait(t, n.resources, "resources list_changed after removing the folder", s.stderr)
			s.eventually("the removed folder's skill gone", func() bool { return s.entry(alpha) == nil })

			drain(n)
			edit(map[string]any{"theme": "kept", "skillDirectories": []string{"github.com/acme/skills"}, "githubAllowedOrgs": []string{"acme"}})
			wait(t, n.resources, "resources list_changed after adding a GitHub repository", s.stderr)
			s.eventually("the GitHub repository's skill served", func() bool {
				b, _, err := s.readBytes(gamma)
				return err == nil && string(b) == skillBody("gamma", "From GitHub.")
			})
			if !strings.Contains(loadSkillDescription(t, s), "acme-skills__gamma") {
				t.Errorf("the catalog lacks acme-skills__gamma before the override")
			}

			drain(n)
			edit(map[string]any{"theme": "kept", "skillDirectories": []string{"github.com/acme/skills"}, "githubAllowedOrgs": []string{"acme"},
				"skillInvocationOverrides": map[string]any{"acme-skills__gamma": map[string]any{"assistant": false, "user": false}}})
			s.eventually("the overridden skill out of the catalog and its prompt gone", func() bool {
				return !strings.Contains(loadSkillDescription(t, s), "acme-skills__gamma") && !s.hasPrompt("acme-skills__gamma")
			})

			const corrupt = `{"skillDirectories": [` // cut off mid-save
			writeFile(t, cfgPath, corrupt)
			warning := "config file " + cfgPath + " is not valid JSON"
			waitFor(t, "a warning about the corrupt config file", func() bool {
				return len(stderrLines(s.stderr.String(), warnLevels, warning)) > 0
			}, s.stderr)
			// Several polls (250 ms) later the last good configuration
			// still serves, and the warning was not repeated (checked below).
			time.Sleep(time.Second)
			if b, _, err := s.readBytes(gamma); err != nil || string(b) != skillBody("gamma", "From GitHub.") {
				t.Errorf("after the corrupt edit %s = %q, %v; want it still served", gamma, b, err)
			}
			if b, _ := os.ReadFile(cfgPath); string(b) != corrupt {
				t.Errorf("config.json = %q, want it left as written %q", b, corrupt)
			}

			stderr := s.close()
			if got := stderrLines(stderr, warnLevels, warning); len(got) != 1 {
				t.Errorf("%d warnings about the corrupt file, want 1:\n%s", len(got), stderr)
			}
			if strings.Contains(stderr, ghToken) {
				t.Errorf("the token appears in the log")
			}
			if b, err := os.ReadFile(trace); err != nil || strings.Contains(string(b), ghToken) || !strings.Contains(string(b), `"github":{"owner":"acme"`) {
				t.Errorf("trace (%v): want the parsed repository and never the token", err)
			}
		})
	}
}

// drain empties the list_changed channels, so that a wait sees a
// notification sent after this point.
func drain(n *notes) {
	for _, ch := range []chan struct{}{n.tools, n.prompts, n.resources} {
		for len(ch) > 0 {
			<-ch
		}
	}
}

// loadSkillDescription returns the load-skill tool's description, which
// holds the catalog under --catalog=tool-description.
func loadSkillDescription(t *testing.T, s *server) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for tool, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if tool.Name == "load-skill" {
			return tool.Description
		}
	}
	t.Fatal("no load-skill tool")
	return ""
}
