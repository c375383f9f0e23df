package hasher_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// replayTree is a root with skill folders in team folders, in the two
// container folders, hidden and nested, and, between them, what the walker
// reports outside skills: a misnamed SKILL.md, one too deep, one in a
// skipped tool folder; and inside skills a link, a hidden
// folder holding a SKILL.md and a misnamed one in a subfolder.
func replayTree(t *testing.T, root string) {
	t.Helper()
	files := map[string]string{
		"acme/team0/m-odd/Skill.md":             "misnamed",
		"acme/team1/z/deep/er/still/f/SKILL.md": skilltest.SkillMD("too-deep", "d"),
		"node_modules/SKILL.md":                 skilltest.SkillMD("skipped", "d"),
		".hidden/h1/SKILL.md":                   skilltest.SkillMD("h1", "d"),
		"skills/k1/SKILL.md":                    skilltest.SkillMD("k1", "d"),
		"skills/k1/ref.md":                      "k1 ref",
		".claude/skills/c1/SKILL.md":            skilltest.SkillMD("c1", "d"),
		"acme/team0/a0/.hid/SKILL.md":           skilltest.SkillMD("hid", "d"),
		"acme/team0/a0/sub/SKILL.MD":            "misnamed inside",
	}
	for team := range 3 {
		for i := range 4 {
			dir := fmt.Sprintf("acme/team%d/%c%d", team, 'a'+2*i, team)
			files[dir+"/SKILL.md"] = skilltest.SkillMD(path.Base(dir), "d")
			files[dir+"/refs/guide.md"] = "guide " + dir
		}
	}
	skilltest.WriteTree(t, root, files)
	if err := os.Symlink("refs/guide.md", filepath.Join(root, "acme", "team1", "c1", "link.md")); err != nil {
		t.Fatal(err)
	}
}

// skillDirs returns the folders (relative to root) of the skills of scan
// that are not nested in another one.
func skillDirs(root string, scan events.SourceScanned) []string {
	var out []string
	for _, s := range scan.Skills {
		rel, _ := filepath.Rel(root, s.Dir)
		rel = filepath.ToSlash(rel)
		if len(out) > 0 && strings.HasPrefix(rel, out[len(out)-1]+"/") {
			continue
		}
		out = append(out, rel)
	}
	return out
}

// TestReplayMatchesFullScan checks the rescan that replays the walk before
// (a change confined to skill folders) against a full scan, over random
// changes inside skill folders — files written, added and removed, folders
// added and removed, nested skills and misnamed SKILL.md files added —
// mixed with changes outside them, which must not replay: a skill folder
// added at the root or in a container folder, a team folder added. Every
// rescan equals a full scan (skills and diagnostics, in order, those found
// outside skill folders included); every confined one replays, and every
// skill folder it did not touch is published as the very value of the scan
// before (its manifest shared).
func TestReplayMatchesFullScan(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			replayTree(t, root)
			src := localSource(root)
			o := &fsOps{t: t, root: root, rnd: rand.New(rand.NewPCG(seed, 12)), clock: time.Now().Add(-time.Hour)}
			synctest.Test(t, func(t *testing.T) {
				r := startHasher(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
				prev := r.next()
				replays, confined := r.h.Replays(), 0
				for batch := range 60 {
					o.paths = nil
					touched, inside := replayOp(o, skillDirs(root, prev))
					got := r.change(o.paths, false)
					want, err := newTestHasher(nil).Scan(t.Context(), src)
					if err != nil {
						t.Fatal(err)
					}
					carriedMatch(t, got)
					if diff := cmp.Diff(want, got, ignoreScanMeta); diff != "" {
						t.Fatalf("batch %d (changed %q): rescan differs from a full scan (-full +rescan):\n%s", batch, o.paths, diff)
					}
					n := r.h.Replays()
					if replayed := n > replays; replayed != inside {
						t.Fatalf("batch %d (changed %q): replayed the walk before: %v, want %v", batch, o.paths, replayed, inside)
					}
					replays = n
					if inside {
						confined++
						checkShared(t, root, prev, got, touched)
					}
					prev = got
				}
				if confined < 30 {
					t.Errorf("only %d of 60 batches were confined to skill folders", confined)
				}
			})
		})
	}
}

