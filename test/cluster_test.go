package test

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// Issue 16 acceptance, process level: three `skilljack-mcp --http=0
// --cluster=nats://…` replicas on one embedded nats-server (JetStream, a
// random loopback port, a temp store folder) serving the same sources — a
// local folder and a repository of a fake GitHub on loopback TLS that
// counts requests. Only behaviour visible from outside is checked (the
// contract in the issue): /healthz (catalogVersion, cluster.leader),
// skills/list bytes, resources/read bytes and the fake's request log.
// Every wait has a deadline; probes run every few milliseconds.

// clusterLease is the --cluster-lease of these tests: short, so a leader
// change takes about a second.
const clusterLease = time.Second

// clusterWait bounds every wait for the cluster to converge: far above the
// lease and the watcher debounce, so a slow CI machine does not fail a
// correct cluster.
const clusterWait = 30 * time.Second

// probeEvery is the gap between two probes of one replica.
const probeEvery = 5 * time.Millisecond

// natsHost is one embedded JetStream server that can be stopped and started
// again on the same port and store folder.
type natsHost struct {
	tb   testing.TB
	dir  string
	port int
	srv  *natsserver.Server
	// child runs the server in a process of its own (this test binary
	// again, see [natsChildMain]), so that stop can SIGKILL it; srv is nil
	// then.
	child bool
	cmd   *exec.Cmd
}

// startNATS starts an embedded JetStream server on a random loopback port
// with a temp store folder; it is shut down at the end of the test.
func startNATS(tb testing.TB) *natsHost {
	tb.Helper()
	n := &natsHost{tb: tb, dir: tb.TempDir(), port: -1}
	n.start()
	tb.Cleanup(n.stop)
	return n
}

// startNATSProcess is startNATS with the server in a child process, which
// stop kills with SIGKILL.
func startNATSProcess(tb testing.TB) *natsHost {
	tb.Helper()
	n := &natsHost{tb: tb, dir: tb.TempDir(), port: -1, child: true}
	n.start()
	tb.Cleanup(n.stop)
	return n
}

// start runs a new server on n's port and store folder (a random port the
// first time), retrying the bind for a few seconds after a restart.
func (n *natsHost) start() {
	n.tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n.child {
			if n.startChild() {
				return
			}
		} else {
			opts := &natsserver.Options{ServerName: "skilljack-test", Host: "127.0.0.1", Port: n.port,
				JetStream: true, StoreDir: n.dir, NoLog: true, NoSigs: true}
			srv, err := natsserver.NewServer(opts)
			if err != nil {
				n.tb.Fatalf("nats-server: %v", err)
			}
			srv.Start()
			if srv.ReadyForConnections(5 * time.Second) {
				n.srv = srv
				n.port = srv.Addr().(*net.TCPAddr).Port
				return
			}
			srv.Shutdown()
		}
		if time.Now().After(deadline) {
			n.tb.Fatalf("nats-server did not listen on port %d within 10 s", n.port)
		}
		time.Sleep(100 * time.Millisecond) // the old listener's port is being released
	}
}

// natsChildEnv names the store folder and port of a child nats-server:
// "DIR|PORT". TestMain runs [natsChildMain] instead of the tests when it is
// set.
const natsChildEnv = "SKILLJACK_TEST_NATS_CHILD"

// startChild runs this test binary as a nats-server child and reads the
// port it listens on; false when it did not come up.
func (n *natsHost) startChild() bool {
	n.tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), natsChildEnv+"="+n.dir+"|"+strconv.Itoa(n.port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		n.tb.Fatal(err)
	}
	// The child ends when this pipe closes: when this process exits, even
	// by a crash, rather than outlive it.
	if _, err := cmd.StdinPipe(); err != nil {
		n.tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		n.tb.Fatal(err)
	}
	ready := make(chan int, 1)
	go func() {
		var port int
		if _, err := fmt.Fscanf(out, "ready %d\n", &port); err == nil {
			ready <- port
		}
		close(ready)
		io.Copy(io.Discard, out)
	}()
	select {
	case port, ok := <-ready:
		if ok {
			n.cmd, n.port = cmd, port
			return true
		}
	case <-time.After(10 * time.Second):
	}
	cmd.Process.Kill()
	cmd.Wait()
	return false
}

