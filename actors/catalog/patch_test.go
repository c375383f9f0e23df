package catalog_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// TestBuilderPatchMatchesFullBuild checks the builder's incremental path
// (issue 12: a new version from the skills a scan changed, found by
// pointer, as the hasher publishes them): over random rescans in which
// unchanged skills keep their manifests — mostly edits of supporting
// files and descriptions, some with a diagnostic whose content changes,
// and renames, duplicates, broken frontmatter, identity changes, skills
// added and removed, a SKILL.md without frontmatter served as a file of
// the skill holding it — every catalog is the one a build from scratch makes,
// and most edits take the incremental path.
func TestBuilderPatchMatchesFullBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	mod := time.Unix(1700000000, 0)
	srcs := []events.Source{
		{ID: "0", Kind: events.SourceLocal, Location: "/a", Root: "/a", Prefix: "a"},
		{ID: "1", Kind: events.SourceLocal, Location: "/b", Root: "/b", Prefix: "b"},
	}
	cfg := events.SourcesConfigured{Seq: 1, Sources: srcs}
	skillMD := func(k, variant int) string {
		switch variant {
		case 0: // no name: a diagnostic, the folder name is used
			return fmt.Sprintf("---\ndescription: edit %d\n---\n", rng.IntN(1000))
		case 1: // renamed
			return fmt.Sprintf("---\nname: other%d\ndescription: d\n---\n", k)
		case 2: // a duplicate of s0 in the other source's terms
			return "---\nname: s0\ndescription: dup\n---\n"
		case 3:
			return "no frontmatter"
		}
		return fmt.Sprintf("---\nname: s%d\ndescription: edit %d\n---\n", k, rng.IntN(1000))
	}
	newSkill := func(src events.Source, k int, md string, ino uint64) events.ScannedSkill {
		rel := fmt.Sprintf("g/s%d", k)
		files := []events.File{{Path: "SKILL.md", Digest: skilltest.Digest(md), Size: int64(len(md)), ModTime: mod},
			{Path: "x.md", Digest: skilltest.Digest(fmt.Sprint(rng.IntN(1000))), Size: 1, ModTime: mod}}
		return events.ScannedSkill{Dir: src.Root + "/" + rel, RelDir: rel, RealDir: src.Root + "/" + rel,
			DirID: events.FolderID{Dev: 1, Ino: ino}, SkillMD: []byte(md), Files: files}
	}
	scans := map[string]events.SourceScanned{}
	bl := catalog.NewBenchBuilder(cfg)
	var last *events.Catalog
	for _, src := range srcs {
		scan := events.SourceScanned{Seq: 1, ConfigSeq: 1, Source: src}
		for k := range 30 {
			scan.Skills = append(scan.Skills, newSkill(src, k, skillMD(k, 4-k%2*4), 1))
		}
		if src.ID == "0" {
			// A SKILL.md without frontmatter inside s2, which serves it as
			// a file: a note whose Version is s2's manifest entry.
			inner := newSkill(src, 2, "no frontmatter", 1)
			inner.Dir, inner.RelDir, inner.RealDir = inner.Dir+"/inner", inner.RelDir+"/inner", inner.RealDir+"/inner"
			parent := &scan.Skills[2]
			parent.Files = append(parent.Files, events.File{Path: "inner/SKILL.md", Digest: inner.Files[0].Digest, Size: inner.Files[0].Size, ModTime: mod})
			scan.Skills = slices.Insert(scan.Skills, 3, inner)
		}
		scans[src.ID] = scan
		last = bl.Scan(scan)
	}
	patched, edits := 0, 0
	for round := range 600 {
		src := srcs[rng.IntN(len(srcs))]
		scan := scans[src.ID]
		scan.Seq++
		scan.Skills = slices.Clone(scan.Skills)
		i := rng.IntN(len(scan.Skills))
		var n int
		fmt.Sscanf(scan.Skills[i].RelDir, "g/s%d", &n)
		if strings.HasSuffix(scan.Skills[i].RelDir, "/inner") {
			continue // left as it is: its parent's edits change its note
		}
		old := scan.Skills[i]
		switch op := rng.IntN(20); {
		case op < 10: // a supporting file edited
			ss := old
			ss.Files = slices.Clone(old.Files)
			ss.Files[len(ss.Files)-1].Digest = skilltest.Digest(fmt.Sprint(round))
			scan.Skills[i] = ss
			edits++
		case op < 15: // SKILL.md edited, its kind kept (named or not)
			variant := 4
			if string(old.SkillMD[:5]) == "---\nd" {
				variant = 0
			}
			scan.Skills[i] = newSkill(src, n, skillMD(n, variant), old.DirID.Ino)
			edits++
		case op < 16: // renamed, duplicate or broken
			scan.Skills[i] = newSkill(src, n, skillMD(n, 1+rng.IntN(3)), old.DirID.Ino)
		case op < 17: // back to a valid skill
			scan.Skills[i] = newSkill(src, n, skillMD(n, 4), old.DirID.Ino)
		case op < 18: // the folder replaced
			ss := old
			ss.DirID.Ino++
			scan.Skills[i] = ss
		case op < 19:
			scan.Skills = append(scan.Skills, newSkill(src, 30+rng.IntN(10), skillMD(30+rng.IntN(10), 4), 1))
		default:
			scan.Skills = slices.Delete(scan.Skills, i, i+1)
		}
		scans[src.ID] = scan
		got := bl.Scan(scan)
		if bl.Patched() {
			patched++
		}
		want := catalog.Build(0, cfg, scans, nil)
		held := got
		if got == nil {
			held = last
		}
		if diff := cmp.Diff(want.Skills, held.Skills); diff != "" {
			t.Fatalf("round %d (patched %v, new version %v): skills differ from a build from scratch (-fresh +built):\n%s", round, bl.Patched(), got != nil, diff)
		}
		if diff := cmp.Diff(want.Diagnostics, held.Diagnostics); diff != "" {
			t.Fatalf("round %d (patched %v, new version %v): diagnostics differ from a build from scratch (-fresh +built):\n%s", round, bl.Patched(), got != nil, diff)
		}
		last = held
	}
	if patched < edits/3 {
		t.Errorf("%d of %d rescans took the incremental path (%d were edits keeping the skill's place); want at least a third of the edits", patched, 600, edits)
	}
	t.Logf("%d of 600 rescans incremental, %d edits", patched, edits)
}

