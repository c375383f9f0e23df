package catalog_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

var localSrc = events.Source{ID: "0", Kind: events.SourceLocal, Location: "/r/skills", Root: "/r/skills", Prefix: "skills"}

// scanned returns a scanned skill at relDir of localSrc holding md.
func scanned(relDir, md string) events.ScannedSkill {
	return events.ScannedSkill{
		Dir: "/r/skills/" + relDir, RelDir: relDir, SkillMD: []byte(md),
		Files: []events.File{{Path: "SKILL.md", Digest: skilltest.Digest(md), Size: int64(len(md))}},
	}
}

func buildOne(t *testing.T, ss ...events.ScannedSkill) *events.Catalog {
	t.Helper()
	cfg := events.SourcesConfigured{Seq: 1, Sources: []events.Source{localSrc}}
	scans := map[string]events.SourceScanned{"0": {Source: localSrc, Skills: ss}}
	return catalog.Build(1, cfg, scans, nil)
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var b strings.Builder
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	b.Write(v)
	return b.String()
}

// TestFrontmatter pins the frontmatter reading: BOM (BR-02), CRLF, block
// scalars (BR-04), the colon fallback (BR-01), typed values and verbatim
// key order (SEP2640-R28), and the skip reasons (BR-07, ASF-R23).
func TestFrontmatter(t *testing.T) {
	tests := []struct {
		name     string
		md       string
		wantFM   string // compact JSON; "" when skipped
		wantDesc string
		wantDiag []string // substrings of the one diagnostic; nil: none
		wantSkip bool
	}{
		{
			name:   "plain ASF-TV-01",
			md:     "---\nname: hello\ndescription: Greets the user.\n---\n\nSay hello back.\n",
			wantFM: `{"name":"hello","description":"Greets the user."}`, wantDesc: "Greets the user.",
		},
		{
			name:   "BR-02 leading BOM stripped for parsing only",
			md:     "\ufeff---\nname: hello\ndescription: A skill saved with a BOM.\n---\n# BOM\n",
			wantFM: `{"name":"hello","description":"A skill saved with a BOM."}`, wantDesc: "A skill saved with a BOM.",
		},
		{
			name:     "BR-02 second BOM is data",
			md:       "\ufeff\ufeff---\nname: hello\ndescription: d\n---\n",
			wantSkip: true, wantDiag: []string{"does not begin with ---"},
		},
		{
			name:   "CRLF line endings and trailing blanks on delimiters",
			md:     "---  \r\nname: hello\r\ndescription: |\r\n  x\r\n  y\r\n--- \t\r\nbody\r\n",
			wantFM: `{"name":"hello","description":"x\ny\n"}`, wantDesc: "x\ny",
		},
		{
			name:     "BR-04 folded >-",
			md:       "---\nname: hello\ndescription: >-\n  Explicit-invocation loop that replaces the default\n  workflow routing. Use when the user says \"use folded\".\n---\n\n# Folded\n",
			wantFM:   `{"name":"hello","description":"Explicit-invocation loop that replaces the default workflow routing. Use when the user says \"use folded\"."}`,
			wantDesc: `Explicit-invocation loop that replaces the default workflow routing. Use when the user says "use folded".`,
		},
		{
			name:     "BR-04 literal | keeps its final newline in frontmatter, trimmed in the catalog",
			md:       "---\nname: hello\ndescription: |\n  Line one of the description.\n  Line two: keeps its newline.\n---\n\n# Literal\n",
			wantFM:   `{"name":"hello","description":"Line one of the description.\nLine two: keeps its newline.\n"}`,
			wantDesc: "Line one of the description.\nLine two: keeps its newline.",
		},
		{
			name:     "BR-01 unquoted colon-space falls back to line-based reading",
			md:       "---\nname: hello\ndescription: Turn the chat into a spec and file it in the tracker: no interview, just synthesis.\n---\n\n# To spec\n",
			wantFM:   `{"name":"hello","description":"Turn the chat into a spec and file it in the tracker: no interview, just synthesis."}`,
			wantDesc: "Turn the chat into a spec and file it in the tracker: no interview, just synthesis.",
			wantDiag: []string{"strict YAML parsing failed", "mapping values are not allowed", "line-based"},
		},
		{
			name:     "verbatim key order, types, nesting and aliases",
			md:       "---\nz: 1\nname: hello\ndescription: d\nb: true\nn: null\nf: 1.5\nt: 2024-01-02\nq: \"007\"\nl: [1, two]\nm:\n  k: v\n  j: 2\nanchor: &x hi\nalias: *x\n---\n",
			wantFM:   `{"z":1,"name":"hello","description":"d","b":true,"n":null,"f":1.5,"t":"2024-01-02","q":"007","l":[1,"two"],"m":{"k":"v","j":2},"anchor":"hi","alias":"hi"}`,
			wantDesc: "d",
		},
		{
			name:   "non-string name is not a string: folder name used",
			md:     "---\nname: 123\ndescription: d\n---\n",
			wantFM: `{"name":123,"description":"d"}`, wantDesc: "d",
			wantDiag: []string{"name is not a string", `"hello"`, "left out of skills/list"},
		},
		{
			name:     "alias bomb is refused, not expanded",
			md:       "---\nname: hello\ndescription: d\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n---\n",
			wantSkip: true, wantDiag: []string{"skipped", "too large"},
		},
		{
			name:     "BR-07 no frontmatter",
			md:       "# No frontmatter here\n\nJust instructions.\n",
			wantSkip: true, wantDiag: []string{"skipped", "no YAML frontmatter", "does not begin with ---"},
		},
		{
			name:     "ASF-TV-14 not closed",
			md:       "---\nname: hello\ndescription: d\n",
			wantSkip: true, wantDiag: []string{"skipped", "not closed"},
		},
		{
			name:     "ASF-TV-15 not a mapping",
			md:       "---\n- just\n- a list\n---\n",
			wantSkip: true, wantDiag: []string{"skipped", "not a mapping"},
		},
		{
			name:     "empty frontmatter",
			md:       "---\n---\nbody\n",
			wantSkip: true, wantDiag: []string{"skipped", "not a mapping"},
		},
		{
			name:     "ASF-TV-10 missing description",
			md:       "---\nname: hello\n---\n",
			wantSkip: true, wantDiag: []string{"skipped", "no description"},
		},
		{
			name:     "non-string description",
			md:       "---\nname: hello\ndescription: [a, b]\n---\n",
			wantSkip: true, wantDiag: []string{"skipped", "description is not a string"},
		},
		{
			name:     "ASF-TV-21 blank description",
			md:       "---\nname: hello\ndescription: \"   \"\n---\n",
			wantSkip: true, wantDiag: []string{"skipped", "description is empty"},
		},
		{
			name:   "ASF-TV-20 --- inside a value does not end the frontmatter",
			md:     "---\nname: hello\ndescription: Use --- separators carefully\n---\nBody\n---\n",
			wantFM: `{"name":"hello","description":"Use --- separators carefully"}`, wantDesc: "Use --- separators carefully",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat := buildOne(t, scanned("hello", tc.md))
			if len(tc.wantDiag) == 0 && len(cat.Diagnostics) != 0 {
				t.Errorf("Diagnostics = %+v, want none", cat.Diagnostics)
			}
			if len(tc.wantDiag) > 0 {
				if len(cat.Diagnostics) != 1 {
					t.Fatalf("Diagnostics = %+v, want exactly one", cat.Diagnostics)
				}
				d := cat.Diagnostics[0]
				for _, s := range tc.wantDiag {
					if !strings.Contains(d.Message, s) {
						t.Errorf("diagnostic %q does not contain %q", d.Message, s)
					}
				}
				wantLevel := events.LevelWarn
				if tc.wantSkip {
					wantLevel = events.LevelError
				}
				if d.Level != wantLevel || d.File != "/r/skills/hello/SKILL.md" {
					t.Errorf("diagnostic level, file = %s, %s; want %s, /r/skills/hello/SKILL.md", d.Level, d.File, wantLevel)
				}
			}
			if tc.wantSkip {
				if len(cat.Skills) != 0 {
					t.Errorf("Skills = %d, want skipped", len(cat.Skills))
				}
				return
			}
			if len(cat.Skills) != 1 {
				t.Fatalf("Skills = %d, want 1", len(cat.Skills))
			}
			s := cat.Skills[0]
			if got := compactJSON(t, s.Frontmatter); got != tc.wantFM {
				t.Errorf("Frontmatter = %s, want %s", got, tc.wantFM)
			}
			if s.Description != tc.wantDesc {
				t.Errorf("Description = %q, want %q", s.Description, tc.wantDesc)
			}
		})
	}
}

