package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The messy-input cases of shared/cases (README "From case to test"): one
// subtest per case, named by its id, each asserting what its expect.md gives.
// Inputs come from ../shared/cases/<id> when present, else from the copy in
// testdata/cases/<id>; either way they are copied into t.TempDir() first.

const codeInvalidParams = -32602

// caseDir copies the inputs of case id into a fresh temp folder and returns
// it. The served folder inside it keeps the name "skills".
func caseDir(t *testing.T, id string) string {
	t.Helper()
	src := filepath.Join(sharedDir, "cases", id)
	if _, err := os.Stat(src); err != nil {
		src = filepath.Join("testdata", "cases", id)
	}
	dst := filepath.Join(t.TempDir(), id)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatalf("copying case %s: %v", id, err)
	}
	return dst
}

// caseServer serves dir/skills as the README of shared/cases prescribes.
func caseServer(t *testing.T, era, dir string) *server {
	t.Helper()
	return startServer(t, era, dir, nil, "--tools=always", "skills")
}

// entryJSON is an expected skills/list entry as the expect.md gives it.
func entryJSON(t *testing.T, s string) skillEntry {
	t.Helper()
	var e skillEntry
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		t.Fatalf("bad expected entry: %v\n%s", err, s)
	}
	return e
}

// normEntry makes an entry comparable: frontmatter decoded, resources after
// SKILL.md sorted (their order is not checked).
type normalEntry struct {
	URI         string
	Frontmatter any
	Resources   []skillResource
}

func normEntry(t *testing.T, e skillEntry) normalEntry {
	t.Helper()
	var fm any
	if err := json.Unmarshal(e.Frontmatter, &fm); err != nil {
		t.Fatalf("frontmatter of %s: %v", e.URI, err)
	}
	rs := slices.Clone(e.Resources)
	if len(rs) > 1 {
		slices.SortFunc(rs[1:], func(a, b skillResource) int { return strings.Compare(a.URI, b.URI) })
	}
	return normalEntry{URI: e.URI, Frontmatter: fm, Resources: rs}
}

// caseEntries returns the skills/list entries of the case's source (the
// bundled skills are ignored, as the cases README says).
func (s *server) caseEntries() []skillEntry {
	var out []skillEntry
	for _, e := range s.listAll() {
		if strings.HasPrefix(e.URI, "skill://skills/") {
			out = append(out, e)
		}
	}
	return out
}

func (s *server) checkEntries(want ...string) {
	s.t.Helper()
	got := s.caseEntries()
	var g, w []normalEntry
	for _, e := range got {
		g = append(g, normEntry(s.t, e))
	}
	for _, e := range want {
		w = append(w, normEntry(s.t, entryJSON(s.t, e)))
	}
	if diff := cmp.Diff(w, g); diff != "" {
		s.t.Errorf("skills/list entries mismatch (-want +got):\n%s", diff)
	}
}

