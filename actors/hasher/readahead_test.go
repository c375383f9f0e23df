package hasher_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
)

// TestReadAheadMatchesScan: a first start's first scan, whose folders are
// read ahead of the walk on the other cores (issue 12), finds what a plain
// scan finds — skills, manifests, order and diagnostics — on trees of
// random changes (links in the root, renames, removals, nested skills) and
// on one of 600 skills, where the read-ahead and the walk meet halfway.
func TestReadAheadMatchesScan(t *testing.T) {
	hasher.SetDeferMin(t, 1<<30) // whole scans on both sides
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "skills")
			o := &fsOps{t: t, root: root, rnd: rand.New(rand.NewPCG(seed, 11)), clock: time.Now().Add(-time.Hour)}
			if seed == 0 {
				writeSkills(t, root, 600)
			}
			for range 60 {
				o.op()
				if o.rnd.IntN(3) == 0 {
					o.n++
					o.write(fmt.Sprintf("acme/team%d/s%d/SKILL.md", o.n%3, o.n), skilltest.SkillMD(fmt.Sprintf("s%d", o.n), "d"))
				}
			}
			src := localSource(root)
			want, err := newTestHasher(nil).Scan(t.Context(), src)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				got, err := hasher.ScanFirst(t.Context(), src, nil)
				if err != nil {
					t.Fatal(err)
				}
				carriedMatch(t, got)
				if diff := cmp.Diff(want, got, ignoreScanMeta); diff != "" {
					t.Fatalf("the first scan differs from a plain scan (-plain +first):\n%s", diff)
				}
			}
		})
	}
}