// natsChildMain is the child nats-server: JetStream on the store folder and
// port natsChildEnv names, "ready PORT" on stdout once it accepts
// connections, then it runs until killed or until its stdin ends (the
// parent is gone). It exits 1 if the server does not come up.
func natsChildMain(spec string) {
	dir, port, _ := strings.Cut(spec, "|")
	p, err := strconv.Atoi(port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats child:", err)
		os.Exit(1)
	}
	srv, err := natsserver.NewServer(&natsserver.Options{ServerName: "skilljack-test", Host: "127.0.0.1", Port: p,
		JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "nats child:", err)
		os.Exit(1)
	}
	srv.Start()
	if !srv.ReadyForConnections(5 * time.Second) {
		os.Exit(1)
	}
	fmt.Printf("ready %d\n", srv.Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, os.Stdin) // until SIGKILL, or the parent is gone
	os.Exit(0)
}

// stop shuts the server down, or SIGKILLs its process (idempotent).
func (n *natsHost) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
	if n.cmd != nil {
		n.cmd.Process.Kill()
		n.cmd.Wait()
		n.cmd = nil
	}
}

// url is the --cluster value.
func (n *natsHost) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// traffic returns the bytes the embedded server received and sent so far.
func (n *natsHost) traffic() (in, out int64) {
	v, err := n.srv.Varz(nil)
	if err != nil {
		n.tb.Fatal(err)
	}
	return v.InBytes, v.OutBytes
}

// clusterHealth is the body of GET /healthz in cluster mode.
type clusterHealth struct {
	Status         string `json:"status"`
	CatalogVersion uint64 `json:"catalogVersion"`
	Skills         int    `json:"skills"`
	Cluster        *struct {
		Name   string `json:"name"`
		Node   string `json:"node"`
		Leader bool   `json:"leader"`
	} `json:"cluster"`
}

// leader reports whether the body says this replica holds the lease.
func (h clusterHealth) leader() bool { return h.Cluster != nil && h.Cluster.Leader }

// probeClient is the HTTP client of every probe: a short timeout, so a
// replica that hangs counts as a failed probe instead of stalling the test.
var probeClient = &http.Client{Timeout: 5 * time.Second}

// getHealth reads GET base/healthz.
func getHealth(base string) (int, clusterHealth, error) {
	var h clusterHealth
	resp, err := probeClient.Get(base + "/healthz")
	if err != nil {
		return 0, h, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return resp.StatusCode, h, fmt.Errorf("GET /healthz body %q: %w", b, err)
	}
	return resp.StatusCode, h, nil
}

// rpcRaw posts one stateless 2026-07-28 request to base/mcp (with the
// Mcp-Name header name, unless "") and returns the bytes of its result.
func rpcRaw(base, method, name, params string) ([]byte, error) {
	return rpcRawWithin(base, method, name, params, 0)
}

// rpcRawWithin is rpcRaw with a client timeout (0: probeClient's).
func rpcRawWithin(base, method, name, params string, timeout time.Duration) ([]byte, error) {
	client := probeClient
	if timeout > 0 {
		client = &http.Client{Timeout: timeout}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &msg) != nil || msg.Error != nil || msg.Result == nil {
		return nil, fmt.Errorf("%s: HTTP %d %s", method, resp.StatusCode, b)
	}
	return msg.Result, nil
}

// listRaw returns the bytes of base's skills/list result (one page: the
// catalogs of these tests are small).
func listRaw(base string) ([]byte, error) { return rpcRaw(base, "skills/list", "", "") }

// readText returns the text of resources/read uri on base.
func readText(base, uri string) (string, error) { return readTextWithin(base, uri, 0) }

// readTextWithin is readText with a client timeout (0: probeClient's).
func readTextWithin(base, uri string, timeout time.Duration) (string, error) {
	b, err := rpcRawWithin(base, "resources/read", uri, `"uri":"`+uri+`",`, timeout)
	if err != nil {
		return "", err
	}
	var res struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Contents) != 1 {
		return "", fmt.Errorf("resources/read %s: %s", uri, b)
	}
	return res.Contents[0].Text, nil
}

// replica is one skilljack-mcp process of the cluster; it can be stopped and
// started again with the same arguments and cache folder (a new port).
type replica struct {
	t    *testing.T
	name string
	env  []string
	args []string
	mu   sync.Mutex
	h    *httpServer
}

// start runs the process and waits for its listening line.
func (r *replica) start() {
	r.t.Helper()
	h := startHTTP(r.t, r.env, r.args...)
	r.mu.Lock()
	r.h = h
	r.mu.Unlock()
}

// base is the replica's http://127.0.0.1:PORT.
func (r *replica) base() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.TrimSuffix(r.h.url, "/mcp")
}

func (r *replica) stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h.stderr.String()
}

// stop sends sig and waits (30 s at most) for the process to exit.
func (r *replica) stop(sig syscall.Signal) {
	r.t.Helper()
	r.mu.Lock()
	cmd := r.h.cmd
	r.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("signalling %s: %v", r.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if sig == syscall.SIGTERM && err != nil {
			r.t.Errorf("%s exit after SIGTERM: %v; stderr:\n%s", r.name, err, r.stderr())
		}
	case <-time.After(30 * time.Second):
		r.t.Fatalf("%s did not exit within 30 s of %v", r.name, sig)
	}
}