// servedEverywhere checks the six surfaces of the cases README for the skill
// with qualified name q, SKILL.md URI u, resource name name and file bytes
// file. listed says whether skills/list and skills/get carry it.
func (s *server) servedEverywhere(q, u, name string, file []byte, listed bool) {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// 1. load-skill
	res := s.callTool("load-skill", map[string]any{"name": q})
	if res.IsError || len(res.Content) != 1 || textOf(res) != string(file) {
		t.Errorf("load-skill %s = %+v (isError %v), want the %d file bytes", q, textOf(res), res.IsError, len(file))
	}
	// 2. prompts
	if !s.hasPrompt(q) {
		t.Errorf("prompts/list has no prompt %s", q)
	}
	pr, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill", Arguments: map[string]string{"name": q}})
	if err != nil {
		t.Errorf("prompts/get skill %s: %v", q, err)
	} else if len(pr.Messages) != 1 {
		t.Errorf("prompts/get skill %s: %d messages", q, len(pr.Messages))
	} else if er, ok := pr.Messages[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource == nil || er.Resource.URI != u || er.Resource.Text != string(file) {
		t.Errorf("prompts/get skill %s: content %#v, want embedded resource %s with the file text", q, pr.Messages[0].Content, u)
	}
	// 3. resources/list
	if r := s.resource(u); r == nil {
		t.Errorf("resources/list lacks %s", u)
	} else if r.MIMEType != "text/markdown" || r.Name != name {
		t.Errorf("resources/list %s: mimeType %q name %q, want text/markdown %q", u, r.MIMEType, r.Name, name)
	}
	// 4. resources/read
	if b, _, err := s.readBytes(u); err != nil || string(b) != string(file) {
		t.Errorf("resources/read %s = %d bytes, %v; want the %d file bytes", u, len(b), err, len(file))
	}
	// 5. skills/list + skills/get
	var entry *skillEntry
	for _, e := range s.listAll() {
		if e.URI == u {
			entry = &e
		}
	}
	got, err := s.custom("skills/get", &skillsParams{URI: u})
	if listed {
		if entry == nil {
			t.Errorf("skills/list lacks %s", u)
		}
		if err != nil {
			t.Errorf("skills/get %s: %v", u, err)
		} else if entry != nil && (got.Skill == nil || !cmp.Equal(normEntry(t, *entry), normEntry(t, *got.Skill))) {
			t.Errorf("skills/get %s = %+v, want the skills/list entry %+v", u, got.Skill, entry)
		}
	} else {
		if entry != nil {
			t.Errorf("skills/list has %s, want it left out", u)
		}
		if rpcCode(err) != codeInvalidParams {
			t.Errorf("skills/get %s: error %v, want -32602", u, err)
		}
	}
	// 6. catalog in instructions
	instr := s.cs.InitializeResult().Instructions
	if !s.startupInstructions && (!strings.Contains(instr, "<name>"+q+"</name>") || !strings.Contains(instr, "<uri>"+u+"</uri>")) {
		t.Errorf("instructions lack <name>%s</name> / <uri>%s</uri>:\n%s", q, u, instr)
	}
}

// notServed checks the "not served" surfaces of the cases README.
func (s *server) notServed(q, u string) {
	t := s.t
	t.Helper()
	if s.hasPrompt(q) {
		t.Errorf("prompt %s exists, want none", q)
	}
	if strings.Contains(s.cs.InitializeResult().Instructions, "<name>"+q+"</name>") {
		t.Errorf("catalog has %s, want none", q)
	}
	res := s.callTool("load-skill", map[string]any{"name": q})
	if !res.IsError {
		t.Errorf("load-skill %s: isError false, want true", q)
	}
	if _, _, err := s.readBytes(u); rpcCode(err) != codeInvalidParams {
		t.Errorf("resources/read %s: error %v, want -32602", u, err)
	}
	if _, err := s.custom("skills/get", &skillsParams{URI: u}); rpcCode(err) != codeInvalidParams {
		t.Errorf("skills/get %s: error %v, want -32602", u, err)
	}
}

func (s *server) hasPrompt(name string) bool {
	ctx, cancel := context.WithTimeout(s.t.Context(), 60*time.Second)
	defer cancel()
	for p, err := range s.cs.Prompts(ctx, nil) {
		if err != nil {
			s.t.Fatalf("prompts/list: %v", err)
		}
		if p.Name == name {
			return true
		}
	}
	return false
}

func (s *server) resources() []*mcp.Resource {
	ctx, cancel := context.WithTimeout(s.t.Context(), 60*time.Second)
	defer cancel()
	var out []*mcp.Resource
	for r, err := range s.cs.Resources(ctx, nil) {
		if err != nil {
			s.t.Fatalf("resources/list: %v", err)
		}
		out = append(out, r)
	}
	return out
}

func (s *server) resource(uri string) *mcp.Resource {
	for _, r := range s.resources() {
		if r.URI == uri {
			return r
		}
	}
	return nil
}

// stderrLines returns the lines of stderr (after the server stopped) at one
// of levels that contain every one of needles.
func stderrLines(stderr string, levels []string, needles ...string) []string {
	var out []string
	for line := range strings.Lines(stderr) {
		okLevel := false
		for _, l := range levels {
			if strings.Contains(line, "level="+l) {
				okLevel = true
			}
		}
		if !okLevel {
			continue
		}
		all := true
		for _, n := range needles {
			if !strings.Contains(line, n) {
				all = false
			}
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

var warnLevels = []string{"WARN"}
var skipLevels = []string{"WARN", "ERROR"}

func readCaseFile(t *testing.T, dir, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantWarnings asserts exactly n WARN lines name file (relative to the case
// folder, matched as a path suffix) and each contains every one of words.
func wantWarnings(t *testing.T, stderr, file string, n int, words ...string) {
	t.Helper()
	lines := stderrLines(stderr, warnLevels, file)
	if len(lines) != n {
		t.Errorf("%d warnings name %s, want %d; stderr:\n%s", len(lines), file, n, stderr)
		return
	}
	for _, l := range lines {
		for _, w := range words {
			if !strings.Contains(l, w) {
				t.Errorf("warning naming %s lacks %q: %s", file, w, l)
			}
		}
	}
}

func TestCases(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			t.Run("BR-01", func(t *testing.T) { caseBR01(t, era) })
			t.Run("BR-02", func(t *testing.T) { caseBR02(t, era) })
			t.Run("BR-04", func(t *testing.T) { caseBR04(t, era) })
			t.Run("BR-07", func(t *testing.T) { caseBR07(t, era) })
			t.Run("BR-08", func(t *testing.T) { caseBR08(t, era) })
			t.Run("BR-09", func(t *testing.T) { caseBR09(t, era) })
			t.Run("BR-12", func(t *testing.T) { caseBR12(t, era) })
			t.Run("BR-15", func(t *testing.T) { caseBR15(t, era) })
			t.Run("BR-17", func(t *testing.T) { caseBR17(t, era) })
			t.Run("BR-18", func(t *testing.T) { caseBR18(t, era) })
			t.Run("BR-20", func(t *testing.T) { caseBR20(t, era) })
			t.Run("BR-21", func(t *testing.T) { caseBR21(t, era) })
			t.Run("BR-32", func(t *testing.T) { caseBR32(t, era) })
			t.Run("BR-35", func(t *testing.T) { caseBR35(t, era) })
		})
	}
}

// BR-01: strict YAML fails on an unquoted ": " in a value; the line-based
// fallback serves the skill with one warning.
func caseBR01(t *testing.T, era string) {
	dir := caseDir(t, "BR-01")
	s := caseServer(t, era, dir)
	file := readCaseFile(t, dir, "skills/to-spec/SKILL.md")
	s.checkEntries(`{"uri": "skill://skills/to-spec/SKILL.md",
	 "frontmatter": {"name": "to-spec",
	                 "description": "Turn the chat into a spec and file it in the tracker: no interview, just synthesis."},
	 "resources": [{"uri": "skill://skills/to-spec/SKILL.md",
	                "digest": "sha256:07482ddd692e83d2ce46f962e6d27061643d488b6f844da8e3b79580bef5fc55",
	                "size": 153}]}`)
	s.servedEverywhere("skills__to-spec", "skill://skills/to-spec/SKILL.md", "to-spec", file, true)
	if instr := s.cs.InitializeResult().Instructions; !strings.Contains(instr, "<description>Turn the chat into a spec and file it in the tracker: no interview, just synthesis.</description>") {
		t.Errorf("catalog description wrong:\n%s", instr)
	}
	stderr := s.close()
	wantWarnings(t, stderr, "skills/to-spec/SKILL.md", 1)
	if l := stderrLines(stderr, skipLevels, "skills/to-spec/SKILL.md", "skip"); len(l) != 0 {
		t.Errorf("skip line for to-spec: %v", l)
	}
}

// BR-02: a UTF-8 BOM is stripped for parsing only; bytes are served as on disk.
func caseBR02(t *testing.T, era string) {
	dir := caseDir(t, "BR-02")
	s := caseServer(t, era, dir)
	file := readCaseFile(t, dir, "skills/bom-skill/SKILL.md")
	if !strings.HasPrefix(string(file), "\ufeff") {
		t.Fatal("fixture lost its BOM")
	}
	s.checkEntries(`{"uri": "skill://skills/bom-skill/SKILL.md",
	 "frontmatter": {"name": "bom-skill", "description": "A skill saved with a byte order mark."},
	 "resources": [{"uri": "skill://skills/bom-skill/SKILL.md",
	                "digest": "sha256:e76de260497cc7ae5f61df1e5eac84c8423a660c392f49f43bd0f2ddeba6c0ac",
	                "size": 91}]}`)
	s.servedEverywhere("skills__bom-skill", "skill://skills/bom-skill/SKILL.md", "bom-skill", file, true)
	if _, c, err := s.readBytes("skill://skills/bom-skill/SKILL.md"); err != nil || c.Blob != nil || c.MIMEType != "text/markdown" {
		t.Errorf("resources/read: want one text item of text/markdown, got %+v %v", c, err)
	}
	stderr := s.close()
	wantWarnings(t, stderr, "skills/bom-skill/SKILL.md", 0)
}

// BR-04: block scalars get real YAML semantics; the catalog trims.
func caseBR04(t *testing.T, era string) {
	dir := caseDir(t, "BR-04")
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/folded/SKILL.md",
	    "frontmatter": {"name": "folded",
	                    "description": "Explicit-invocation loop that replaces the default workflow routing. Use when the user says \"use folded\"."},
	    "resources": [{"uri": "skill://skills/folded/SKILL.md",
	                   "digest": "sha256:204865d8c536c0d644b27019199bec4bf62de9f69f836e8a0a10b873624ad2b8",
	                   "size": 157}]}`,
		`{"uri": "skill://skills/literal/SKILL.md",
	    "frontmatter": {"name": "literal",
	                    "description": "Line one of the description.\nLine two: keeps its newline.\n"},
	    "resources": [{"uri": "skill://skills/literal/SKILL.md",
	                   "digest": "sha256:c14d6ecc42d2d7c7057516348184d43cd3fc0144d45dde71e83ad74b193b80ba",
	                   "size": 110}]}`)
	s.servedEverywhere("skills__folded", "skill://skills/folded/SKILL.md", "folded", readCaseFile(t, dir, "skills/folded/SKILL.md"), true)
	s.servedEverywhere("skills__literal", "skill://skills/literal/SKILL.md", "literal", readCaseFile(t, dir, "skills/literal/SKILL.md"), true)
	instr := s.cs.InitializeResult().Instructions
	for _, want := range []string{
		"<description>Explicit-invocation loop that replaces the default workflow routing. Use when the user says &quot;use folded&quot;.</description>",
		"<description>Line one of the description.\nLine two: keeps its newline.</description>",
	} {
		if !strings.Contains(instr, want) {
			t.Errorf("catalog lacks %q:\n%s", want, instr)
		}
	}
	if r := s.resource("skill://skills/literal/SKILL.md"); r == nil || r.Description != "Line one of the description.\nLine two: keeps its newline." {
		t.Errorf("resources/list description of literal = %+v, want trimmed text", r)
	}
	for _, bad := range []string{">-", "|"} {
		if strings.Contains(instr, "<description>"+bad+"</description>") {
			t.Errorf("catalog shows the block indicator %q as a description", bad)
		}
	}
	stderr := s.close()
	wantWarnings(t, stderr, "skills/folded/SKILL.md", 0)
	wantWarnings(t, stderr, "skills/literal/SKILL.md", 0)
}

// BR-07: a SKILL.md without frontmatter is skipped with one line; its
// sibling is served.
func caseBR07(t *testing.T, era string) {
	dir := caseDir(t, "BR-07")
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/ok/SKILL.md",
	 "frontmatter": {"name": "ok", "description": "A valid sibling."},
	 "resources": [{"uri": "skill://skills/ok/SKILL.md",
	                "digest": "sha256:3e6f50f194f3417fa2fa0bc2783a49e569ee7980a1873193c13509d24e9b8a1a",
	                "size": 70}]}`)
	s.servedEverywhere("skills__ok", "skill://skills/ok/SKILL.md", "ok", readCaseFile(t, dir, "skills/ok/SKILL.md"), true)
	s.notServed("skills__no-frontmatter", "skill://skills/no-frontmatter/SKILL.md")
	res := s.callTool("load-skill", map[string]any{"name": "skills__no-frontmatter"})
	if txt := textOf(res); !strings.Contains(txt, "skills__ok") || strings.Contains(txt, "skills__no-frontmatter,") {
		t.Errorf("load-skill error text = %q, want it to list skills__ok only", txt)
	}
	for _, r := range s.resources() {
		if strings.HasPrefix(r.URI, "skill://skills/no-frontmatter/") {
			t.Errorf("resources/list has %s", r.URI)
		}
	}
	stderr := s.close()
	if l := stderrLines(stderr, skipLevels, "skills/no-frontmatter/SKILL.md"); len(l) != 1 || !strings.Contains(strings.ToLower(l[0]), "frontmatter") {
		t.Errorf("skip lines naming no-frontmatter = %q, want exactly one giving the reason", l)
	}
	if l := stderrLines(stderr, skipLevels, "skills/ok/SKILL.md"); len(l) != 0 {
		t.Errorf("lines name skills/ok/SKILL.md: %q", l)
	}
}

// BR-08: a missing name falls back to the folder name; left out of
// skills/list only.
func caseBR08(t *testing.T, era string) {
	dir := caseDir(t, "BR-08")
	s := caseServer(t, era, dir)
	file := readCaseFile(t, dir, "skills/dogfood/SKILL.md")
	s.checkEntries()
	s.servedEverywhere("skills__dogfood", "skill://skills/dogfood/SKILL.md", "dogfood", file, false)
	if r := s.resource("skill://skills/dogfood/SKILL.md"); r == nil || r.Description != "Rebuild, install and exercise every command." {
		t.Errorf("resources/list dogfood = %+v", r)
	}
	stderr := s.close()
	wantWarnings(t, stderr, "skills/dogfood/SKILL.md", 1, "dogfood", "name")
	if l := stderrLines(stderr, skipLevels, "skills/dogfood/SKILL.md", "skipped"); len(l) != 0 {
		t.Errorf("skip line for dogfood: %q", l)
	}
}

// BR-09: a display-style name is served under its sanitized qualified name
// and percent-encoded URI, left out of skills/list.
func caseBR09(t *testing.T, era string) {
	dir := caseDir(t, "BR-09")
	s := caseServer(t, era, dir)
	u := "skill://skills/My%20First%20Skill/SKILL.md"
	s.checkEntries()
	s.servedEverywhere("skills__My-First-Skill", u, "My First Skill", readCaseFile(t, dir, "skills/my-first-skill/SKILL.md"), false)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	comp, err := s.cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "skill"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "first"},
	})
	if err != nil || !slices.Contains(comp.Completion.Values, "skills__My-First-Skill") {
		t.Errorf("completion of %q = %+v, %v; want skills__My-First-Skill", "first", comp, err)
	}
	if _, _, err := s.readBytes("skill://skills/my-first-skill/SKILL.md"); rpcCode(err) != codeInvalidParams {
		t.Errorf("resources/read under the folder name: %v, want -32602", err)
	}
	stderr := s.close()
	wantWarnings(t, stderr, "skills/my-first-skill/SKILL.md", 1, "My First Skill", "my-first-skill", "skills/list")
}

