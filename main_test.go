package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

// The two protocol eras: 2025-11-25 connects with initialize, 2026-07-28
// with server/discover and per-request _meta.
const (
	legacyVersion = "2025-11-25"
	modernVersion = "2026-07-28"
)

var eras = []string{legacyVersion, modernVersion}

// lockedBuffer is a bytes.Buffer safe for run's writes and the test's reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is one run of the program in process, served over pipes.
type running struct {
	cs     *mcp.ClientSession
	stderr *lockedBuffer
	cancel context.CancelFunc
	done   chan error
}

// startRun calls run(ctx, args, stdin pipe, stdout pipe, stderr buffer,
// getenv) in a goroutine, with env as the whole environment (HOME a fresh
// temporary folder unless set), and connects a go-sdk client with
// clientOpts speaking version over the pipes. Stop it with stop.
func startRun(t *testing.T, version string, env map[string]string, clientOpts *mcp.ClientOptions, args ...string) *running {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "main-test", Version: "v0"}, clientOpts)
	return startRunWith(t, version, env, client, args...)
}

// startRunClient is [startRun] with a client the test built (roots,
// handlers) and a fresh HOME.
func startRunClient(t *testing.T, version string, client *mcp.Client, args ...string) *running {
	t.Helper()
	return startRunWith(t, version, nil, client, args...)
}

// startRunWith runs the program as [startRun] describes and connects client.
func startRunWith(t *testing.T, version string, env map[string]string, client *mcp.Client, args ...string) *running {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if env["HOME"] == "" {
		env["HOME"] = t.TempDir()
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{stderr: &lockedBuffer{}, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := run(ctx, args, inR, outW, r.stderr, func(k string) string { return env[k] })
		outW.Close()
		inR.Close()
		r.done <- err
	}()
	cctx, ccancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer ccancel()
	cs, err := client.Connect(cctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatalf("connecting to run %v: %v\nstderr:\n%s", args, err, r.stderr)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol version = %q, want %q", got, version)
	}
	r.cs = cs
	t.Cleanup(func() { r.cancel(); r.cs.Close() })
	return r
}

// stop closes the client (stdin EOF, as when a client goes away) and
// requires run to return nil promptly.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cs.Close()
	r.wait(t)
}

// wait requires run to return nil within 30 s.
func (r *running) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("run returned %v\nstderr:\n%s", err, r.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not return within 30 s\nstderr:\n%s", r.stderr)
	}
}

func writeFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func skillBody(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nBody of " + name + ".\n"
}

// TestRunStdio: run serves a folder over stdio on both eras, with flags
// and variables read through the settings table, and returns nil when the
// client goes away (issue 11 item 8).
func TestRunStdio(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "hello", "SKILL.md"), skillBody("hello", "Says hello."))
	writeFile(t, filepath.Join(root, "hello", "notes.md"), "notes\n")
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			r := startRun(t, version, map[string]string{"SKILLJACK_CATALOG": "instructions", "GITHUB_TOKEN": "ghp_never_printed"}, nil, "--tools=always", root)
			ctx := t.Context()
			tools, err := r.cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if !strings.Contains(strings.Join(names, ","), "load-skill") {
				t.Errorf("tools = %v, want load-skill (--tools=always)", names)
			}
			res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "lib__hello"}})
			if err != nil || res.IsError {
				t.Fatalf("load-skill: %v %+v", err, res)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "Body of hello.") {
				t.Errorf("load-skill text = %q", text)
			}
			read, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://lib/hello/notes.md"})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "notes\n" {
				t.Errorf("resources/read notes.md = %+v, %v", read, err)
			}
			if ir := r.cs.InitializeResult(); ir.Capabilities.Tools == nil || !ir.Capabilities.Tools.ListChanged {
				t.Errorf("tools capability = %+v, want listChanged without --static", ir.Capabilities.Tools)
			}
			if !strings.Contains(initResult(r).Instructions, "lib__hello") {
				t.Errorf("instructions lack the catalog:\n%s", initResult(r).Instructions)
			}
			r.stop(t)
			if s := r.stderr.String(); !strings.Contains(s, "serving skills over stdio") || strings.Contains(s, "ghp_never_printed") {
				t.Errorf("stderr: want the startup line and never the token:\n%s", s)
			}
		})
	}
}