// replayOp makes one random change, inside the skill folder of dirs it
// returns (inside set) five times in six, else outside every skill folder.
func replayOp(o *fsOps, dirs []string) (touched string, inside bool) {
	o.n++
	content := fmt.Sprint("v", strings.Repeat("x", o.rnd.IntN(30)), o.n)
	if o.rnd.IntN(6) == 0 || len(dirs) == 0 {
		switch o.rnd.IntN(3) {
		case 0: // a skill folder at the root
			dir := fmt.Sprintf("n%d", o.n)
			o.write(dir+"/SKILL.md", skilltest.SkillMD(dir, "d"))
			o.report(dir)
		case 1: // one in a container folder
			dir := fmt.Sprintf("skills/n%d", o.n)
			if o.rnd.IntN(2) == 0 {
				dir = fmt.Sprintf(".claude/skills/n%d", o.n)
			}
			o.write(dir+"/SKILL.md", skilltest.SkillMD(path.Base(dir), "d"))
			o.report(dir + "/SKILL.md")
		default: // a team folder
			dir := fmt.Sprintf("acme/team%d", o.n)
			o.write(dir+"/t/SKILL.md", skilltest.SkillMD("t", "d"))
			o.report(dir)
		}
		return "", false
	}
	dir, _ := o.pick(dirs)
	_, files := o.list()
	var mine []string
	for _, f := range files {
		if strings.HasPrefix(f, dir+"/") && path.Base(f) != "SKILL.md" && path.Base(f) != "skill.md" {
			mine = append(mine, f)
		}
	}
	switch o.rnd.IntN(7) {
	case 0, 1: // edit a file (its SKILL.md too)
		f := dir + "/SKILL.md"
		if len(mine) > 0 && o.rnd.IntN(3) > 0 {
			f, _ = o.pick(mine)
		}
		if path.Base(f) == "SKILL.md" {
			o.write(f, skilltest.SkillMD(path.Base(dir), content))
		} else {
			o.write(f, content)
		}
		o.report(f)
	case 2: // add a file, maybe in a new folder
		f := path.Join(dir, fmt.Sprintf("new%d.md", o.n))
		if o.rnd.IntN(2) == 0 {
			f = path.Join(dir, fmt.Sprintf("d%d/new.md", o.n))
		}
		o.write(f, content)
		o.report(f)
	case 3: // remove a file
		if f, ok := o.pick(mine); ok {
			if err := os.Remove(filepath.Join(o.root, filepath.FromSlash(f))); err != nil {
				o.t.Fatal(err)
			}
			o.report(f)
		} else {
			o.write(dir+"/SKILL.md", skilltest.SkillMD(path.Base(dir), content))
			o.report(dir + "/SKILL.md")
		}
	case 4: // a nested skill
		sub := path.Join(dir, fmt.Sprintf("nest%d", o.n))
		o.write(sub+"/SKILL.md", skilltest.SkillMD(path.Base(sub), "d"))
		o.report(sub)
	case 5: // a misnamed SKILL.md in a subfolder
		f := path.Join(dir, fmt.Sprintf("m%d/SKILL.MD", o.n))
		o.write(f, "misnamed")
		o.report(f)
	default: // remove a subfolder
		sub := ""
		for _, f := range mine {
			if d := path.Dir(f); d != dir {
				sub = dir + "/" + strings.SplitN(strings.TrimPrefix(f, dir+"/"), "/", 2)[0]
				break
			}
		}
		if sub == "" {
			sub = path.Join(dir, fmt.Sprintf("e%d", o.n))
			if err := os.MkdirAll(filepath.Join(o.root, filepath.FromSlash(sub)), 0o755); err != nil {
				o.t.Fatal(err)
			}
		} else if err := os.RemoveAll(filepath.Join(o.root, filepath.FromSlash(sub))); err != nil {
			o.t.Fatal(err)
		}
		o.report(sub)
	}
	return dir, true
}

// checkShared checks that every skill of got outside the skill folder
// touched is the very value of prev: its manifest shared, no SKILL.md
// bytes.
func checkShared(t *testing.T, root string, prev, got events.SourceScanned, touched string) {
	t.Helper()
	old := map[string]*events.File{}
	for _, s := range prev.Skills {
		old[s.Dir] = &s.Files[0]
	}
	dir := filepath.Join(root, filepath.FromSlash(touched))
	for _, s := range got.Skills {
		if s.Dir == dir || strings.HasPrefix(s.Dir, dir+string(filepath.Separator)) {
			continue
		}
		if old[s.Dir] != &s.Files[0] || s.SkillMD != nil {
			t.Errorf("skill %s outside the change (in %s) is not the value of the scan before", s.RelDir, touched)
		}
	}
}