// TestBuildCatalogNaming pins skill paths, URIs, qualified names, Listed
// and the one-diagnostic-per-file rule (BR-08, BR-09, BR-12, BR-17,
// ASF-R05..R11, ASF-R14, SEP2640-R43).
func TestBuildCatalogNaming(t *testing.T) {
	type want struct {
		Name, SkillPath, URI, QualifiedName string
		Listed                              bool
	}
	long := strings.Repeat("a", 65)
	tests := []struct {
		name     string
		ss       events.ScannedSkill
		want     want
		wantDiag []string // substrings of exactly one warning; nil: no diagnostic
	}{
		{
			name: "valid",
			ss:   scanned("hello", skilltest.SkillMD("hello", "d")),
			want: want{"hello", "skills/hello", "skill://skills/hello/SKILL.md", "skills__hello", true},
		},
		{
			name: "BR-17 container folders",
			ss:   scanned("acme/billing/refunds", skilltest.SkillMD("refunds", "Handle a refund.")),
			want: want{"refunds", "skills/acme/billing/refunds", "skill://skills/acme/billing/refunds/SKILL.md", "skills__acme__billing__refunds", true},
		},
		{
			name:     "BR-09 uppercase and spaces",
			ss:       scanned("my-first-skill", skilltest.SkillMD("My First Skill", "Shows the naming rule.")),
			want:     want{"My First Skill", "skills/My First Skill", "skill://skills/My%20First%20Skill/SKILL.md", "skills__My-First-Skill", false},
			wantDiag: []string{`"My First Skill"`, "uppercase", "other than a-z, 0-9 and -", `"my-first-skill"`, "ASF-R06", "ASF-R09", "left out of skills/list"},
		},
		{
			name:     "BR-12 name differs from folder",
			ss:       scanned("template", skilltest.SkillMD("template-skill", "Replace with a description.")),
			want:     want{"template-skill", "skills/template-skill", "skill://skills/template-skill/SKILL.md", "skills__template-skill", true},
			wantDiag: []string{`"template-skill"`, `"template"`, "ASF-R09"},
		},
		{
			name:     "BR-08 missing name uses the folder name",
			ss:       scanned("dogfood", "---\ndescription: Rebuild, install and exercise every command.\nallowed-tools: Bash(make:*)\n---\n\n# Dogfood\n"),
			want:     want{"dogfood", "skills/dogfood", "skill://skills/dogfood/SKILL.md", "skills__dogfood", false},
			wantDiag: []string{"name is missing", `"dogfood"`, "left out of skills/list"},
		},
		{
			name:     "ASF-R05 name too long",
			ss:       scanned(long, skilltest.SkillMD(long, "d")),
			want:     want{long, "skills/" + long, "skill://skills/" + long + "/SKILL.md", "skills__" + long, false},
			wantDiag: []string{"65 characters", "ASF-R05"},
		},
		{
			name:     "ASF-R07 leading and trailing hyphen",
			ss:       scanned("-hello-", skilltest.SkillMD("-hello-", "d")),
			want:     want{"-hello-", "skills/-hello-", "skill://skills/-hello-/SKILL.md", "skills__hello", false},
			wantDiag: []string{"ASF-R07"},
		},
		{
			name:     "ASF-R08 double hyphen",
			ss:       scanned("a--b", skilltest.SkillMD("a--b", "d")),
			want:     want{"a--b", "skills/a--b", "skill://skills/a--b/SKILL.md", "skills__a--b", false},
			wantDiag: []string{"ASF-R08"},
		},
		{
			// issue 13 item 4: was listed; a strict client rejects the entry.
			name:     "ASF-R11 description too long is a warning and unlisted",
			ss:       scanned("hello", skilltest.SkillMD("hello", strings.Repeat("x", 1025))),
			want:     want{"hello", "skills/hello", "skill://skills/hello/SKILL.md", "skills__hello", false},
			wantDiag: []string{"1025", "1024", "ASF-R11", "served through tools, prompts and resources", "left out of skills/list"},
		},
		{
			// issue 13 item 4: was listed; a strict client rejects the entry.
			name:     "ASF-R14 metadata values not strings: unlisted",
			ss:       scanned("hello", "---\nname: hello\ndescription: d\nmetadata:\n  version: 1.0\n  owner: me\n---\n"),
			want:     want{"hello", "skills/hello", "skill://skills/hello/SKILL.md", "skills__hello", false},
			wantDiag: []string{"version", "ASF-R14", "left out of skills/list"},
		},
		{
			// issue 13 item 4: was listed; a strict client rejects the entry.
			name:     "ASF-R13 compatibility too long: unlisted",
			ss:       scanned("hello", "---\nname: hello\ndescription: d\ncompatibility: "+strings.Repeat("c", 501)+"\n---\n"),
			want:     want{"hello", "skills/hello", "skill://skills/hello/SKILL.md", "skills__hello", false},
			wantDiag: []string{"501", "ASF-R13", "left out of skills/list"},
		},
		{
			// issue 13 item 4: the limit itself is within the rules (ASF-R11).
			name: "ASF-R11 description of exactly 1024 characters is listed",
			ss:   scanned("hello", skilltest.SkillMD("hello", strings.Repeat("é", 1024))),
			want: want{"hello", "skills/hello", "skill://skills/hello/SKILL.md", "skills__hello", true},
		},
		{
			// issue 13 item 4.
			name:     "ASF-R13 compatibility not a string: unlisted",
			ss:       scanned("hello", "---\nname: hello\ndescription: d\ncompatibility: [a]\n---\n"),
			want:     want{"hello", "skills/hello", "skill://skills/hello/SKILL.md", "skills__hello", false},
			wantDiag: []string{"compatibility is not a string", "left out of skills/list"},
		},
		{
			name:     "BR-01 fallback and naming findings combine into one line",
			ss:       scanned("x", "---\nname: Hello\ndescription: a: b\n---\n"),
			want:     want{"Hello", "skills/Hello", "skill://skills/Hello/SKILL.md", "skills__Hello", false},
			wantDiag: []string{"strict YAML parsing failed", "uppercase", `"x"`},
		},
		{
			// issue 13 item 4: the per-skill file limits alone stay listed
			// (SEP2640-R44: hosts MAY accept larger skills).
			name: "BR-35 over 512 files and 16 MiB",
			ss: func() events.ScannedSkill {
				md := skilltest.SkillMD("big-skill", "Asset-heavy skill over the SEP-2640 limits.")
				ss := scanned("big-skill", md)
				for i := range 599 {
					ss.Files = append(ss.Files, events.File{Path: fmt.Sprintf("assets/icon-%03d.bin", i), Digest: skilltest.Digest(""), Size: 35840})
				}
				return ss
			}(),
			want:     want{"big-skill", "skills/big-skill", "skill://skills/big-skill/SKILL.md", "skills__big-skill", true},
			wantDiag: []string{"big-skill", "600 files (limit 512)", fmt.Sprintf("%d bytes (limit 16777216)", 599*35840+len(skilltest.SkillMD("big-skill", "Asset-heavy skill over the SEP-2640 limits."))), "SEP2640-R43"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat := buildOne(t, tc.ss)
			if len(cat.Skills) != 1 {
				t.Fatalf("Skills = %d, want 1; diagnostics %+v", len(cat.Skills), cat.Diagnostics)
			}
			s := cat.Skills[0]
			got := want{s.Name, s.SkillPath, s.URI, s.QualifiedName, s.Listed}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("skill mismatch (-want +got):\n%s", diff)
			}
			if tc.wantDiag == nil {
				if len(cat.Diagnostics) != 0 {
					t.Errorf("Diagnostics = %+v, want none", cat.Diagnostics)
				}
				return
			}
			if len(cat.Diagnostics) != 1 {
				t.Fatalf("Diagnostics = %+v, want exactly one", cat.Diagnostics)
			}
			d := cat.Diagnostics[0]
			if d.Level != events.LevelWarn {
				t.Errorf("Level = %s, want warn", d.Level)
			}
			for _, sub := range tc.wantDiag {
				if !strings.Contains(d.Message+" "+d.Rule, sub) {
					t.Errorf("diagnostic %q (rule %s) does not contain %q", d.Message, d.Rule, sub)
				}
			}
		})
	}
}

