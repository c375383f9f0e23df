package actors_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// TestValidate checks the one-shot scan and build behind
// `skilljack-mcp validate`: the same findings as the server (BR-07, BR-08),
// plus one warning per remote source.
func TestValidate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	skilltest.WriteTree(t, root, map[string]string{
		"ok/SKILL.md":             skilltest.SkillMD("ok", "A valid sibling."),
		"no-frontmatter/SKILL.md": "# No frontmatter here\n",
		"dogfood/SKILL.md":        "---\ndescription: Rebuild.\n---\n",
	})
	cfg := config.Config{Sources: []events.Source{
		localSource(root),
		{ID: "1", Kind: events.SourceGitHub, Location: "github.com/a/b", Root: filepath.Join(root, "..", "cache", "a", "b"), Prefix: "a-b"},
		bundledSource(),
	}}
	cat, err := actors.Validate(t.Context(), cfg, &hasher.Options{Bundled: actors.Bundled()})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, s := range cat.Skills {
		uris = append(uris, s.URI)
	}
	wantURIs := []string{"skill://skilljack-docs/SKILL.md", "skill://skills/dogfood/SKILL.md", "skill://skills/ok/SKILL.md"}
	if diff := cmp.Diff(wantURIs, uris); diff != "" {
		t.Errorf("skills mismatch (-want +got):\n%s", diff)
	}
	type diag struct{ File, Level, Has string }
	want := []diag{
		{"github.com/a/b", events.LevelWarn, "no cached copy"},
		{filepath.Join(root, "dogfood", "SKILL.md"), events.LevelWarn, "name is missing"},
		{filepath.Join(root, "no-frontmatter", "SKILL.md"), events.LevelError, "does not begin with ---"},
	}
	var got []diag
	for i, d := range cat.Diagnostics {
		g := diag{d.File, d.Level, ""}
		if i < len(want) && strings.Contains(d.Message, want[i].Has) {
			g.Has = want[i].Has
		}
		got = append(got, g)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics mismatch (-want +got):\n%s\n%+v", diff, cat.Diagnostics)
	}

	ctx, cancel := testContextCancelled(t)
	defer cancel()
	if _, err := actors.Validate(ctx, cfg, nil); err == nil {
		t.Error("Validate(cancelled ctx) = nil error, want one")
	}
}

// TestValidateMissingSourceOnce pins finding 5: a missing source folder was
// warned twice, by LoadConfig and by the scan. Now LoadConfig is silent
// about it and the scan's diagnostic reaches Catalog.Diagnostics once.
func TestValidateMissingSourceOnce(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(home, "nonexistent-dir")
	log, buf := eventstest.CaptureLog()
	cfg, err := config.Resolve(config.ResolveOptions{Args: []string{missing}, Home: home, Cwd: home,
		Getenv: func(string) string { return "" }, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), missing) {
		t.Errorf("LoadConfig logged about %s:\n%s", missing, buf)
	}
	cat, err := actors.Validate(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range cat.Diagnostics {
		if strings.Contains(d.Message, missing) {
			got = append(got, d.File+": "+d.Message)
		}
	}
	want := []string{missing + ": skill directory not found: " + missing + "; no skills are served from it"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics naming the folder mismatch (-want +got):\n%s", diff)
	}
}

// TestValidateBrokenDoesNotShadow extends finding 2 ("a broken skill never
// hides the others") to folders that collapse to one path: x/SKILL.md
// without frontmatter used to shadow a valid skills/x/SKILL.md in the scan,
// so x vanished. Two valid ones still resolve to the first found, with the
// duplicate warning.
func TestValidateBrokenDoesNotShadow(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantDesc string
		wantDiag string
	}{
		{
			name:     "broken first, valid second",
			files:    map[string]string{"x/SKILL.md": "# no frontmatter\n", "skills/x/SKILL.md": skilltest.SkillMD("x", "valid")},
			wantDesc: "valid", wantDiag: "does not begin with ---",
		},
		{
			name:     "both valid: first found wins",
			files:    map[string]string{"x/SKILL.md": skilltest.SkillMD("x", "first"), "skills/x/SKILL.md": skilltest.SkillMD("x", "second")},
			wantDesc: "first", wantDiag: "duplicate skill",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "src")
			skilltest.WriteTree(t, root, tc.files)
			cat, err := actors.Validate(t.Context(), config.Config{Sources: []events.Source{localSource(root)}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(cat.Skills) != 1 || cat.Skills[0].Description != tc.wantDesc {
				t.Fatalf("Skills = %+v, want one: %q", cat.Skills, tc.wantDesc)
			}
			if len(cat.Diagnostics) != 1 || !strings.Contains(cat.Diagnostics[0].Message, tc.wantDiag) {
				t.Errorf("Diagnostics = %+v, want one containing %q", cat.Diagnostics, tc.wantDiag)
			}
		})
	}
}