// TestReplayNotTaken checks that a rescan walks the root, rather than
// replaying the walk before, whenever a change reaches outside skill
// folders or the walk before cannot be replayed — a skill folder added at
// the root, a container folder changed, a whole rescan, a link followed —
// and that it replays again once the change is confined to a skill folder.
// Every result is what a full scan finds.
func TestReplayNotTaken(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	replayTree(t, root)
	src := localSource(root)
	at := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	synctest.Test(t, func(t *testing.T) {
		r := startHasher(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
		r.next()
		edits := 0
		step := func(name string, paths []string, replay bool) {
			t.Helper()
			before := r.h.Replays()
			r.changeMatchesFull(name, paths)
			if replayed := r.h.Replays() > before; replayed != replay {
				t.Errorf("%s: replayed the walk before: %v, want %v", name, replayed, replay)
			}
		}
		edit := func() []string {
			edits++
			skilltest.WriteTree(t, root, map[string]string{"acme/team1/e1/refs/guide.md": fmt.Sprint("edit ", edits)})
			return []string{at("acme/team1/e1/refs/guide.md")}
		}
		step("edit inside a skill", edit(), true)
		skilltest.WriteTree(t, root, map[string]string{"zz/SKILL.md": skilltest.SkillMD("zz", "d")})
		step("skill folder added at the root", []string{at("zz")}, false)
		step("edit after it", edit(), true)
		skilltest.WriteTree(t, root, map[string]string{"skills/SKILL.md": skilltest.SkillMD("skills", "d")})
		step("container folder made a skill", []string{at("skills/SKILL.md")}, false)
		step("edit after it", edit(), true)
		skilltest.WriteTree(t, root, map[string]string{"skills/k1/x.md": "x"})
		// Not replayed either: whether skills/ is a container depends on
		// what is inside it.
		step("edit inside the skill named skills", []string{at("skills/k1/x.md")}, false)
		if err := os.Remove(at("skills/SKILL.md")); err != nil {
			t.Fatal(err)
		}
		step("skill named skills made a container again", []string{at("skills/SKILL.md")}, false)
		skilltest.WriteTree(t, root, map[string]string{".claude/skills/c1/x.md": "x"})
		step("edit in a skill of .claude/skills", []string{at(".claude/skills/c1/x.md")}, true)
		skilltest.WriteTree(t, root, map[string]string{".claude/skills/loose.md": "x"})
		step("file added to .claude/skills", []string{at(".claude/skills/loose.md")}, false)
		skilltest.WriteTree(t, root, map[string]string{"acme/team0/m-odd/Skill.md": "misnamed, edited"})
		step("misnamed SKILL.md outside skills edited", []string{at("acme/team0/m-odd/Skill.md")}, false)
		step("whole rescan", nil, false)
		step("edit after it", edit(), true)
		if err := os.Remove(at("acme/team1/e1/SKILL.md")); err != nil {
			t.Fatal(err)
		}
		step("SKILL.md removed: no longer a skill folder", []string{at("acme/team1/e1/SKILL.md")}, true)
		skilltest.WriteTree(t, root, map[string]string{"acme/team1/e1/refs/guide.md": "in a folder that is no skill"})
		step("edit in the former skill folder", []string{at("acme/team1/e1/refs/guide.md")}, false)
		skilltest.WriteTree(t, root, map[string]string{"acme/team1/e1/SKILL.md": skilltest.SkillMD("e1", "back")})
		step("SKILL.md back", []string{at("acme/team1/e1/SKILL.md")}, false)
		step("edit after it", edit(), true)
		if err := os.Symlink(at("acme/team0/a0"), at("linked")); err != nil {
			t.Fatal(err)
		}
		step("link to a skill folder added at the root", []string{at("linked")}, false)
		step("edit after a link was followed", edit(), false)
		if err := os.Remove(at("linked")); err != nil {
			t.Fatal(err)
		}
		step("link removed", []string{at("linked")}, false)
		step("edit after it", edit(), true)
		if err := os.Symlink("nowhere", at("acme/team2/broken")); err != nil {
			t.Fatal(err)
		}
		step("broken link added in a team folder", []string{at("acme/team2/broken")}, false)
		// A link outside skill folders is read again at every rescan (what
		// it shows depends on its target, which no change reports).
		step("edit beside a link outside skill folders", edit(), false)
	})
}
