package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// uiMIMEType is the MCP Apps view media type (APPS-R02).
const uiMIMEType = "text/html;profile=mcp-app"

// rpcError is a JSON-RPC error answer, passed on to the view as it came.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

// mcpServer is the skilljack-mcp binary under test, spoken to over stdio by a
// minimal hand-written MCP client (newline-delimited JSON-RPC, protocol
// 2025-11-25), independent of the go-sdk the server is built on. It declares
// the MCP Apps extension, as a UI host does.
type mcpServer struct {
	cmd          *exec.Cmd
	stdin        io.WriteCloser
	done         chan struct{}
	instructions string

	mu      sync.Mutex
	nextID  int
	pending map[string]chan rpcMessage
	stderr  bytes.Buffer
	notes   []string // notification methods received, in order
}

// startServer runs bin with HOME=home and args, and initializes a session.
// The process is stopped when the test ends.
func startServer(t *testing.T, bin, home string, args ...string) *mcpServer {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+home, "USERPROFILE="+home, "SKILLS_DIR=", "GITHUB_TOKEN=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &mcpServer{cmd: cmd, stdin: stdin, done: make(chan struct{}), pending: map[string]chan rpcMessage{}}
	cmd.Stderr = lockedWriter{&s.mu, &s.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go s.read(stdout)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		if t.Failed() {
			t.Logf("server stderr (%s):\n%s", home, s.Stderr())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var init struct {
		Instructions string `json:"instructions"`
	}
	err = s.call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"clientInfo":      map[string]any{"name": "skilljack-browser-test", "version": "1.0.0"},
		"capabilities": map[string]any{"extensions": map[string]any{
			"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{uiMIMEType}},
		}},
	}, &init)
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, s.Stderr())
	}
	s.instructions = init.Instructions
	if err := s.send(rpcMessage{Method: "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	return s
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Stderr returns what the server wrote to stderr so far.
func (s *mcpServer) Stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func (s *mcpServer) read(r io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m rpcMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request from the server
			if m.Method == "ping" {
				s.send(rpcMessage{ID: m.ID, Result: json.RawMessage(`{}`)})
			} else {
				s.send(rpcMessage{ID: m.ID, Error: &rpcError{Code: -32601, Message: "not supported by the test client"}})
			}
		case m.Method != "":
			s.mu.Lock()
			s.notes = append(s.notes, m.Method)
			s.mu.Unlock()
		default:
			s.mu.Lock()
			ch := s.pending[string(m.ID)]
			delete(s.pending, string(m.ID))
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (s *mcpServer) send(m rpcMessage) error {
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		rpcMessage
	}{"2.0", m})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

// raw sends one request and returns its raw result, or the *rpcError.
func (s *mcpServer) raw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan rpcMessage, 1)
	s.mu.Lock()
	s.nextID++
	id := json.RawMessage(fmt.Sprint(s.nextID))
	s.pending[string(id)] = ch
	s.mu.Unlock()
	if err := s.send(rpcMessage{ID: id, Method: method, Params: p}); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-s.done:
		return nil, errors.New("the server exited")
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// call sends one request and decodes its result into out (when not nil).
func (s *mcpServer) call(ctx context.Context, method string, params, out any) error {
	res, err := s.raw(ctx, method, params)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(res, out)
}

// skillURIs returns every skill URI of skills/list, all pages.
func (s *mcpServer) skillURIs(ctx context.Context) ([]string, error) {
	var uris []string
	cursor := ""
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Skills     []struct{ URI string } `json:"skills"`
			NextCursor string                 `json:"nextCursor"`
		}
		if err := s.call(ctx, "skills/list", params, &page); err != nil {
			return nil, err
		}
		for _, sk := range page.Skills {
			uris = append(uris, sk.URI)
		}
		if page.NextCursor == "" {
			return uris, nil
		}
		cursor = page.NextCursor
	}
}