// health reads the replica's /healthz, failing the test on a transport error.
func (r *replica) health() (int, clusterHealth) {
	r.t.Helper()
	code, h, err := getHealth(r.base())
	if err != nil {
		r.t.Fatalf("%s: %v", r.name, err)
	}
	return code, h
}

// clusterFixture is a running cluster: NATS, the fake GitHub, the shared
// local folder and three replicas.
type clusterFixture struct {
	t        *testing.T
	nats     *natsHost
	gh       *fakeGitHub
	lib      string // the local skill folder every replica serves
	env      []string
	args     []string
	replicas []*replica
}

// ghSkill is the GitHub skill every cluster serves, and its SKILL.md.
const ghSkillURI = "skill://acme-skills/gamma/SKILL.md"

var ghSkillBody = skillBody("gamma", "From GitHub.")

// newClusterSources makes the fake GitHub (one repository) and the local
// folder, and returns the environment and arguments a process needs to
// serve them (cacheDir is the process's own SKILLJACK_CACHE_DIR).
func newClusterSources(t *testing.T, pollMs int) (gh *fakeGitHub, lib string, env func(cacheDir string) []string, args []string) {
	t.Helper()
	gh = newFakeGitHub(t)
	gh.push("acme", "skills", "main", false, map[string]string{"gamma/SKILL.md": ghSkillBody, "gamma/refs/note.md": "a note\n"})
	base := t.TempDir()
	certFile := filepath.Join(base, "fake-github.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: gh.srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	lib = filepath.Join(base, "lib")
	writeFile(t, filepath.Join(lib, "alpha", "SKILL.md"), skillBody("alpha", "A local skill."))
	writeFile(t, filepath.Join(lib, "beta", "SKILL.md"), skillBody("beta", "Another local skill."))
	writeFile(t, filepath.Join(lib, "beta", "scripts", "run.sh"), "#!/bin/sh\necho beta\n")
	env = func(cacheDir string) []string {
		return append([]string{
			"SKILLJACK_CACHE_DIR=" + cacheDir,
			"GITHUB_ALLOWED_ORGS=acme",
			"GITHUB_API_URL=" + gh.srv.URL,
			"GITHUB_TOKEN=" + ghToken,
			"GITHUB_POLL_INTERVAL_MS=" + strconv.Itoa(pollMs),
			"SSL_CERT_FILE=" + certFile,
		}, noReconcile...)
	}
	return gh, lib, env, []string{"--tools=always", lib, "github.com/acme/skills"}
}

// startCluster starts NATS, the sources and three replicas (GitHub polled
// every pollMs; 0: once at start) and waits until all three serve one
// catalog with both sources in it.
func startCluster(t *testing.T, pollMs int) *clusterFixture {
	t.Helper()
	return startClusterOn(t, startNATS(t), pollMs)
}

// startClusterOn is startCluster on the nats-server n.
func startClusterOn(t *testing.T, n *natsHost, pollMs int) *clusterFixture {
	t.Helper()
	c := &clusterFixture{t: t, nats: n}
	var env func(string) []string
	c.gh, c.lib, env, c.args = newClusterSources(t, pollMs)
	for i := range 3 {
		r := &replica{t: t, name: fmt.Sprintf("replica %d", i),
			env:  env(t.TempDir()),
			args: append([]string{"--cluster=" + c.nats.url(), "--cluster-lease=" + clusterLease.String()}, c.args...)}
		c.replicas = append(c.replicas, r)
	}
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Go(r.start) // at once: all three race for the lease
	}
	wg.Wait()
	c.converged("the first catalog", func(list []byte) bool {
		return bytes.Contains(list, []byte(ghSkillURI)) && bytes.Contains(list, []byte("skill://lib/beta/SKILL.md"))
	})
	return c
}

// converged waits until every replica answers /healthz 200 with one
// catalogVersion, byte-identical skills/list results for which ok holds,
// and exactly one of them says it is the leader. It returns that version.
func (c *clusterFixture) converged(what string, ok func(list []byte) bool) uint64 {
	c.t.Helper()
	var last string
	deadline := time.Now().Add(clusterWait)
	for time.Now().Before(deadline) {
		v, why := c.sameEverywhere(ok)
		if why == "" {
			return v
		}
		last = why
		time.Sleep(20 * time.Millisecond) // polling remote processes; nothing to wait on
	}
	c.t.Fatalf("%s: the replicas did not converge within %v: %s\n%s", what, clusterWait, last, c.stderrs())
	return 0
}

