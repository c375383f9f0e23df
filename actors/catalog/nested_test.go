package catalog_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// TestBuildCatalogNestedWithoutFrontmatter is issue 13 item 7: a SKILL.md
// without frontmatter in a subfolder of a served skill, which serves it as
// one of its files, is a note naming that skill (SEP2640-R22), not an
// error; one outside any skill, one with broken frontmatter, or one whose
// enclosing skill is itself skipped stays an error. A skill left out of
// skills/list and a duplicate are warnings marked Unserved.
func TestBuildCatalogNestedWithoutFrontmatter(t *testing.T) {
	parent := scanned("deploy", skilltest.SkillMD("deploy", "Deploys."))
	phase := "# Phase 1\n"
	parent.Files = append(parent.Files, events.File{Path: "phases/1/SKILL.md", Digest: skilltest.Digest(phase)})
	broken := scanned("broken", "# no frontmatter\n")
	broken.Files = append(broken.Files, events.File{Path: "inner/SKILL.md"})
	long := make([]byte, 1100)
	for i := range long {
		long[i] = 'x'
	}
	cat := buildOne(t,
		parent,
		scanned("deploy/phases/1", phase),
		scanned("deploy/phases/2", "---\nname: [\n---\n"),
		scanned("loose", "# not in a skill\n"),
		broken,
		scanned("broken/inner", "# inner\n"),
		scanned("long", skilltest.SkillMD("long", string(long))),
	)
	type diag struct {
		File, Level, Rule string
		Unserved          bool
	}
	var got []diag
	for _, d := range cat.Diagnostics {
		got = append(got, diag{d.File, d.Level, d.Rule, d.Unserved})
	}
	want := []diag{
		{"/r/skills/deploy/phases/1/SKILL.md", events.LevelNote, "SEP2640-R22", false},
		{"/r/skills/deploy/phases/2/SKILL.md", events.LevelError, "ASF-R23", false},
		{"/r/skills/loose/SKILL.md", events.LevelError, "ASF-R23", false},
		{"/r/skills/broken/SKILL.md", events.LevelError, "ASF-R23", false},
		{"/r/skills/broken/inner/SKILL.md", events.LevelError, "ASF-R23", false},
		{"/r/skills/long/SKILL.md", events.LevelWarn, "ASF-R11", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics mismatch (-want +got):\n%s\n%+v", diff, cat.Diagnostics)
	}
	if m := cat.Diagnostics[0].Message; m != "/r/skills/deploy/phases/1/SKILL.md has no frontmatter, so it is not a skill of its own; served as the file phases/1/SKILL.md of skill skills__deploy" {
		t.Errorf("note = %q", m)
	}
}
