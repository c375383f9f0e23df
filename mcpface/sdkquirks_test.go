package mcpface

// These tests run the real go-sdk, without the facade, and pin each text and
// behaviour that sdkquirks.go relies on. When one fails after an SDK
// upgrade, the workaround it pins must be revisited, not the test relaxed.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	quirkInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	// quirkMeta is the _meta of a 2026-07-28 request.
	quirkMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
)

// seen records what the receiving middlewares of a bare server saw: each
// method that reached them and the error the SDK's handler returned.
type seen struct {
	mu      sync.Mutex
	methods []string
	errs    map[string]error
}

func (s *seen) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.methods = append(s.methods, method)
		if err != nil {
			s.errs[method] = err
		}
		return res, err
	}
}

func (s *seen) reached(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.methods, method)
}

func (s *seen) err(method string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[method]
}

// bareServer is a go-sdk server with one tool, one prompt, one resource, a
// subscribe handler and a recording middleware, and nothing of the facade.
func bareServer(t *testing.T, opts *mcp.ServerOptions) (*mcp.Server, *seen) {
	t.Helper()
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	opts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	opts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0"}, opts)
	mcp.AddTool(srv, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	for _, u := range []string{"test://a", "test://b"} {
		srv.AddResource(&mcp.Resource{URI: u, Name: u}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	}
	s := &seen{errs: make(map[string]error)}
	srv.AddReceivingMiddleware(s.middleware)
	return srv, s
}

// rawConn is the client end of an in-memory connection to a server,
// speaking raw JSON-RPC.
type rawConn struct {
	t    *testing.T
	conn mcp.Connection
	ss   *mcp.ServerSession
}

func connectRaw(t *testing.T, srv *mcp.Server) *rawConn {
	t.Helper()
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
	return &rawConn{t: t, conn: conn, ss: ss}
}

func (c *rawConn) send(line string) {
	c.t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(line))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.Write(c.t.Context(), msg); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) next() jsonrpc.Message {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 10*time.Second)
	defer cancel()
	msg, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("reading from the server: %v", err)
	}
	return msg
}

// call sends line and returns the response, skipping notifications.
func (c *rawConn) call(line string) *jsonrpc.Response {
	c.t.Helper()
	c.send(line)
	for {
		if r, ok := c.next().(*jsonrpc.Response); ok {
			return r
		}
	}
}

// initialize runs the 2025-11-25 handshake.
func (c *rawConn) initialize() {
	c.t.Helper()
	if r := c.call(quirkInit); r.Error != nil {
		c.t.Fatalf("initialize: %v", r.Error)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// wireErr returns the JSON-RPC error of r, or nil.
func wireErr(r *jsonrpc.Response) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(r.Error, &we) {
		return we
	}
	return nil
}

// uncodedTrigger is one case of [sdkUncoded] produced on the real SDK: the
// site where the error surfaced, the code it carries there and its text.
type uncodedTrigger func(t *testing.T) (site uncodedSite, code int64, msg string)

// inMemory triggers an error over an in-memory connection: setup runs
// first, line is the request whose answer is pinned. The site is
// siteHandler when the error passed the receiving middlewares as a plain
// error, siteStdio when it never reached them.
func inMemory(setup func(*rawConn), line string) uncodedTrigger {
	return func(t *testing.T) (uncodedSite, int64, string) {
		srv, s := bareServer(t, nil)
		c := connectRaw(t, srv)
		if setup != nil {
			setup(c)
		}
		var m struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		r := c.call(line)
		we := wireErr(r)
		if we == nil {
			t.Fatalf("%s answered %+v, want an error", m.Method, r)
		}
		site := siteStdio
		if s.reached(m.Method) {
			site = siteHandler
			var coded *jsonrpc.Error
			if err := s.err(m.Method); errors.As(err, &coded) {
				t.Errorf("the SDK handed the middlewares a coded error %v for %s, want a plain one", err, m.Method)
			}
		}
		return site, we.Code, we.Message
	}
}

// overHTTP triggers an error from the SDK's stateless streamable handler;
// the site is siteHTTP when the answer is plain text, and the code -1.
func overHTTP(header http.Header, body string) uncodedTrigger {
	return func(t *testing.T) (uncodedSite, int64, string) {
		srv, _ := bareServer(t, nil)
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header = header
		h.ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || rec.Code < 400 {
			t.Fatalf("SDK answered %d %s %q, want a plain-text error", rec.Code, ct, rec.Body)
		}
		return siteHTTP, -1, strings.TrimSpace(rec.Body.String())
	}
}

func legacyHeader() http.Header {
	return http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2025-11-25"},
	}
}

