package test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/watch"
)

// BenchmarkEditToNotificationLarge is BenchmarkEditToNotification on a
// generated corpus named by SKILLJACK_BENCH_CORPUS (go run ./test/gencorpus
// -skills 10000 -files 4 -out DIR); the benchmark edits estimate-2.md of the
// first skill (and puts it back), so point it at a copy. Skipped without the
// variable. SKILLJACK_BENCH_EDITPROF names a file for a CPU profile of the
// edits alone (-cpuprofile would be mostly the 10k-skill startup);
// SKILLJACK_BENCH_READALL=1 has the client read every resource first, as
// bench-compare's session does before its edits:
//
//	SKILLJACK_BENCH_CORPUS=/tmp/pedit-10k go test ./test -run '^$' \
//	  -bench EditToNotificationLarge -benchtime 10x -benchmem
func BenchmarkEditToNotificationLarge(b *testing.B) {
	root := os.Getenv("SKILLJACK_BENCH_CORPUS")
	if root == "" {
		b.Skip("SKILLJACK_BENCH_CORPUS not set")
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		b.Fatal(err)
	}
	skill := ents[0].Name()
	file := filepath.Join(root, skill, "estimate-2.md")
	orig, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	defer os.WriteFile(file, orig, 0o644)
	st := startStack(b, &actors.PipelineOptions{Watch: true, Watcher: watch.Options{Reconcile: -1}}, root)
	defer st.stop(b)
	n := newNotes()
	cs, _ := st.connectNotes(b, n)
	defer cs.Close()
	uri := "skill://" + filepath.Base(root) + "/" + skill + "/estimate-2.md"
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if _, err := cs.ReadResource(b.Context(), &mcp.ReadResourceParams{URI: uri}); err == nil {
			break
		} else if time.Now().After(deadline) {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if os.Getenv("SKILLJACK_BENCH_READALL") != "" {
		readAll(b, cs)
	}
	time.Sleep(2 * time.Second) // let background hashing settle
	if err := cs.Subscribe(b.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		b.Fatal(err)
	}
	if p := os.Getenv("SKILLJACK_BENCH_EDITPROF"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		if err := os.WriteFile(file, fmt.Appendf(nil, "%sv%d\n", orig, i), 0o644); err != nil {
			b.Fatal(err)
		}
		for got := ""; got != uri; {
			select {
			case got = <-n.updated:
			case <-time.After(notifyTimeout):
				b.Fatalf("edit %d: no resources/updated", i)
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Milliseconds()), "p99-ms")
}

// BenchmarkStartupLarge measures, on the corpus SKILLJACK_BENCH_CORPUS
// names (or the scientific corpus when unset), the in-process path from a
// fresh bus to a client's initialize result: pipeline, facade and server
// built, one in-memory client connected. "warm" keeps one HOME (digest
// cache, catalog snapshot) over the iterations, after one untimed start;
// "cold" gives every iteration an empty HOME (the OS page cache stays
// warm). It reports the live heap right after initialize (heap-MiB, after
// a GC) besides -benchmem's allocations; SKILLJACK_BENCH_HEAPPROF names a
// file for a heap profile taken there (the last start's).
//
//	SKILLJACK_BENCH_CORPUS=$PWD/.tools/corpora/gen-10000 go test ./test -run '^$' \
//	  -bench StartupLarge -benchtime 5x -benchmem
func BenchmarkStartupLarge(b *testing.B) {
	root := os.Getenv("SKILLJACK_BENCH_CORPUS")
	if root == "" {
		root = scientificCorpus(b)
	}
	start := func(b *testing.B, home string, linger time.Duration) float64 {
		st := startStackEnv(b, &actors.PipelineOptions{Bundled: actors.Bundled(), DigestCache: filepath.Join(home, ".skilljack", ".digests")},
			map[string]string{"HOME": home}, root)
		ct, sst := mcp.NewInMemoryTransports()
		ss, err := st.srv.Connect(b.Context(), sst, nil)
		if err != nil {
			b.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if p := os.Getenv("SKILLJACK_BENCH_HEAPPROF"); p != "" {
			f, err := os.Create(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(f); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		time.Sleep(linger)
		cs.Close()
		ss.Close()
		st.stop(b)
		b.StartTimer()
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	b.Run("warm", func(b *testing.B) {
		home := b.TempDir()
		// Past racySlack, so that the digest cache holds every file, and
		// long enough for the catalog to be persisted.
		start(b, home, 3*time.Second)
		start(b, home, 3*time.Second)
		heap := 0.0
		for b.Loop() {
			heap = start(b, home, 0)
		}
		b.ReportMetric(heap, "heap-MiB")
	})
	b.Run("cold", func(b *testing.B) {
		heap := 0.0
		for b.Loop() {
			b.StopTimer()
			home := b.TempDir()
			b.StartTimer()
			heap = start(b, home, 0)
		}
		b.ReportMetric(heap, "heap-MiB")
	})
}

// readAll reads every resource cs lists, as a client going through a whole
// catalog does.
func readAll(b *testing.B, cs *mcp.ClientSession) {
	b.Helper()
	for r, err := range cs.Resources(b.Context(), nil) {
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ReadResource(b.Context(), &mcp.ReadResourceParams{URI: r.URI}); err != nil {
			b.Fatalf("reading %s: %v", r.URI, err)
		}
	}
}
