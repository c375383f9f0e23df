package main

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/events"
)

// runCommand runs a one-shot command with HOME in a temporary folder and
// returns stdout, stderr and the exit code main would exit with.
func runCommand(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCommandEnv(t, nil, args...)
}

// runCommandEnv is [runCommand] with env added to the environment.
func runCommandEnv(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errs lockedBuffer
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env["HOME"] = t.TempDir()
	err := run(t.Context(), args, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errs, func(k string) string { return env[k] })
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		errs.Write([]byte("skilljack-mcp: " + err.Error() + "\n"))
	}
	return out.String(), errs.String(), code
}

// TestValidateSourceRefusals: a source the configuration refuses (a
// repeated name, a GitHub owner not allowlisted) is a finding naming the
// source as written, with a rule, unserved, in text, --strict and --json
// output, and validate exits 1; it is no log line (trial bug A).
func TestValidateSourceRefusals(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	writeFile(t, filepath.Join(a, "one", "SKILL.md"), skillBody("one", "One."))
	writeFile(t, filepath.Join(b, "two", "SKILL.md"), skillBody("two", "Two."))
	for _, args := range [][]string{{"validate", "x=" + a, "x=" + b}, {"validate", "--strict", "x=" + a, "x=" + b}} {
		out, errs, code := runCommand(t, args...)
		want := "WARN x=" + b + ": source x=" + b + " skipped: the name \"x\" is already"
		if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "["+events.RuleSourceRefused+"]") || !strings.Contains(out, "1 finding (1 not served") {
			t.Errorf("%v: exit %d, stdout:\n%s\nwant exit 1 and %q", args, code, out, want)
		}
		if strings.Contains(errs, "level=WARN") {
			t.Errorf("%v: the refusal is also a log line:\n%s", args, errs)
		}
	}
	out, _, code := runCommand(t, "validate", "--json", a, "team=github.com/acme/skills")
	var rep validateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 1 || rep.Summary.ExitCode != 1 || len(rep.Findings) != 1 {
		t.Fatalf("exit %d, report %+v; want exit 1 and one finding", code, rep)
	}
	f := rep.Findings[0]
	if f.File != "team=github.com/acme/skills" || f.Rule != events.RuleSourceRefused || !f.Unserved || !strings.Contains(f.Reason, "not allowlisted") {
		t.Errorf("finding = %+v", f)
	}
}

// TestValidateNoUsableSource: when every source given is refused, nothing
// is usable: exit 2, and the error says why each was refused (no log line
// carries it any more).
func TestValidateNoUsableSource(t *testing.T) {
	out, errs, code := runCommand(t, "validate", "github.com/acme/skills")
	if code != 2 || out != "" || !strings.Contains(errs, "no usable source") || !strings.Contains(errs, "not allowlisted") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errs)
	}
}

// TestCommandUnknownFlag: validate and list refuse an unknown flag with
// exit 2 and one usage line on stderr (trial bug B).
func TestCommandUnknownFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	writeFile(t, filepath.Join(dir, "one", "SKILL.md"), skillBody("one", "One."))
	for _, cmd := range []string{"validate", "list"} {
		out, errs, code := runCommand(t, cmd, "--bogus", dir)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `unknown flag "--bogus"`) || !strings.Contains(errs, "usage: skilljack-mcp "+cmd) {
			t.Errorf("%s --bogus: exit %d, stdout %q, stderr %q", cmd, code, out, errs)
		}
	}
}

// TestListFindingRule: list prints a skipped skill's finding with its
// rule, as validate does (ASF-R23; trial bug C).
func TestListFindingRule(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	writeFile(t, filepath.Join(dir, "bad", "SKILL.md"), "no frontmatter\n")
	writeFile(t, filepath.Join(dir, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	listed, _, _ := runCommand(t, "list", dir)
	validated, _, _ := runCommand(t, "validate", dir)
	var line string
	for l := range strings.Lines(validated) {
		if strings.HasPrefix(l, "ERROR ") {
			line = l
		}
	}
	if !strings.Contains(line, "[ASF-R23]") || !strings.Contains(listed, line) {
		t.Errorf("validate's line %q (with [ASF-R23]) is not list's:\n%s", line, listed)
	}
}

// TestEveryFindingHasARule (issue 15: every finding names file, rule ID and
// reason): findings about this server's own limits and state — a source
// with no skill, a missing source folder, a file over its size cap, a
// broken link, a SKILL.md past the discovery depth — cite a project rule
// ([events.Rules]), as findings about the skill format cite the spec's.
func TestEveryFindingHasARule(t *testing.T) {
	empty, missing, skills := t.TempDir(), filepath.Join(t.TempDir(), "gone"), t.TempDir()
	writeFile(t, filepath.Join(skills, "big", "SKILL.md"), skillBody("big", "Big."))
	writeFile(t, filepath.Join(skills, "big", "data.bin"), strings.Repeat("x", 2<<20))
	writeFile(t, filepath.Join(skills, "big", ".git", "inner", "SKILL.md"), skillBody("inner", "Inner."))
	writeFile(t, filepath.Join(skills, "c", "1", "2", "3", "4", "5", "6", "7", "SKILL.md"), skillBody("deep", "Deep."))
	if err := os.Symlink(filepath.Join(skills, "nowhere"), filepath.Join(skills, "big", "dangling.md")); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCommandEnv(t, map[string]string{"MAX_FILE_SIZE_MB": "1"}, "validate", "--json", empty, missing, skills)
	var rep validateReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	want := map[string]bool{events.RuleNoSkill: false, events.RuleRootUnreadable: false, events.RuleOverCap: false, events.RuleTooDeep: false}
	for _, f := range rep.Findings {
		if f.Rule == "" {
			t.Errorf("finding without a rule: %+v", f)
		}
		if _, ok := want[f.Rule]; ok {
			want[f.Rule] = true
		}
	}
	for rule, seen := range want {
		if !seen {
			t.Errorf("no finding cites %s; findings: %+v", rule, rep.Findings)
		}
	}
}