// TestBuildCatalogNoInventedName checks that a missing name is never added
// to the served frontmatter (BR-08).
func TestBuildCatalogNoInventedName(t *testing.T) {
	cat := buildOne(t, scanned("dogfood", "---\ndescription: d\n---\n"))
	if got := string(cat.Skills[0].Frontmatter); strings.Contains(got, "name") {
		t.Errorf("Frontmatter = %s, want no name", got)
	}
}

// TestBuildCatalogSourcesAndDuplicates checks source order, the bundled
// prefix, duplicate handling (first source wins, with a warning), carried
// scan diagnostics and overrides.
func TestBuildCatalogSourcesAndDuplicates(t *testing.T) {
	second := events.Source{ID: "1", Kind: events.SourceLocal, Root: "/o/skills", Prefix: "skills"}
	bundled := events.Source{ID: "bundled", Kind: events.SourceBundled, Root: ".", Location: "bundled"}
	other := scanned("hello", skilltest.SkillMD("hello", "from the second source"))
	other.Dir = "/o/skills/hello"
	docs := scanned("skilljack-docs", skilltest.SkillMD("skilljack-docs", "docs"))
	docs.Dir = "skilljack-docs"
	cfg := events.SourcesConfigured{Seq: 1, Sources: []events.Source{localSrc, second, bundled}}
	f := false
	scans := map[string]events.SourceScanned{
		"0": {Source: localSrc, Skills: []events.ScannedSkill{
			scanned("hello", skilltest.SkillMD("hello", "from the first source")),
			scanned("My Skill", skilltest.SkillMD("My Skill", "space")),
			scanned("My-Skill", skilltest.SkillMD("My-Skill", "hyphen")),
			scanned("flags", "---\nname: flags\ndescription: d\ndisable-model-invocation: true\nuser-invocable: false\n---\n"),
			scanned("strflags", "---\nname: strflags\ndescription: d\ndisable-model-invocation: \"true\"\nuser-invocable: \"false\"\n---\n"),
		}, Diagnostics: []events.Diagnostic{{File: "/r/skills/.x/SKILL.md", Level: events.LevelWarn, Message: "hint"}}},
		"1":       {Source: second, Skills: []events.ScannedSkill{other}},
		"bundled": {Source: bundled, Skills: []events.ScannedSkill{docs}},
	}
	overrides := map[string]events.Override{"skills__hello": {Assistant: &f}}
	cat := catalog.Build(7, cfg, scans, overrides)

	type row struct {
		QN, URI, Desc             string
		Model, User, AOver, UOver bool
		SourceID                  string
	}
	var got []row
	for _, s := range cat.Skills {
		got = append(got, row{s.QualifiedName, s.URI, s.Description, s.ModelInvocable, s.UserInvocable, s.AssistantOverridden, s.UserOverridden, s.Source.ID})
	}
	want := []row{
		{"skilljack-docs", "skill://skilljack-docs/SKILL.md", "docs", true, true, false, false, "bundled"},
		{"skills__My-Skill", "skill://skills/My%20Skill/SKILL.md", "space", true, true, false, false, "0"},
		{"skills__flags", "skill://skills/flags/SKILL.md", "d", false, false, false, false, "0"},
		{"skills__hello", "skill://skills/hello/SKILL.md", "from the first source", false, true, true, false, "0"},
		{"skills__strflags", "skill://skills/strflags/SKILL.md", "d", true, true, false, false, "0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skills mismatch (-want +got):\n%s", diff)
	}
	if cat.Version != 7 {
		t.Errorf("Version = %d, want 7", cat.Version)
	}
	var dups, hints int
	for _, d := range cat.Diagnostics {
		switch {
		case strings.Contains(d.Message, "duplicate skill"):
			dups++
		case d.Message == "hint":
			hints++
		}
	}
	if dups != 2 || hints != 1 {
		t.Errorf("duplicate warnings, carried hints = %d, %d; want 2, 1 in %+v", dups, hints, cat.Diagnostics)
	}
}

