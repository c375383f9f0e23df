package config_test

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

var update = flag.Bool("update", false, "rewrite the README's settings tables from the settings table")

// TestREADMESettings: the README's settings tables are generated from
// config.SettingsTable; a stale README fails, go test ./actors -run
// TestREADMESettings -update rewrites it (issue 11 item 4).
func TestREADMESettings(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, table := range []string{config.TableServe, config.TableRemote} {
		re := regexp.MustCompile(`(?s)(<!-- settings table ` + table + `: [^\n]*-->\n)(.*?)(<!-- end of settings table ` + table + ` -->)`)
		m := re.FindStringSubmatchIndex(readme)
		if m == nil {
			t.Fatalf("README has no settings table %q between its markers", table)
		}
		want := config.SettingsMarkdown(table)
		if got := readme[m[4]:m[5]]; got != want {
			if !*update {
				t.Errorf("README settings table %q is stale; run go test ./actors/config -run TestREADMESettings -update\n--- README\n%s--- generated\n%s", table, got, want)
				continue
			}
			readme = readme[:m[4]] + want + readme[m[5]:]
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSettingsTableComplete: every flag, variable and config key appears
// once in the table, every row is documented, and every documented name
// the code reads is in it (issue 11 item 4).
func TestSettingsTableComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range config.SettingsTable() {
		names := append([]string{s.Flag, s.Alias, s.FileKey}, s.Env...)
		for _, n := range names {
			if n == "" {
				continue
			}
			if seen[n] {
				t.Errorf("%s is in the settings table twice", n)
			}
			seen[n] = true
		}
		if s.Doc == "" {
			t.Errorf("setting %v has no doc", names)
		}
	}
	// Every name the reference (§2) and the README document.
	for _, n := range []string{"SKILLS_DIR", "SKILLJACK_STATIC", "SKILLJACK_CATALOG", "SKILLJACK_TOOLS", "SKILLJACK_HTTP_PORT", "SKILLJACK_HTTP",
		"MAX_FILE_SIZE_MB", "GITHUB_TOKEN", "GITHUB_POLL_INTERVAL_MS", "GITHUB_ALLOWED_ORGS", "GITHUB_ALLOWED_USERS", "SKILLJACK_CACHE_DIR",
		"WELL_KNOWN_ALLOWED_ORIGINS", "WELL_KNOWN_POLL_INTERVAL_MS", "WELL_KNOWN_MAX_ARTIFACT_MB", "WELL_KNOWN_MAX_UNPACKED_MB", "WELL_KNOWN_ALLOW_HTTP",
		"--static", "--http", "--catalog", "--tools",
		"skillDirectories", "staticMode", "skillInvocationOverrides", "githubAllowedOrgs", "githubAllowedUsers", "wellKnownAllowedOrigins"} {
		if !seen[n] {
			t.Errorf("%s (reference §2) is not in the settings table", n)
		}
	}
}

// TestLoadDefaults: with nothing set, Load gives each setting the default
// the table (and so the README) states (issue 11 item 4).
func TestLoadDefaults(t *testing.T) {
	home := t.TempDir()
	st, warnings, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, Home: home, Cwd: home})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("Load: %v, warnings %v", err, warnings)
	}
	got := fmt.Sprintf("%s %s %q %d %d %v %v %d %s %v %d %v", st.Tools, st.Catalog, st.Trace, st.MaxFileSize, st.MaxSkillMDSize, st.Reconcile,
		st.HTTP, st.HTTPPort, st.HTTPHost, st.HTTPOrigins, st.HTTPMaxConcurrent, st.LogLevel)
	want := fmt.Sprintf("auto instructions \"\" %d %d %v false 3000 127.0.0.1 [] 0 INFO", 1<<20, config.DefaultMaxSkillMDSize, config.DefaultReconcile)
	if got != want {
		t.Errorf("defaults:\n got %s\nwant %s", got, want)
	}
	wk, gh := st.Config.WellKnown, st.Config.GitHub
	if wk.PollInterval != config.DefaultPollInterval || wk.MaxArtifactBytes != config.DefaultMaxArtifactBytes ||
		wk.MaxUnpackedBytes != config.DefaultMaxUnpackedBytes || wk.MaxSkills != config.DefaultWellKnownMaxSkills ||
		wk.MaxCacheBytes != config.DefaultWellKnownMaxCacheBytes || gh.MaxTarballBytes != config.DefaultGitHubMaxTarballBytes ||
		gh.MaxUnpackedBytes != config.DefaultGitHubMaxUnpackedBytes || gh.APIURL != config.DefaultGitHubAPIURL || gh.PollInterval != config.DefaultPollInterval {
		t.Errorf("remote defaults: %+v %v", wk, gh)
	}
}

