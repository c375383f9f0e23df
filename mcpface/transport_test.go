package mcpface_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/mcpface"
)

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// reply is one line the server wrote, decoded.
type reply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	line string
}

// stdio is a server session over NewStdioTransport and two pipes.
type stdio struct {
	in    *io.PipeWriter
	lines chan string   // every line written to out, closed when out closes
	ran   chan struct{} // closed when Run returns
	err   error         // Run's result, once ran is closed
	read  chan struct{} // closed when the line reader ends
}

// wait waits for Run to return and returns its result.
func (s *stdio) wait(t *testing.T) error {
	t.Helper()
	waitFor(t, s.ran, "Run to return")
	return s.err
}

// serveStdio runs f's server over NewStdioTransport; out, if non-nil, wraps
// the pipe the server writes to.
func serveStdio(t *testing.T, ctx context.Context, f *mcpface.Facade, wrap func(io.WriteCloser) io.WriteCloser) *stdio {
	t.Helper()
	srv, err := f.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var out io.WriteCloser = outW
	if wrap != nil {
		out = wrap(outW)
	}
	s := &stdio{in: inW, lines: make(chan string, 1000), ran: make(chan struct{}), read: make(chan struct{})}
	go func() {
		defer close(s.ran)
		s.err = srv.Run(ctx, mcpface.NewStdioTransport(inR, out, nil))
	}()
	go func() {
		defer close(s.read)
		defer close(s.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		s.wait(t)
		<-s.read
	})
	return s
}

func (s *stdio) send(t *testing.T, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(s.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatalf("writing to the server: %v", err)
	}
}

// next returns the next line the server wrote that is not a notification.
func (s *stdio) next(t *testing.T) reply {
	t.Helper()
	for {
		line, ok := <-s.lines
		if !ok {
			t.Fatal("server output ended")
		}
		r := decodeReply(t, line)
		if r.Method == "" {
			return r
		}
	}
}

func decodeReply(t *testing.T, line string) reply {
	t.Helper()
	var r reply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("server wrote a line that is not JSON: %q: %v", line, err)
	}
	r.line = line
	return r
}

// TestStdioBadInput feeds lines that the SDK's own stdio transport answers by
// ending the session (hostile tester finding 1): each gets a JSON-RPC error
// and the session keeps serving. It also pins the codes of the SDK's code-0
// errors rewritten on the way out (finding 6).
func TestStdioBadInput(t *testing.T) {
	fx := newFixture(t)
	s := serveStdio(t, t.Context(), newFacade(t, fx.cat, nil), nil)
	deep := `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}`
	for _, tc := range []struct {
		name, line string
		code       int64
		id         string
	}{
		{"not JSON", "this is not json", -32700, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":9,"method":"ping"`, -32700, "null"},
		{"two values", `{"jsonrpc":"2.0","id":9,"method":"ping"} {}`, -32700, "null"},
		{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{"no version", `{"id":"x","method":"ping"}`, -32600, `"x"`},
		{"number", `42`, -32600, "null"},
		{"string", `"hello"`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"batch of junk", `[1,2]`, -32600, "null"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "null"},
		{"method not a string", `{"jsonrpc":"2.0","id":3,"method":3}`, -32600, "3"},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, -32600, "null"},
		{"too deep", deep, -32600, "8"},
		// Finding 6: the SDK rejects these before any middleware runs, with
		// code 0.
		{"request before initialize", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, -32600, "4"},
		{"initialize with null params", `{"jsonrpc":"2.0","id":5,"method":"initialize","params":null}`, -32600, "5"},
		{"initialize with bad params", `{"jsonrpc":"2.0","id":6,"method":"initialize","params":"x"}`, -32602, "6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Blank lines are ignored: the next reply answers tc.line.
			s.send(t, "", "   ", tc.line)
			r := s.next(t)
			if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id {
				t.Errorf("reply to %.60q = %s, want error %d with id %s", tc.line, r.line, tc.code, tc.id)
			}
		})
	}
	s.send(t, initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := s.next(t); string(r.ID) != "1" || r.Result == nil {
		t.Fatalf("initialize after bad input = %s, want a result", r.line)
	}
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := s.next(t); string(r.ID) != "2" || r.Result == nil {
		t.Errorf("tools/list after bad input = %s, want a result", r.line)
	}
	// 2025-11-25 has no batches; the SDK would end the session on one.
	s.send(t, `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	if r := s.next(t); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("batch after initialize = %s, want -32600", r.line)
	}
	// A second initialize is refused by the SDK's handler with a plain error.
	s.send(t, strings.Replace(initLine, `"id":1`, `"id":10`, 1))
	if r := s.next(t); r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("second initialize = %s, want -32600", r.line)
	}
	s.in.Close()
	if err := s.wait(t); err != nil {
		t.Errorf("Run after bad input = %v, want nil", err)
	}
}

// TestStdioDrain writes requests and closes stdin at once: every request must
// be answered before Run returns (hostile tester finding 2: the SDK closed the
// connection at EOF, before in-flight replies were written).
func TestStdioDrain(t *testing.T) {
	fx := newFixture(t)
	const n = 20
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			s := serveStdio(t, t.Context(), newFacade(t, fx.cat, nil), nil)
			lines := []string{initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
			for i := range n {
				method := `"tools/list"`
				if i%2 == 1 {
					method = `"resources/read","params":{"uri":"skill://skills/code-review/SKILL.md"}`
				}
				lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%s}`, i+2, method))
			}
			s.send(t, lines...)
			s.in.Close()
			if err := s.wait(t); err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
			<-s.read
			got := map[string]bool{}
			for line := range s.lines {
				if r := decodeReply(t, line); r.Method == "" {
					if r.Result == nil {
						t.Errorf("reply %s, want a result", line)
					}
					got[string(r.ID)] = true
				}
			}
			for id := 1; id <= n+1; id++ {
				if !got[fmt.Sprint(id)] {
					t.Errorf("no reply to request %d before Run returned (got %d of %d)", id, len(got), n+1)
				}
			}
		})
	}
}

