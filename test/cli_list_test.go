package test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// End-to-end tests of the authoring commands of issue 15 beyond the
// goldens: list's text table, exit codes of list and validate --json on a
// usage problem, --strict with --json, remote sources read from the cache
// only, and a literal ${user_config.x} argument left by a bundle host.

// TestListText checks list's table: one row per skill with its qualified
// name, files, bytes, source and skill path, its warnings indented below
// it, and the closing count; exit 0 although a warning is listed.
func TestListText(t *testing.T) {
	dir := caseDir(t, "BR-12")
	src := filepath.Join(dir, "skills")
	out, stderr, err := runRaw(t, "", nil, "list", src)
	if code := exitCode(t, err); code != 0 {
		t.Fatalf("list exited %d, want 0:\n%s%s", code, out, stderr)
	}
	row := lineOf(out, "skills__template-skill", src, "skills/template-skill")
	if row == "" || !strings.Contains(strings.Join(strings.Fields(row), " "), "skills__template-skill 1 ") {
		t.Errorf("no row for skills__template-skill with 1 file:\n%s", out)
	}
	warn := lineOf(out, "    WARN "+filepath.Join(src, "template", "SKILL.md")+": ", "differs from its folder name")
	if warn == "" {
		t.Errorf("no indented warning below the skill:\n%s", out)
	}
	if !strings.HasPrefix(out, "QUALIFIED NAME") || lineOf(out, "2 skills served (1 skill from "+src+", 1 bundled)") == "" {
		t.Errorf("want a header line and the closing count:\n%s", out)
	}
}

// TestAuthoringExitCodes checks the exit codes of list and validate with
// --json: 2 and no stdout on a usage problem, 2 after the report for a
// missing folder, 1 with --strict on a warning (and the report says so).
func TestAuthoringExitCodes(t *testing.T) {
	dir := caseDir(t, "BR-12")
	src := filepath.Join(dir, "skills")
	missing := filepath.Join(dir, "nope")
	for _, tc := range []struct {
		args     []string
		code     int
		noOutput bool
	}{
		{[]string{"list"}, 2, true},
		{[]string{"validate", "--json"}, 2, true},
		{[]string{"list", "--json", src, missing}, 2, false},
		{[]string{"validate", "--json", src, missing}, 2, false},
		{[]string{"validate", "--json", src}, 0, false},
		{[]string{"validate", "--json", "--strict", src}, 1, false},
	} {
		out, stderr, err := runRaw(t, "", nil, tc.args...)
		code := exitCode(t, err)
		if code != tc.code || (out == "") != tc.noOutput {
			t.Errorf("%v: exit %d, stdout %d bytes; want exit %d, stdout empty %v\n%s%s", tc.args, code, len(out), tc.code, tc.noOutput, out, stderr)
			continue
		}
		if tc.args[0] == "validate" && !tc.noOutput {
			var rep struct {
				Summary struct {
					ExitCode int `json:"exit_code"`
				} `json:"summary"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Summary.ExitCode != tc.code {
				t.Errorf("%v: report exit_code %d (%v), want %d", tc.args, rep.Summary.ExitCode, err, tc.code)
			}
		}
	}
}

// TestListRemoteFromCacheOnly checks that list reads a GitHub source from
// its cache folder and never fetches: with no cached copy it lists no
// skill of it, says so in one finding, and exits 0 at once (the
// GITHUB_API_URL given is unroutable, so a fetch would fail loudly).
func TestListRemoteFromCacheOnly(t *testing.T) {
	env := []string{"GITHUB_ALLOWED_ORGS=acme", "GITHUB_API_URL=http://127.0.0.1:9", "SKILLJACK_CACHE_DIR=" + t.TempDir()}
	out, stderr, err := runRaw(t, "", env, "list", "--json", "github.com/acme/skills")
	if code := exitCode(t, err); code != 0 {
		t.Fatalf("list exited %d:\n%s%s", code, out, stderr)
	}
	var rep struct {
		Skills []struct {
			SourceKind string `json:"source_kind"`
		} `json:"skills"`
		Findings []struct {
			File, Reason string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skills {
		if s.SourceKind != "bundled" {
			t.Errorf("a %s skill listed without a cached copy", s.SourceKind)
		}
	}
	if len(rep.Findings) != 1 || rep.Findings[0].File != "github.com/acme/skills" || !strings.Contains(rep.Findings[0].Reason, "does not fetch") {
		t.Errorf("findings = %+v, want one saying there is no cached copy and nothing is fetched", rep.Findings)
	}
	if strings.Contains(stderr, "127.0.0.1:9") {
		t.Errorf("list tried the network:\n%s", stderr)
	}
}

// TestPlaceholderArgument is issue 15 on the binary: a host that leaves
// ${user_config.skill_dirs} unreplaced does not make the server look for
// a folder of that name; it serves the other sources, with one warning.
func TestPlaceholderArgument(t *testing.T) {
	dir := caseDir(t, "BR-12")
	src := filepath.Join(dir, "skills")
	out, stderr, err := runRaw(t, "", []string{"GITHUB_TOKEN="}, "list", "--", src, "${user_config.skill_dirs}")
	if code := exitCode(t, err); code != 0 {
		t.Fatalf("list exited %d:\n%s%s", code, out, stderr)
	}
	if n := strings.Count(stderr, "unreplaced placeholder"); n != 1 || !strings.Contains(stderr, "${user_config.skill_dirs}") {
		t.Errorf("%d placeholder warnings, want 1 naming the argument:\n%s", n, stderr)
	}
	if lineOf(out, "skills__template-skill") == "" || strings.Contains(out, "user_config") {
		t.Errorf("want the folder's skill listed and no trace of the placeholder:\n%s", out)
	}
}
