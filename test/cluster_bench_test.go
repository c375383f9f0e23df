package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkClusterChange measures a cluster of three replicas (one leader,
// two followers) on an embedded nats-server serving a generated corpus plus
// a small local folder. Each iteration edits a SKILL.md in the small folder
// (the leader watches it; the corpus is never written, so a read-only one
// will do) and polls every replica's /healthz every 2 ms until each serves
// the new version. Reported per change:
//
//   - leader-ms: from the write to the leader serving the new version (the
//     watcher's 500 ms debounce, the hash and the build are in it);
//   - followers-ms: from the leader serving it to the last follower serving
//     it (export, pointer, import: the cluster's own cost);
//   - nats-in-B, nats-out-B: bytes nats-server received and sent meanwhile
//     (server.Varz InBytes, OutBytes: blob and snapshot uploads, the pointer,
//     the followers' downloads, lease renewals and acks).
//
// Once, at start: initial-s (from starting three replicas to all three
// serving one version) and initial-nats-MiB (in + out bytes of that start).
//
// The corpus is SKILLJACK_BENCH_CORPUS, or 1000 generated skills of 4 files
// when unset:
//
//	go test ./test -run '^$' -bench ClusterChange -benchtime 10x
//	SKILLJACK_BENCH_CORPUS=$PWD/.tools/corpora/gen-10000 go test ./test -run '^$' \
//	  -bench ClusterChange -benchtime 10x -timeout 30m
func BenchmarkClusterChange(b *testing.B) {
	corpus := os.Getenv("SKILLJACK_BENCH_CORPUS")
	if corpus == "" {
		corpus = filepath.Join(b.TempDir(), "gen-1000")
		gen := exec.Command("go", "run", "./gencorpus", "-skills", "1000", "-files", "4", "-out", corpus)
		if out, err := gen.CombinedOutput(); err != nil {
			b.Fatalf("go run ./gencorpus: %v\n%s", err, out)
		}
	}
	nats := startNATS(b)
	edits := filepath.Join(b.TempDir(), "edits")
	writeFile(b, filepath.Join(edits, "changing", "SKILL.md"), skillBody("changing", "Edited by the benchmark."))

	var rs []*benchReplica
	startAt := time.Now()
	in0, out0 := nats.traffic()
	for i := range 3 {
		h := startHTTP(b, append([]string{"SKILLJACK_CACHE_DIR=" + b.TempDir()}, noReconcile...),
			"--cluster="+nats.url(), "--cluster-lease=2s", corpus, edits)
		rs = append(rs, &benchReplica{name: fmt.Sprintf("replica %d", i), h: h})
	}
	version := waitAllServe(b, rs, 0, 15*time.Minute)
	in1, out1 := nats.traffic()
	b.Logf("three replicas serve version %d after %v; nats-server in %d B, out %d B", version, time.Since(startAt), in1-in0, out1-out0)
	b.ReportMetric(time.Since(startAt).Seconds(), "initial-s")
	b.ReportMetric(float64(in1-in0+out1-out0)/(1<<20), "initial-nats-MiB")

	var leaderLat, followerLat []time.Duration
	var inB, outB []int64
	i := 0
	for b.Loop() {
		i++
		inA, outA := nats.traffic()
		wrote := time.Now()
		writeFile(b, filepath.Join(edits, "changing", "SKILL.md"), skillBody("changing", "Edit "+strconv.Itoa(i)+"."))
		leaderAt, lastAt, v := waitChange(b, rs, version)
		inZ, outZ := nats.traffic()
		version = v
		leaderLat = append(leaderLat, leaderAt.Sub(wrote))
		followerLat = append(followerLat, lastAt.Sub(leaderAt))
		inB, outB = append(inB, inZ-inA), append(outB, outZ-outA)
	}
	b.ReportMetric(ms(median(leaderLat)), "leader-ms")
	b.ReportMetric(ms(median(followerLat)), "followers-ms")
	b.ReportMetric(ms(slices.Max(followerLat)), "followers-max-ms")
	b.ReportMetric(float64(median(inB)), "nats-in-B")
	b.ReportMetric(float64(median(outB)), "nats-out-B")
}

// benchReplica is one replica of the benchmark.
type benchReplica struct {
	name string
	h    *httpServer
}

func (r *benchReplica) base() string { return r.h.url[:len(r.h.url)-len("/mcp")] }

// waitAllServe waits (at most limit) until every replica answers /healthz
// 200 with one version above after, and returns it.
func waitAllServe(b *testing.B, rs []*benchReplica, after uint64, limit time.Duration) uint64 {
	b.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		var vs []uint64
		for _, r := range rs {
			if code, h, err := getHealth(r.base()); err == nil && code == http.StatusOK && h.CatalogVersion > after {
				vs = append(vs, h.CatalogVersion)
			}
		}
		if len(vs) == len(rs) && slices.Min(vs) == slices.Max(vs) {
			return vs[0]
		}
		time.Sleep(50 * time.Millisecond) // polling remote processes
	}
	for _, r := range rs {
		b.Logf("%s stderr:\n%s", r.name, r.h.stderr.String())
	}
	b.Fatalf("the replicas did not all serve one version above %d within %v", after, limit)
	return 0
}

// waitChange polls every replica's /healthz every 2 ms until all serve a
// version above before, and returns when the leader served it, when the
// last follower did, and the version.
func waitChange(b *testing.B, rs []*benchReplica, before uint64) (leaderAt, lastAt time.Time, version uint64) {
	b.Helper()
	seen := make([]time.Time, len(rs))
	leader := -1
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		done := 0
		for i, r := range rs {
			if !seen[i].IsZero() {
				done++
				continue
			}
			code, h, err := getHealth(r.base())
			if err != nil || code != http.StatusOK || h.CatalogVersion <= before {
				continue
			}
			seen[i], version = time.Now(), h.CatalogVersion
			if h.leader() {
				leader = i
			}
			done++
		}
		if done == len(rs) {
			break
		}
		time.Sleep(2 * time.Millisecond) // polling remote processes
	}
	if leader < 0 {
		b.Fatalf("no replica served a version above %d as the leader within 5 min", before)
	}
	for i, at := range seen {
		if at.IsZero() {
			b.Fatalf("%s did not serve a version above %d within 5 min", rs[i].name, before)
		}
		if i != leader && at.After(lastAt) {
			lastAt = at
		}
	}
	return seen[leader], lastAt, version
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