// TestStdioDrainEnds drives the transport's connection directly, with a
// request read and stdin closed: the end of input is held back until the
// request is answered, or until the ctx given to Connect is cancelled, well
// before DrainTimeout (finding 2).
func TestStdioDrainEnds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		finish func(ctx context.Context, cancel context.CancelFunc, conn mcp.Connection) error
	}{
		{"answered", func(ctx context.Context, _ context.CancelFunc, conn mcp.Connection) error {
			id, _ := jsonrpc.MakeID(float64(7))
			return conn.Write(ctx, &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)})
		}},
		{"cancelled", func(_ context.Context, cancel context.CancelFunc, _ mcp.Connection) error {
			cancel()
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			out := &syncBuffer{}
			in := io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n"))
			conn, err := mcpface.NewStdioTransport(in, out, nil).Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if msg, err := conn.Read(t.Context()); err != nil {
				t.Fatalf("Read = %v, %v, want the ping", msg, err)
			}
			eof := make(chan error, 1)
			go func() {
				_, err := conn.Read(t.Context())
				eof <- err
			}()
			select {
			case err := <-eof:
				t.Fatalf("Read = %v before the ping was answered", err)
			default:
			}
			start := time.Now()
			if err := tc.finish(t.Context(), cancel, conn); err != nil {
				t.Fatal(err)
			}
			if err := waitFor(t, eof, "the end of input"); err == nil {
				t.Error("Read at the end of input = nil error")
			}
			if d := time.Since(start); d >= mcpface.DrainTimeout/2 {
				t.Errorf("end of input came %v after %s, want well under DrainTimeout %v", d, tc.name, mcpface.DrainTimeout)
			}
		})
	}
}

// syncBuffer is an io.WriteCloser safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Close() error { return nil }

// byteWriter writes each byte with its own call to the shared buffer, letting
// other goroutines run in between, so that two unsynchronised writers would
// interleave their bytes.
type byteWriter struct {
	w  io.WriteCloser
	mu sync.Mutex // guards nothing but the single-byte writes
}

func (b *byteWriter) Write(p []byte) (int, error) {
	for i := range p {
		b.mu.Lock()
		_, err := b.w.Write(p[i : i+1])
		b.mu.Unlock()
		if err != nil {
			return i, err
		}
		runtime.Gosched()
	}
	return len(p), nil
}

func (b *byteWriter) Close() error { return b.w.Close() }

// TestStdioNoInterleave mixes requests whose replies the SDK writes with bad
// lines the transport answers itself: every output line must stay one whole
// JSON message (finding 1: one mutex for both writers).
func TestStdioNoInterleave(t *testing.T) {
	fx := newFixture(t)
	s := serveStdio(t, t.Context(), newFacade(t, fx.cat, nil), func(w io.WriteCloser) io.WriteCloser { return &byteWriter{w: w} })
	const n = 15
	lines := []string{initLine, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/list"}`, i+2), "not json", `{"jsonrpc":"1.0","id":"x"}`)
	}
	s.send(t, lines...)
	s.in.Close()
	s.wait(t)
	<-s.read
	var results, errs int
	for line := range s.lines {
		r := decodeReply(t, line)
		switch {
		case r.Method != "":
		case r.Result != nil:
			results++
		case r.Error != nil:
			errs++
		}
	}
	if results != n+1 || errs != 2*n {
		t.Errorf("got %d results and %d errors, want %d and %d", results, errs, n+1, 2*n)
	}
}

// TestCodedErrors checks that a plain error from a handler leaves the
// receiving middleware with a JSON-RPC code (finding 6): the SDK refuses a
// second initialize with a plain error, which went out with code 0.
func TestCodedErrors(t *testing.T) {
	fx := newFixture(t)
	f := newFacade(t, fx.cat, nil)
	srv, err := f.Server(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		ss.Wait()
	})
	roundTrip := func(line string) reply {
		t.Helper()
		msg, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Write(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
		for {
			got, err := conn.Read(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			b, err := jsonrpc.EncodeMessage(got)
			if err != nil {
				t.Fatal(err)
			}
			if r := decodeReply(t, string(b)); r.Method == "" {
				return r
			}
		}
	}
	if r := roundTrip(initLine); r.Result == nil {
		t.Fatalf("initialize = %s", r.line)
	}
	r := roundTrip(strings.Replace(initLine, `"id":1`, `"id":2`, 1))
	if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "initialize") {
		t.Errorf("second initialize = %s, want -32600", r.line)
	}
}