// BR-12: a valid name that differs from its folder builds the URI.
func caseBR12(t *testing.T, era string) {
	dir := caseDir(t, "BR-12")
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/template-skill/SKILL.md",
	 "frontmatter": {"name": "template-skill", "description": "Replace with a description."},
	 "resources": [{"uri": "skill://skills/template-skill/SKILL.md",
	                "digest": "sha256:53f89f645f1f08dd8210b0af1a5f0819288cc8bc2bbff33a8b0fda0e3ccb3bc8",
	                "size": 93}]}`)
	s.servedEverywhere("skills__template-skill", "skill://skills/template-skill/SKILL.md", "template-skill", readCaseFile(t, dir, "skills/template/SKILL.md"), true)
	s.notServed("skills__template", "skill://skills/template/SKILL.md")
	stderr := s.close()
	wantWarnings(t, stderr, "skills/template/SKILL.md", 1, "template-skill", `template`)
}

// BR-15: a symlinked skill folder in the root is followed; a dangling one
// ignored. The layout is built here, as setup.sh would.
func caseBR15(t *testing.T, era string) {
	dir := caseDir(t, "BR-15")
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared/wrap-up", filepath.Join(dir, "skills", "wrap-up")); err != nil {
		t.Skipf("cannot create symlinks here: %v", err)
	}
	if err := os.Symlink("../shared/missing", filepath.Join(dir, "skills", "dangling")); err != nil {
		t.Fatal(err)
	}
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/wrap-up/SKILL.md",
	 "frontmatter": {"name": "wrap-up", "description": "Summarise the session."},
	 "resources": [{"uri": "skill://skills/wrap-up/SKILL.md",
	                "digest": "sha256:331bb5edc1b4debc0942df3de2a595b90230c72241410bb7d7e440719a95033c",
	                "size": 81}]}`)
	s.servedEverywhere("skills__wrap-up", "skill://skills/wrap-up/SKILL.md", "wrap-up", readCaseFile(t, dir, "shared/wrap-up/SKILL.md"), true)
	for _, r := range s.resources() {
		if strings.Contains(r.URI, "dangling") {
			t.Errorf("resources/list has %s", r.URI)
		}
	}
	stderr := s.close()
	if l := stderrLines(stderr, warnLevels, "skills/dangling"); len(l) > 1 {
		t.Errorf("%d warnings name skills/dangling, want at most 1", len(l))
	}
	if l := stderrLines(stderr, skipLevels, "wrap-up", "skip"); len(l) != 0 {
		t.Errorf("skip line names wrap-up: %q", l)
	}
}

