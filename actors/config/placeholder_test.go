package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

// TestLoadPlaceholders is issue 15: an MCP host that cannot fill in a
// ${user_config.x} placeholder (MCPB's resolver passes an unset optional
// field on as its literal text) must not make the server serve a missing
// folder called "${user_config.skill_dirs}" or read a wrong value. Such an
// argument, or a flag whose value is one, is ignored with one warning; an
// environment variable holding one reads as unset, like an empty one, and
// the next place (here the config file) is used.
func TestLoadPlaceholders(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "team")
	if err := os.MkdirAll(filepath.Join(home, ".skilljack"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"skillDirectories": ["` + dir + `"], "githubAllowedOrgs": ["acme"], "githubAllowedUsers": ["bob"]}`
	if err := os.WriteFile(filepath.Join(home, ".skilljack", "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"SKILLJACK_TOOLS":            "${user_config.tools}",
		"GITHUB_ALLOWED_ORGS":        "${user_config.github_allowed_orgs}",
		"GITHUB_TOKEN":               " ${user_config.github_token} ",
		"WELL_KNOWN_ALLOWED_ORIGINS": "",
		"GITHUB_ALLOWED_USERS":       "  ",
	}
	args := []string{"--", "${user_config.skill_dirs}", "--catalog=${user_config.catalog}"}
	st, warnings, err := config.Load(config.LoadOptions{Args: args, Getenv: func(k string) string { return env[k] }, Home: home, Cwd: home})
	if err != nil {
		t.Fatal(err)
	}
	if st.Config.ActiveSource != "config" || len(st.Config.Sources) != 2 || st.Config.Sources[0].Root != dir {
		t.Errorf("sources = %s %+v, want the config file's %s then the bundled one", st.Config.ActiveSource, st.Config.Sources, dir)
	}
	if st.Tools != "auto" || st.Config.GitHub.Token != "" || strings.Join(st.Config.GitHub.AllowedOwners, ",") != "acme,bob" {
		t.Errorf("tools %q, token %q, owners %v; want auto, none and the config file's acme,bob (an empty variable is unset)", st.Tools, st.Config.GitHub.Token, st.Config.GitHub.AllowedOwners)
	}
	var all []string
	for _, w := range warnings {
		all = append(all, w.Message)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{
		`argument "${user_config.skill_dirs}" ignored: it is an unreplaced placeholder`,
		"environment variable SKILLJACK_TOOLS ignored",
		"environment variable GITHUB_ALLOWED_ORGS ignored",
		"environment variable GITHUB_TOKEN ignored",
	} {
		if n := strings.Count(text, want); n != 1 {
			t.Errorf("%d warnings containing %q, want 1; warnings:\n%s", n, want, text)
		}
	}
	// The --catalog=… value is an unreplaced placeholder too; the "--"
	// before it makes it a source, and as a source it is ignored as well.
	if strings.Count(text, "unreplaced placeholder") != 5 || strings.Contains(text, "WELL_KNOWN_ALLOWED_ORIGINS") || strings.Contains(text, "GITHUB_ALLOWED_USERS") {
		t.Errorf("want exactly 5 placeholder warnings and none about an empty variable; warnings:\n%s", text)
	}
	for _, src := range st.Config.Sources {
		if strings.Contains(src.Location, "${") {
			t.Errorf("a placeholder became the source %+v", src)
		}
	}
}