// sameEverywhere checks the replicas once; it returns the common version
// and "", or why they differ.
func (c *clusterFixture) sameEverywhere(ok func(list []byte) bool) (uint64, string) {
	var version uint64
	var list []byte
	leaders := 0
	for i, r := range c.replicas {
		code, h, err := getHealth(r.base())
		if err != nil || code != http.StatusOK {
			return 0, fmt.Sprintf("%s /healthz: %d %v", r.name, code, err)
		}
		if h.Cluster == nil {
			return 0, fmt.Sprintf("%s /healthz has no cluster object: %+v", r.name, h)
		}
		if h.leader() {
			leaders++
		}
		l, err := listRaw(r.base())
		if err != nil {
			return 0, fmt.Sprintf("%s skills/list: %v", r.name, err)
		}
		if !ok(l) {
			return 0, fmt.Sprintf("%s skills/list lacks what is awaited: %s", r.name, l)
		}
		if i == 0 {
			version, list = h.CatalogVersion, l
			continue
		}
		if h.CatalogVersion != version {
			return 0, fmt.Sprintf("catalogVersion %d on %s, %d on %s", h.CatalogVersion, r.name, version, c.replicas[0].name)
		}
		if !bytes.Equal(l, list) {
			return 0, fmt.Sprintf("skills/list of %s differs from %s:\n%s\n%s", r.name, c.replicas[0].name, l, list)
		}
	}
	if leaders != 1 {
		return 0, fmt.Sprintf("%d replicas say they are the leader", leaders)
	}
	return version, ""
}

// leaderIndex returns the index of the replica whose /healthz says leader.
func (c *clusterFixture) leaderIndex() int {
	c.t.Helper()
	for i, r := range c.replicas {
		if _, h := r.health(); h.leader() {
			return i
		}
	}
	c.t.Fatalf("no replica is the leader\n%s", c.stderrs())
	return -1
}

// edit adds a skill to the local folder (the leader's watcher sees it) and
// returns its URI.
func (c *clusterFixture) edit(name string) string {
	writeFile(c.t, filepath.Join(c.lib, name, "SKILL.md"), skillBody(name, "Added while the cluster runs."))
	return "skill://lib/" + name + "/SKILL.md"
}

func (c *clusterFixture) stderrs() string {
	var b strings.Builder
	for _, r := range c.replicas {
		fmt.Fprintf(&b, "--- %s stderr:\n%s\n", r.name, r.stderr())
	}
	return b.String()
}

// prober probes one replica every probeEvery — GET /healthz, a skills/list
// POST and a resources/read POST in turn — while enabled, and records every
// failed probe: a transport error, a status other than 200, an empty
// catalog, wrong file bytes, or a catalogVersion lower than one it saw
// before.
type prober struct {
	r       *replica
	enabled atomic.Bool
	probes  atomic.Int64
	failed  atomic.Int64
	leader  atomic.Int64 // unix nanos of the first probe that saw leader: true, 0 before
	stop    chan struct{}
	done    chan struct{}

	// busy is held for each probe, so that pause returns only once no
	// probe is in flight.
	busy sync.Mutex

	mu      sync.Mutex
	last    uint64   // highest catalogVersion seen
	reasons []string // the first failures
}

// startProbers starts one enabled prober per replica; they stop at the end
// of the test or at stopProbers.
func startProbers(t *testing.T, rs []*replica) []*prober {
	var ps []*prober
	for _, r := range rs {
		p := &prober{r: r, stop: make(chan struct{}), done: make(chan struct{})}
		p.enabled.Store(true)
		go p.run()
		ps = append(ps, p)
	}
	t.Cleanup(func() { stopProbers(ps) })
	return ps
}

func stopProbers(ps []*prober) {
	for _, p := range ps {
		select {
		case <-p.stop:
		default:
			close(p.stop)
		}
		<-p.done
	}
}

func (p *prober) run() {
	defer close(p.done)
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		p.busy.Lock()
		if p.enabled.Load() {
			p.probeAndCount(i % 4)
		}
		p.busy.Unlock()
	}
}

// pause stops probing p's replica and returns once no probe of it is in
// flight, so that stopping the replica next fails no probe.
func (p *prober) pause() {
	p.enabled.Store(false)
	p.busy.Lock()
	p.busy.Unlock()
}

// probeAndCount probes once and counts the probe and its failure.
func (p *prober) probeAndCount(kind int) {
	p.probes.Add(1)
	if why := p.probeOnce(kind); why != "" {
		p.failed.Add(1)
		p.mu.Lock()
		if len(p.reasons) < 5 {
			p.reasons = append(p.reasons, time.Now().Format("15:04:05.000")+" "+why)
		}
		p.mu.Unlock()
	}
}

