package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpServer is the binary serving --http=0.
type httpServer struct {
	url    string // http://127.0.0.1:PORT/mcp
	cmd    *exec.Cmd
	stderr *syncBuffer
}

// startHTTP runs the binary with --http=0 and args, and reads the URL from
// its startup line.
func startHTTP(tb testing.TB, env []string, args ...string) *httpServer {
	tb.Helper()
	cmd := exec.Command(binPath, append([]string{"--http=0"}, args...)...)
	cmd.Env = append([]string{"HOME=" + tb.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	pr, pw := io.Pipe()
	stderr := &syncBuffer{}
	cmd.Stderr = io.MultiWriter(stderr, pw)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	h := &httpServer{cmd: cmd, stderr: stderr}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "msg=listening url="); ok {
				urls <- u
				break
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case h.url = <-urls:
	case <-time.After(30 * time.Second):
		tb.Fatalf("no listening line; stderr:\n%s", stderr.String())
	}
	return h
}

// client connects a stateless go-sdk client speaking version; handlers
// record any notification (none may arrive over HTTP).
func (h *httpServer) client(tb testing.TB, version string, notified *atomic.Int64) *mcp.ClientSession {
	tb.Helper()
	count := func() { notified.Add(1) }
	c := mcp.NewClient(&mcp.Implementation{Name: "http-e2e", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { count() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { count() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { count() },
		ResourceUpdatedHandler:     func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { count() },
	})
	for _, m := range []string{"skills/list", "skills/get"} {
		if err := mcp.AddSendingCustomMethod[*skillsParams, *skillsResult](c, m); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatalf("connecting over HTTP (%s): %v\nstderr:\n%s", version, err, h.stderr.String())
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// health reads GET /healthz.
func (h *httpServer) health(tb testing.TB) (version uint64, skills int) {
	tb.Helper()
	resp, err := http.Get(strings.TrimSuffix(h.url, "/mcp") + "/healthz")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		CatalogVersion uint64 `json:"catalogVersion"`
		Skills         int    `json:"skills"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&body) != nil {
		tb.Fatalf("GET /healthz = %d", resp.StatusCode)
	}
	return body.CatalogVersion, body.Skills
}

func listOver(tb testing.TB, cs *mcp.ClientSession) []skillEntry {
	tb.Helper()
	res, err := mcp.CallCustomMethod[*skillsParams, *skillsResult](context.Background(), cs, "skills/list", &skillsParams{})
	if err != nil {
		tb.Fatalf("skills/list over HTTP: %v", err)
	}
	return res.Skills
}

// TestHTTPFreshness: the binary over --http on both eras. A second client
// sees a skill added on disk after the first connected, in its instructions
// and in skills/list (the watcher keeps running in HTTP mode), and no
// notification ever arrives over HTTP (stateless: listChanged and subscribe
// false).
func TestHTTPFreshness(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "lib")
			writeFile(t, filepath.Join(root, "first", "SKILL.md"), skillBody("first", "Here at start."))
			h := startHTTP(t, noReconcile, root)
			var notified atomic.Int64
			a := h.client(t, era, &notified)
			caps := a.InitializeResult().Capabilities
			if caps.Tools.ListChanged || caps.Prompts.ListChanged || caps.Resources.ListChanged || caps.Resources.Subscribe {
				t.Errorf("HTTP capabilities declare push: %+v %+v %+v", caps.Tools, caps.Prompts, caps.Resources)
			}
			if caps.Extensions["io.modelcontextprotocol/skills"] == nil {
				t.Error("HTTP capabilities lack the skills extension")
			}
			v0, _ := h.health(t)
			writeFile(t, filepath.Join(root, "second", "SKILL.md"), skillBody("second", "Added later."))
			// Wait for the new catalog through the health endpoint, the one
			// thing an HTTP client can watch.
			deadline := time.Now().Add(notifyTimeout)
			for v, _ := h.health(t); v == v0; v, _ = h.health(t) {
				if time.Now().After(deadline) {
					t.Fatalf("catalog version still %d after %v; stderr:\n%s", v0, notifyTimeout, h.stderr.String())
				}
				time.Sleep(20 * time.Millisecond) // polling a remote state; nothing to wait on
			}
			b := h.client(t, era, &notified)
			if !strings.Contains(b.InitializeResult().Instructions, "<name>lib__second</name>") {
				t.Errorf("second client's instructions lack lib__second:\n%s", b.InitializeResult().Instructions)
			}
			for name, cs := range map[string]*mcp.ClientSession{"first": a, "second": b} {
				if !slices.ContainsFunc(listOver(t, cs), func(e skillEntry) bool { return e.URI == "skill://lib/second/SKILL.md" }) {
					t.Errorf("%s client's skills/list lacks the new skill", name)
				}
			}
			res, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "lib__second"}})
			if err != nil || res.IsError {
				t.Errorf("load-skill of the new skill over HTTP: %v %v", err, res)
			}
			if n := notified.Load(); n != 0 {
				t.Errorf("%d notifications arrived over stateless HTTP, want 0", n)
			}
		})
	}
}

// TestHTTPSigterm: SIGTERM lets in-flight requests finish, then the process
// exits 0. Twenty clients keep slow requests (a 1.2 MB file read, hashed and
// base64-encoded) running; after the signal every request either got its
// whole response or was refused before the server began it (no byte
// written) — never a truncated one — and some finished after the signal.
func TestHTTPSigterm(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "big", "SKILL.md"), skillBody("big", "Large file.")+strings.Repeat("lorem ipsum ", 100_000))
	h := startHTTP(t, nil, root)
	addr := strings.TrimSuffix(strings.TrimPrefix(h.url, "http://"), "/mcp")
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://lib/big/SKILL.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: resources/read\r\n" +
		"Mcp-Name: skill://lib/big/SKILL.md\r\nConnection: close\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n" + body

	var signalled atomic.Int64 // unix nanos of the signal, 0 before
	var whole, after, dropped, truncated atomic.Int64
	var wg sync.WaitGroup
	first := make(chan struct{}, 20)
	for range 20 {
		wg.Go(func() {
			for {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return // the listener is closed: shutdown has begun
				}
				c.SetDeadline(time.Now().Add(30 * time.Second))
				io.WriteString(c, req)
				raw, _ := io.ReadAll(c)
				c.Close()
				switch resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), nil); {
				case len(raw) == 0:
					dropped.Add(1)
				case err != nil || resp.StatusCode != 200:
					truncated.Add(1)
				default:
					var msg rawReply
					if json.NewDecoder(resp.Body).Decode(&msg) != nil || msg.Result["contents"] == nil {
						truncated.Add(1)
						continue
					}
					whole.Add(1)
					if s := signalled.Load(); s != 0 && time.Now().UnixNano() > s {
						after.Add(1)
					}
					offer(first, struct{}{})
				}
				if signalled.Load() != 0 {
					return
				}
			}
		})
	}
	<-first // requests are flowing
	signalled.Store(time.Now().UnixNano())
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	t.Logf("whole responses %d (%d finished after SIGTERM), refused before start %d, truncated %d",
		whole.Load(), after.Load(), dropped.Load(), truncated.Load())
	if truncated.Load() != 0 {
		t.Errorf("%d responses were cut off by the shutdown", truncated.Load())
	}
	if after.Load() == 0 {
		t.Error("no request in flight at SIGTERM finished afterwards")
	}
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, h.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit within 30 s of SIGTERM")
	}
}

// loadMix runs one request of the load mix: skills/list, resources/read of a
// SKILL.md, or tools/call load-skill.
func loadMix(ctx context.Context, cs *mcp.ClientSession, i int) error {
	switch i % 3 {
	case 0:
		_, err := mcp.CallCustomMethod[*skillsParams, *skillsResult](ctx, cs, "skills/list", &skillsParams{})
		return err
	case 1:
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://skills/outer/inner/refs/note.md"})
		return err
	default:
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "skills__flat"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("load-skill: %s", textOf(res))
		}
		return err
	}
}

// TestHTTPLoad: 50 concurrent clients for 30 s (3 s with -short) mixing
// skills/list, resources/read and tools/call load-skill over loopback; every
// request must succeed. Throughput and latency are logged; the benchmark
// below reports them.
func TestHTTPLoad(t *testing.T) {
	dur := 30 * time.Second
	if testing.Short() {
		dur = 3 * time.Second
	}
	h := startHTTP(t, nil, "--tools=always", "testdata/traces/skills")
	var notified atomic.Int64
	const clients = 50
	var (
		mu  sync.Mutex
		lat []time.Duration
	)
	var failures atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	for c := range clients {
		era := eras[c%2]
		cs := h.client(t, era, &notified)
		wg.Go(func() {
			var mine []time.Duration
			for i := c; ctx.Err() == nil; i++ {
				start := time.Now()
				err := loadMix(context.Background(), cs, i)
				if err != nil {
					if failures.Add(1) <= 5 {
						t.Errorf("client %d (%s) request %d: %v", c, era, i, err)
					}
					continue
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d failed requests under load, want 0", n)
	}
	if len(lat) == 0 {
		t.Fatal("no request completed")
	}
	slices.Sort(lat)
	t.Logf("%d clients, %v: %d requests, %.0f req/s, p50 %v, p99 %v",
		clients, dur, len(lat), float64(len(lat))/dur.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100])
}

// BenchmarkHTTPServing measures the binary over --http on loopback: one
// client calling load-skill sequentially (comparable to go-sdk's own
// BenchmarkStreamableServing, one tool call per op on a streamable server),
// and 50 clients running the load mix in parallel (requests/s, p50, p99).
func BenchmarkHTTPServing(b *testing.B) {
	h := startHTTP(b, nil, "--tools=always", "testdata/traces/skills")
	var notified atomic.Int64
	b.Run("sequential-load-skill", func(b *testing.B) {
		cs := h.client(b, legacyVersion, &notified)
		for b.Loop() {
			if err := loadMix(context.Background(), cs, 2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel-50-mix", func(b *testing.B) {
		sessions := make(chan *mcp.ClientSession, 50)
		for range 50 {
			sessions <- h.client(b, legacyVersion, &notified)
		}
		var (
			mu  sync.Mutex
			lat []time.Duration
		)
		b.SetParallelism(25) // 2 CPUs × 25 = 50 goroutines
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			cs := <-sessions
			var mine []time.Duration
			for i := 0; pb.Next(); i++ {
				t0 := time.Now()
				if err := loadMix(context.Background(), cs, i); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
		elapsed := time.Since(start)
		if len(lat) > 0 {
			slices.Sort(lat)
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		}
	})
}

// hostileBodies are 2025-11-25 requests of about size bytes each: URIs,
// names and paths shaped a/a/a/… where every request method takes one, and
// the same bulk in a field no handler reads (which the server must decode
// in full, through the SDK).
func hostileBodies(size int) []string {
	aaa := strings.Repeat("a/", size/2)
	req := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
	}
	return []string{
		req("resources/read", `"uri":"skill://`+aaa+`"`),
		req("skills/get", `"uri":"skill://`+aaa+`"`),
		req("resources/directory/read", `"uri":"skill://`+aaa+`"`),
		req("tools/call", `"name":"skill-resource","arguments":{"skill":"skills__flat","path":"`+aaa+`"}`),
		req("tools/call", `"name":"load-skill","arguments":{"name":"`+aaa+`"}`),
		req("prompts/get", `"name":"skill","arguments":{"name":"`+aaa+`"}`),
		req("tools/list", `"_meta":{"x":"`+aaa+`"}`),
		req("tools/call", `"name":"load-skill","arguments":{"name":"skills__flat","x":"`+aaa+`"}`),
	}
}

// vmHWM returns the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc status: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb << 10
		}
	}
	t.Skip("no VmHWM in /proc status")
	return 0
}

// postRetry POSTs body to url and returns the status and body of the answer,
// retrying after Retry-After while the server answers 503.
func postRetry(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("POST: %v", err)
			return 0, nil
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || attempt == 30 {
			return resp.StatusCode, b
		}
		if resp.Header.Get("Retry-After") != "1" {
			t.Errorf("503 without Retry-After: 1: %s", b)
		}
		time.Sleep(time.Second) // as Retry-After asks, not to synchronise
	}
}

// TestHTTPHostileMemory (issue 10 F3): 32 concurrent 4 MiB hostile requests
// (URIs, names and paths a/a/a/… in every method that takes one, and the
// same bulk where no handler looks) keep the binary's peak RSS under 200 MB
// (before: 100–140 MiB per request, 4.2 GiB for 32, none answered). Every
// hostile request gets a small answer, and a well-formed request sent
// meanwhile is answered (at once, after queueing, or after a 503 and a
// retry).
func TestHTTPHostileMemory(t *testing.T) {
	h := startHTTP(t, nil, "--tools=always", "testdata/traces/skills")
	pid := h.cmd.Process.Pid
	before := vmHWM(t, pid)
	bodies := hostileBodies(4<<20 - 512)
	const clients = 32
	var wg sync.WaitGroup
	for i := range clients {
		body := bodies[i%len(bodies)]
		wg.Go(func() {
			status, b := postRetry(t, h.url, body)
			var r rawReply
			if json.Unmarshal(b, &r) != nil || (status != 200 && status != 400) {
				t.Errorf("hostile request %d = %d %.200s, want a JSON-RPC answer", i, status, b)
			}
			if len(b) > 4096 && i%len(bodies) < 6 {
				t.Errorf("hostile request %d: answer is %d bytes, want < 4 KiB", i, len(b))
			}
		})
	}
	wg.Go(func() {
		status, b := postRetry(t, h.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"load-skill","arguments":{"name":"skills__flat"}}}`)
		if status != 200 || !strings.Contains(string(b), `"result"`) || strings.Contains(string(b), `"isError":true`) {
			t.Errorf("well-formed request during the attack = %d %.300s", status, b)
		}
	})
	wg.Wait()
	peak := vmHWM(t, pid)
	t.Logf("peak RSS %d MiB (%d MiB before the requests)", peak>>20, before>>20)
	if peak >= 200<<20 {
		t.Errorf("peak RSS = %d MiB, want < 200 MB", peak>>20)
	}
}