// TestBuildCatalogMisnamedSibling pins the finding "a misnamed sibling hides
// a correct skill": within one source, a skill whose name equals its folder
// name (ASF-R09) wins a duplicate over one found earlier that does not; the
// loser gets one warning naming both files. Across sources the first source
// still wins.
func TestBuildCatalogMisnamedSibling(t *testing.T) {
	impostor := scanned("impostor", skilltest.SkillMD("one", "the impostor"))
	one := scanned("one", skilltest.SkillMD("one", "the real one"))

	cat := buildOne(t, impostor, one)
	if len(cat.Skills) != 1 || cat.Skills[0].Dir != "/r/skills/one" || cat.Skills[0].Description != "the real one" {
		t.Fatalf("Skills = %+v, want only /r/skills/one", cat.Skills)
	}
	var dups []events.Diagnostic
	for _, d := range cat.Diagnostics {
		if strings.Contains(d.Message, "duplicate skill") {
			dups = append(dups, d)
		}
	}
	if len(dups) != 1 || dups[0].File != "/r/skills/impostor/SKILL.md" ||
		!strings.Contains(dups[0].Message, "/r/skills/impostor/SKILL.md") || !strings.Contains(dups[0].Message, "/r/skills/one/SKILL.md") {
		t.Errorf("duplicate warnings = %+v, want one on the impostor naming both files", dups)
	}
	// One verdict per file: the impostor's misnaming (ASF-R09) rides on the
	// duplicate warning, never as a second diagnostic saying "served".
	for _, d := range cat.Diagnostics {
		if d.File == "/r/skills/impostor/SKILL.md" && d.Rule != "SEP2640-R74,ASF-R09" {
			t.Errorf("impostor diagnostic %+v: want only the duplicate warning, rules SEP2640-R74,ASF-R09", d)
		}
	}
	if len(dups) == 1 && !strings.Contains(dups[0].Message, `differs from its folder name "impostor"`) {
		t.Errorf("duplicate warning %q does not carry the misnaming finding", dups[0].Message)
	}

	// Walk order decides between two skills that both match, or both do not.
	cat = buildOne(t, scanned("a", skilltest.SkillMD("z", "first")), scanned("b", skilltest.SkillMD("z", "second")))
	if len(cat.Skills) != 1 || cat.Skills[0].Description != "first" {
		t.Errorf("Skills = %+v, want the first found", cat.Skills)
	}

	// Across sources the first source wins, even with a misnamed skill.
	second := events.Source{ID: "1", Kind: events.SourceLocal, Root: "/o/skills", Prefix: "skills"}
	other := scanned("one", skilltest.SkillMD("one", "second source"))
	other.Dir = "/o/skills/one"
	cfg := events.SourcesConfigured{Seq: 1, Sources: []events.Source{localSrc, second}}
	cat = catalog.Build(1, cfg, map[string]events.SourceScanned{
		"0": {Source: localSrc, Skills: []events.ScannedSkill{impostor}},
		"1": {Source: second, Skills: []events.ScannedSkill{other}},
	}, nil)
	if len(cat.Skills) != 1 || cat.Skills[0].Description != "the impostor" {
		t.Errorf("Skills = %+v, want the first source's", cat.Skills)
	}
}