// TestLoadDialects: one boolean dialect and one MiB parser for every
// setting; precedence flag > variable > default (issue 11 item 4).
func TestLoadDialects(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		check    func(config.Settings) string
		wantWarn string
	}{
		{name: "SKILLJACK_HTTP=YES", env: map[string]string{"SKILLJACK_HTTP": "YES"},
			check: func(s config.Settings) string { return fmt.Sprint(s.HTTP, s.HTTPPort) + " want true 3000" }},
		{name: "SKILLJACK_HTTP=on warns", env: map[string]string{"SKILLJACK_HTTP": "on"},
			check: func(s config.Settings) string { return fmt.Sprint(s.HTTP) + " want false" }, wantWarn: "SKILLJACK_HTTP is not one of true, 1, yes"},
		{name: "--static=yes", args: []string{"--static=yes"},
			check: func(s config.Settings) string { return fmt.Sprint(s.Config.Static) + " want true" }},
		{name: "--static=TRUE", args: []string{"--static=TRUE"},
			check: func(s config.Settings) string { return fmt.Sprint(s.Config.Static) + " want true" }},
		{name: "WELL_KNOWN_ALLOW_HTTP=True", env: map[string]string{"WELL_KNOWN_ALLOW_HTTP": "True"},
			check: func(s config.Settings) string { return fmt.Sprint(s.Config.WellKnown.AllowHTTP) + " want true" }},
		{name: "fractional MiB everywhere", env: map[string]string{"MAX_FILE_SIZE_MB": "0.5", "WELL_KNOWN_MAX_UNPACKED_MB": "1.5"},
			check: func(s config.Settings) string {
				return fmt.Sprint(s.MaxFileSize, s.Config.WellKnown.MaxUnpackedBytes) + fmt.Sprint(" want ", 1<<19, 3<<19)
			}},
		{name: "remote MiB below 1 warns", env: map[string]string{"GITHUB_MAX_TARBALL_MB": "0.5"},
			check: func(s config.Settings) string {
				return fmt.Sprint(s.Config.GitHub.MaxTarballBytes) + fmt.Sprint(" want ", config.DefaultGitHubMaxTarballBytes)
			}, wantWarn: "GITHUB_MAX_TARBALL_MB is below the minimum of 1 MiB"},
		{name: "flag beats variable", args: []string{"--max-skill-md-mb=2"}, env: map[string]string{"MAX_SKILL_MD_MB": "3"},
			check: func(s config.Settings) string { return fmt.Sprint(s.MaxSkillMDSize) + fmt.Sprint(" want ", 2<<20) }},
		{name: "--verbose", args: []string{"--verbose"},
			check: func(s config.Settings) string { return s.LogLevel.String() + " want DEBUG" }},
		{name: "--http=0 is a free port, SKILLJACK_HTTP_PORT=0 is not", args: []string{"--http=0"}, env: map[string]string{"SKILLJACK_HTTP_PORT": "0"},
			check: func(s config.Settings) string { return fmt.Sprint(s.HTTP, s.HTTPPort) + " want true 0" }},
		{name: "bad --http= keeps HTTP on", args: []string{"--http=x"},
			check: func(s config.Settings) string { return fmt.Sprint(s.HTTP, s.HTTPPort) + " want true 3000" }, wantWarn: "--http is not a port number"},
		{name: "reconcile 0 is off", env: map[string]string{"SKILLJACK_RECONCILE_INTERVAL_MS": "0"},
			check: func(s config.Settings) string { return fmt.Sprint(s.Reconcile < 0) + " want true" }},
		{name: "bad --http-max-concurrent falls through to the variable", args: []string{"--http-max-concurrent=0"}, env: map[string]string{"SKILLJACK_HTTP_MAX_CONCURRENT": "5"},
			check: func(s config.Settings) string { return fmt.Sprint(s.HTTPMaxConcurrent) + " want 5" }, wantWarn: "--http-max-concurrent"},
		// issue 13 item 8: a value given as the next argument.
		{name: "--tools never (two arguments)", args: []string{"--tools", "never", "lib"},
			check: func(s config.Settings) string {
				return s.Tools + fmt.Sprint(" ", len(s.Config.Sources)) + " want never 2"
			}},
		{name: "--http 8080 (two arguments)", args: []string{"--http", "8080", "lib"},
			check: func(s config.Settings) string {
				return fmt.Sprint(s.HTTP, s.HTTPPort, len(s.Config.Sources)) + " want true 8080 2"
			}},
		{name: "--catalog tool-description (two arguments)", args: []string{"--catalog", "tool-description"},
			check: func(s config.Settings) string { return s.Catalog + " want tool-description" }, wantWarn: "legacy catalog channel"},
		{name: "--http lib keeps lib a source", args: []string{"--http", "lib"},
			check: func(s config.Settings) string {
				return fmt.Sprint(s.HTTP, s.HTTPPort, len(s.Config.Sources)) + " want true 3000 2"
			}},
		{name: "--tools nevr is refused with did you mean", args: []string{"--tools", "nevr"},
			check: func(s config.Settings) string {
				return s.Tools + fmt.Sprint(" ", len(s.Config.Sources)) + " want auto 2"
			},
			wantWarn: "did you mean --tools=nevr?"},
		{name: "-v is verbose and never the version", args: []string{"-v"},
			check: func(s config.Settings) string {
				return s.LogLevel.String() + fmt.Sprint(s.Version) + " want DEBUGfalse"
			}},
		{name: "validate", args: []string{"validate", "--", "-x"},
			check: func(s config.Settings) string { return fmt.Sprint(s.Validate, len(s.Config.Sources)) + " want true 2" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			st, warnings, err := config.Load(config.LoadOptions{Args: tc.args, Getenv: func(k string) string { return tc.env[k] }, Home: home, Cwd: home})
			if err != nil {
				t.Fatal(err)
			}
			got, want, _ := strings.Cut(tc.check(st), " want ")
			if got != want {
				t.Errorf("got %s, want %s", got, want)
			}
			var msgs []string
			for _, w := range warnings {
				msgs = append(msgs, w.Message)
			}
			all := strings.Join(msgs, "\n")
			switch {
			case tc.wantWarn == "" && len(msgs) > 0:
				t.Errorf("unexpected warnings:\n%s", all)
			case tc.wantWarn != "" && !strings.Contains(all, tc.wantWarn):
				t.Errorf("no warning %q in:\n%s", tc.wantWarn, all)
			}
		})
	}
}

