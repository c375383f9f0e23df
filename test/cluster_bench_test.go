package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkClusterChange measures a cluster of three replicas (one leader,
// two followers) on an embedded nats-server serving a generated corpus plus
// a small local folder, next to one process without --cluster serving the
// same (the reference). Each iteration edits a SKILL.md in the small folder
// (the leader watches it; the corpus is never written, so a read-only one
// will do) and polls every process's /healthz every 2 ms until each serves
// a new version. Reported per change (medians):
//
//   - single-ms: from the write to the process without --cluster serving
//     it (the watcher's 500 ms debounce, the hash and the build);
//   - leader-ms: from the write to the leader serving it — the same, plus
//     the export (blobs, snapshot, pointer) and its own import, since the
//     leader serves what the cluster serves;
//   - followers-ms (and followers-max-ms): from the leader serving it to
//     the last follower serving it;
//   - nats-in-B, nats-out-B: bytes nats-server received and sent from the
//     write until every replica served the new version and read the
//     changed file once (server.Varz InBytes, OutBytes: blob and snapshot
//     uploads, the pointer, the replicas' downloads, lease renewals, acks);
//   - stored-B: the bytes of the blobs the leader stored for the change
//     (bytes_stored of its "cluster: published catalog" line).
//
// Once, at start: initial-s (from starting three replicas to all three
// serving one version) and initial-nats-MiB (in + out bytes of that start;
// replicas fetch file bytes on first read, so this is the leader's upload
// and the snapshot downloads).
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
	// The reference: one process without --cluster on the same sources.
	single := &benchReplica{name: "single", h: startHTTP(b, append([]string{"SKILLJACK_CACHE_DIR=" + b.TempDir()}, noReconcile...), corpus, edits)}
	version := waitAllServe(b, rs, 0, 15*time.Minute)
	in1, out1 := nats.traffic()
	b.Logf("three replicas serve version %d after %v; nats-server in %d B, out %d B", version, time.Since(startAt), in1-in0, out1-out0)
	b.ReportMetric(time.Since(startAt).Seconds(), "initial-s")
	b.ReportMetric(float64(in1-in0+out1-out0)/(1<<20), "initial-nats-MiB")

	singleVersion := waitAllServe(b, []*benchReplica{single}, 0, 15*time.Minute)
	all := append(slices.Clone(rs), single)
	var leaderLat, followerLat, singleLat []time.Duration
	var inB, outB, stored []int64
	i := 0
	for b.Loop() {
		i++
		inA, outA := nats.traffic()
		wrote := time.Now()
		writeFile(b, filepath.Join(edits, "changing", "SKILL.md"), skillBody("changing", "Edit "+strconv.Itoa(i)+"."))
		seen, versions, leader := waitChange(b, all, append(slices.Repeat([]uint64{version}, len(rs)), singleVersion))
		for _, r := range rs { // each replica fetches the changed file: a change's bytes include it
			if _, err := readText(r.base(), "skill://edits/changing/SKILL.md"); err != nil {
				b.Fatalf("%s: %v", r.name, err)
			}
		}
		inZ, outZ := nats.traffic()
		version, singleVersion = versions[leader], versions[len(rs)]
		var last time.Time
		for k, at := range seen[:len(rs)] {
			if k != leader && at.After(last) {
				last = at
			}
		}
		leaderLat = append(leaderLat, seen[leader].Sub(wrote))
		followerLat = append(followerLat, last.Sub(seen[leader]))
		singleLat = append(singleLat, seen[len(rs)].Sub(wrote))
		inB, outB = append(inB, inZ-inA), append(outB, outZ-outA)
		stored = append(stored, storedFor(b, all[leader], version))
	}
	b.ReportMetric(ms(median(singleLat)), "single-ms")
	b.ReportMetric(ms(median(leaderLat)), "leader-ms")
	b.ReportMetric(ms(median(followerLat)), "followers-ms")
	b.ReportMetric(ms(slices.Max(followerLat)), "followers-max-ms")
	b.ReportMetric(float64(median(inB)), "nats-in-B")
	b.ReportMetric(float64(median(outB)), "nats-out-B")
	b.ReportMetric(float64(median(stored)), "stored-B")
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

// waitChange polls every replica's /healthz every 2 ms until each serves a
// version above its before, and returns when each first did, the versions,
// and the index of the one that said it leads.
func waitChange(b *testing.B, rs []*benchReplica, before []uint64) (seen []time.Time, versions []uint64, leader int) {
	b.Helper()
	seen, versions, leader = make([]time.Time, len(rs)), make([]uint64, len(rs)), -1
	deadline := time.Now().Add(5 * time.Minute)
	for done := 0; done < len(rs) && time.Now().Before(deadline); {
		done = 0
		for i, r := range rs {
			if !seen[i].IsZero() {
				done++
				continue
			}
			code, h, err := getHealth(r.base())
			if err != nil || code != http.StatusOK || h.CatalogVersion <= before[i] {
				continue
			}
			seen[i], versions[i] = time.Now(), h.CatalogVersion
			if h.leader() {
				leader = i
			}
			done++
		}
		time.Sleep(2 * time.Millisecond) // polling remote processes
	}
	for i, at := range seen {
		if at.IsZero() {
			b.Fatalf("%s did not serve a version above %d within 5 min", rs[i].name, before[i])
		}
	}
	if leader < 0 {
		b.Fatal("no replica that served the change said it leads")
	}
	return seen, versions, leader
}

func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// storedFor returns bytes_stored of r's "cluster: published catalog" line
// for version.
func storedFor(b *testing.B, r *benchReplica, version uint64) int64 {
	b.Helper()
	want := " version=" + strconv.FormatUint(version, 10) + " " // not local_version
	for line := range strings.Lines(r.h.stderr.String()) {
		if !strings.Contains(line, "cluster: published catalog") || !strings.Contains(line, want) {
			continue
		}
		_, after, ok := strings.Cut(line, "bytes_stored=")
		if !ok {
			break
		}
		n, err := strconv.ParseInt(strings.Fields(after)[0], 10, 64)
		if err != nil {
			b.Fatalf("bytes_stored in %q: %v", line, err)
		}
		return n
	}
	b.Fatalf("%s logged no \"cluster: published catalog\" line for version %d", r.name, version)
	return 0
}