func initResult(r *running) *mcp.InitializeResult { return r.cs.InitializeResult() }

// TestRunStatic: --static and SKILLJACK_STATIC reach the facade through
// run (the hand-copied wiring of test/inprocess_test.go lost Static): tools
// and prompts do not announce listChanged, on both eras (issue 11 item 8).
func TestRunStatic(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Static."))
	for _, version := range eras {
		for _, c := range []struct {
			name string
			env  map[string]string
			args []string
		}{
			{"flag", nil, []string{"--static", root}},
			{"env", map[string]string{"SKILLJACK_STATIC": "yes"}, []string{root}},
		} {
			t.Run(version+"/"+c.name, func(t *testing.T) {
				r := startRun(t, version, c.env, nil, append([]string{"--tools=always"}, c.args...)...)
				caps := initResult(r).Capabilities
				if caps.Tools == nil || caps.Tools.ListChanged || caps.Prompts == nil || caps.Prompts.ListChanged {
					t.Errorf("capabilities tools=%+v prompts=%+v, want listChanged false with static", caps.Tools, caps.Prompts)
				}
				r.stop(t)
			})
		}
	}
}

// TestRunValidate: run's validate subcommand prints one line per finding
// and fails when a skill was skipped (issue 11 item 8).
func TestRunValidate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	writeFile(t, filepath.Join(root, "bad", "SKILL.md"), "no frontmatter\n")
	var out, errs lockedBuffer
	env := map[string]string{"HOME": t.TempDir()}
	err := run(t.Context(), []string{"validate", root}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errs, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "1 skill(s) skipped") {
		t.Errorf("validate error = %v, want 1 skill(s) skipped", err)
	}
	if s := out.String(); !strings.Contains(s, "ERROR ") || !strings.Contains(s, "bad/SKILL.md") || !strings.Contains(s, "1 skipped") {
		t.Errorf("validate output:\n%s", s)
	}

	out = lockedBuffer{}
	err = run(t.Context(), []string{"validate"}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errs, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "no skill folder given") {
		t.Errorf("validate without a source = %v", err)
	}
}

// TestRunHelp: --help lists every flag of the settings table and exits
// without serving (issue 11 item 4).
func TestRunHelp(t *testing.T) {
	var out lockedBuffer
	err := run(t.Context(), []string{"--help"}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, io.Discard, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range config.SettingsTable() {
		if s.Flag != "" && !strings.Contains(out.String(), s.Flag) {
			t.Errorf("--help lacks %s:\n%s", s.Flag, out.String())
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// notifyGoroutines are the goroutines rjeczalik/notify keeps for the life of
// the process (its watch tree is package state, started at init and on the
// first watch); none belongs to the server.
var notifyGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*nonrecursiveTree).dispatch"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*nonrecursiveTree).dispatch.func1"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*nonrecursiveTree).internal"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*inotify).loop"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*inotify).send"),
}

// notifyTimeout bounds the wait for a file change to reach a client.
const notifyTimeout = 30 * time.Second

