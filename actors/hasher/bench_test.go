//go:build unix

package hasher_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/events"
)

// genCorpus returns the deterministic corpus of n skills × 4 files
// (≈ 8.5 KiB each) that test/gencorpus writes, in the checkout's .tools/
// (shared with test/outside/bench-compare.sh, which writes the same one).
func genCorpus(b *testing.B, n int) string {
	b.Helper()
	out, err := filepath.Abs(filepath.Join("..", "..", ".tools", "corpora", fmt.Sprintf("gen-%d", n)))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./test/gencorpus", "-skills", fmt.Sprint(n), "-files", "4", "-out", out)
	cmd.Dir = filepath.Join("..", "..")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("go run ./test/gencorpus: %v: %s", err, msg)
	}
	return out
}

// cpuTime returns the user+system CPU time of the process so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkScanCorpus measures one scan of a generated corpus of 1,000 and
// 10,000 skills (4 files each; the OS page cache is warm): cold is a first
// start (no digest cache: every file is read and hashed); restart is a new
// hasher over a warm persistent digest cache (Options.CacheDir: a stat walk,
// only SKILL.md files read); rescan is a second full scan by the same
// hasher (its in-memory cache warm). files_hashed/op is how many files
// each read.
func BenchmarkScanCorpus(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			src := localSource(genCorpus(b, n))
			run := func(b *testing.B, next func() *hasher.Hasher) {
				var hashed, ops int
				cpu0 := cpuTime(b)
				for b.Loop() {
					scan, err := next().Scan(b.Context(), src)
					if err != nil {
						b.Fatal(err)
					}
					if len(scan.Skills) != n {
						b.Fatalf("%d skills, want %d", len(scan.Skills), n)
					}
					hashed += scan.Hashed
					ops++
				}
				b.ReportMetric(float64(hashed)/float64(ops), "files_hashed/op")
				// CPU of the whole process (GC included): steadier than
				// ns/op on a shared machine.
				b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(ops), "cpu-ns/op")
			}
			b.Run("cold", func(b *testing.B) {
				run(b, func() *hasher.Hasher { return newTestHasher(nil) })
			})
			b.Run("restart", func(b *testing.B) {
				cache := filepath.Join(b.TempDir(), "cache")
				if _, err := newTestHasher(&hasher.Options{CacheDir: cache}).Scan(b.Context(), src); err != nil {
					b.Fatal(err)
				}
				run(b, func() *hasher.Hasher { return newTestHasher(&hasher.Options{CacheDir: cache}) })
			})
			b.Run("rescan", func(b *testing.B) {
				h := newTestHasher(nil)
				if _, err := h.Scan(b.Context(), src); err != nil {
					b.Fatal(err)
				}
				run(b, func() *hasher.Hasher { return h })
			})
		})
	}
}

// BenchmarkOneFileChange measures the rescan after one file of a tree of
// 1,000 and 10,000 skills (4 small files each, in ten team folders)
// changed: incremental is what the hasher does on files.changed; full is a
// whole-root scan with a warm digest cache, for comparison.
// files_hashed/op is how many files each read, reused_skills/op how many
// skills of the result share their manifest with the scan before (the
// same backing array: what the catalog builder's memo and the notifier's
// and facade's pointer-equality shortcuts see), cpu-ns/op the process's
// CPU time per op (garbage collection included).
func BenchmarkOneFileChange(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			root := filepath.Join(b.TempDir(), "skills")
			edited := writeSkills(b, root, n)
			src := localSource(root)
			for _, mode := range []string{"incremental", "full"} {
				b.Run(mode, func(b *testing.B) { benchOneFileChange(b, src, edited, mode == "full") })
			}
		})
	}
}

func benchOneFileChange(b *testing.B, src events.Source, edited string, full bool) {
	h := newTestHasher(nil)
	prev, err := h.Rescan(b.Context(), src, nil)
	if err != nil {
		b.Fatal(err)
	}
	var hashed, reused, i int
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	for b.Loop() {
		// The write is part of each op: microseconds against the
		// rescan's milliseconds.
		i++
		if err := os.WriteFile(edited, fmt.Appendf(nil, "edit %d", i), 0o644); err != nil {
			b.Fatal(err)
		}
		var scan events.SourceScanned
		if full {
			scan, err = h.Scan(b.Context(), src)
		} else {
			scan, err = h.Rescan(b.Context(), src, []string{edited})
		}
		if err != nil {
			b.Fatal(err)
		}
		hashed += scan.Hashed
		reused += sharedManifests(prev, scan)
		prev = scan
	}
	b.ReportMetric(float64(hashed)/float64(i), "files_hashed/op")
	b.ReportMetric(float64(reused)/float64(i), "reused_skills/op")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(i), "cpu-ns/op")
}

// sharedManifests counts the skills of next whose manifest is the very one
// (same backing array) of the skill in the same folder in prev.
func sharedManifests(prev, next events.SourceScanned) int {
	byDir := make(map[string]*events.File, len(prev.Skills))
	for _, s := range prev.Skills {
		if len(s.Files) > 0 {
			byDir[s.Dir] = &s.Files[0]
		}
	}
	n := 0
	for _, s := range next.Skills {
		if len(s.Files) > 0 && byDir[s.Dir] == &s.Files[0] {
			n++
		}
	}
	return n
}