// BR-17: skills in container folders are found; the container path is part
// of the skill path and the qualified name.
func caseBR17(t *testing.T, era string) {
	dir := caseDir(t, "BR-17")
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/acme/billing/refunds/SKILL.md",
	    "frontmatter": {"name": "refunds", "description": "Handle a refund."},
	    "resources": [{"uri": "skill://skills/acme/billing/refunds/SKILL.md",
	                   "digest": "sha256:2a6021a4129562cf154b2c598a793ab4452513731910e80f08dd0d81f41e9220",
	                   "size": 75},
	                  {"uri": "skill://skills/acme/billing/refunds/templates/email.md",
	                   "digest": "sha256:7b7c2be2390a57bc8874adae23a60940ac18fa1fdadca60de307406f50d1aee8",
	                   "size": 15}]}`,
		`{"uri": "skill://skills/flat/SKILL.md",
	    "frontmatter": {"name": "flat", "description": "A top-level skill."},
	    "resources": [{"uri": "skill://skills/flat/SKILL.md",
	                   "digest": "sha256:814dd935707408a1d5e1b12d7030bf1af9967040bec2cc7688812d4bfa16c226",
	                   "size": 74}]}`)
	s.servedEverywhere("skills__acme__billing__refunds", "skill://skills/acme/billing/refunds/SKILL.md", "refunds", readCaseFile(t, dir, "skills/acme/billing/refunds/SKILL.md"), true)
	s.servedEverywhere("skills__flat", "skill://skills/flat/SKILL.md", "flat", readCaseFile(t, dir, "skills/flat/SKILL.md"), true)
	email := "skill://skills/acme/billing/refunds/templates/email.md"
	if r := s.resource(email); r == nil || r.MIMEType != "text/markdown" || r.Size != 15 {
		t.Errorf("resources/list %s = %+v, want text/markdown size 15", email, r)
	}
	if b, _, err := s.readBytes(email); err != nil || string(b) != "Dear customer,\n" {
		t.Errorf("resources/read %s = %q, %v", email, b, err)
	}
	for _, u := range []string{"skill://skills/acme/SKILL.md", "skill://skills/acme/billing/SKILL.md"} {
		if _, _, err := s.readBytes(u); rpcCode(err) != codeInvalidParams {
			t.Errorf("resources/read %s: %v, want -32602", u, err)
		}
		if _, err := s.custom("skills/get", &skillsParams{URI: u}); rpcCode(err) != codeInvalidParams {
			t.Errorf("skills/get %s: %v, want -32602", u, err)
		}
	}
	for _, q := range []string{"skills__acme", "skills__acme__billing"} {
		if s.hasPrompt(q) {
			t.Errorf("container %s has a prompt", q)
		}
	}
	// Directory reads: the server declares directoryRead (SEP2640-R64..R68).
	dr, err := s.custom("resources/directory/read", &skillsParams{URI: "skill://skills/acme/billing/refunds"})
	if err != nil {
		t.Errorf("resources/directory/read: %v", err)
	} else {
		got := map[string]string{}
		for _, r := range dr.Resources {
			got[r.Name] = r.MIMEType
		}
		want := map[string]string{"SKILL.md": "text/markdown", "templates": "inode/directory"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("resources/directory/read children mismatch (-want +got):\n%s", diff)
		}
	}
	stderr := s.close()
	for _, f := range []string{"refunds/SKILL.md", "flat/SKILL.md", "email.md"} {
		if l := stderrLines(stderr, skipLevels, f); len(l) != 0 {
			t.Errorf("lines name %s: %q", f, l)
		}
	}
}

// BR-18: a nested skill has its own entry; the parent's manifest includes the
// nested files (SEP2640-R21..R25).
func caseBR18(t *testing.T, era string) {
	dir := caseDir(t, "BR-18")
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/outer/SKILL.md",
	    "frontmatter": {"name": "outer", "description": "Enclosing skill."},
	    "resources": [
	      {"uri": "skill://skills/outer/SKILL.md", "digest": "sha256:6261c1c175344f302651e1c602798cdd9b81abe6fea5377120b3bacba80cc8b5", "size": 73},
	      {"uri": "skill://skills/outer/guide.md", "digest": "sha256:ae3540158d4c21239a7d69044476fe4f84712e4f6aadb2fe74e1e9c9dd274bc4", "size": 13},
	      {"uri": "skill://skills/outer/inner/SKILL.md", "digest": "sha256:15d16a5cf27a15251280148adff5358d0028554f5dd31b3e0293af5dfd129e0b", "size": 95},
	      {"uri": "skill://skills/outer/inner/refs/note.md", "digest": "sha256:12c3fb11bd3826fff7d6230c3dca9005315937fe13017a5ee8c45739388e8c40", "size": 12},
	      {"uri": "skill://skills/outer/plain/SKILL.md", "digest": "sha256:c4efca882f5dcfa2edf48fe8c31be28e90d92e4636265318ac21dd205b6286dd", "size": 56}]}`,
		`{"uri": "skill://skills/outer/inner/SKILL.md",
	    "frontmatter": {"name": "inner", "description": "Nested skill with its own frontmatter."},
	    "resources": [
	      {"uri": "skill://skills/outer/inner/SKILL.md", "digest": "sha256:15d16a5cf27a15251280148adff5358d0028554f5dd31b3e0293af5dfd129e0b", "size": 95},
	      {"uri": "skill://skills/outer/inner/refs/note.md", "digest": "sha256:12c3fb11bd3826fff7d6230c3dca9005315937fe13017a5ee8c45739388e8c40", "size": 12}]}`)
	s.servedEverywhere("skills__outer", "skill://skills/outer/SKILL.md", "outer", readCaseFile(t, dir, "skills/outer/SKILL.md"), true)
	s.servedEverywhere("skills__outer__inner", "skill://skills/outer/inner/SKILL.md", "inner", readCaseFile(t, dir, "skills/outer/inner/SKILL.md"), true)
	count := map[string]int{}
	var innerName string
	for _, r := range s.resources() {
		count[r.URI]++
		if r.URI == "skill://skills/outer/inner/SKILL.md" {
			innerName = r.Name
		}
	}
	for _, u := range []string{"SKILL.md", "guide.md", "inner/SKILL.md", "inner/refs/note.md", "plain/SKILL.md"} {
		if n := count["skill://skills/outer/"+u]; n != 1 {
			t.Errorf("resources/list lists skill://skills/outer/%s %d times, want once", u, n)
		}
	}
	if innerName != "inner" {
		t.Errorf("resources/list name of inner SKILL.md = %q, want inner", innerName)
	}
	plain := "skill://skills/outer/plain/SKILL.md"
	if b, _, err := s.readBytes(plain); err != nil || len(b) != 56 {
		t.Errorf("resources/read %s = %d bytes, %v; want 56", plain, len(b), err)
	}
	if _, err := s.custom("skills/get", &skillsParams{URI: plain}); rpcCode(err) != codeInvalidParams {
		t.Errorf("skills/get %s: %v, want -32602", plain, err)
	}
	if s.hasPrompt("skills__outer__plain") {
		t.Error("plain/SKILL.md became a skill")
	}
	stderr := s.close()
	if l := stderrLines(stderr, skipLevels, "skills/outer/SKILL.md"); len(l) != 0 {
		t.Errorf("lines name outer: %q", l)
	}
	if l := stderrLines(stderr, skipLevels, "skills/outer/inner/SKILL.md"); len(l) != 0 {
		t.Errorf("lines name inner: %q", l)
	}
	if l := stderrLines(stderr, skipLevels, "skills/outer/plain/SKILL.md"); len(l) > 1 {
		t.Errorf("%d lines name plain/SKILL.md, want at most 1", len(l))
	}
}