func modernHeader(method string) http.Header {
	h := legacyHeader()
	h.Set("Mcp-Protocol-Version", eraModern)
	h.Set("Mcp-Method", method)
	return h
}

// TestSDKUncodedErrors triggers every case of [sdkUncoded] on go-sdk and
// checks that the SDK still sends it without a code, at the row's site, in
// the pinned text, and that the table gives it the row's code (and no
// earlier row matches first).
func TestSDKUncodedErrors(t *testing.T) {
	cases := map[string]struct {
		trigger uncodedTrigger
		want    string
		prefix  bool // want is the SDK's part; the rest is the JSON decoder's
	}{
		"initialize params not an object": {
			trigger: inMemory(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":"x"}`),
			want:    `handling 'initialize': unmarshaling "\"x\"" into a *mcp.initializeParamsV2: `,
			prefix:  true,
		},
		"initialize params null": {
			trigger: inMemory(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}`),
			want:    `handling 'initialize': missing required "params"`,
		},
		"request before initialize": {
			trigger: inMemory(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
			want:    `method "tools/list" is invalid during session initialization`,
		},
		"second initialize": {
			trigger: inMemory((*rawConn).initialize, strings.Replace(quirkInit, `"id":1`, `"id":2`, 1)),
			want:    `duplicate "initialize" received`,
		},
		"unknown method over HTTP": {
			trigger: overHTTP(legacyHeader(), `{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`),
			want:    `JSON RPC not handled: "nope/nope" unsupported`,
		},
	}
	for _, row := range sdkUncoded {
		t.Run(row.name, func(t *testing.T) {
			tc, ok := cases[row.name]
			if !ok {
				t.Fatalf("sdkUncoded row %q has no trigger in this test", row.name)
			}
			site, code, msg := tc.trigger(t)
			if site != row.site {
				t.Errorf("SDK error %q surfaced at site %d, want %d", msg, site, row.site)
			}
			if code > 0 || (code < 0 && site != siteHTTP) {
				t.Errorf("SDK error %q carries code %d, want none", msg, code)
			}
			if match := tc.prefix && strings.HasPrefix(msg, tc.want) || msg == tc.want; !match {
				t.Errorf("SDK message = %q, want %q (prefix: %t)", msg, tc.want, tc.prefix)
			}
			for _, r := range sdkUncoded {
				if r.site == row.site && strings.Contains(msg, r.fragment) {
					if r.name != row.name {
						t.Errorf("SDK message %q is matched first by row %q, want %q", msg, r.name, row.name)
					}
					break
				}
			}
			if got, ok := uncodedCode(row.site, msg); !ok || got != row.code {
				t.Errorf("uncodedCode(%d, %q) = %d, %t; want %d, true", row.site, msg, got, ok, row.code)
			}
		})
	}
}

// TestSDKCodesParamsErrors pins why [sdkUncoded] has no row for malformed
// cursors or params: go-sdk v1.8.0 answers them -32602 itself, in both eras,
// so the middlewares see a coded error or none.
func TestSDKCodesParamsErrors(t *testing.T) {
	for _, era := range []string{"2025-11-25", eraModern} {
		t.Run(era, func(t *testing.T) {
			srv, s := bareServer(t, nil)
			c := connectRaw(t, srv)
			meta := ""
			if era == eraModern {
				meta = "," + quirkMeta
			} else {
				c.initialize()
			}
			for i, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
				r := c.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"cursor":"not base64!"%s}}`, 10+i, method, meta))
				if we := wireErr(r); we == nil || we.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("%s with a bad cursor = %+v, want -32602", method, r.Error)
				}
				var we *jsonrpc.Error
				if err := s.err(method); !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("%s with a bad cursor reached the middlewares with %v, want a coded -32602", method, err)
				}
			}
			r := c.call(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":"x"}`)
			if we := wireErr(r); we == nil || we.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("tools/call with params \"x\" = %+v, want -32602", r.Error)
			}
		})
	}
}