// probeOnce probes once — kind 0 and 2: GET /healthz; 1: skills/list; 3:
// resources/read of a GitHub skill's file — and returns why it failed, or
// "".
func (p *prober) probeOnce(kind int) string {
	base := p.r.base()
	switch kind {
	case 1:
		l, err := listRaw(base)
		if err != nil {
			return err.Error()
		}
		if !bytes.Contains(l, []byte(ghSkillURI)) {
			return "skills/list lacks " + ghSkillURI + ": " + string(l)
		}
		return ""
	case 3:
		if got, err := readText(base, ghSkillURI); err != nil || got != ghSkillBody {
			return fmt.Sprintf("resources/read %s = %q, %v", ghSkillURI, got, err)
		}
		return ""
	}
	code, h, err := getHealth(base)
	switch {
	case err != nil:
		return err.Error()
	case code != http.StatusOK || h.Skills == 0:
		return fmt.Sprintf("/healthz %d %+v", code, h)
	}
	if h.leader() {
		p.leader.CompareAndSwap(0, time.Now().UnixNano())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.CatalogVersion < p.last {
		return fmt.Sprintf("catalogVersion went back from %d to %d", p.last, h.CatalogVersion)
	}
	p.last = h.CatalogVersion
	return ""
}

// checkProbes fails the test for every failed probe and logs the counts.
func checkProbes(t *testing.T, what string, ps []*prober) {
	t.Helper()
	for _, p := range ps {
		p.mu.Lock()
		reasons := p.reasons
		p.mu.Unlock()
		t.Logf("%s: %s: %d probes, %d failed", what, p.r.name, p.probes.Load(), p.failed.Load())
		if p.probes.Load() == 0 {
			t.Errorf("%s: %s was never probed", what, p.r.name)
		}
		if n := p.failed.Load(); n != 0 {
			t.Errorf("%s: %d failed probes of %s, first: %s\n%s", what, n, p.r.name, strings.Join(reasons, "\n"), p.r.stderr())
		}
	}
}

// TestClusterServesOneCatalog: three replicas serve byte-identical
// skills/list results and one /healthz catalogVersion; each serves the
// files of both sources (a follower reads them from the object store, not
// from a poll of its own); an edit reaches all three as one new version;
// and the fake GitHub sees about one poller's requests — compared with a
// single process without --cluster run at the same time for the same time
// against its own fake GitHub.
func TestClusterServesOneCatalog(t *testing.T) {
	const pollMs = 10000 // the shortest interval allowed: one poll inside the window below
	// The single process first, so its window is never shorter than the cluster's.
	ghSingle, _, envSingle, argsSingle := newClusterSources(t, pollMs)
	single := startHTTP(t, envSingle(t.TempDir()), argsSingle...)
	start := time.Now()
	c := startCluster(t, pollMs)
	v0 := c.converged("the first catalog", func(l []byte) bool { return bytes.Contains(l, []byte(ghSkillURI)) })
	if v0 == 0 {
		t.Errorf("catalogVersion 0 while serving")
	}
	for _, r := range c.replicas {
		for uri, want := range map[string]string{ghSkillURI: ghSkillBody, "skill://acme-skills/gamma/refs/note.md": "a note\n",
			"skill://lib/beta/scripts/run.sh": "#!/bin/sh\necho beta\n"} {
			if got, err := readText(r.base(), uri); err != nil || got != want {
				t.Errorf("%s: resources/read %s = %q, %v; want %q", r.name, uri, got, err, want)
			}
		}
	}

	uri := c.edit("delta")
	v1 := c.converged("an edit", func(l []byte) bool { return bytes.Contains(l, []byte(uri)) })
	if v1 <= v0 {
		t.Errorf("catalogVersion after an edit = %d, want above %d", v1, v0)
	}

	// Past one poll interval of the window: the single process polled
	// once more, and so did the cluster's leader.
	window := time.Duration(pollMs)*time.Millisecond + 3*time.Second
	time.Sleep(time.Until(start.Add(window))) // a request count over a fixed window; nothing to wait on
	one, cluster := len(ghSingle.requests()), len(c.gh.requests())
	t.Logf("fake GitHub requests over %v: one process without --cluster %d, three replicas %d", window, one, cluster)
	if code, h, err := getHealth(strings.TrimSuffix(single.url, "/mcp")); err != nil || code != http.StatusOK {
		t.Errorf("the process without --cluster: /healthz %d %+v %v", code, h, err)
	} else if h.Cluster != nil {
		t.Errorf("the process without --cluster has a cluster object in /healthz: %+v", h.Cluster)
	}
	if one == 0 {
		t.Fatal("the process without --cluster made no GitHub request")
	}
	if cluster >= 2*one {
		t.Errorf("three replicas made %d GitHub requests, one process %d: more than one poller's", cluster, one)
	}
	i := c.leaderIndex()
	if !strings.Contains(c.replicas[i].stderr(), "cluster: leader") {
		t.Errorf("the leader (%s) never logged \"cluster: leader\":\n%s", c.replicas[i].name, c.replicas[i].stderr())
	}
}

// TestClusterLeaderKill: SIGKILL the leader while the two others are probed
// every few milliseconds: no probe fails, no version goes back, one of them
// says it is the leader within the lease (plus the renewal period and a
// margin for a slow machine), an edit then reaches both, and the killed
// replica started again serves the current version from its first 200.
// "GitHub down": the fake GitHub answers 503 from before the kill, so the
// new leader cannot fetch the repository its replica never polled; the
// cluster must still serve its skill (a remote that fails keeps its last
// good copy served).
func TestClusterLeaderKill(t *testing.T) {
	t.Run("GitHub up", func(t *testing.T) { leaderKill(t, false) })
	t.Run("GitHub down", func(t *testing.T) { leaderKill(t, true) })
}

func leaderKill(t *testing.T, githubDown bool) {
	c := startCluster(t, 0)
	v0, _ := c.sameEverywhere(func([]byte) bool { return true })
	if githubDown {
		c.gh.failWith("acme", "skills", &ghFail{code: http.StatusServiceUnavailable, body: `{"message":"unavailable"}`})
	}
	li := c.leaderIndex()
	leader := c.replicas[li]
	var others []*replica
	for i, r := range c.replicas {
		if i != li {
			others = append(others, r)
		}
	}
	ps := startProbers(t, others)
	time.Sleep(200 * time.Millisecond) // let the probers run before the kill
	killed := time.Now()
	leader.stop(syscall.SIGKILL)

	deadline := killed.Add(clusterWait)
	var took time.Duration
	for took == 0 && time.Now().Before(deadline) {
		for _, p := range ps {
			if at := p.leader.Load(); at != 0 && took == 0 {
				took = time.Unix(0, at).Sub(killed)
			}
		}
		time.Sleep(10 * time.Millisecond) // the probers record; nothing to wait on
	}
	t.Logf("a new leader %v after SIGKILL of the old one (lease %v)", took, clusterLease)
	switch {
	case took == 0:
		t.Errorf("no new leader within %v of the SIGKILL\n%s", clusterWait, c.stderrs())
	case took > 3*clusterLease:
		// The lease expires at most one TTL after the last renewal; a
		// follower tries every TTL/3. Three leases leave room for a slow machine.
		t.Errorf("the new leader came %v after the SIGKILL, over 3 × the %v lease", took, clusterLease)
	}
	time.Sleep(500 * time.Millisecond) // keep probing past the takeover
	stopProbers(ps)
	checkProbes(t, "leader SIGKILL", ps)

	c.replicas = others
	uri := c.edit("after-kill")
	v1 := c.converged("an edit after the leader change", func(l []byte) bool { return bytes.Contains(l, []byte(uri)) })
	if v1 <= v0 {
		t.Errorf("catalogVersion after the new leader's edit = %d, want above %d (before the kill)", v1, v0)
	}

	// A late joiner: the killed replica again, serving v1 from its first 200.
	leader.start()
	first := firstServed(t, leader)
	if first.CatalogVersion != v1 {
		t.Errorf("the restarted replica first served version %d, want the current %d", first.CatalogVersion, v1)
	}
	c.replicas = append(c.replicas, leader)
	c.converged("the restarted replica", func(l []byte) bool { return bytes.Contains(l, []byte(uri)) })
}

// firstServed polls r's /healthz until its first 200 and returns that body.
func firstServed(t *testing.T, r *replica) clusterHealth {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for time.Now().Before(deadline) {
		code, h, err := getHealth(r.base())
		if err == nil && code == http.StatusOK {
			return h
		}
		time.Sleep(5 * time.Millisecond) // polling a remote process
	}
	t.Fatalf("%s served nothing within %v:\n%s", r.name, clusterWait, r.stderr())
	return clusterHealth{}
}

// TestClusterRollingUpdate: each replica in turn is stopped (SIGTERM) and
// started again while the others are probed every few milliseconds; no
// probe of a replica that is up fails, each restarted replica serves the
// current version from its first 200, and after the round an edit reaches
// all three.
func TestClusterRollingUpdate(t *testing.T) {
	c := startCluster(t, 0)
	v0, _ := c.sameEverywhere(func([]byte) bool { return true })
	ps := startProbers(t, c.replicas)
	for i, r := range c.replicas {
		time.Sleep(300 * time.Millisecond) // probes of all three between two restarts
		ps[i].pause()
		r.stop(syscall.SIGTERM)
		r.start()
		first := firstServed(t, r)
		if first.CatalogVersion < v0 {
			t.Errorf("%s restarted first served version %d, below %d", r.name, first.CatalogVersion, v0)
		}
		ps[i].enabled.Store(true)
	}
	time.Sleep(300 * time.Millisecond)
	stopProbers(ps)
	checkProbes(t, "rolling update", ps)

	v1 := c.converged("after the rolling update", func([]byte) bool { return true })
	if v1 < v0 {
		t.Errorf("catalogVersion went back from %d to %d over the rolling update", v0, v1)
	}
	uri := c.edit("after-rollout")
	if v2 := c.converged("an edit after the rolling update", func(l []byte) bool { return bytes.Contains(l, []byte(uri)) }); v2 <= v1 {
		t.Errorf("catalogVersion after the edit = %d, want above %d", v2, v1)
	}
}

// TestClusterNATSRestart: nats-server goes away (the embedded one is shut
// down) while all three replicas are probed every few
// milliseconds: they keep serving, no probe fails, no version goes back. A
// skill added while it is down and one added after a new nats-server is up
// on the same port are then served by all three as one version, and every
// replica reads files no probe read. The new server gets the old store
// folder ("same store": a restart) or an empty one ("empty store": NATS
// replaced, its storage lost), after three leases or a fifth of one.
func TestClusterNATSRestart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kill   bool
		empty  bool
		outage time.Duration
	}{
		{"same store", false, false, 3 * clusterLease},
		// nats-server in a process of its own, SIGKILLed: no goodbye to
		// its clients, no flush of its store.
		{"SIGKILL and same store", true, false, 3 * clusterLease},
		{"empty store", false, true, 3 * clusterLease},
		// Back before the leader's lease lapses: it must not take the
		// empty store for the one it filled.
		{"empty store and a brief outage", false, true, clusterLease / 5},
	} {
		t.Run(tc.name, func(t *testing.T) { natsRestart(t, tc.kill, tc.empty, tc.outage) })
	}
}

