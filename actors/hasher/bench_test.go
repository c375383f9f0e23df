//go:build unix

package hasher_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
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