// TestSDKEraDetection checks that [modernParams] and [modernVersion] decide
// the era as go-sdk does: in memory, by whether the SDK serves a request
// without initialize; over HTTP, by the status of a -32602 answer (400 on
// 2026-07-28, SEP-2575, else 200), which the HTTP handler imitates.
func TestSDKEraDetection(t *testing.T) {
	for _, v := range []string{"2025-11-25", eraModern} {
		if !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			t.Errorf("SupportedProtocolVersions() = %v, want it to hold %s", mcp.SupportedProtocolVersions(), v)
		}
	}
	for _, tc := range []struct {
		name, meta string
	}{
		{"no _meta", ``},
		{"2025-11-25", `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`},
		{"2026-07-28", `,` + quirkMeta},
		{"a later version", `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`},
		{"not a string", `,"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}`},
	} {
		t.Run("in memory/"+tc.name, func(t *testing.T) {
			srv, _ := bareServer(t, nil)
			c := connectRaw(t, srv)
			params := `{"name":"p"` + tc.meta + `}`
			r := c.call(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":` + params + `}`)
			we := wireErr(r)
			sdkModern := we == nil || !strings.Contains(we.Message, "invalid during session initialization")
			var p mcp.GetPromptParams
			if err := json.Unmarshal([]byte(params), &p); err != nil {
				t.Fatal(err)
			}
			if got := modernParams(&p); got != sdkModern {
				t.Errorf("modernParams(%s) = %t; the SDK answered %+v (modern: %t)", params, got, r.Error, sdkModern)
			}
		})
	}
	if modernParams((*mcp.GetPromptParams)(nil)) || modernParams(nil) {
		t.Error("modernParams(nil) = true, want false")
	}
	for _, tc := range []struct {
		version string
		header  http.Header
		meta    string
	}{
		{"2025-11-25", legacyHeader(), ""},
		{eraModern, modernHeader("tools/list"), "," + quirkMeta},
	} {
		t.Run("HTTP/"+tc.version, func(t *testing.T) {
			srv, _ := bareServer(t, nil)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"not base64!"`+tc.meta+`}}`))
			req.Header = tc.header
			h.ServeHTTP(rec, req)
			var body struct {
				Error *jsonrpc.Error `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == nil || body.Error.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("bad cursor over HTTP = %d %q, want a -32602 body", rec.Code, rec.Body)
			}
			want := http.StatusOK
			if modernVersion(tc.version) {
				want = http.StatusBadRequest
			}
			if rec.Code != want {
				t.Errorf("-32602 on %s: status %d; modernVersion(%q) = %t says %d", tc.version, rec.Code, tc.version, modernVersion(tc.version), want)
			}
		})
	}
}

// ioSession serves srv over an [mcp.IOTransport], the SDK's own stdio
// framing, and returns a writer of lines, the lines written back and a
// channel closed when the session ends.
func ioSession(t *testing.T, srv *mcp.Server) (send func(string), lines <-chan string, ended <-chan struct{}) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(t.Context(), &mcp.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			out <- sc.Text()
		}
		close(out)
	}()
	done := make(chan struct{})
	go func() {
		ss.Wait()
		outW.Close()
		close(done)
	}()
	// One writer keeps the lines in order; the pipe blocks until the SDK
	// reads, which it stops doing once the session ends.
	in := make(chan string, 16)
	go func() {
		for l := range in {
			if _, err := inW.Write([]byte(l + "\n")); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(in)
		inW.Close()
		ss.Close()
		<-done
	})
	send = func(line string) { in <- line }
	return send, out, done
}