func natsRestart(t *testing.T, kill, emptyStore bool, outage time.Duration) {
	nats := startNATS
	if kill {
		nats = startNATSProcess
	}
	c := startClusterOn(t, nats(t), 0)
	v0, _ := c.sameEverywhere(func([]byte) bool { return true })
	ps := startProbers(t, c.replicas)
	time.Sleep(200 * time.Millisecond)
	c.nats.stop()
	if emptyStore {
		c.nats.dir = t.TempDir()
	}
	during := c.edit("while-nats-down")
	// A file no probe read before: a replica that fetches file bytes from
	// the object store on demand cannot serve it until NATS is back. Not
	// asserted (the files a replica has read are, by the probers); how long
	// the read takes and what it gives are logged for the record.
	uncached := make(chan string, len(c.replicas))
	for _, r := range c.replicas {
		go func() {
			began := time.Now()
			got, err := readTextWithin(r.base(), "skill://acme-skills/gamma/refs/note.md", clusterWait)
			uncached <- fmt.Sprintf("%s: %q, %v after %v", r.name, got, err, time.Since(began).Round(time.Millisecond))
		}()
	}
	time.Sleep(outage) // replicas must keep serving; over a lease, the leases expire
	c.nats.start()
	time.Sleep(2 * clusterLease) // reconnection under probes
	after := c.edit("after-nats-back")
	v1 := c.converged("edits around a nats-server restart", func(l []byte) bool {
		return bytes.Contains(l, []byte(during)) && bytes.Contains(l, []byte(after))
	})
	for range c.replicas {
		t.Logf("resources/read of a file not read before, sent while NATS was down: %s", <-uncached)
	}
	stopProbers(ps)
	checkProbes(t, "nats-server restart", ps)
	if v1 <= v0 {
		t.Errorf("catalogVersion after the restart = %d, want above %d", v1, v0)
	}
	for _, r := range c.replicas { // files no probe read: from the object store after the restart
		for uri, want := range map[string]string{"skill://lib/beta/scripts/run.sh": "#!/bin/sh\necho beta\n", "skill://acme-skills/gamma/refs/note.md": "a note\n"} {
			if got, err := readText(r.base(), uri); err != nil || got != want {
				t.Errorf("%s after the restart: resources/read %s = %q, %v", r.name, uri, got, err)
			}
		}
	}
}