// TestLoadNeverQuotesToken: GITHUB_TOKEN is in no warning, whatever else
// is wrong (issue 11 item 4).
func TestLoadNeverQuotesToken(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"GITHUB_TOKEN": " ghp_secret ", "GITHUB_POLL_INTERVAL_MS": "x", "GITHUB_API_URL": " "}
	st, warnings, err := config.Load(config.LoadOptions{Args: []string{"--bogus", "github.com/acme/x"}, Getenv: func(k string) string { return env[k] }, Home: home, Cwd: home})
	if err != nil {
		t.Fatal(err)
	}
	if st.Config.GitHub.Token != "ghp_secret" {
		t.Errorf("token = %q", st.Config.GitHub.Token)
	}
	for _, w := range warnings {
		if s := fmt.Sprint(w.Message, w.Args); strings.Contains(s, "ghp_secret") {
			t.Errorf("warning quotes the token: %s", s)
		}
	}
	if len(warnings) < 2 {
		t.Errorf("want warnings about the interval and the flag, got %v", warnings)
	}
}

// TestLoadSplitValueExisting is issue 13 item 8: --http 8080 where a folder
// named 8080 exists serves that folder, with a warning asking whether
// --http=8080 was meant.
func TestLoadSplitValueExisting(t *testing.T) {
	home := t.TempDir()
	if err := os.Mkdir(home+"/8080", 0o755); err != nil {
		t.Fatal(err)
	}
	st, warnings, err := config.Load(config.LoadOptions{Args: []string{"--http", "8080"}, Getenv: func(string) string { return "" }, Home: home, Cwd: home})
	if err != nil {
		t.Fatal(err)
	}
	if !st.HTTP || st.HTTPPort != config.DefaultHTTPPort || len(st.Config.Sources) != 2 || st.Config.Sources[0].Prefix != "8080" {
		t.Errorf("HTTP %v port %d sources %+v; want port 3000 and the folder 8080 served", st.HTTP, st.HTTPPort, st.Config.Sources)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Message, "did you mean --http=8080?") {
		t.Errorf("warnings = %+v, want one asking about --http=8080", warnings)
	}
}