// TestPatchWhilePersisting runs the incremental path while persisted
// catalogs are being written on the store's goroutine (persist.go reads
// the memo it was given): under -race this shows that a version built
// incrementally never changes a memo a write may read, and every version
// is the edit's.
func TestPatchWhilePersisting(t *testing.T) {
	catalog.SetPersistDelay(t, time.Millisecond)
	root := filepath.Join(t.TempDir(), "skills")
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("s%d/SKILL.md", i)] = skilltest.SkillMD(fmt.Sprintf("s%d", i), "d")
		files[fmt.Sprintf("s%d/x.md", i)] = "x"
	}
	skilltest.WriteTree(t, root, files)
	p := startProc(t, root, filepath.Join(t.TempDir(), "cache"))
	defer p.stop()
	scan, err := p.hasher.Scan(t.Context(), p.src)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 100 {
		p.seq++
		scan.Seq, scan.ConfigSeq = p.seq, 1
		p.scanIn <- eventstest.Encode(t, scan)
		c := p.next(10 * time.Second)
		if c == nil {
			t.Fatalf("round %d: no catalog", round)
		}
		if round > 0 {
			got := c.SkillByName("skills__s7")
			if got == nil || got.Files[1].Digest != skilltest.Digest(fmt.Sprint(round)) {
				t.Fatalf("round %d: skill s7 %+v, want x.md edited", round, got)
			}
		}
		// The next rescan: one supporting file of s7 edited, every other
		// skill the same value.
		scan.Skills = slices.Clone(scan.Skills)
		for i := range scan.Skills {
			scan.Skills[i].SkillMD = nil
			if scan.Skills[i].RelDir == "s7" {
				ss := &scan.Skills[i]
				ss.Files = slices.Clone(ss.Files)
				ss.Files[1].Digest = skilltest.Digest(fmt.Sprint(round + 1))
			}
		}
	}
}

// TestPatchAfterNewArrays: a rescan whose unchanged skills come with new
// manifest arrays of the same files (as the hasher's first rescans after a
// start publish them) still takes the incremental path for the one skill
// an edit changed — it took the full build, at 10,000 skills the first
// edit's notification came 100 ms later than the others — and serves
// every other skill as the very same value as before.
func TestPatchAfterNewArrays(t *testing.T) {
	mod := time.Unix(1700000000, 0)
	src := events.Source{ID: "0", Kind: events.SourceLocal, Location: "/a", Root: "/a", Prefix: "a"}
	cfg := events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}}
	scan := events.SourceScanned{Seq: 1, ConfigSeq: 1, Source: src}
	for k := range 300 { // more than the incremental path takes as changed
		md := fmt.Sprintf("---\nname: s%d\ndescription: d\n---\n", k)
		rel := fmt.Sprintf("s%d", k)
		scan.Skills = append(scan.Skills, events.ScannedSkill{Dir: "/a/" + rel, RelDir: rel, RealDir: "/a/" + rel,
			DirID: events.FolderID{Dev: 1, Ino: uint64(k + 1)}, SkillMD: []byte(md), Files: []events.File{
				{Path: "SKILL.md", Digest: skilltest.Digest(md), Size: int64(len(md)), ModTime: mod},
				{Path: "x.md", Digest: skilltest.Digest("x"), Size: 1, ModTime: mod}}})
	}
	bl := catalog.NewBenchBuilder(cfg)
	first := bl.Scan(scan)
	next := scan
	next.Seq++
	next.Skills = slices.Clone(scan.Skills)
	for i := range next.Skills {
		next.Skills[i].SkillMD = nil // a rescan carries no bytes of unchanged skills
		next.Skills[i].Files = slices.Clone(next.Skills[i].Files)
	}
	next.Skills[7].Files[1].Digest = skilltest.Digest("edited")
	next.Skills[7].SkillMD = scan.Skills[7].SkillMD // walked again: read again
	got := bl.Scan(next)
	if !bl.Patched() || got == nil {
		t.Fatalf("Scan: patched %v, new version %v; want the incremental path and a new version", bl.Patched(), got != nil)
	}
	full := next // a build from scratch reads every SKILL.md: here, the bytes
	full.Skills = slices.Clone(next.Skills)
	for i := range full.Skills {
		full.Skills[i].SkillMD = scan.Skills[i].SkillMD
	}
	want := catalog.Build(0, cfg, map[string]events.SourceScanned{src.ID: full}, nil)
	if diff := cmp.Diff(want.Skills, got.Skills); diff != "" {
		t.Fatalf("skills differ from a build from scratch (-fresh +built):\n%s", diff)
	}
	for i := range got.Skills {
		if carried := got.Skills[i] == first.Skills[i]; carried == (got.Skills[i].SkillPath == "a/s7") {
			t.Errorf("skill %s: carried over %v", got.Skills[i].SkillPath, carried)
		}
	}
}
