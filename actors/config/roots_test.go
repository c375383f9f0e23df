package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestConfigActorClientRoots: set-client-roots serves each root's
// .claude/skills, .agents/skills and skills beside the configured sources,
// before the bundled one, one prefix per root (the folder name, made
// unique); a root that is a configured source is not served twice; the
// config file is never written; the same roots again publish nothing; an
// empty list takes them away (issue 13 item 14).
func TestConfigActorClientRoots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		lib := filepath.Join(home, "lib")
		shop := filepath.Join(home, "work", "shop")
		other := filepath.Join(home, "other", "lib") // same name as the configured source
		bare := filepath.Join(home, "bare")          // no skill folder
		mkdirs(t, lib, filepath.Join(shop, ".claude", "skills"), filepath.Join(shop, "skills"),
			filepath.Join(other, ".agents", "skills"), bare, filepath.Join(lib, "skills"))
		r := startConfigActor(t, home, nil, lib)

		ans, evs := r.command(events.ConfigCommand{ID: "r1", Op: events.ConfigSetClientRoots,
			Roots: []string{shop, other, bare, lib, "relative/path"}})
		if ans.Error != "" || ans.ConfigSeq != 2 {
			t.Errorf("answer %+v, want config seq 2", ans)
		}
		cfgs, _ := decodeAll(t, evs)
		if len(cfgs) != 1 {
			t.Fatalf("published %d configurations, want 1", len(cfgs))
		}
		type row struct{ ID, Root, Prefix string }
		var got []row
		for _, s := range cfgs[0].Sources {
			got = append(got, row{s.ID, s.Root, s.Prefix})
		}
		want := []row{
			{"0", lib, "lib"},
			{"1", filepath.Join(shop, ".claude", "skills"), "shop"},
			{"2", filepath.Join(shop, "skills"), "shop"},
			{"3", filepath.Join(other, ".agents", "skills"), "lib-2"},
			{"bundled", ".", ""},
		}
		if !slices.Equal(got, want) {
			t.Errorf("sources =\n%v\nwant\n%v", got, want)
		}
		if _, err := os.Stat(r.path); err == nil {
			t.Errorf("set-client-roots wrote %s", r.path)
		}

		if _, evs := r.command(events.ConfigCommand{ID: "r2", Op: events.ConfigSetClientRoots, Roots: []string{shop, other, bare}}); len(evs) != 0 {
			t.Errorf("the same served sources again published %d messages, want none", len(evs))
		}
		ans, evs = r.command(events.ConfigCommand{ID: "r3", Op: events.ConfigSetClientRoots})
		cfgs, _ = decodeAll(t, evs)
		if len(cfgs) != 1 || ans.ConfigSeq != 3 || !slices.Equal(locations(cfgs[0]), []string{lib, "bundled"}) {
			t.Errorf("no roots: %d configurations (%v), answer %+v; want seq 3 with the configured sources only", len(cfgs), cfgs, ans)
		}
	})
}

// TestConfigActorClientRootsStatic: in static mode the roots are ignored,
// with a note.
func TestConfigActorClientRootsStatic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		proj := filepath.Join(home, "proj")
		mkdirs(t, filepath.Join(proj, "skills"))
		r := startConfigActor(t, home, map[string]string{"SKILLJACK_STATIC": "1"})
		ans, evs := r.command(events.ConfigCommand{ID: "s", Op: events.ConfigSetClientRoots, Roots: []string{proj}})
		if len(evs) != 0 || !strings.Contains(ans.Note, "static") {
			t.Errorf("answer %+v, %d events; want a static note, nothing published", ans, len(evs))
		}
	})
}
