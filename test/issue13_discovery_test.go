package test

import (
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// End-to-end tests of issue 13 ("first contact") items 1 and 2 on the built
// binary, on both protocol eras: a source folder that is itself a skill, a
// source that holds no skill, and dot-folder collections (OpenAI's shape),
// locally and from GitHub with several subpaths of one repository.

// openAILookalike is the OpenAI-shaped collection in testdata: ten skills in
// skills/.curated, skills/.system and skills/.experimental.
const openAILookalike = "testdata/openai-lookalike"

// openAINames are the look-alike's skill paths below its root prefix.
var openAINames = []string{
	".curated/gh-address-comments", ".curated/gh-fix-ci", ".curated/linear", ".curated/notion-knowledge-capture",
	".curated/playwright", ".curated/spreadsheet",
	".experimental/create-plan", ".experimental/datadog",
	".system/skill-creator", ".system/skill-installer",
}

// listedUnder returns the skill paths of the skills/list entries under
// skill://prefix/, sorted.
func listedUnder(s *server, prefix string) []string {
	var got []string
	for _, e := range s.listAll() {
		if rest, ok := strings.CutPrefix(e.URI, "skill://"+prefix+"/"); ok {
			got = append(got, strings.TrimSuffix(rest, "/SKILL.md"))
		}
	}
	slices.Sort(got)
	return got
}

// TestIssue13SingleSkillSource is issue 13 item 1: a source folder that is
// itself a skill is served as that skill, with its parent folder's name as
// prefix (the skill path and qualified name it has when the parent is the
// source); its hidden files stay unserved; validate counts it apart from
// the bundled skill.
func TestIssue13SingleSkillSource(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-skills", "pdf-summary")
	writeFile(t, filepath.Join(dir, "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	writeFile(t, filepath.Join(dir, "reference.md"), "How to summarise.\n")
	writeFile(t, filepath.Join(dir, ".env"), "SECRET=1\n")
	writeFile(t, filepath.Join(dir, ".notes", "draft.md"), "draft\n")
	const uri = "skill://my-skills/pdf-summary/SKILL.md"
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, era, t.TempDir(), nil, "--tools=always", dir)
			e := s.entry(uri)
			if e == nil {
				t.Fatalf("skills/list has no %s; stderr:\n%s", uri, s.stderr.String())
			}
			var files []string
			for _, r := range e.Resources {
				files = append(files, strings.TrimPrefix(r.URI, "skill://my-skills/pdf-summary/"))
			}
			if want := []string{"SKILL.md", "reference.md"}; !slices.Equal(files, want) && !slices.Equal(files, want[1:]) {
				t.Errorf("resources of %s = %q, want %q (hidden files unserved)", uri, files, want)
			}
			if text := textOf(s.callTool("load-skill", map[string]any{"name": "my-skills__pdf-summary"})); !strings.Contains(text, "# pdf-summary") {
				t.Errorf("load-skill my-skills__pdf-summary = %q", text)
			}
			if _, _, err := s.readBytes("skill://my-skills/pdf-summary/.env"); err == nil {
				t.Errorf("a hidden file inside the skill is served")
			}
			if out := s.close(); strings.Contains(out, "no skill found") {
				t.Errorf("stderr warns about a source that is a skill:\n%s", out)
			}
		})
	}
	out, _, code := validateRun(t, dir)
	if want := "2 skills served (1 skill from " + dir + ", 1 bundled)"; !strings.Contains(out, want) || code != 0 {
		t.Errorf("validate %s = exit %d\n%s\nwant exit 0 and %q", dir, code, out, want)
	}
}

// TestIssue13NoSkillSource is issue 13 item 1: a source that yields no
// skill gets a warning naming it and what was looked for, at startup and in
// validate (which counts it, the bundled skill apart, and exits 1).
func TestIssue13NoSkillSource(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	writeFile(t, filepath.Join(dir, "notes.md"), "not a skill\n")
	writeFile(t, filepath.Join(dir, ".git", "s", "SKILL.md"), skillBody("s", "In .git."))
	want := "no skill found in the source " + dir
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, era, t.TempDir(), nil, dir)
			waitFor(t, "the no-skill warning", func() bool { return len(stderrLines(s.stderr.String(), warnLevels, want)) > 0 }, s.stderr)
			line := stderrLines(s.stderr.String(), warnLevels, want)[0]
			if !strings.Contains(line, "SKILL.md") || !strings.Contains(line, ".git") {
				t.Errorf("warning %q does not say what was looked for", line)
			}
		})
	}
	out, _, code := validateRun(t, dir)
	if !strings.Contains(out, want) || !strings.Contains(out, "(0 skills from "+dir+", 1 bundled)") || code != 1 {
		t.Errorf("validate %s = exit %d\n%s\nwant exit 1, the warning and the counts", dir, code, out)
	}
}

