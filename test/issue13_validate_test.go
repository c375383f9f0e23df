package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// End-to-end tests of `skilljack-mcp validate` for issue 13 items 7 and 10
// on the built binary: notes for SKILL.md files served as files of another
// skill, exit codes (0 clean, 1 something not served as written, 2 usage or
// I/O; --strict: any warning), file line numbers in YAML errors, and the
// cases that went unreported (a skill past the depth limit, SKILL.MD, a
// symbolic link inside a skill).

// exitCode is the exit code behind err from [runRaw]: 0 for nil.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("running the binary: %v", err)
	}
	return ee.ExitCode()
}

// validateRun runs validate with args and returns its stdout, stderr
// and exit code.
func validateRun(t *testing.T, args ...string) (out, stderr string, code int) {
	t.Helper()
	out, stderr, err := runRaw(t, "", nil, append([]string{"validate"}, args...)...)
	return out, stderr, exitCode(t, err)
}

// lineOf returns the first line of out that contains every one of subs,
// or "".
func lineOf(out string, subs ...string) string {
	for line := range strings.Lines(out) {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			return line
		}
	}
	return ""
}

// TestIssue13ValidateNestedSkillMD is issue 13 item 7 on a generated
// look-alike of Microsoft's collection (test/testdata/microsoft-lookalike):
// three SKILL.md files without frontmatter inside the skill azure-deploy
// are phase documents. validate reports each as a NOTE naming the file and
// the skill that serves it, and exits 0, with --strict too; the server
// still serves them as files of azure-deploy, not as skills, and its
// stderr has no ERROR line about them (an INFO line instead).
func TestIssue13ValidateNestedSkillMD(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "microsoft-lookalike", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	phases := []string{"phases/1-plan/SKILL.md", "phases/2-build/SKILL.md", "phases/3-verify/SKILL.md"}
	for _, args := range [][]string{{dir}, {"--strict", dir}} {
		out, stderr, code := validateRun(t, args...)
		if code != 0 || strings.Contains(out, "ERROR") || strings.Contains(out, "WARN") {
			t.Errorf("validate %v: exit %d, want 0 and no ERROR or WARN line:\n%s%s", args, code, out, stderr)
		}
		for _, p := range phases {
			file := filepath.Join(dir, "azure-deploy", filepath.FromSlash(p))
			if lineOf(out, "NOTE "+file+": ", "served as the file "+p+" of skill skills__azure-deploy", "[SEP2640-R22]") == "" {
				t.Errorf("validate %v: no NOTE line for %s:\n%s", args, file, out)
			}
		}
		if !strings.Contains(out, "0 skipped, 3 notes") {
			t.Errorf("validate %v: summary does not count 3 notes:\n%s", args, out)
		}
	}

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, era, t.TempDir(), nil, "--tools=always", dir)
			e := s.entry("skill://skills/azure-deploy/SKILL.md")
			if e == nil {
				t.Fatal("azure-deploy is not in skills/list")
			}
			var files []string
			for _, r := range e.Resources {
				files = append(files, r.URI)
			}
			for _, p := range phases {
				uri := "skill://skills/azure-deploy/" + p
				if !strings.Contains(strings.Join(files, " "), uri) {
					t.Errorf("azure-deploy resources %v lack %s", files, uri)
				}
				if b, _, err := s.readBytes(uri); err != nil || !strings.HasPrefix(string(b), "# Phase") {
					t.Errorf("resources/read %s = %q, %v", uri, b, err)
				}
			}
			for _, le := range s.listAll() {
				if strings.Contains(le.URI, "/phases/") {
					t.Errorf("phase document listed as a skill: %s", le.URI)
				}
			}
			stderr := s.close()
			if strings.Contains(stderr, "level=ERROR") {
				t.Errorf("stderr has an ERROR line:\n%s", stderr)
			}
			if n := strings.Count(stderr, "level=INFO msg=\""+filepath.Join(dir, "azure-deploy", "phases")); n != 3 {
				t.Errorf("stderr has %d INFO lines about the phase documents, want 3:\n%s", n, stderr)
			}
		})
	}
}

