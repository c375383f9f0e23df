package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

func bundledSource() events.Source {
	return events.Source{ID: "bundled", Kind: events.SourceBundled, Location: "bundled", Root: "."}
}

// TestLoadConfig pins reference §2: exclusive source precedence (CLI >
// SKILLS_DIR > config file), path resolution, de-duplication, prefixes,
// remote kinds, static precedence and overrides.
func TestLoadConfig(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	cwd := filepath.Join(base, "work")
	for _, d := range []string{"home/mine", "work/a/skills", "work/b/skills", "work/cli", "env1", "cfg1", "home/.skilljack"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	local := func(id, root, prefix string) events.Source {
		return events.Source{ID: id, Kind: events.SourceLocal, Location: root, Root: root, Prefix: prefix}
	}
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		static     *bool
		configJSON string // "" → no file
		want       config.Config
		wantLog    []string
		notLog     []string
	}{
		{
			name: "no directories at all: only bundled",
			want: config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
		},
		{
			name:       "CLI args win over SKILLS_DIR and the config file, comma lists split",
			args:       []string{"cli, ~/mine", ""},
			env:        map[string]string{"SKILLS_DIR": filepath.Join(base, "env1")},
			configJSON: `{"skillDirectories": ["` + filepath.Join(base, "cfg1") + `"]}`,
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceLocal, Location: "cli", Root: filepath.Join(cwd, "cli"), Prefix: "cli"},
				{ID: "1", Kind: events.SourceLocal, Location: "~/mine", Root: filepath.Join(home, "mine"), Prefix: "mine"},
				bundledSource(),
			}, ActiveSource: "cli"},
		},
		{
			name:       "SKILLS_DIR wins over the config file; trimmed, empty parts dropped",
			env:        map[string]string{"SKILLS_DIR": " " + filepath.Join(base, "env1") + " ,, "},
			configJSON: `{"skillDirectories": ["` + filepath.Join(base, "cfg1") + `"]}`,
			want: config.Config{Sources: []events.Source{
				local("0", filepath.Join(base, "env1"), "env1"), bundledSource(),
			}, ActiveSource: "env"},
		},
		{
			// Finding 6: dropped entries were not reported.
			name:       "config file directories; non-strings dropped, each with a warning",
			env:        map[string]string{"SKILLS_DIR": " , "},
			configJSON: `{"skillDirectories": [7, "` + filepath.Join(base, "cfg1") + `", null, " "]}`,
			want: config.Config{Sources: []events.Source{
				local("0", filepath.Join(base, "cfg1"), "cfg1"), bundledSource(),
			}, ActiveSource: "config"},
			wantLog: []string{
				"key=skillDirectories[0] value=7", "key=skillDirectories[2] value=null", `key=skillDirectories[3] value="\" \""`,
				"path=" + filepath.Join(home, ".skilljack", "config.json"),
			},
		},
		{
			// Finding 6: one wrongly typed key voided the whole file.
			name:       "a wrongly typed key is left out, the rest of the file is kept",
			configJSON: `{"skillDirectories": ["` + filepath.Join(base, "cfg1") + `"], "skillInvocationOverrides": [1], "staticMode": true}`,
			want: config.Config{Sources: []events.Source{
				local("0", filepath.Join(base, "cfg1"), "cfg1"), bundledSource(),
			}, Static: true, ActiveSource: "config"},
			wantLog: []string{"skillInvocationOverrides is not an object", "key=skillInvocationOverrides", "value=[1]", "path=" + filepath.Join(home, ".skilljack", "config.json")},
		},
		{
			name:       "skillDirectories not a list",
			configJSON: `{"skillDirectories": "` + filepath.Join(base, "cfg1") + `"}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
			wantLog:    []string{"skillDirectories is not a list of strings"},
		},
		{
			name:       "null values are absent, not wrong",
			configJSON: `{"skillDirectories": null, "staticMode": null, "skillInvocationOverrides": null}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
		},
		{
			name: "duplicates removed, same basename disambiguated, missing path kept with a warning",
			args: []string{"a/skills", "./a/skills", filepath.Join(cwd, "a", "skills"), "b/skills", "gone"},
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceLocal, Location: "a/skills", Root: filepath.Join(cwd, "a", "skills"), Prefix: "skills"},
				{ID: "1", Kind: events.SourceLocal, Location: "b/skills", Root: filepath.Join(cwd, "b", "skills"), Prefix: "skills-2"},
				{ID: "2", Kind: events.SourceLocal, Location: "gone", Root: filepath.Join(cwd, "gone"), Prefix: "gone"},
				bundledSource(),
			}, ActiveSource: "cli"},
			wantLog: []string{"two sources with the same prefix: disambiguated, never shadowed silently"},
			// Finding 5: the scan reports a missing folder; Resolve did too.
			notLog: []string{"gone"},
		},
		{
			// WK-R / reference §4, §5: remote sources are default-deny.
			name:    "remote sources without an allowlist are blocked, naming the variable to set",
			args:    []string{"https://github.com/acme/skills@main", "https://example.com/.well-known/agent-skills/"},
			want:    config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "cli"},
			wantLog: []string{"GITHUB_ALLOWED_ORGS or GITHUB_ALLOWED_USERS", "not in WELL_KNOWN_ALLOWED_ORIGINS"},
		},
		{
			name: "allowlisted remote sources are served from their cache folders",
			args: []string{"https://github.com/Acme/skills/tree/main/team@v2", "https://Example.com:443/docs/.well-known/agent-skills/index.json",
				"github.com/acme/skills", "https://example.com/docs/"},
			env: map[string]string{"GITHUB_ALLOWED_ORGS": "ACME", "WELL_KNOWN_ALLOWED_ORIGINS": "https://example.com/",
				"SKILLJACK_CACHE_DIR": filepath.Join(base, "cache")},
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceGitHub, Location: "https://github.com/Acme/skills/tree/main/team@v2",
					Root: filepath.Join(base, "cache", "Acme", "skills", "team"), Prefix: "Acme-skills",
					GitHub: events.GitHubRepo{Owner: "Acme", Repo: "skills", Ref: "v2", Subpath: "team"}},
				{ID: "1", Kind: events.SourceWellKnown, Location: "https://Example.com:443/docs/.well-known/agent-skills/index.json",
					Root: filepath.Join(base, "cache", "well-known", wkKey(t, "https://example.com/docs"), "skills"), Prefix: "example.com/docs",
					Publisher: wkPublisher(t, "https://example.com/docs")},
				bundledSource(),
			}, ActiveSource: "cli"},
			// The same repository twice (another ref or subpath) would share one
			// cache folder: the first wins, the second is named in a warning.
			wantLog: []string{"github.com/acme/skills skipped: repository acme/skills is already the source", "at v2 (one ref per repository"},
		},
		{
			name: "a folder path containing github.com is local; other hosts with github.com are publishers; other schemes are refused",
			args: []string{filepath.Join(base, "go", "src", "github.com", "acme", "skills"), "https://skills.github.com", "ftp://x"},
			env:  map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": "https://skills.github.com", "SKILLJACK_CACHE_DIR": filepath.Join(base, "cache")},
			want: config.Config{Sources: []events.Source{
				local("0", filepath.Join(base, "go", "src", "github.com", "acme", "skills"), "skills"),
				{ID: "1", Kind: events.SourceWellKnown, Location: "https://skills.github.com",
					Root: filepath.Join(base, "cache", "well-known", "skills.github.com", "skills"), Prefix: "skills.github.com",
					Publisher: wkPublisher(t, "https://skills.github.com")},
				bundledSource(),
			}, ActiveSource: "cli"},
			wantLog: []string{"unsupported scheme in ftp://x"},
		},
		{
			name: "a remote cache inside a source folder is warned about",
			args: []string{filepath.Join(base, "work"), "https://skills.example.com"},
			env:  map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": "https://skills.example.com", "SKILLJACK_CACHE_DIR": filepath.Join(base, "work", "cache")},
			want: config.Config{Sources: []events.Source{
				local("0", filepath.Join(base, "work"), "work"),
				{ID: "1", Kind: events.SourceWellKnown, Location: "https://skills.example.com",
					Root: filepath.Join(base, "work", "cache", "well-known", "skills.example.com", "skills"), Prefix: "skills.example.com",
					Publisher: wkPublisher(t, "https://skills.example.com")},
				bundledSource(),
			}, ActiveSource: "cli"},
			wantLog: []string{"lies inside the source"},
		},
		{
			name:       "static: config staticMode",
			configJSON: `{"staticMode": true}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, Static: true, ActiveSource: "none"},
		},
		{
			name:       "static: SKILLJACK_STATIC beats the config",
			env:        map[string]string{"SKILLJACK_STATIC": "no"},
			configJSON: `{"staticMode": true}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
		},
		{
			name: "static: SKILLJACK_STATIC=YES",
			env:  map[string]string{"SKILLJACK_STATIC": "YES"},
			want: config.Config{Sources: []events.Source{bundledSource()}, Static: true, ActiveSource: "none"},
		},
		{
			name:       "static: --static beats everything",
			static:     ptrTo(true),
			env:        map[string]string{"SKILLJACK_STATIC": "false"},
			configJSON: `{"staticMode": false}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, Static: true, ActiveSource: "none"},
		},
		{
			name:       "static: --static=false beats the env var and the config file",
			static:     ptrTo(false),
			env:        map[string]string{"SKILLJACK_STATIC": "1"},
			configJSON: `{"staticMode": true}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, Static: false, ActiveSource: "none"},
		},
		{
			name:       "invalid config file means defaults and a warning",
			configJSON: `{"skillDirectories": [`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
			wantLog:    []string{"is not valid JSON (line 1, column 22"},
		},
		{
			// trial bug F: null was silently the defaults; an array gave
			// Go internals. Both are a warning naming the file.
			name:       "a config file holding null is not an object",
			configJSON: `null`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
			wantLog:    []string{"config.json is not a JSON object (it is null); nothing in it is used"},
		},
		{
			name:       "a config file holding an array is not an object",
			configJSON: `["~/skills"]`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
			wantLog:    []string{"config.json is not a JSON object (it is an array); nothing in it is used"},
			notLog:     []string{"Go value", "unmarshal"},
		},
		{
			// issue 13 item 9: name=source fixes the prefix, whatever the
			// order; the name is reserved, so the unnamed folder of the
			// same name gets -2 even when listed first.
			name: "name=path fixes the prefix, in arguments",
			args: []string{"b/skills", "skills=a/skills", "team=" + filepath.Join(base, "env1")},
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceLocal, Location: "b/skills", Root: filepath.Join(cwd, "b", "skills"), Prefix: "skills-2"},
				{ID: "1", Kind: events.SourceLocal, Location: "skills=a/skills", Root: filepath.Join(cwd, "a", "skills"), Prefix: "skills"},
				{ID: "2", Kind: events.SourceLocal, Location: "team=" + filepath.Join(base, "env1"), Root: filepath.Join(base, "env1"), Prefix: "team"},
				bundledSource(),
			}, ActiveSource: "cli"},
			wantLog: []string{"two sources with the same prefix"},
		},
		{
			name: "name=path in SKILLS_DIR and the config file; a folder with = written ./",
			env:  map[string]string{"SKILLS_DIR": "team=" + filepath.Join(base, "env1") + ",./x=y"},
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceLocal, Location: "team=" + filepath.Join(base, "env1"), Root: filepath.Join(base, "env1"), Prefix: "team"},
				{ID: "1", Kind: events.SourceLocal, Location: "./x=y", Root: filepath.Join(cwd, "x=y"), Prefix: "x=y"},
				bundledSource(),
			}, ActiveSource: "env"},
		},
		{
			name:       "name=path in the config file",
			configJSON: `{"skillDirectories": ["mine=` + filepath.Join(base, "cfg1") + `"]}`,
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceLocal, Location: "mine=" + filepath.Join(base, "cfg1"), Root: filepath.Join(base, "cfg1"), Prefix: "mine"},
				bundledSource(),
			}, ActiveSource: "config"},
		},
		{
			name: "invalid and duplicate names are refused with a warning",
			args: []string{"a b=a/skills", "x__y=a/skills", "-bad=a/skills", "=a/skills", "team=a/skills", "team=b/skills", "other=a/skills"},
			want: config.Config{Sources: []events.Source{
				{ID: "0", Kind: events.SourceLocal, Location: "team=a/skills", Root: filepath.Join(cwd, "a", "skills"), Prefix: "team"},
				bundledSource(),
			}, ActiveSource: "cli"},
			wantLog: []string{`\"a b\" is not a valid source name`, `\"x__y\" is not a valid source name`, `\"\" is not a valid source name`,
				`the name \"team\" is already the source team=a/skills`, "source other=a/skills skipped: it is the same source as team=a/skills"},
		},
		{
			// issue 13 item 8: a trailing comma names what is ignored and
			// where the sources come from instead.
			name:       "config file with a trailing comma: the command line still serves",
			args:       []string{"/abs/lib"},
			configJSON: "{\n  \"skillDirectories\": [\"/abs/team\"],\n  \"skillInvocationOverrides\": {},\n}\n",
			want:       config.Config{Sources: []events.Source{local("0", "/abs/lib", "lib"), bundledSource()}, ActiveSource: "cli"},
			wantLog: []string{"is not valid JSON (line 4, column 1", "trailing comma", "ignored: skillDirectories, skillInvocationOverrides",
				"serving the sources given on the command line"},
		},
		{
			// Finding 6: staticMode "yes" was silently false.
			name:       "staticMode not a boolean is ignored with a warning; unknown keys silently",
			configJSON: `{"staticMode": "yes", "unknownKey": 1}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
			wantLog:    []string{"staticMode is not a boolean", `value="\"yes\""`},
			notLog:     []string{"unknownKey"},
		},
		{
			// Finding 6: SKILLJACK_STATIC=maybe was silently false.
			name:       "static: SKILLJACK_STATIC=maybe warns and reads false",
			env:        map[string]string{"SKILLJACK_STATIC": "maybe"},
			configJSON: `{"staticMode": true}`,
			want:       config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
			wantLog:    []string{"SKILLJACK_STATIC is not one of", "value=maybe"},
		},
		{
			name: "static: SKILLJACK_STATIC=0 is a valid false",
			env:  map[string]string{"SKILLJACK_STATIC": "0"},
			want: config.Config{Sources: []events.Source{bundledSource()}, ActiveSource: "none"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfgPath := filepath.Join(home, ".skilljack", "config.json")
			os.Remove(cfgPath)
			if tc.configJSON != "" {
				if err := os.WriteFile(cfgPath, []byte(tc.configJSON), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			log, buf := eventstest.CaptureLog()
			got, err := config.Resolve(config.ResolveOptions{
				Args: tc.args, Getenv: func(k string) string { return tc.env[k] }, Home: home,
				Static: tc.static, Cwd: cwd, Logger: log,
			})
			if err != nil {
				t.Fatal(err)
			}
			tc.want.ConfigPath = cfgPath
			tc.want.Overrides = map[string]events.Override{}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(config.Config{}, "WellKnown", "GitHub", "Listing")); diff != "" {
				t.Errorf("Resolve mismatch (-want +got):\n%s", diff)
			}
			for _, s := range tc.wantLog {
				if !strings.Contains(buf.String(), s) {
					t.Errorf("log does not contain %q:\n%s", s, buf)
				}
			}
			for _, s := range tc.notLog {
				if strings.Contains(buf.String(), s) {
					t.Errorf("log contains %q:\n%s", s, buf)
				}
			}
			if tc.wantLog == nil && strings.Contains(buf.String(), "level=WARN") {
				t.Errorf("unexpected warning:\n%s", buf)
			}
		})
	}
}

// TestLoadConfigHomeAndOverrides checks that HOME is honoured when Home is
// empty, that the config file is only read, and that overrides keep only
// boolean values, warning about each other one by its skill key (finding
// 6).
func TestLoadConfigHomeAndOverrides(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, ".skilljack", "config.json")
	skilltest.WriteTree(t, home, map[string]string{".skilljack/config.json": `{
  "skillInvocationOverrides": {
    "skills__a": {"assistant": false, "user": true},
    "skills__b": {"assistant": "no"},
    "skills__c": {"user": false, "other": 1},
    "skills__d": true,
    "skills__e": {"assistant": null, "user": 0}
  }
}`})
	before, _ := os.ReadFile(cfgPath)
	log, buf := eventstest.CaptureLog()
	got, err := config.Resolve(config.ResolveOptions{
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		},
		Cwd:    home,
		Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for line := range strings.Lines(buf.String()) {
		if _, key, ok := strings.Cut(line, " key="); ok {
			key, _, _ = strings.Cut(key, " ")
			warned = append(warned, key)
		}
	}
	wantWarned := []string{
		`"skillInvocationOverrides[\"skills__b\"].assistant"`,
		`"skillInvocationOverrides[\"skills__d\"]"`,
		`"skillInvocationOverrides[\"skills__e\"].assistant"`,
		`"skillInvocationOverrides[\"skills__e\"].user"`,
	}
	if diff := cmp.Diff(wantWarned, warned); diff != "" {
		t.Errorf("warned keys mismatch (-want +got):\n%s\n%s", diff, buf)
	}
	if got.ConfigPath != cfgPath {
		t.Errorf("ConfigPath = %q, want %q", got.ConfigPath, cfgPath)
	}
	f, tr := false, true
	want := map[string]events.Override{"skills__a": {Assistant: &f, User: &tr}, "skills__c": {User: &f}}
	if diff := cmp.Diff(want, got.Overrides); diff != "" {
		t.Errorf("Overrides mismatch (-want +got):\n%s", diff)
	}
	after, _ := os.ReadFile(cfgPath)
	if string(before) != string(after) {
		t.Error("Resolve changed the config file")
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestLoadConfigRemoteSettings: the remote-source settings of reference
// §2.2 — env lists replace config lists when non-empty, defaults, 0
// disables polling, unusable values warn and fall back, the cache layout
// with and without SKILLJACK_CACHE_DIR, and the token never logged.
func TestLoadConfigRemoteSettings(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".skilljack"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(home, ".skilljack", "config.json")
	if err := os.WriteFile(cfgPath, []byte(`{"githubAllowedOrgs":["Acme"],"githubAllowedUsers":["bob"],
		"wellKnownAllowedOrigins":["https://Example.com:443/","not an origin",7]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(env map[string]string) (config.Config, string) {
		t.Helper()
		log, buf := eventstest.CaptureLog()
		cfg, err := config.Resolve(config.ResolveOptions{Getenv: func(k string) string { return env[k] }, Home: home, Cwd: home, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return cfg, buf.String()
	}

	cfg, logs := load(map[string]string{"GITHUB_TOKEN": "ghp_secret"})
	if diff := cmp.Diff([]string{"acme", "bob"}, cfg.GitHub.AllowedOwners); diff != "" {
		t.Errorf("owners from the config file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"https://example.com"}, cfg.WellKnown.AllowedOrigins); diff != "" {
		t.Errorf("origins from the config file (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs, "not an origin") || !strings.Contains(logs, "wellKnownAllowedOrigins[2]") {
		t.Errorf("want warnings for the unusable origins:\n%s", logs)
	}
	wk, gh := cfg.WellKnown, cfg.GitHub
	if wk.PollInterval != config.DefaultPollInterval || gh.PollInterval != config.DefaultPollInterval ||
		wk.MaxArtifactBytes != 10<<20 || wk.MaxUnpackedBytes != 50<<20 || wk.AllowHTTP ||
		wk.MaxSkills != config.DefaultWellKnownMaxSkills || wk.MaxCacheBytes != config.DefaultWellKnownMaxCacheBytes ||
		gh.APIURL != "https://api.github.com" || gh.Token != "ghp_secret" {
		t.Errorf("defaults: %+v %v", wk, gh)
	}
	if wk.CacheDir != filepath.Join(home, ".skilljack", "well-known-cache") || gh.CacheDir != filepath.Join(home, ".skilljack", "github-cache") {
		t.Errorf("cache folders without SKILLJACK_CACHE_DIR: %s, %s", wk.CacheDir, gh.CacheDir)
	}
	if s := fmt.Sprint(gh); strings.Contains(s, "ghp_secret") {
		t.Errorf("GitHub prints its token: %s", s)
	}

	cfg, logs = load(map[string]string{
		"GITHUB_ALLOWED_ORGS": "Other", "WELL_KNOWN_ALLOWED_ORIGINS": "http://localhost:8080", "WELL_KNOWN_ALLOW_HTTP": "yes",
		"WELL_KNOWN_POLL_INTERVAL_MS": "0", "GITHUB_POLL_INTERVAL_MS": "-5", "WELL_KNOWN_MAX_ARTIFACT_MB": "0",
		"WELL_KNOWN_MAX_UNPACKED_MB": "3", "GITHUB_API_URL": "https://ghe.example/api/v3/", "SKILLJACK_CACHE_DIR": "~/c",
		"WELL_KNOWN_MAX_SKILLS": "many", "WELL_KNOWN_MAX_CACHE_MB": "7",
	})
	wk, gh = cfg.WellKnown, cfg.GitHub
	if diff := cmp.Diff([]string{"other", "bob"}, gh.AllowedOwners); diff != "" {
		t.Errorf("GITHUB_ALLOWED_ORGS replaces only the orgs list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"http://localhost:8080"}, wk.AllowedOrigins); diff != "" {
		t.Errorf("WELL_KNOWN_ALLOWED_ORIGINS replaces the config list (-want +got):\n%s", diff)
	}
	if !wk.AllowHTTP || wk.PollInterval != 0 || gh.PollInterval != config.DefaultPollInterval ||
		wk.MaxArtifactBytes != 10<<20 || wk.MaxUnpackedBytes != 3<<20 || gh.APIURL != "https://ghe.example/api/v3" ||
		wk.MaxSkills != config.DefaultWellKnownMaxSkills || wk.MaxCacheBytes != 7<<20 {
		t.Errorf("env values: %+v %v", wk, gh)
	}
	for _, v := range []string{"GITHUB_POLL_INTERVAL_MS", "WELL_KNOWN_MAX_ARTIFACT_MB", "WELL_KNOWN_MAX_SKILLS"} {
		if !strings.Contains(logs, v) {
			t.Errorf("no warning about %s:\n%s", v, logs)
		}
	}
	if wk.CacheDir != filepath.Join(home, "c", "well-known") || gh.CacheDir != filepath.Join(home, "c") {
		t.Errorf("cache folders with SKILLJACK_CACHE_DIR: %s, %s", wk.CacheDir, gh.CacheDir)
	}

	// A non-zero interval below the minimum (a value meant as seconds) is
	// raised to it, with a warning.
	cfg, logs = load(map[string]string{"WELL_KNOWN_POLL_INTERVAL_MS": "300", "GITHUB_POLL_INTERVAL_MS": "10001"})
	if cfg.WellKnown.PollInterval != config.MinPollInterval || cfg.GitHub.PollInterval != 10001*time.Millisecond {
		t.Errorf("intervals = %v, %v; want the minimum and 10.001 s", cfg.WellKnown.PollInterval, cfg.GitHub.PollInterval)
	}
	if !strings.Contains(logs, "WELL_KNOWN_POLL_INTERVAL_MS is below the minimum") || strings.Contains(logs, "GITHUB_POLL_INTERVAL_MS is below") {
		t.Errorf("want one warning, about WELL_KNOWN_POLL_INTERVAL_MS:\n%s", logs)
	}
}

// wkKey is the cache key of the publisher URL u.
func wkKey(t *testing.T, u string) string {
	t.Helper()
	sp, err := config.ParseWellKnownURL(u, true)
	if err != nil {
		t.Fatal(err)
	}
	return sp.Key
}

// wkPublisher is the parsed publisher of u, an https origin with an
// optional path prefix: what travels in events.Source (issue 11 item 4).
func wkPublisher(t *testing.T, u string) events.Publisher {
	t.Helper()
	origin, prefix := u, ""
	if i := strings.Index(strings.TrimPrefix(u, "https://"), "/"); i >= 0 {
		origin, prefix = u[:len("https://")+i], u[len("https://")+i:]
	}
	return events.Publisher{Origin: origin, PathPrefix: prefix, Key: wkKey(t, u),
		IndexURL:       origin + prefix + "/.well-known/agent-skills/index.json",
		LegacyIndexURL: origin + prefix + "/.well-known/skills/index.json"}
}