// TestBuildCatalogPathNames pins the finding "a frontmatter name can inject
// path segments": a name with / or \, . or .., or control characters is not
// used in the skill path; the folder name is, with one warning quoting the
// name, and the skill is left out of skills/list. The frontmatter stays
// verbatim.
func TestBuildCatalogPathNames(t *testing.T) {
	tests := []struct {
		name, folder, fmName, wantFM string
	}{
		{"climbs", "evil", "../../evil", `"../../evil"`},
		{"enters another skill's path", "x", "one/extra", `"one/extra"`},
		{"backslash", "x", `a\b`, `"a\\b"`},
		{"dot-dot", "x", "..", `".."`},
		{"dot", "x", "'.'", `"."`},
		{"control character", "x", `"a\tb"`, `"a\tb"`},
		{"trailing slash", "x", "x/", `"x/"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat := buildOne(t, scanned(tc.folder, "---\nname: "+tc.fmName+"\ndescription: d\n---\n"))
			if len(cat.Skills) != 1 {
				t.Fatalf("Skills = %d, want 1; %+v", len(cat.Skills), cat.Diagnostics)
			}
			s := cat.Skills[0]
			wantURI := "skill://skills/" + tc.folder + "/SKILL.md"
			if s.URI != wantURI || s.SkillPath != "skills/"+tc.folder || s.Name != tc.folder || s.Listed {
				t.Errorf("skill = %s %s %q listed=%v; want %s, the folder name, not listed", s.URI, s.SkillPath, s.Name, s.Listed, wantURI)
			}
			if got, want := compactJSON(t, s.Frontmatter), `{"name":`+tc.wantFM+`,"description":"d"}`; got != want {
				t.Errorf("Frontmatter = %s, want %s", got, want)
			}
			if len(cat.Diagnostics) != 1 || !strings.Contains(cat.Diagnostics[0].Message, "cannot be a URI path segment") ||
				!strings.Contains(cat.Diagnostics[0].Message, "/r/skills/"+tc.folder+"/SKILL.md") {
				t.Errorf("Diagnostics = %+v, want one naming the file and the name", cat.Diagnostics)
			}
		})
	}
	// Spaces stay as BR-09 has them: used as written, percent-encoded.
	cat := buildOne(t, scanned("x", skilltest.SkillMD("with space", "d")))
	if s := cat.Skills[0]; s.URI != "skill://skills/with%20space/SKILL.md" {
		t.Errorf("URI = %s, want the name percent-encoded", s.URI)
	}
}

// TestBuildCatalogDuplicateKeys pins the finding "duplicate top-level
// keys" (ASF-R27): the last occurrence of a key is what the rendered JSON
// holds and what name, description and flags are read from, with one
// warning naming the file and the keys.
func TestBuildCatalogDuplicateKeys(t *testing.T) {
	tests := []struct {
		name, md, wantURI, wantFM, wantDesc string
		wantModel                           bool
		wantKeys                            []string
	}{
		{
			name:    "name twice",
			md:      "---\nname: dupkey\nname: dupkey2\ndescription: d\n---\n",
			wantURI: "skill://skills/dupkey2/SKILL.md", wantFM: `{"name":"dupkey2","description":"d"}`, wantDesc: "d",
			wantModel: true, wantKeys: []string{`"name"`},
		},
		{
			name:    "description and flag twice, order of the last kept",
			md:      "---\ndescription: one\nname: dupkey2\ndisable-model-invocation: true\ndescription: two\ndisable-model-invocation: false\n---\n",
			wantURI: "skill://skills/dupkey2/SKILL.md", wantFM: `{"name":"dupkey2","description":"two","disable-model-invocation":false}`, wantDesc: "two",
			wantModel: true, wantKeys: []string{`"description"`, `"disable-model-invocation"`},
		},
		{
			name:    "line-based fallback too",
			md:      "---\nname: dupkey\ndescription: a: b\nname: dupkey2\n---\n",
			wantURI: "skill://skills/dupkey2/SKILL.md", wantFM: `{"description":"a: b","name":"dupkey2"}`, wantDesc: "a: b",
			wantModel: true, wantKeys: []string{`"name"`, "line-based"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cat := buildOne(t, scanned("dupkey2", tc.md))
			if len(cat.Skills) != 1 {
				t.Fatalf("Skills = %d, want 1; %+v", len(cat.Skills), cat.Diagnostics)
			}
			s := cat.Skills[0]
			if got := compactJSON(t, s.Frontmatter); got != tc.wantFM {
				t.Errorf("Frontmatter = %s, want %s", got, tc.wantFM)
			}
			if s.URI != tc.wantURI || s.Description != tc.wantDesc || s.ModelInvocable != tc.wantModel {
				t.Errorf("skill = %s %q model=%v; want %s %q model=%v", s.URI, s.Description, s.ModelInvocable, tc.wantURI, tc.wantDesc, tc.wantModel)
			}
			if len(cat.Diagnostics) != 1 {
				t.Fatalf("Diagnostics = %+v, want one", cat.Diagnostics)
			}
			d := cat.Diagnostics[0]
			for _, sub := range append([]string{"/r/skills/dupkey2/SKILL.md", "more than once"}, tc.wantKeys...) {
				if !strings.Contains(d.Message, sub) {
					t.Errorf("diagnostic %q does not contain %q", d.Message, sub)
				}
			}
		})
	}
}
