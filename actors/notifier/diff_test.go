package notifier_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// TestUpdatedURIsMatchesFileByFile checks the notifier's diff, which looks
// only at skills whose manifest changed, against the file-by-file diff of
// the catalogs, over random edits of random catalogs with nested skills,
// shared and copied manifests, and listed and unlisted skills.
func TestUpdatedURIsMatchesFileByFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	paths := []string{"a", "a/b", "a/b/c", "d", "d/e", "f"}
	extras := []string{"x.md", "z b.txt"}
	// A disk maps each file's path to its digest; a skill's manifest is
	// every file below its folder, its SKILL.md first, as one scan makes it.
	randomDisk := func(prev map[string]string) map[string]string {
		disk := map[string]string{}
		for _, p := range paths {
			if rng.IntN(4) == 0 {
				continue
			}
			for _, f := range append([]string{"SKILL.md"}, extras...) {
				abs := p + "/" + f
				d, ok := prev[abs]
				if !ok || rng.IntN(4) == 0 {
					d = skilltest.Digest(fmt.Sprint(rng.IntN(3)))
				}
				if f == "SKILL.md" || rng.IntN(5) > 0 {
					disk[abs] = d
				}
			}
		}
		return disk
	}
	manifest := func(disk map[string]string, p string) []events.File {
		files := []events.File{{Path: "SKILL.md", Digest: disk[p+"/SKILL.md"]}}
		var rest []string
		for abs := range disk {
			if rel, ok := strings.CutPrefix(abs, p+"/"); ok && rel != "SKILL.md" {
				rest = append(rest, rel)
			}
		}
		slices.Sort(rest)
		for _, rel := range rest {
			files = append(files, events.File{Path: rel, Digest: disk[p+"/"+rel]})
		}
		return files
	}
	catalogOf := func(disk map[string]string, prev *events.Catalog) *events.Catalog {
		var skills []*events.Skill
		for _, p := range paths {
			if _, ok := disk[p+"/SKILL.md"]; !ok {
				continue
			}
			uri := "skill://src/" + p + "/SKILL.md"
			sk := events.Skill{Name: p, Description: "d", SkillPath: "src/" + p, URI: uri, Listed: true, Files: manifest(disk, p)}
			if old := prev.SkillByURI(uri); old != nil {
				if slices.Equal(old.Files, sk.Files) && rng.IntN(2) == 0 {
					sk.Files = old.Files // shared, as the builder reuses it
				}
				sk.Description, sk.Listed = old.Description, old.Listed
				if rng.IntN(4) == 0 {
					sk.Description = fmt.Sprint(rng.IntN(2))
				}
				if rng.IntN(4) == 0 {
					sk.Listed = !sk.Listed
				}
			}
			if old := prev.SkillByURI(uri); old != nil && rng.IntN(2) == 0 && old.Description == sk.Description &&
				old.Listed == sk.Listed && slices.Equal(old.Files, sk.Files) {
				skills = append(skills, old) // carried over: the very same skill, as the builder does
				continue
			}
			skills = append(skills, &sk)
		}
		return events.NewCatalog(prev.Version+1, false, skills, nil)
	}
	disk := randomDisk(nil)
	prev := catalogOf(disk, events.NewCatalog(0, false, nil, nil))
	for round := range 5000 {
		disk = randomDisk(disk)
		next := catalogOf(disk, prev)
		got, want := notifier.UpdatedURIsOwners(prev, next), notifier.UpdatedURIsSlow(prev, next)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: updatedURIs = %q, file by file = %q", round, got, want)
		}
		prev = next
	}
}
