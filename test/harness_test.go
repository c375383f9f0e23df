package test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two protocol eras every end-to-end test runs on.
const (
	legacyVersion = "2025-11-25" // initialize handshake
	modernVersion = "2026-07-28" // server/discover, per-request _meta
)

var eras = []string{legacyVersion, modernVersion}

// binPath is the server binary built once by TestMain.
var binPath string

func TestMain(m *testing.M) {
	if spec := os.Getenv(natsChildEnv); spec != "" {
		natsChildMain(spec) // this process is a nats-server for TestClusterNATSRestart
	}
	dir, err := os.MkdirTemp("", "skilljack-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "skilljack-mcp")
	build := exec.Command("go", "build", "-o", binPath, "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building skilljack-mcp:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a child's
// stderr and reads of the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is one running skilljack-mcp process with a connected client.
type server struct {
	t      *testing.T
	cs     *mcp.ClientSession
	stderr *syncBuffer
	notes  *notes
	closed bool
	// startupInstructions marks a session initialized before the skills
	// under test arrived: servedEverywhere does not look for them in its
	// instructions.
	startupInstructions bool
}

// skillEntry is a skills/list entry (SEP2640-R26..R37).
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type skillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// skillsResult is the union of the skills/list, skills/get and
// resources/directory/read results; Raw keeps every key for exact checks.
type skillsResult struct {
	mcp.ResultBase
	Skills     []skillEntry    `json:"skills"`
	Skill      *skillEntry     `json:"skill"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	TTLMs      *int            `json:"ttlMs,omitempty"`
	CacheScope *string         `json:"cacheScope,omitempty"`
	ResultType string          `json:"resultType,omitempty"`
	Raw        map[string]json.RawMessage
}

func (r *skillsResult) UnmarshalJSON(b []byte) error {
	type plain skillsResult
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = skillsResult(p)
	return json.Unmarshal(b, &r.Raw)
}

// notes collects the notifications a client received.
type notes struct {
	tools, prompts, resources chan struct{}
	updated                   chan string
	acks                      chan struct{}
}

func newNotes() *notes {
	return &notes{
		tools: make(chan struct{}, 1000), prompts: make(chan struct{}, 1000), resources: make(chan struct{}, 1000),
		updated: make(chan string, 1000), acks: make(chan struct{}, 1000),
	}
}

// startServer runs the binary with args in dir (the working directory) and
// connects a go-sdk client speaking version. env entries are added to a
// clean environment whose HOME is an empty temp folder, so no user config is
// read.
func startServer(t *testing.T, version, dir string, env []string, args ...string) *server {
	t.Helper()
	return startServerNotes(t, version, dir, env, nil, args...)
}

// startServerNotes is startServer with a client that records notifications
// into n (nil: none). On 2026-07-28 the client's list_changed listen stream
// is acknowledged before it returns, so nothing sent after it is missed.
func startServerNotes(t *testing.T, version, dir string, env []string, n *notes, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := newTestClient(t, n)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to skilljack-mcp %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	s := &server{t: t, cs: cs, stderr: stderr, notes: n}
	t.Cleanup(func() { s.close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol version = %q, want %q", got, version)
	}
	if n != nil && version == modernVersion {
		wait(t, n.acks, "the list_changed listen stream acknowledgement", stderr)
	}
	return s
}

// newTestClient returns a client with the skills methods (skills/list,
// skills/get, resources/directory/read) that records notifications into n
// (nil: none), listen acknowledgements included.
func newTestClient(t *testing.T, n *notes) *mcp.Client {
	t.Helper()
	var opts *mcp.ClientOptions
	if n != nil {
		opts = &mcp.ClientOptions{
			ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { offer(n.tools, struct{}{}) },
			PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { offer(n.prompts, struct{}{}) },
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { offer(n.resources, struct{}{}) },
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				offer(n.updated, r.Params.URI)
			},
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "skilljack-e2e", Version: "v0"}, opts)
	if n != nil {
		client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "notifications/subscriptions/acknowledged" {
					offer(n.acks, struct{}{})
				}
				return next(ctx, method, req)
			}
		})
	}
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		if err := mcp.AddSendingCustomMethod[*skillsParams, *skillsResult](client, m); err != nil {
			t.Fatal(err)
		}
	}
	return client
}

// offer sends v on ch unless ch is full: a notification handler must never
// block the client's reader.
func offer[T any](ch chan T, v T) {
	select {
	case ch <- v:
	default:
	}
}

// wait receives one value from ch within the generous timeout, or fails
// the test with stderr.
func wait[T any](t *testing.T, ch <-chan T, what string, stderr *syncBuffer) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(notifyTimeout):
		t.Fatalf("no %s within %v; server stderr:\n%s", what, notifyTimeout, stderr.String())
		panic("unreachable")
	}
}

// notifyTimeout bounds every wait for a notification: far above the 500 ms
// watcher debounce, so a slow CI machine does not fail a correct server.
const notifyTimeout = 15 * time.Second

// subscribe subscribes to uri and, on 2026-07-28, waits for the listen
// stream's acknowledgement.
func (s *server) subscribe(uri string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
	defer cancel()
	if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		s.t.Fatalf("subscribing to %s: %v", uri, err)
	}
	if s.cs.InitializeResult().ProtocolVersion == modernVersion {
		wait(s.t, s.notes.acks, "subscription acknowledgement for "+uri, s.stderr)
	}
}

// close ends the session (closing the child's stdin) and returns its stderr.
func (s *server) close() string {
	if !s.closed {
		s.closed = true
		if err := s.cs.Close(); err != nil {
			s.t.Logf("closing session: %v", err)
		}
	}
	return s.stderr.String()
}

func (s *server) custom(method string, p *skillsParams) (*skillsResult, error) {
	ctx, cancel := context.WithTimeout(s.t.Context(), 60*time.Second)
	defer cancel()
	return mcp.CallCustomMethod[*skillsParams, *skillsResult](ctx, s.cs, method, p)
}

// listAll walks every skills/list page.
func (s *server) listAll() []skillEntry {
	s.t.Helper()
	var all []skillEntry
	cursor := ""
	for range 10000 {
		res, err := s.custom("skills/list", &skillsParams{Cursor: cursor})
		if err != nil {
			s.t.Fatalf("skills/list(cursor %q): %v", cursor, err)
		}
		all = append(all, res.Skills...)
		if res.NextCursor == "" {
			return all
		}
		cursor = res.NextCursor
	}
	s.t.Fatal("skills/list never ended")
	return nil
}

// readBytes reads uri and returns the bytes of its single content item.
func (s *server) readBytes(uri string) ([]byte, *mcp.ResourceContents, error) {
	ctx, cancel := context.WithTimeout(s.t.Context(), 60*time.Second)
	defer cancel()
	res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, nil, err
	}
	if len(res.Contents) != 1 {
		return nil, nil, fmt.Errorf("resources/read %s: %d contents, want 1", uri, len(res.Contents))
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, c, nil
	}
	return []byte(c.Text), c, nil
}

func (s *server) callTool(name string, args map[string]any) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 60*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		s.t.Fatalf("tools/call %s %v: %v", name, args, err)
	}
	return res
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// rpcCode returns the JSON-RPC error code carried by err, or 0.
func rpcCode(err error) int64 {
	var w *jsonrpc.Error
	if errors.As(err, &w) {
		return w.Code
	}
	return 0
}

// textOf joins the text items of a tool result.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
