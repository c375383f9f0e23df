package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// TestBuilderReusesOnlyUnchangedSkills checks that the builder, which
// rebuilds only the skills whose scanned values changed, publishes exactly
// the catalog a build from scratch makes, over random edits: SKILL.md
// files edited (names, duplicates, broken frontmatter), skills added and
// removed, manifests and folder identities changed, in two sources.
func TestBuilderReusesOnlyUnchangedSkills(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mod := time.Unix(1700000000, 0)
	srcs := []events.Source{
		{ID: "0", Kind: events.SourceLocal, Location: "/a", Root: "/a", Prefix: "a"},
		{ID: "1", Kind: events.SourceLocal, Location: "/b", Root: "/b", Prefix: "b"},
	}
	cfg := events.SourcesConfigured{Seq: 1, Sources: srcs}
	mds := []string{
		"---\nname: %s\ndescription: first\n---\n",
		"---\nname: %s\ndescription: second\n---\n",
		"---\nname: same\ndescription: a duplicate name\n---\n",
		"---\nname: %s\n---\nno description\n",
		"no frontmatter %s",
	}
	randomSkill := func(src events.Source, k int) events.ScannedSkill {
		rel := fmt.Sprintf("g/s%d", k)
		md := fmt.Sprintf(mds[rng.IntN(len(mds))], fmt.Sprintf("s%d", k))
		files := []events.File{{Path: "SKILL.md", Digest: skilltest.Digest(md), Size: int64(len(md)), ModTime: mod}}
		if rng.IntN(2) == 0 {
			files = append(files, events.File{Path: "x.md", Digest: skilltest.Digest(fmt.Sprint(rng.IntN(2))), Size: 1, ModTime: mod})
		}
		return events.ScannedSkill{Dir: src.Root + "/" + rel, RelDir: rel, RealDir: src.Root + "/" + rel,
			DirID: events.FolderID{Dev: 1, Ino: uint64(rng.IntN(2))}, SkillMD: []byte(md), Files: files}
	}
	scans := map[string]events.SourceScanned{}
	for _, src := range srcs {
		scan := events.SourceScanned{Seq: 1, ConfigSeq: 1, Source: src}
		for k := range 8 {
			scan.Skills = append(scan.Skills, randomSkill(src, k))
		}
		scans[src.ID] = scan
	}
	bl := catalog.NewBenchBuilder(cfg)
	bl.Scan(scans["0"])
	last := bl.Scan(scans["1"])
	for round := range 1000 {
		src := srcs[rng.IntN(len(srcs))]
		scan := scans[src.ID]
		scan.Seq++
		scan.Skills = append([]events.ScannedSkill(nil), scan.Skills...)
		switch k := rng.IntN(len(scan.Skills) + 2); {
		case k == len(scan.Skills):
			scan.Skills = append(scan.Skills, randomSkill(src, 8+rng.IntN(4)))
		case k == len(scan.Skills)+1 && len(scan.Skills) > 1:
			scan.Skills = append(scan.Skills[:0:0], scan.Skills[1:]...)
		case k < len(scan.Skills):
			scan.Skills[k] = randomSkill(src, k)
		}
		scans[src.ID] = scan
		got := bl.Scan(scan)
		want := catalog.Build(0, cfg, scans, nil)
		if got == nil {
			if diff := cmp.Diff(want.Skills, last.Skills); diff != "" {
				t.Fatalf("round %d: no new version, but a build from scratch differs (-fresh +held):\n%s", round, diff)
			}
			if diff := cmp.Diff(want.Diagnostics, last.Diagnostics); diff != "" {
				t.Fatalf("round %d: no new version, but a build from scratch differs (-fresh +held):\n%s", round, diff)
			}
			continue
		}
		last = got
		if diff := cmp.Diff(want.Skills, got.Skills); diff != "" {
			t.Fatalf("round %d: skills differ from a build from scratch (-fresh +built):\n%s", round, diff)
		}
		if diff := cmp.Diff(want.Diagnostics, got.Diagnostics); diff != "" {
			t.Fatalf("round %d: diagnostics differ from a build from scratch (-fresh +built):\n%s", round, diff)
		}
	}
}