// TestSDKStdioEndsConnection pins the input on which go-sdk's IOTransport
// ends the session, which the stdio wire refuses line by line instead: a
// message nested deeper than [maxDepth] (as [depth] counts it), and a batch
// once [batchlessVersion] or later is negotiated.
func TestSDKStdioEndsConnection(t *testing.T) {
	deep := func(d int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", d-2) + strings.Repeat("]", d-2) + `}}`
	}
	initAt := func(v string) []string {
		return []string{
			strings.Replace(quirkInit, "2025-11-25", v, 1),
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		}
	}
	batch := `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	for _, tc := range []struct {
		name     string
		setup    []string
		line     string
		depth    int // of line
		wantEnds bool
	}{
		{"depth at the limit", nil, deep(maxDepth), maxDepth, false},
		{"depth over the limit", nil, deep(maxDepth + 1), maxDepth + 1, true},
		{"batch on 2025-03-26", initAt("2025-03-26"), batch, 2, false},
		{"batch on " + batchlessVersion, initAt(batchlessVersion), batch, 2, true},
		{"batch on 2025-11-25", initAt("2025-11-25"), batch, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := depth([]byte(tc.line)); got != tc.depth {
				t.Fatalf("depth(%.40q…) = %d, want %d", tc.line, got, tc.depth)
			}
			srv, _ := bareServer(t, nil)
			send, lines, ended := ioSession(t, srv)
			for _, l := range tc.setup {
				send(l)
				if strings.Contains(l, `"id"`) {
					<-lines
				}
			}
			send(tc.line)
			select {
			case l, ok := <-lines:
				if tc.wantEnds && ok {
					t.Errorf("the SDK answered %.80q, want it to end the session", l)
				}
				if !tc.wantEnds && !ok {
					t.Error("the SDK ended the session, want an answer")
				}
			case <-ended:
				if !tc.wantEnds {
					t.Error("the SDK ended the session, want an answer")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer and no end of session")
			}
		})
	}
}

// TestSDKOwnHandler checks, in both eras, that [captureHandler] gets the
// SDK's own handler when the middlewares are added, and that
// [unsubscribeInSDK] through it stops resources/updated for that URI only;
// on 2026-07-28 also that the acknowledgement of a listen stream passes the
// sending middlewares with the listen request's context and carries its id
// under [mcp.MetaKeySubscriptionID] ([methodAcknowledged]).
func TestSDKOwnHandler(t *testing.T) {
	type ctxKey struct{}
	for _, era := range []string{"2025-11-25", eraModern} {
		t.Run(era, func(t *testing.T) {
			srv, _ := bareServer(t, nil)
			var sdk mcp.MethodHandler
			srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					return next(context.WithValue(ctx, ctxKey{}, method), method, req)
				}
			}, captureHandler(&sdk))
			if sdk == nil {
				t.Fatal("captureHandler: no handler captured by AddReceivingMiddleware")
			}
			acked := make(chan any, 1)
			srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == methodAcknowledged {
						acked <- ctx.Value(ctxKey{})
					}
					return next(ctx, method, req)
				}
			})
			c := connectRaw(t, srv)
			if era == eraModern {
				c.send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://a","test://b"]},` + quirkMeta + `}}`)
				n, ok := c.next().(*jsonrpc.Request)
				if !ok || n.Method != methodAcknowledged || !strings.Contains(string(n.Params), fmt.Sprintf(`%q:7`, mcp.MetaKeySubscriptionID)) {
					t.Fatalf("first message after subscriptions/listen = %+v, want %s with %s 7", n, methodAcknowledged, mcp.MetaKeySubscriptionID)
				}
				if got := <-acked; got != "subscriptions/listen" {
					t.Errorf("%s passed the sending middlewares with context of %v, want subscriptions/listen", methodAcknowledged, got)
				}
			} else {
				c.initialize()
				for i, u := range []string{"test://a", "test://b"} {
					if r := c.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":%q}}`, 10+i, u)); r.Error != nil {
						t.Fatalf("subscribe %s: %v", u, r.Error)
					}
				}
			}
			if err := unsubscribeInSDK(t.Context(), sdk, c.ss, "test://a"); err != nil {
				t.Fatal(err)
			}
			for _, u := range []string{"test://a", "test://b"} {
				if err := srv.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil {
					t.Fatal(err)
				}
			}
			n, ok := c.next().(*jsonrpc.Request)
			if !ok || n.Method != "notifications/resources/updated" || !strings.Contains(string(n.Params), `"test://b"`) {
				t.Errorf("first notice after dropping test://a = %+v, want resources/updated for test://b", n)
			}
		})
	}
}

// recordHandler keeps the records it handles.
type recordHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordHandler) WithGroup(string) slog.Handler      { return h }

// TestSDKRunCancelledLog pins the Error record go-sdk's Server.Run writes
// when its context is cancelled ([sdkRunCancelled]), and that quietHandler
// lowers it to Debug.
func TestSDKRunCancelledLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quiet bool
		want  slog.Level
	}{
		{"SDK", false, slog.LevelError},
		{"quietHandler", true, slog.LevelDebug},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordHandler{}
			var h slog.Handler = rec
			if tc.quiet {
				h = quietHandler{rec}
			}
			srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "0"}, &mcp.ServerOptions{Logger: slog.New(h)})
			st, ct := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx, st) }()
			conn, err := ct.Connect(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c := &rawConn{t: t, conn: conn}
			if r := c.call(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); r.Error != nil {
				t.Fatalf("ping: %v", r.Error)
			}
			cancel() // Run is serving: the ping was answered
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Run after cancel = %v, want context.Canceled", err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			i := slices.IndexFunc(rec.records, func(r slog.Record) bool { return r.Message == sdkRunCancelled })
			if i < 0 {
				var msgs []string
				for _, r := range rec.records {
					msgs = append(msgs, r.Level.String()+" "+r.Message)
				}
				t.Fatalf("no %q record; the SDK logged %q", sdkRunCancelled, msgs)
			}
			if got := rec.records[i].Level; got != tc.want {
				t.Errorf("%q logged at %v, want %v", sdkRunCancelled, got, tc.want)
			}
		})
	}
}