// TestIssue13ValidateExitCodes is issue 13 item 7's exit codes: 0 when
// clean or when there are only warnings that change nothing served (a name
// that differs from its folder), 1 with --strict on such a warning, 1 when
// a skill is skipped or left out of skills/list (item 10), 2 when a source
// folder is missing or none is given.
func TestIssue13ValidateExitCodes(t *testing.T) {
	root := t.TempDir()
	clean := filepath.Join(root, "clean")
	writeFile(t, filepath.Join(clean, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	warned := filepath.Join(root, "warned")
	writeFile(t, filepath.Join(warned, "folder", "SKILL.md"), skillBody("other-name", "Named apart from its folder."))
	unlisted := filepath.Join(root, "unlisted")
	writeFile(t, filepath.Join(unlisted, "long", "SKILL.md"), skillBody("long", strings.Repeat("x", 1100)))
	skipped := filepath.Join(root, "skipped")
	writeFile(t, filepath.Join(skipped, "bad", "SKILL.md"), "# no frontmatter\n")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout, or in stderr for exit 2
	}{
		{"clean", []string{clean}, 0, "0 findings"},
		{"clean strict", []string{"--strict", clean}, 0, "0 findings"},
		{"warning only", []string{warned}, 0, "[ASF-R09]"},
		{"warning strict", []string{"--strict", warned}, 1, "WARN " + filepath.Join(warned, "folder", "SKILL.md")},
		{"left out of skills/list", []string{unlisted}, 1, "left out of skills/list"},
		{"skipped", []string{skipped}, 1, "ERROR " + filepath.Join(skipped, "bad", "SKILL.md") + ": skipped"},
		{"missing folder", []string{filepath.Join(root, "nope")}, 2, "not a skill folder"},
		{"missing folder beside a good one", []string{clean, filepath.Join(root, "nope")}, 2, "not a skill folder"},
		{"no folder", nil, 2, "no skill folder given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := validateRun(t, tc.args...)
			if code != tc.code || !strings.Contains(out+stderr, tc.want) {
				t.Errorf("validate %v: exit %d, want %d and %q:\n%s%s", tc.args, code, tc.code, tc.want, out, stderr)
			}
		})
	}
}

// TestIssue13ValidateUnreported is issue 13 item 10: a YAML error names
// the file's line; a skill 7 folders deep, a SKILL.MD and a symbolic link
// inside a skill are each reported with their file and reason (and exit
// 1: none of them is served as written); the same SKILL.md-like files
// inside a served skill are notes, as that skill serves them as files. The
// server logs the same lines at startup.
func TestIssue13ValidateUnreported(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(dir, "yaml", "SKILL.md"), "---\nname: yaml\n# a comment\ndescription: Colon: inside\n---\n")
	out, stderr, code := validateRun(t, dir)
	if code != 0 || lineOf(out, "WARN "+filepath.Join(dir, "yaml", "SKILL.md"), "line 4:") == "" {
		t.Errorf("validate: exit %d, want 0 and a warning naming file line 4:\n%s%s", code, out, stderr)
	}
	writeFile(t, filepath.Join(dir, "broken", "SKILL.md"), "---\n# a comment\n  - [\n---\n")

	deep := filepath.Join(dir, "a", "b", "c", "d", "e", "f", "deep", "SKILL.md")
	writeFile(t, deep, skillBody("deep", "Seven folders down."))
	writeFile(t, filepath.Join(dir, "a", "b", "c", "d", "e", "six", "SKILL.md"), skillBody("six", "Six folders down."))
	casey := filepath.Join(dir, "casey", "SKILL.MD")
	writeFile(t, casey, skillBody("casey", "Upper-case extension."))
	writeFile(t, filepath.Join(dir, "linky", "SKILL.md"), skillBody("linky", "Has a linked file."))
	writeFile(t, filepath.Join(dir, "..", "outside.md"), "outside\n")
	link := filepath.Join(dir, "linky", "shared.md")
	if err := os.Symlink(filepath.Join("..", "..", "outside.md"), link); err != nil {
		t.Skipf("cannot create symlinks: %v", err)
	}
	// Inside the skill holder, the same shapes are files of holder.
	holder := filepath.Join(dir, "holder")
	writeFile(t, filepath.Join(holder, "SKILL.md"), skillBody("holder", "Holds documents."))
	nestedDeep := filepath.Join(holder, "p", "q", "r", "s", "t", "u", "SKILL.md")
	writeFile(t, nestedDeep, skillBody("u", "Too deep to be a skill."))
	nestedCase := filepath.Join(holder, "docs", "Skill.md")
	writeFile(t, nestedCase, "# docs\n")

	out, stderr, code = validateRun(t, dir)
	if code != 1 {
		t.Errorf("validate: exit %d, want 1:\n%s%s", code, out, stderr)
	}
	for _, want := range [][]string{
		{"ERROR " + filepath.Join(dir, "broken", "SKILL.md") + ": skipped", "line 3:", "[ASF-R23]"},
		{"WARN " + deep + ": ", "7 levels below the source root, past the discovery depth of 6"},
		{"WARN " + casey + ": ", "not served as a skill", "not named SKILL.md or skill.md", "[ASF-R22]"},
		{"WARN " + link + ": ", "symbolic link inside a skill", "never served"},
		{"NOTE " + nestedDeep + ": ", "past the discovery depth of 6", "served as a file of the skill in " + holder},
		{"NOTE " + nestedCase + ": ", "not named SKILL.md", "served as a file of the skill in " + holder},
	} {
		if lineOf(out, want...) == "" {
			t.Errorf("validate output has no line with %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "/six/SKILL.md") {
		t.Errorf("a skill 6 folders deep is reported:\n%s", out)
	}

	s := startServer(t, legacyVersion, t.TempDir(), nil, "--tools=always", dir)
	if s.entry("skill://lib/a/b/c/d/e/six/SKILL.md") == nil {
		t.Error("the skill 6 folders deep is not served")
	}
	stderr = s.close()
	for _, f := range []string{deep, casey, link} {
		if lineOf(stderr, "level=WARN", f) == "" {
			t.Errorf("stderr has no warning naming %s:\n%s", f, stderr)
		}
	}
}