// TestShutdownNoLeak: the whole server — pipeline with a live watcher,
// facade, a subscribed client that saw a live update — stops on cancel
// (what SIGTERM does in main) and leaves no goroutine behind. Moved from
// test/inprocess_test.go to run the real wiring (issue 11 item 8).
func TestShutdownNoLeak(t *testing.T) {
	before := goleak.IgnoreCurrent()
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Leak check."))
	writeFile(t, filepath.Join(root, "s", "f.md"), "v1\n")
	updated := make(chan string, 16)
	// A short reconcile backs the watcher up on a loaded machine: this test
	// is about shutdown, not about file events.
	r := startRun(t, legacyVersion, map[string]string{"SKILLJACK_RECONCILE_INTERVAL_MS": "1000"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case updated <- req.Params.URI:
			default:
			}
		},
	}, root)
	if err := r.cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "skill://lib/s/f.md"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "s", "f.md"), "v2\n")
	select {
	case <-updated:
	case <-time.After(notifyTimeout):
		t.Fatalf("no resources/updated\nstderr:\n%s", r.stderr)
	}
	r.cancel()
	r.wait(t)
	r.cs.Close()
	goleak.VerifyNone(t, append([]goleak.Option{before}, notifyGoroutines...)...)
}

// TestRunStdioListenStreamEnds: a 2026-07-28 client that opened a
// subscriptions/listen stream (a list-changed handler) and then goes away
// (its pipes closed) ends run with nil, as any client leaving does: the
// server's last writes to a stdout nobody reads are not a failure.
func TestRunStdioListenStreamEnds(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello", "SKILL.md"), skillBody("hello", "Says hello."))
	client := mcp.NewClient(&mcp.Implementation{Name: "listen-test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	})
	for range 3 {
		r := startRunClient(t, "2026-07-28", client, dir)
		if _, err := r.cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // let the listen stream open
		r.stop(t)
		if s := r.stderr.String(); strings.Contains(s, "level=ERROR") {
			t.Errorf("a client leaving logged an error:\n%s", s)
		}
	}
}

// TestRunClusterNeedsHTTP: --cluster without --http exits 2 and says why
// (issue 16), before serving anything.
func TestRunClusterNeedsHTTP(t *testing.T) {
	var out, errs lockedBuffer
	env := map[string]string{"HOME": t.TempDir()}
	err := run(t.Context(), []string{"--cluster=nats://127.0.0.1:1", t.TempDir()}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errs, func(k string) string { return env[k] })
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "needs the HTTP transport") {
		t.Errorf("run = %v, want exit 2 naming the HTTP transport", err)
	}
}

// TestRunClusterRefusesBadNameOrLease: an unusable --cluster-name or
// --cluster-lease refuses to start (exit 2, naming the value's flag)
// instead of joining the default cluster or using the default lease — a
// mistyped name must not replace another deployment's catalog (issue 16;
// found by a fresh-user trial). Without --cluster they are only warnings.
func TestRunClusterRefusesBadNameOrLease(t *testing.T) {
	for _, bad := range []string{"--cluster-name=stag.ing", "--cluster-lease=100ms", "--cluster-lease=abc", "--cluster="} {
		var out, errs lockedBuffer
		env := map[string]string{"HOME": t.TempDir()}
		args := []string{"--http=0", "--cluster=nats://127.0.0.1:1", bad, t.TempDir()}
		if bad == "--cluster=" { // an empty URL must not start a replica on its own
			args = []string{"--http=0", bad, t.TempDir()}
		}
		err := run(t.Context(), args, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, &errs, func(k string) string { return env[k] })
		var ee *exitError
		flag, _, _ := strings.Cut(bad, "=")
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), flag) || !strings.Contains(err.Error(), "refusing to start") {
			t.Errorf("%s: run = %v, want exit 2 naming %s", bad, err, flag)
		}
	}
	// A malformed NATS URL is a usage error too.
	var ee *exitError
	err := run(t.Context(), []string{"--http=0", "--cluster=not a url", t.TempDir()}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&lockedBuffer{}}, &lockedBuffer{}, func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] })
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("--cluster=not a url: run = %v, want exit 2", err)
	}
	if err := refusedSetting([]config.Warning{{Message: "--cluster-name x is not a cluster name; refusing to start", Refuse: true}}, false); err != nil {
		t.Errorf("validate/list (not serving): refusedSetting = %v, want nil", err)
	}
}
