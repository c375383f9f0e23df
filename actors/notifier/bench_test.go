package notifier_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// benchCatalog returns a catalog of n skills of four files each.
func benchCatalog(n int) *events.Catalog {
	mod := time.Unix(1700000000, 0)
	skills := make([]*events.Skill, n)
	for i := range skills {
		name := fmt.Sprintf("skill-%05d", i)
		path := fmt.Sprintf("skills/group-%03d/%s", i/100, name)
		sk := events.Skill{QualifiedName: "skills__" + name, Name: name, Description: "Generated " + name,
			SkillPath: path, URI: "skill://" + path + "/SKILL.md", Listed: true, ModelInvocable: true, UserInvocable: true}
		for _, p := range []string{"SKILL.md", "references/guide.md", "scripts/run.py", "assets/data.txt"} {
			sk.Files = append(sk.Files, events.File{Path: p, Digest: skilltest.Digest(path + p), Size: 100, ModTime: mod})
		}
		skills[i] = &sk
	}
	return events.NewCatalog(1, false, skills, nil)
}

// BenchmarkUpdatedURIs measures the notifier's diff of two 10,000-skill
// catalog versions in which one file of one skill changed; the new version
// shares every other skill with the old one, as the catalog builder makes
// it.
func BenchmarkUpdatedURIs(b *testing.B) {
	prev := benchCatalog(10000)
	skills := append([]*events.Skill(nil), prev.Skills...)
	sk := new(events.Skill)
	*sk = *skills[4242]
	skills[4242] = sk
	sk.Files = append([]events.File(nil), sk.Files...)
	sk.Files[2].Digest = skilltest.Digest("edited")
	next := events.NewCatalog(2, false, skills, nil)
	if got := notifier.UpdatedURIs(prev, next); len(got) != 1 {
		b.Fatalf("UpdatedURIs = %v, want one URI", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		notifier.UpdatedURIs(prev, next)
	}
}
