package notifier_test

import (
	"slices"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// TestPendingDigestKnownIsNoChange is issue 12: completing a pending
// catalog (a supporting file's digest going from "" to its value) changes
// no resource, by either diff; a pending file that vanished, and a
// SKILL.md edited meanwhile, still do.
func TestPendingDigestKnownIsNoChange(t *testing.T) {
	skillOf := func(name string, files ...events.File) *events.Skill {
		uri := "skill://s/" + name + "/SKILL.md"
		return &events.Skill{QualifiedName: "s__" + name, Name: name, SkillPath: "s/" + name, URI: uri, Listed: true, Files: files}
	}
	md := func(c string) events.File { return events.File{Path: "SKILL.md", Digest: skilltest.Digest(c)} }
	file := func(p, c string) events.File {
		f := events.File{Path: p}
		if c != "" {
			f.Digest = skilltest.Digest(c)
		}
		return f
	}
	pending := events.NewCatalog(1, false, []*events.Skill{
		skillOf("a", md("a"), file("x.md", ""), file("y.md", "")),
		skillOf("b", md("b"), file("z.md", "")),
	}, nil)
	pending.Pending = true
	complete := events.NewCatalog(2, false, []*events.Skill{
		skillOf("a", md("a"), file("x.md", "x"), file("y.md", "y")),
		skillOf("b", md("b"), file("z.md", "z")),
	}, nil)
	if got := notifier.UpdatedURIs(pending, complete); len(got) != 0 {
		t.Errorf("pending → complete changed %v; want nothing", got)
	}
	if got := notifier.UpdatedURIsSlow(pending, complete); len(got) != 0 {
		t.Errorf("pending → complete (file by file) changed %v; want nothing", got)
	}
	changed := events.NewCatalog(2, false, []*events.Skill{
		skillOf("a", md("a"), file("x.md", "x")),
		skillOf("b", md("b2"), file("z.md", "z")),
	}, nil)
	want := []string{"skill://index.json", "skill://s/a/y.md", "skill://s/b/SKILL.md"}
	if got := notifier.UpdatedURIs(pending, changed); !slices.Equal(got, want) {
		t.Errorf("pending → changed: %v; want %v", got, want)
	}
}