// BR-20: a lower-case skill.md is accepted; its URI ends in /SKILL.md.
func caseBR20(t *testing.T, era string) {
	dir := caseDir(t, "BR-20")
	s := caseServer(t, era, dir)
	s.checkEntries(`{"uri": "skill://skills/lower/SKILL.md",
	 "frontmatter": {"name": "lower", "description": "Wrong file-name case."},
	 "resources": [{"uri": "skill://skills/lower/SKILL.md",
	                "digest": "sha256:dd469f4cf26b4e818c9535346753a99516f22b96ded88725225e8a9c39f64561",
	                "size": 78}]}`)
	s.servedEverywhere("skills__lower", "skill://skills/lower/SKILL.md", "lower", readCaseFile(t, dir, "skills/lower/skill.md"), true)
	if _, _, err := s.readBytes("skill://skills/lower/skill.md"); rpcCode(err) != codeInvalidParams {
		t.Errorf("resources/read of skill.md: %v, want -32602", err)
	}
	stderr := s.close()
	if l := stderrLines(stderr, skipLevels, "skills/lower/skill.md", "skip"); len(l) != 0 {
		t.Errorf("skip line: %q", l)
	}
}

// BR-21: traversal through URIs and tool arguments is looked up only in the
// manifest; nothing is read, nothing leaks.
func caseBR21(t *testing.T, era string) {
	dir := caseDir(t, "BR-21")
	const marker = "SENTINEL-7f3a9c-not-for-clients"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: x\ndescription: "+marker+"\n---\n"+marker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := caseServer(t, era, dir)
	leaks := func(what string, v any) {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), marker) || strings.Contains(string(b), "root:") {
			t.Errorf("%s leaked content: %s", what, b)
		}
	}
	var uris []string
	for _, u := range []string{
		"skill://code-review/../../../../etc/passwd",
		"skill://code-review/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
		"skill://code-review//etc/passwd",
		"skill://code-review/..%2f..%2fSKILL.md",
	} {
		uris = append(uris, u, strings.Replace(u, "skill://code-review/", "skill://skills/code-review/", 1))
	}
	uris = append(uris, "skill://skills/code-review/../code-review/SKILL.md")
	for _, u := range uris {
		b, c, err := s.readBytes(u)
		if rpcCode(err) != codeInvalidParams {
			t.Errorf("resources/read %s: %v, want -32602", u, err)
		} else if !strings.Contains(err.Error(), u) {
			t.Errorf("resources/read %s: message %q does not name the URI", u, err)
		}
		leaks("resources/read "+u, []any{string(b), c, err})
	}
	res := s.callTool("load-skill", map[string]any{"name": "../../etc"})
	if !res.IsError || !strings.Contains(textOf(res), "skills__code-review") {
		t.Errorf("load-skill ../../etc = %q (isError %v), want isError listing skills__code-review", textOf(res), res.IsError)
	}
	leaks("load-skill", res)
	for _, u := range []string{"skill://code-review/..", "skill://skills/code-review/.."} {
		r, err := s.custom("resources/directory/read", &skillsParams{URI: u})
		if rpcCode(err) != codeInvalidParams {
			t.Errorf("resources/directory/read %s: %v, want -32602", u, err)
		}
		leaks("resources/directory/read "+u, r)
	}
	for _, p := range []string{"../../../../etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "/etc/passwd", `..\..\SKILL.md`, "../../SKILL.md"} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill-resource", Arguments: map[string]any{"skill": "skills__code-review", "path": p}})
		cancel()
		if err == nil && !res.IsError {
			t.Errorf("skill-resource %q: served %q", p, textOf(res))
		} else if err != nil && rpcCode(err) != codeInvalidParams {
			t.Errorf("skill-resource %q: error %v, want isError or -32602", p, err)
		}
		leaks("skill-resource "+p, res)
	}
	b, _, err := s.readBytes("skill://skills/code-review/SKILL.md")
	if err != nil || digestOf(b) != "sha256:7ed06b4da9073053d4d05945d59ad1ad29a9c6956f446642bf86210b9ee37f60" {
		t.Errorf("control read = %s, %v", digestOf(b), err)
	}
}