// TestClusterStartWithoutNATS: a replica whose nats-server is not there yet
// serves nothing — /healthz 503 "starting", skills/list refused — and says
// why on stderr, and, started with --http=0, which port it opened; once
// nats-server is up it leads and serves the sources.
func TestClusterStartWithoutNATS(t *testing.T) {
	n := startNATS(t)
	n.stop() // keep its port and store folder: nothing listens there now
	_, _, env, args := newClusterSources(t, 0)
	cmd := exec.Command(binPath, append([]string{"--http=0", "--cluster=" + n.url(), "--cluster-lease=" + clusterLease.String()}, args...)...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env(t.TempDir())...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := waitLine(t, stderr, "cannot reach NATS", `msg="port open; not serving until the first catalog`)
	r := &replica{t: t, name: "replica", h: &httpServer{url: url, cmd: cmd, stderr: stderr}}

	for range 20 { // a second of probes while NATS is away
		code, h, err := getHealth(r.base())
		if err != nil || code != http.StatusServiceUnavailable || h.Status != "starting" {
			t.Fatalf("/healthz without NATS = %d %+v %v, want 503 starting\n%s", code, h, err, stderr.String())
		}
		if l, err := listRaw(r.base()); err == nil {
			t.Fatalf("skills/list answered without NATS: %s\n%s", l, stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // probing over time
	}
	n.start()
	h := firstServed(t, r)
	if !h.leader() || h.CatalogVersion == 0 {
		t.Errorf("once NATS is up: /healthz %+v, want the leader serving a version", h)
	}
	c := &clusterFixture{t: t, replicas: []*replica{r}}
	c.converged("the catalog once NATS is up", func(l []byte) bool { return bytes.Contains(l, []byte(ghSkillURI)) })
}

// waitLine waits up to clusterWait for stderr to hold a line containing
// want, then for one containing open, and returns the url= value of the
// latter.
func waitLine(t *testing.T, stderr *syncBuffer, want, open string) string {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		out := stderr.String()
		if strings.Contains(out, want) {
			for line := range strings.Lines(out) {
				if _, rest, ok := strings.Cut(line, open); ok {
					if _, u, ok := strings.Cut(rest, "url="); ok {
						return strings.TrimSpace(u)
					}
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stderr has no line with %q, then %q with url=, within %v:\n%s", want, open, clusterWait, out)
		}
		time.Sleep(20 * time.Millisecond) // waiting for a log line of a child
	}
}

// TestClusterNamesShareNATS: two deployments with different --cluster-name
// on one nats-server each serve their own sources, with a leader each; an
// edit in one does not change the other's version.
func TestClusterNamesShareNATS(t *testing.T) {
	n := startNATS(t)
	var cs []*clusterFixture
	for _, name := range []string{"staging", "production"} {
		_, lib, env, args := newClusterSources(t, 0)
		writeFile(t, filepath.Join(lib, "only-"+name, "SKILL.md"), skillBody("only-"+name, "Only in "+name+"."))
		c := &clusterFixture{t: t, nats: n, lib: lib}
		for i := range 2 {
			r := &replica{t: t, name: fmt.Sprintf("%s replica %d", name, i), env: env(t.TempDir()),
				args: append([]string{"--cluster=" + n.url(), "--cluster-name=" + name, "--cluster-lease=" + clusterLease.String()}, args...)}
			r.start()
			c.replicas = append(c.replicas, r)
		}
		cs = append(cs, c)
	}
	// mine: name's own skill and the GitHub one listed, the other's not.
	mine := func(name string) func([]byte) bool {
		other := map[string]string{"staging": "production", "production": "staging"}[name]
		return func(l []byte) bool {
			return bytes.Contains(l, []byte("skill://lib/only-"+name+"/")) && bytes.Contains(l, []byte(ghSkillURI)) &&
				!bytes.Contains(l, []byte("only-"+other))
		}
	}
	v := []uint64{cs[0].converged("staging", mine("staging")), cs[1].converged("production", mine("production"))}
	for _, c := range cs {
		for _, r := range c.replicas {
			if _, h := r.health(); h.Cluster == nil || !strings.Contains(r.name, h.Cluster.Name) {
				t.Errorf("%s: /healthz cluster %+v", r.name, h.Cluster)
			}
		}
	}
	uri := cs[0].edit("staging-edit")
	if v1 := cs[0].converged("an edit in staging", func(l []byte) bool { return mine("staging")(l) && bytes.Contains(l, []byte(uri)) }); v1 <= v[0] {
		t.Errorf("staging version after its edit = %d, want above %d", v1, v[0])
	}
	if v1 := cs[1].converged("production after staging's edit", mine("production")); v1 != v[1] {
		t.Errorf("production version went from %d to %d on an edit in staging", v[1], v1)
	}
}
