package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/cluster"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// testLease is the lease of the tests: short, so a leader change takes
// about a second, and long enough for the race detector's slowness.
const testLease = 1500 * time.Millisecond

// startNATS runs an embedded nats-server with JetStream on a random
// loopback port and temporary storage, and returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	return runNATS(t, -1, t.TempDir()).ClientURL()
}

// runNATS runs an embedded nats-server with JetStream on port (-1: a
// random one) storing in store; it is shut down at the end of the test.
func runNATS(t *testing.T, port int, store string) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: store, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(ns.Shutdown)
	return ns
}

// replica is one in-process skilljack HTTP replica in a cluster: the real
// pipeline with cluster options, a facade reading the served catalogs and
// files from the object store, and its HTTP handler.
type replica struct {
	name   string
	url    string
	leader atomic.Bool
	logs   *eventstest.LogBuffer
	stop   func()
}

// startReplica starts a replica serving the skill folder dir (which only
// a leader reads) in the cluster at natsURL.
func startReplica(t *testing.T, natsURL, name, dir string) *replica {
	t.Helper()
	home := t.TempDir()
	set, _, err := config.Load(config.LoadOptions{Args: []string{dir}, Getenv: func(string) string { return "" }, Home: home, Cwd: home})
	if err != nil {
		t.Fatal(err)
	}
	log, logs := eventstest.CaptureLog()
	r := &replica{name: name, logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	bus := events.NewBus(log)
	catalogs, err := bus.Subscribe(ctx, events.TopicCatalogServed)
	if err != nil {
		t.Fatal(err)
	}
	updates, err := bus.Subscribe(ctx, events.TopicResourcesUpdated)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := cluster.Connect(config.Cluster{URL: natsURL}, name, log)
	if err != nil {
		t.Fatal(err)
	}
	files, err := cluster.NewFileSource(nc, "t", filepath.Join(home, "blobs"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := actors.NewPipeline(ctx, bus, bus, set.Config, &actors.PipelineOptions{Watch: true, Logger: log,
		Cluster: &actors.ClusterOptions{Conn: nc, Name: "t", Node: name, Lease: testLease, OnLeader: r.leader.Store}})
	if err != nil {
		t.Fatal(err)
	}
	facade := mcpface.New(&mcpface.Options{Logger: log, Files: files})
	ts := httptest.NewServer(facade.HTTPHandler(&mcpface.HTTPOptions{Loopback: true, Cluster: func() mcpface.ClusterHealth {
		return mcpface.ClusterHealth{Name: "t", Node: name, Leader: r.leader.Load()}
	}}))
	r.url = ts.URL
	done := make(chan struct{}, 2)
	go func() { p.Run(ctx); done <- struct{}{} }()
	go func() { facade.Run(ctx, catalogs, updates); done <- struct{}{} }()
	var once atomic.Bool
	r.stop = func() {
		if once.Swap(true) {
			return
		}
		cancel()
		<-done
		<-done
		ts.Close()
		files.Close()
		nc.Close()
		bus.Close()
	}
	t.Cleanup(r.stop)
	return r
}

// health is a replica's GET /healthz.
type health struct {
	Status         string `json:"status"`
	CatalogVersion uint64 `json:"catalogVersion"`
	Skills         int    `json:"skills"`
	Cluster        *struct {
		Name   string `json:"name"`
		Node   string `json:"node"`
		Leader bool   `json:"leader"`
	} `json:"cluster"`
}

func (r *replica) health(t *testing.T) health {
	t.Helper()
	resp, err := http.Get(r.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// rpc posts one JSON-RPC request to the replica's /mcp (2025-11-25, no
// session: the HTTP transport is stateless) and returns the response body.
func (r *replica) rpc(t *testing.T, method string, params any) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, r.url+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", r.name, method, resp.StatusCode, b)
	}
	return b
}

// waitFor polls cond every 20 ms until it holds, failing after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeSkill writes a skill folder under dir atomically (a new folder
// renamed into place, or a SKILL.md renamed over the old one).
func writeSkill(t *testing.T, dir, name, desc string, extra map[string]string) {
	t.Helper()
	tmp := t.TempDir()
	md := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n# %s\n", name, desc, name)
	if err := os.WriteFile(filepath.Join(tmp, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	for rel, data := range extra {
		if err := os.WriteFile(filepath.Join(tmp, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(dir, name)
	if _, err := os.Stat(dst); err == nil {
		if err := os.Rename(filepath.Join(tmp, "SKILL.md"), filepath.Join(dst, "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// versions returns the /healthz catalog versions of rs.
func versions(t *testing.T, rs ...*replica) []uint64 {
	var out []uint64
	for _, r := range rs {
		out = append(out, r.health(t).CatalogVersion)
	}
	return out
}

// allAt reports whether every replica of rs serves version v.
func allAt(t *testing.T, v uint64, rs ...*replica) bool {
	for _, got := range versions(t, rs...) {
		if got != v {
			return false
		}
	}
	return true
}

// TestClusterInProcess is issue 16's in-process acceptance: an embedded
// nats-server, the real pipeline as leader over a skill folder, two
// follower facades. Every replica serves byte-identical skills/list; an
// edit reaches both followers as one version; a late joiner that holds no
// skill folder serves the current version, files included, at once; and a
// leader change keeps the version (the new leader's equal catalog is not
// published) and never lets it go back.
func TestClusterInProcess(t *testing.T) {
	url := startNATS(t)
	dir := filepath.Join(t.TempDir(), "skills")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, dir, "alpha", "First skill.", map[string]string{"notes.md": "alpha notes\n"})
	writeSkill(t, dir, "beta", "Second skill.", nil)
	writeSkill(t, dir, "gamma", "Third skill.", nil)

	a := startReplica(t, url, "a", dir)
	waitFor(t, 20*time.Second, "a to lead and serve", func() bool { h := a.health(t); return h.Status == "ok" && h.Cluster.Leader })
	b := startReplica(t, url, "b", dir)
	c := startReplica(t, url, "c", dir)
	v1 := a.health(t).CatalogVersion
	waitFor(t, 20*time.Second, "b and c to serve a's version", func() bool { return allAt(t, v1, b, c) })
	if hb, hc := b.health(t), c.health(t); hb.Cluster.Leader || hc.Cluster.Leader || hb.Skills != 3 {
		t.Fatalf("followers: %+v %+v", hb, hc)
	}
	list := a.rpc(t, "skills/list", map[string]any{})
	if !bytes.Contains(list, []byte("skill://skills/alpha/SKILL.md")) {
		t.Fatalf("skills/list of the leader lacks alpha: %s", list)
	}
	for _, r := range []*replica{b, c} {
		if got := r.rpc(t, "skills/list", map[string]any{}); !bytes.Equal(got, list) {
			t.Errorf("skills/list of %s differs from the leader's:\n%s\n%s", r.name, got, list)
		}
	}

	// An edit on the leader: one new version, served by both followers.
	writeSkill(t, dir, "beta", "Second skill, edited.", nil)
	waitFor(t, 20*time.Second, "the edit to reach every replica", func() bool { return allAt(t, v1+1, a, b, c) })
	list = a.rpc(t, "skills/list", map[string]any{})
	if !bytes.Contains(list, []byte("Second skill, edited.")) {
		t.Fatalf("edited description not served: %s", list)
	}
	for _, r := range []*replica{b, c} {
		if got := r.rpc(t, "skills/list", map[string]any{}); !bytes.Equal(got, list) {
			t.Errorf("skills/list of %s after the edit differs from the leader's", r.name)
		}
	}

	// Only the leader scans and watches: the followers' producers never ran.
	for _, r := range []*replica{b, c} {
		if logs := r.logs.String(); strings.Contains(logs, "actor=hasher") || strings.Contains(logs, "actor=watcher") || strings.Contains(logs, "actor=config") {
			t.Errorf("follower %s ran a producer:\n%s", r.name, logs)
		}
	}
	if logs := a.logs.String(); !strings.Contains(logs, "actor=hasher") || !strings.Contains(logs, "actor=watcher") {
		t.Errorf("the leader's logs show no hasher or watcher (is the check blind?):\n%s", logs)
	}

	// A late joiner with no skill folder of its own (it never leads while
	// a holds the lease) serves the current version and its files.
	d := startReplica(t, url, "d", filepath.Join(t.TempDir(), "absent"))
	waitFor(t, 20*time.Second, "d to serve", func() bool { return d.health(t).Status == "ok" })
	if h := d.health(t); h.CatalogVersion != v1+1 || h.Skills != 3 || h.Cluster.Leader {
		t.Errorf("late joiner: %+v, want version %d, 3 skills, follower", h, v1+1)
	}
	read := d.rpc(t, "resources/read", map[string]any{"uri": "skill://skills/alpha/notes.md"})
	if !bytes.Contains(read, []byte("alpha notes")) {
		t.Errorf("late joiner resources/read of a file it does not hold: %s", read)
	}
	if got := d.rpc(t, "skills/list", map[string]any{}); !bytes.Equal(got, list) {
		t.Errorf("skills/list of the late joiner differs from the leader's")
	}
	d.stop()

	// The leader goes; b or c takes over within the lease, keeps the
	// version (its catalog is equal: nothing published), and its next edit
	// is the version after.
	a.stop()
	waitFor(t, 4*testLease, "a new leader", func() bool { return b.health(t).Cluster.Leader || c.health(t).Cluster.Leader })
	waitFor(t, 4*testLease, "the new leader's first build", func() bool {
		return strings.Contains(b.logs.String()+c.logs.String(), "catalog unchanged; nothing published")
	})
	if vs := versions(t, b, c); vs[0] != v1+1 || vs[1] != v1+1 {
		t.Errorf("versions after the leader change = %v, want %d on both", vs, v1+1)
	}
	writeSkill(t, dir, "gamma", "Third skill, edited by the new leader.", nil)
	waitFor(t, 20*time.Second, "the new leader's edit", func() bool { return allAt(t, v1+2, b, c) })
}

// TestClusterNATSRestart: while NATS is down the replicas keep serving
// their catalog (and the files they read before); an edit made meanwhile
// reaches every replica once NATS is back (issue 16) — also when NATS
// comes back without its storage, the version going on from the one
// served rather than starting again.
func TestClusterNATSRestart(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("storage lost=%v", lost), func(t *testing.T) { testNATSRestart(t, lost) })
	}
}

func testNATSRestart(t *testing.T, lost bool) {
	store := t.TempDir()
	ns := runNATS(t, -1, store)
	port := ns.Addr().(*net.TCPAddr).Port
	url := ns.ClientURL()
	dir := filepath.Join(t.TempDir(), "skills")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, dir, "alpha", "First skill.", map[string]string{"notes.md": "alpha notes\n"})
	a := startReplica(t, url, "a", dir)
	waitFor(t, 20*time.Second, "a to lead and serve", func() bool { h := a.health(t); return h.Status == "ok" && h.Cluster.Leader })
	b := startReplica(t, url, "b", dir)
	v1 := a.health(t).CatalogVersion
	waitFor(t, 20*time.Second, "b to serve", func() bool { return allAt(t, v1, b) })
	notes := map[string]any{"uri": "skill://skills/alpha/notes.md"}
	if got := b.rpc(t, "resources/read", notes); !bytes.Contains(got, []byte("alpha notes")) {
		t.Fatalf("b reads notes.md: %s", got)
	}

	ns.Shutdown()
	ns.WaitForShutdown()
	writeSkill(t, dir, "alpha", "First skill, edited while NATS was down.", nil)
	time.Sleep(testLease) // the watcher and the builder see the edit; the leader loses its lease
	for _, r := range []*replica{a, b} {
		if h := r.health(t); h.Status != "ok" || h.CatalogVersion != v1 {
			t.Errorf("%s while NATS is down: %+v, want version %d served", r.name, h, v1)
		}
	}
	if got := b.rpc(t, "resources/read", notes); !bytes.Contains(got, []byte("alpha notes")) {
		t.Errorf("b reads a cached file while NATS is down: %s", got)
	}
	uncached := b.rpc(t, "resources/read", map[string]any{"uri": "skill://skills/alpha/SKILL.md"})
	if !bytes.Contains(uncached, []byte(`"error"`)) || !bytes.Contains(uncached, []byte("NATS is unreachable")) {
		t.Errorf("b reads a file it never cached while NATS is down: %s, want an error saying NATS is unreachable", uncached)
	}

	if lost {
		store = t.TempDir()
	}
	runNATS(t, port, store)
	waitFor(t, 30*time.Second, "the edit to reach both after NATS is back", func() bool {
		return allAt(t, v1+1, a, b)
	})
	if got := b.rpc(t, "skills/list", map[string]any{}); !bytes.Contains(got, []byte("edited while NATS was down")) {
		t.Errorf("b after NATS is back: %s", got)
	}
}

// TestClusterStartsBeforeNATS: a replica that cannot reach NATS at start
// serves nothing (503 "starting") and says why, then joins once NATS is
// up — the documented choice of issue 16 (no stale local snapshot).
func TestClusterStartsBeforeNATS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := filepath.Join(t.TempDir(), "skills")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, dir, "alpha", "First skill.", nil)
	a := startReplica(t, fmt.Sprintf("nats://127.0.0.1:%d", port), "a", dir)
	waitFor(t, 10*time.Second, "the cannot-reach line", func() bool {
		return strings.Contains(a.logs.String(), "cannot reach NATS JetStream; serving nothing")
	})
	// Said at once, not after a JetStream request timed out a lease later
	// (fresh-user trial: 12 s of silence with the default 15 s lease).
	if !strings.Contains(a.logs.String(), "not connected to NATS") {
		t.Errorf("the cannot-reach line does not say the connection is down:\n%s", a.logs.String())
	}
	resp, err := http.Get(a.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := a.health(t); resp.StatusCode != http.StatusServiceUnavailable || h.Status != "starting" {
		t.Errorf("/healthz without NATS = %d %+v, want 503 starting", resp.StatusCode, h)
	}
	runNATS(t, port, t.TempDir())
	waitFor(t, 20*time.Second, "a to lead and serve once NATS is up", func() bool {
		h := a.health(t)
		return h.Status == "ok" && h.Cluster.Leader && h.Skills == 1
	})
}