// TestIssue13DotFolderCollection is issue 13 item 2: the OpenAI look-alike
// serves its ten skills from its root (skills/ collapses, hidden group
// folders are descended into); version-control and tool folders are still
// skipped and hidden files and folders inside a skill still unserved.
func TestIssue13DotFolderCollection(t *testing.T) {
	root, err := filepath.Abs(openAILookalike)
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(lib, ".group", "a", "SKILL.md"), skillBody("a", "In a hidden group."))
	writeFile(t, filepath.Join(lib, ".group", "a", ".env"), "SECRET=1\n")
	writeFile(t, filepath.Join(lib, ".group", "a", ".hidden", "x.md"), "hidden\n")
	writeFile(t, filepath.Join(lib, ".group", "a", "ok.md"), "served\n")
	for _, skipped := range []string{".git", "node_modules", ".github", ".vscode"} {
		writeFile(t, filepath.Join(lib, skipped, "s", "SKILL.md"), skillBody("s", "Never served."))
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, era, t.TempDir(), nil, "--tools=always", root, lib)
			if got := listedUnder(s, "openai-lookalike"); !slices.Equal(got, openAINames) {
				t.Errorf("skills/list under openai-lookalike = %q, want the ten skills %q", got, openAINames)
			}
			if got := listedUnder(s, "lib"); !slices.Equal(got, []string{".group/a"}) {
				t.Errorf("skills/list under lib = %q, want only .group/a (no .git, node_modules, .github, .vscode)", got)
			}
			e := s.entry("skill://lib/.group/a/SKILL.md")
			var files []string
			for _, r := range e.Resources {
				files = append(files, strings.TrimPrefix(r.URI, "skill://lib/.group/a/"))
			}
			if slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, ".env") || strings.Contains(f, ".hidden") }) ||
				!slices.Contains(files, "ok.md") {
				t.Errorf("resources of .group/a = %q, want ok.md and no hidden file", files)
			}
			if text := textOf(s.callTool("load-skill", map[string]any{"name": "openai-lookalike__.curated__playwright"})); !strings.Contains(text, "Playwright") {
				t.Errorf("load-skill openai-lookalike__.curated__playwright = %q", text)
			}
			if out := s.close(); strings.Contains(out, "move it") && strings.Contains(out, ".curated") {
				t.Errorf("stderr still asks to move a dot-folder skill:\n%s", out)
			}
		})
	}
	out, _, code := validateRun(t, root)
	if !strings.Contains(out, "(10 skills from "+root+", 1 bundled)") || code != 0 {
		t.Errorf("validate %s = exit %d\n%s\nwant exit 0 and ten skills", root, code, out)
	}
}

// TestIssue13GitHubSubpathsShareDownload is issue 13 item 2 from GitHub:
// the OpenAI look-alike as a repository serves its ten skills from its
// root, and two subpaths of it are two sources sharing one download (one
// tarball request), both served.
func TestIssue13GitHubSubpathsShareDownload(t *testing.T) {
	files := map[string]string{}
	err := filepath.WalkDir(openAILookalike, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(openAILookalike, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		sources []string
		want    map[string][]string // prefix → skill paths below it
	}{
		{"root", []string{"github.com/acme/skills"}, map[string][]string{"acme-skills": {
			".curated/gh-address-comments", ".curated/gh-fix-ci", ".curated/linear", ".curated/notion-knowledge-capture",
			".curated/playwright", ".curated/spreadsheet", ".experimental/create-plan", ".experimental/datadog",
			".system/skill-creator", ".system/skill-installer"}}},
		// Both subpaths at the default branch: one ref, one download.
		{"two subpaths", []string{"github.com/acme/skills/skills/.curated", "https://github.com/acme/skills/skills/.system"}, map[string][]string{
			"acme-skills/.curated": {"gh-address-comments", "gh-fix-ci", "linear", "notion-knowledge-capture", "playwright", "spreadsheet"},
			"acme-skills/.system":  {"skill-creator", "skill-installer"}}},
	}
	for _, era := range eras {
		for _, tc := range cases {
			t.Run(era+"/"+tc.name, func(t *testing.T) {
				gh := newFakeGitHub(t)
				gh.push("acme", "skills", "main", false, files)
				base := t.TempDir()
				certFile := filepath.Join(base, "fake-github.pem")
				cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gh.srv.Certificate().Raw})
				if err := os.WriteFile(certFile, cert, 0o644); err != nil {
					t.Fatal(err)
				}
				sources, want := tc.sources, tc.want
				s := startServerNotes(t, era, base, []string{
					"SKILLJACK_CACHE_DIR=" + filepath.Join(base, "cache"),
					"GITHUB_ALLOWED_ORGS=acme",
					"GITHUB_API_URL=" + gh.srv.URL,
					"GITHUB_TOKEN=" + ghToken,
					"GITHUB_POLL_INTERVAL_MS=0",
					"SSL_CERT_FILE=" + certFile,
				}, newNotes(), append([]string{"--tools=always"}, sources...)...)
				for prefix, names := range want {
					s.eventually("the skills under "+prefix, func() bool { return slices.Equal(listedUnder(s, prefix), names) })
				}
				if n := gh.count("/repos/acme/skills/tarball/", ""); n != 1 {
					t.Errorf("%d tarball downloads of acme/skills, want 1: %+v", n, gh.requests())
				}
				out := s.close()
				if strings.Contains(out, "one source per repository") || strings.Contains(out, "skipped: repository") {
					t.Errorf("a subpath source was refused:\n%s", out)
				}
			})
		}
	}
}
