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
	closed bool
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

// startServer runs the binary with args in dir (the working directory) and
// connects a go-sdk client speaking version. env entries are added to a
// clean environment whose HOME is an empty temp folder, so no user config is
// read.
func startServer(t *testing.T, version, dir string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "skilljack-e2e", Version: "v0"}, nil)
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		if err := mcp.AddSendingCustomMethod[*skillsParams, *skillsResult](client, m); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to skilljack-mcp %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	s := &server{t: t, cs: cs, stderr: stderr}
	t.Cleanup(func() { s.close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol version = %q, want %q", got, version)
	}
	return s
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