// BR-32: ttlMs/cacheScope only on 2026-07-28 requests; -32602 for an
// unknown skill (SEP2640-R47, R54, R55; BASE-R31).
func caseBR32(t *testing.T, era string) {
	dir := caseDir(t, "BR-32")
	s := caseServer(t, era, dir)
	e := `{"uri": "skill://skills/code-review/SKILL.md",
	 "frontmatter": {"name": "code-review", "description": "Review a diff."},
	 "resources": [{"uri": "skill://skills/code-review/SKILL.md",
	                "digest": "sha256:7ed06b4da9073053d4d05945d59ad1ad29a9c6956f446642bf86210b9ee37f60",
	                "size": 77}]}`
	init := s.cs.InitializeResult()
	if init.Capabilities == nil || init.Capabilities.Resources == nil || init.Capabilities.Extensions["io.modelcontextprotocol/skills"] == nil {
		t.Errorf("capabilities = %+v, want resources and the skills extension", init.Capabilities)
	}
	s.checkEntries(e)
	list, err := s.custom("skills/list", &skillsParams{})
	if err != nil {
		t.Fatal(err)
	}
	get, err := s.custom("skills/get", &skillsParams{URI: "skill://skills/code-review/SKILL.md"})
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(normEntry(t, *get.Skill), normEntry(t, entryJSON(t, e))) {
		t.Errorf("skills/get = %+v", get.Skill)
	}
	for name, r := range map[string]*skillsResult{"skills/list": list, "skills/get": get} {
		if _, ok := r.Raw["nextCursor"]; ok {
			t.Errorf("%s has nextCursor", name)
		}
		_, hasTTL := r.Raw["ttlMs"]
		_, hasScope := r.Raw["cacheScope"]
		if era == legacyVersion {
			if hasTTL || hasScope {
				t.Errorf("%s on %s carries ttlMs/cacheScope: %v", name, era, keys(r.Raw))
			}
			for k := range r.Raw {
				if !slices.Contains([]string{"skills", "skill", "_meta", "resultType"}, k) {
					t.Errorf("%s on %s has unexpected key %q", name, era, k)
				}
			}
		} else {
			if r.TTLMs == nil || *r.TTLMs < 0 || r.CacheScope == nil || (*r.CacheScope != "public" && *r.CacheScope != "private") {
				t.Errorf("%s on %s: ttlMs %v cacheScope %v, want both", name, era, r.TTLMs, r.CacheScope)
			}
			if r.ResultType != "complete" {
				t.Errorf("%s on %s: resultType %q, want complete", name, era, r.ResultType)
			}
		}
	}
	for _, u := range []string{"skill://code-review/SKILL.md", "skill://nope/SKILL.md"} {
		_, err := s.custom("skills/get", &skillsParams{URI: u})
		if rpcCode(err) != codeInvalidParams || !strings.Contains(err.Error(), u) {
			t.Errorf("skills/get %s: %v, want -32602 naming the URI", u, err)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// BR-35: a skill over both SEP-2640 limits is served with one warning;
// binaries come back as blobs. The layout is built here with the sizes of
// make-big-skill.py.
func caseBR35(t *testing.T, era string) {
	dir := t.TempDir()
	base := filepath.Join(dir, "skills", "big-skill")
	if err := os.MkdirAll(filepath.Join(base, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	skillMD := "---\nname: big-skill\ndescription: Asset-heavy skill over the SEP-2640 limits.\n---\n\n# Big\n"
	if err := os.WriteFile(filepath.Join(base, "SKILL.md"), []byte(skillMD), 0o644); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 35*1024)
	for i := range 599 {
		for j := range blob {
			blob[j] = byte(i*7 + j*13 + j/251) // arbitrary, not valid UTF-8
		}
		blob[0] = 0xff
		if err := os.WriteFile(filepath.Join(base, "assets", "icon-"+pad3(i)+".bin"), blob, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := caseServer(t, era, dir)
	entries := s.caseEntries()
	if len(entries) != 1 {
		t.Fatalf("skills/list has %d case entries, want 1", len(entries))
	}
	e := entries[0]
	var total int64
	for _, r := range e.Resources {
		total += r.Size
	}
	if len(e.Resources) != 600 || total != 21468248 || e.Resources[0].Size != 88 ||
		e.Resources[0].Digest != "sha256:7bd555ac389c503d53e86c2395738ac1953df86ff102e0ae174c47b27f7b2437" {
		t.Errorf("big-skill manifest: %d elements, %d bytes, first %+v; want 600, 21468248, SKILL.md 88 bytes", len(e.Resources), total, e.Resources[0])
	}
	n := 0
	for _, r := range s.resources() {
		if strings.HasPrefix(r.URI, "skill://skills/big-skill/") {
			n++
		}
		if r.URI == "skill://skills/big-skill/assets/icon-000.bin" && (r.MIMEType != "application/octet-stream" || r.Size != 35840) {
			t.Errorf("resources/list icon-000.bin = %+v", r)
		}
	}
	if n != 600 {
		t.Errorf("resources/list has %d big-skill URIs, want 600", n)
	}
	b, c, err := s.readBytes("skill://skills/big-skill/assets/icon-042.bin")
	if err != nil || c.Blob == nil || c.Text != "" || c.MIMEType != "application/octet-stream" {
		t.Errorf("resources/read icon-042.bin: %+v %v, want one blob", c, err)
	}
	disk, _ := os.ReadFile(filepath.Join(base, "assets", "icon-042.bin"))
	if string(b) != string(disk) {
		t.Error("icon-042.bin bytes differ from disk")
	}
	stderr := s.close()
	l := stderrLines(stderr, warnLevels, "big-skill")
	if len(l) != 1 || !strings.Contains(l[0], "600") || !strings.Contains(l[0], "512") ||
		!(strings.Contains(l[0], "21468248") || strings.Contains(l[0], "21,468,248")) ||
		!(strings.Contains(l[0], "16777216") || strings.Contains(l[0], "16,777,216")) {
		t.Errorf("warnings naming big-skill = %q, want one giving 600/512 and 21468248/16777216", l)
	}
}

func pad3(i int) string { return fmt.Sprintf("%03d", i) }
