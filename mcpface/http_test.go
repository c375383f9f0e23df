package mcpface_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// serveHTTP serves f's HTTP handler on a loopback httptest server.
func serveHTTP(t testing.TB, f *mcpface.Facade, opts *mcpface.HTTPOptions) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(f.HTTPHandler(opts))
	t.Cleanup(ts.Close)
	return ts
}

// exchange is one HTTP round trip seen by a recordingTransport.
type exchange struct {
	method, contentType string
	status              int
}

// recordingTransport records every HTTP exchange of a client.
type recordingTransport struct {
	mu  sync.Mutex
	got []exchange
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		rt.mu.Lock()
		rt.got = append(rt.got, exchange{r.Method, resp.Header.Get("Content-Type"), resp.StatusCode})
		rt.mu.Unlock()
	}
	return resp, err
}

func (rt *recordingTransport) exchanges() []exchange {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return slices.Clone(rt.got)
}

// connectHTTP connects a go-sdk client speaking version to ts/mcp over
// StreamableClientTransport; rt, if not nil, records its HTTP exchanges.
func connectHTTP(t testing.TB, ts *httptest.Server, version string, copts *mcp.ClientOptions, rt *recordingTransport) *mcp.ClientSession {
	t.Helper()
	hc := ts.Client()
	if rt != nil {
		hc = &http.Client{Transport: rt}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "0"}, copts)
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		if err := mcp.AddSendingCustomMethod[*rawParams, *rawResult](client, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol = %s, want %s", got, version)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPSurface serves the core surface over stateless HTTP on both eras,
// with listChanged and subscribe false.
func TestHTTPSurface(t *testing.T) {
	fx := newFixture(t)
	cr := fx.skills["skills__code-review"]
	md, _ := os.ReadFile(filepath.Join(cr.Dir, "SKILL.md"))
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), nil)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			ctx := t.Context()
			cs := connectHTTP(t, ts, era, nil, nil)
			init := cs.InitializeResult()
			if init.ServerInfo == nil || init.ServerInfo.Name != "skilljack-mcp" || init.ServerInfo.Version != "1.2.3" {
				t.Errorf("serverInfo = %+v, want skilljack-mcp 1.2.3", init.ServerInfo)
			}
			got, _ := json.Marshal(init.Capabilities)
			var caps map[string]any
			json.Unmarshal(got, &caps)
			wantCaps := map[string]any{
				"completions": map[string]any{},
				"extensions":  map[string]any{"io.modelcontextprotocol/skills": map[string]any{"directoryRead": true}},
				"prompts":     map[string]any{},
				"resources":   map[string]any{},
				"tools":       map[string]any{},
			}
			if diff := cmp.Diff(wantCaps, caps); diff != "" {
				t.Errorf("capabilities mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(init.Instructions, "<name>skills__code-review</name>") {
				t.Errorf("instructions lack the catalog:\n%s", init.Instructions)
			}

			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var tools []string
			for _, tool := range lt.Tools {
				tools = append(tools, tool.Name)
			}
			if diff := cmp.Diff([]string{"load-skill", "skill-resource"}, tools); diff != "" {
				t.Errorf("tools/list mismatch (-want +got):\n%s", diff)
			}
			if text := textOf(t, callTool(t, cs, "load-skill", map[string]any{"name": "skills__code-review"}).Content[0]); text != string(md) {
				t.Errorf("load-skill = %q, want %q", text, md)
			}
			if text := textOf(t, callTool(t, cs, "skill-resource", map[string]any{"skill": "skills__code-review", "path": "templates/email.md"}).Content[0]); text != "Dear customer,\n" {
				t.Errorf("skill-resource = %q", text)
			}

			lp, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var prompts []string
			for _, p := range lp.Prompts {
				prompts = append(prompts, p.Name)
			}
			slices.Sort(prompts)
			if diff := cmp.Diff([]string{"skill", "skills__My-First-Skill", "skills__code-review", "skills__escape", "skills__many"}, prompts); diff != "" {
				t.Errorf("prompts/list mismatch (-want +got):\n%s", diff)
			}
			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill", Arguments: map[string]string{"name": "skills__code-review"}})
			if err != nil {
				t.Fatal(err)
			}
			if er, ok := gp.Messages[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource.Text != string(md) {
				t.Errorf("prompts/get skill = %+v", gp.Messages[0].Content)
			}

			res := listAllResources(t, cs)
			if res[events.IndexURI] == nil || res[emailURI] == nil {
				t.Errorf("resources/list lacks %s or %s: %d resources", events.IndexURI, emailURI, len(res))
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: emailURI})
			if err != nil {
				t.Fatal(err)
			}
			if rr.Contents[0].Text != "Dear customer,\n" {
				t.Errorf("resources/read %s = %+v", emailURI, rr.Contents[0])
			}
			// An unknown URI is -32602 (on 2026-07-28 with HTTP 400, which
			// the client still reads as the JSON-RPC error).
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://nope/SKILL.md"}); wireCode(err) != -32602 {
				t.Errorf("resources/read unknown: %v, want -32602", err)
			}

			m, err := call(t, cs, "skills/list", nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, s := range m["skills"].([]any) {
				uris = append(uris, s.(map[string]any)["uri"].(string))
			}
			if diff := cmp.Diff([]string{cr.URI, "skill://skills/escape/SKILL.md", "skill://skills/many/SKILL.md", "skill://skills/quiet/SKILL.md"}, uris); diff != "" {
				t.Errorf("skills/list mismatch (-want +got):\n%s", diff)
			}
			m, err = call(t, cs, "skills/get", &rawParams{URI: cr.URI})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(entryOf(cr), m["skill"]); diff != "" {
				t.Errorf("skills/get mismatch (-want +got):\n%s", diff)
			}
			m, err = call(t, cs, "resources/directory/read", &rawParams{URI: "skill://skills/code-review/templates"})
			if err != nil {
				t.Fatal(err)
			}
			var children []string
			for _, r := range m["resources"].([]any) {
				children = append(children, r.(map[string]any)["uri"].(string))
			}
			if diff := cmp.Diff([]string{emailURI, "skill://skills/code-review/templates/sub"}, children); diff != "" {
				t.Errorf("directory read mismatch (-want +got):\n%s", diff)
			}

			cpl, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "skill"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "code"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"skills__code-review"}, cpl.Completion.Values); diff != "" {
				t.Errorf("completion mismatch (-want +got):\n%s", diff)
			}

			// No subscriptions: the capability is false and
			// resources/subscribe is refused (on 2026-07-28, see
			// TestHTTPListenAgreesToNothing).
			if era == legacy {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: emailURI}); wireCode(err) != -32601 {
					t.Errorf("resources/subscribe over stateless HTTP: %v, want -32601", err)
				}
			}
		})
	}
}

// TestHTTPToolsAuto: in auto mode a 2026-07-28 request declaring the skills
// extension carries it, so the tools are hidden; a 2025-11-25 request
// carries no capabilities on stateless HTTP, so auto behaves as always.
func TestHTTPToolsAuto(t *testing.T) {
	fx := newFixture(t)
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), nil)
	copts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	copts.Capabilities.AddExtension(mcpface.SkillsExtension, nil)
	for _, tc := range []struct {
		era  string
		want int
	}{{legacy, 2}, {modern, 0}} {
		t.Run(tc.era, func(t *testing.T) {
			cs := connectHTTP(t, ts, tc.era, copts, nil)
			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(lt.Tools) != tc.want {
				t.Errorf("tools/list has %d tools, want %d", len(lt.Tools), tc.want)
			}
		})
	}
}

// TestHTTPFreshness: a skill added after a first client connected shows in a
// second client's instructions and skills/list, and in the first client's
// next skills/list; /healthz follows.
func TestHTTPFreshness(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			f := newFacade(t, fx.cat, nil)
			ts := serveHTTP(t, f, nil)
			first := connectHTTP(t, ts, era, nil, nil)
			if strings.Contains(first.InitializeResult().Instructions, "skills__fresh") {
				t.Fatal("instructions hold skills__fresh before it exists")
			}
			fresh := writeSkill(t, fx.root, skillSpec{dir: "fresh", name: "fresh", desc: "Added later."})
			if !f.SetCatalog(events.NewCatalog(2, false, append(slices.Clone(fx.cat.Skills), fresh), nil)) {
				t.Fatal("SetCatalog(2) = false")
			}
			second := connectHTTP(t, ts, era, nil, nil)
			if !strings.Contains(second.InitializeResult().Instructions, "<name>skills__fresh</name>") {
				t.Errorf("second client's instructions lack skills__fresh:\n%s", second.InitializeResult().Instructions)
			}
			for name, cs := range map[string]*mcp.ClientSession{"first": first, "second": second} {
				m, err := call(t, cs, "skills/list", nil)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(mustJSON(t, m), fresh.URI) {
					t.Errorf("%s client's skills/list lacks %s", name, fresh.URI)
				}
				lp, err := cs.ListPrompts(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(lp.Prompts, func(p *mcp.Prompt) bool { return p.Name == "skills__fresh" }) {
					t.Errorf("%s client's prompts/list lacks skills__fresh", name)
				}
			}
			status, body := get(t, ts.URL+"/healthz")
			if want := `{"status":"ok","catalogVersion":2,"skills":6}`; status != http.StatusOK || body != want {
				t.Errorf("GET /healthz = %d %s, want 200 %s", status, body, want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestHTTPNoNotifications: nothing is pushed over HTTP. Every client
// notification handler stays silent through requests and catalog changes,
// every POST is answered with one JSON object (never an SSE stream), and a
// 2025-11-25 client's standalone GET is refused with 405.
func TestHTTPNoNotifications(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			fx := newFixture(t)
			f := newFacade(t, fx.cat, nil)
			ts := serveHTTP(t, f, nil)
			c := &counts{got: map[string]int{}}
			copts := recorder(c)
			copts.LoggingMessageHandler = func(context.Context, *mcp.LoggingMessageRequest) { c.add("log") }
			copts.ProgressNotificationHandler = func(context.Context, *mcp.ProgressNotificationClientRequest) { c.add("progress") }
			rt := &recordingTransport{}
			cs := connectHTTP(t, ts, era, copts, rt)
			exercise := func() {
				t.Helper()
				callTool(t, cs, "load-skill", map[string]any{"name": "skills__code-review"})
				listAllResources(t, cs)
				if _, err := cs.ListPrompts(t.Context(), nil); err != nil {
					t.Fatal(err)
				}
			}
			exercise()
			cr := rewrite(t, fx.skills["skills__code-review"], "templates/email.md", []byte("changed\n"))
			fresh := writeSkill(t, fx.root, skillSpec{dir: "fresh", name: "fresh", desc: "Added later."})
			f.SetCatalog(events.NewCatalog(2, false, append(replaceSkill(fx.cat.Skills, cr, false), fresh), nil))
			exercise()
			cs.Close()
			if got := c.take(); len(got) != 0 {
				t.Errorf("notifications arrived over HTTP: %v", got)
			}
			for _, x := range rt.exchanges() {
				switch {
				case x.method == http.MethodGet && x.status == http.StatusMethodNotAllowed:
				case x.method == http.MethodPost && x.status == http.StatusAccepted:
				case x.method == http.MethodPost && x.status == http.StatusOK && x.contentType == "application/json":
				default:
					t.Errorf("exchange %+v: want POST 200 application/json, POST 202, or GET 405", x)
				}
			}
		})
	}
}

// rpcReply is a JSON-RPC error response as the handler writes it.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

const (
	acceptBoth  = "application/json, text/event-stream"
	discoverReq = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	initReq     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
)

// modernCall is a 2026-07-28 request body of method with extra params.
func modernCall(method, params string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// TestHTTPRejections sends raw requests that must be refused with a clear
// 4xx and a JSON-RPC error body, and after each one a normal request that
// must still work.
func TestHTTPRejections(t *testing.T) {
	fx := newFixture(t)
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), &mcpface.HTTPOptions{
		Loopback:       true,
		AllowedOrigins: []string{"https://App.Example.com", "http://tool.example:8080"},
		MaxBodyBytes:   64 << 10,
	})
	modernHeaders := func(method, name string) map[string]string {
		h := map[string]string{"Mcp-Protocol-Version": modern, "Mcp-Method": method}
		if name != "" {
			h["Mcp-Name"] = name
		}
		return h
	}
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string // default application/json
		accept      string // default acceptBoth
		host        string
		headers     map[string]string
		body        string
		wantStatus  int
		wantCode    int64 // 0: a success
		wantAllow   string
		wantMsg     string // substring of the error message
		wantData    string // exact error data
	}{
		{name: "GET /mcp", method: "GET", path: "/mcp", wantStatus: 405, wantCode: -32600, wantAllow: "POST"},
		{name: "DELETE /mcp", method: "DELETE", path: "/mcp", wantStatus: 405, wantCode: -32600, wantAllow: "POST"},
		{name: "PUT /mcp", method: "PUT", path: "/mcp", body: initReq, wantStatus: 405, wantCode: -32600, wantAllow: "POST"},
		{name: "POST /other", method: "POST", path: "/other", body: initReq, wantStatus: 404, wantCode: -32600, wantMsg: "POST /mcp"},
		{name: "GET /", method: "GET", path: "/", wantStatus: 404, wantCode: -32600},
		{name: "POST /mcp/", method: "POST", path: "/mcp/", body: initReq, wantStatus: 404, wantCode: -32600},
		{name: "POST /healthz", method: "POST", path: "/healthz", wantStatus: 405, wantCode: -32600, wantAllow: "GET, HEAD"},
		{name: "evil origin", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "https://evil.example"}, body: initReq,
			wantStatus: 403, wantCode: -32600, wantMsg: `"https://evil.example"`},
		{name: "evil origin on healthz", method: "GET", path: "/healthz", headers: map[string]string{"Origin": "https://evil.example"}, wantStatus: 403, wantCode: -32600},
		{name: "null origin", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "null"}, body: initReq, wantStatus: 403, wantCode: -32600},
		{name: "extra origin other port", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "http://tool.example:8081"}, body: initReq, wantStatus: 403, wantCode: -32600},
		{name: "localhost origin", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "http://localhost:5173"}, body: initReq, wantStatus: 200},
		{name: "loopback v6 origin", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "https://[::1]"}, body: initReq, wantStatus: 200},
		{name: "extra origin", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "https://app.example.com:443"}, body: initReq, wantStatus: 200},
		{name: "extra origin with port", method: "POST", path: "/mcp", headers: map[string]string{"Origin": "HTTP://TOOL.example:8080"}, body: initReq, wantStatus: 200},
		{name: "DNS rebinding host (SDK)", method: "POST", path: "/mcp", host: "evil.example", body: initReq, wantStatus: 403, wantCode: -32600, wantMsg: "Host"},
		// issue 10 Low: /healthz and unknown paths apply the same Host rule as /mcp.
		{name: "DNS rebinding host on healthz", method: "GET", path: "/healthz", host: "evil.example", wantStatus: 403, wantCode: -32600, wantMsg: "Host"},
		{name: "DNS rebinding host on other path", method: "GET", path: "/other", host: "evil.example:3000", wantStatus: 403, wantCode: -32600, wantMsg: "Host"},
		{name: "wrong content type", method: "POST", path: "/mcp", contentType: "text/plain", body: initReq, wantStatus: 415, wantCode: -32600},
		{name: "no content type", method: "POST", path: "/mcp", contentType: "-", body: initReq, wantStatus: 415, wantCode: -32600},
		{name: "content type with charset", method: "POST", path: "/mcp", contentType: "application/json; charset=utf-8", body: initReq, wantStatus: 200},
		{name: "body over cap", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 70<<10) + `"}}`,
			wantStatus: 413, wantCode: -32600, wantMsg: "65536"},
		{name: "malformed JSON", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,`, wantStatus: 400, wantCode: -32700},
		{name: "empty body", method: "POST", path: "/mcp", body: "", wantStatus: 400, wantCode: -32700},
		{name: "batch", method: "POST", path: "/mcp", body: "[" + initReq + "]", wantStatus: 400, wantCode: -32600, wantMsg: "batch"},
		{name: "empty batch", method: "POST", path: "/mcp", body: " []", wantStatus: 400, wantCode: -32600},
		{name: "neither request nor response", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1}`, wantStatus: 400, wantCode: -32600, wantMsg: "method"},
		{name: "unknown method, 2025 era", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`, wantStatus: 400, wantCode: -32601},
		{name: "not an object", method: "POST", path: "/mcp", body: `"hello"`, wantStatus: 400, wantCode: -32600},
		{name: "missing Accept (SDK)", method: "POST", path: "/mcp", accept: "application/json", body: initReq, wantStatus: 400, wantCode: -32600, wantMsg: "Accept"},
		{name: "no jsonrpc fields (SDK)", method: "POST", path: "/mcp", body: `{"hello":1}`, wantStatus: 400, wantCode: -32600},
		{name: "unsupported legacy version", method: "POST", path: "/mcp", headers: map[string]string{"Mcp-Protocol-Version": "2023-01-01"}, body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
			wantStatus: 400, wantCode: -32022, wantData: `{"supported":` + mustJSON(t, mcp.SupportedProtocolVersions()) + `,"requested":"2023-01-01"}`},
		{name: "unsupported future version", method: "POST", path: "/mcp", headers: map[string]string{"Mcp-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, body: modernCall("tools/list", ""),
			wantStatus: 400, wantCode: -32022},
		{name: "discover", method: "POST", path: "/mcp", headers: modernHeaders("server/discover", ""), body: discoverReq, wantStatus: 200},
		{name: "missing Mcp-Method (SDK)", method: "POST", path: "/mcp", headers: map[string]string{"Mcp-Protocol-Version": modern}, body: modernCall("tools/list", ""),
			wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Method mismatch (SDK)", method: "POST", path: "/mcp", headers: modernHeaders("prompts/list", ""), body: modernCall("tools/list", ""),
			wantStatus: 400, wantCode: -32020},
		{name: "version header missing (SDK)", method: "POST", path: "/mcp", headers: map[string]string{"Mcp-Method": "tools/list"}, body: modernCall("tools/list", ""),
			wantStatus: 400, wantCode: -32020},
		{name: "version header vs _meta (SDK)", method: "POST", path: "/mcp", headers: map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/list"}, body: modernCall("tools/list", ""),
			wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name missing (SDK)", method: "POST", path: "/mcp", headers: modernHeaders("resources/read", ""), body: modernCall("resources/read", `"uri":"`+emailURI+`"`),
			wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name mismatch (SDK)", method: "POST", path: "/mcp", headers: modernHeaders("resources/read", "skill://x/SKILL.md"), body: modernCall("resources/read", `"uri":"`+emailURI+`"`),
			wantStatus: 400, wantCode: -32020},
		{name: "Mcp-Name plain", method: "POST", path: "/mcp", headers: modernHeaders("resources/read", emailURI), body: modernCall("resources/read", `"uri":"`+emailURI+`"`), wantStatus: 200},
		{name: "Mcp-Name base64", method: "POST", path: "/mcp", headers: modernHeaders("prompts/get", "=?base64?c2tpbGw=?="), body: modernCall("prompts/get", `"name":"skill","arguments":{"name":"skills__code-review"}`), wantStatus: 200},
		{name: "Mcp-Name bad base64", method: "POST", path: "/mcp", headers: modernHeaders("prompts/get", "=?base64?!!?="), body: modernCall("prompts/get", `"name":"skill","arguments":{"name":"skills__code-review"}`),
			wantStatus: 400, wantCode: -32020, wantMsg: "base64"},
		{name: "unknown method (SDK)", method: "POST", path: "/mcp", headers: modernHeaders("nope/nope", ""), body: modernCall("nope/nope", ""), wantStatus: 404, wantCode: -32601},
		{name: "subscribe on legacy", method: "POST", path: "/mcp", headers: map[string]string{"Mcp-Protocol-Version": legacy}, body: `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"` + emailURI + `"}}`,
			wantStatus: 200, wantCode: -32601},
	}
	client := ts.Client()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			switch tc.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Accept", acceptBoth)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tc.wantStatus, b)
			}
			if got := resp.Header.Get("Allow"); got != tc.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tc.wantAllow)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q, want application/json; body %s", ct, b)
			}
			var r rpcReply
			if err := json.Unmarshal(b, &r); err != nil || r.JSONRPC != "2.0" {
				t.Fatalf("body %s is not a JSON-RPC response: %v", b, err)
			}
			if tc.wantCode == 0 {
				if r.Error != nil {
					t.Errorf("error %+v, want a result", r.Error)
				}
				return
			}
			if r.Error == nil {
				t.Fatalf("body %s has no error, want %d", b, tc.wantCode)
			}
			if r.Error.Code != tc.wantCode || !strings.Contains(r.Error.Message, tc.wantMsg) {
				t.Errorf("error = %d %q, want %d with %q", r.Error.Code, r.Error.Message, tc.wantCode, tc.wantMsg)
			}
			if tc.wantData != "" && string(r.Error.Data) != tc.wantData {
				t.Errorf("error data = %s, want %s", r.Error.Data, tc.wantData)
			}
			if resp.StatusCode < 500 && tc.wantStatus != 200 && len(r.ID) > 0 && string(r.ID) != "null" && !strings.Contains(tc.body, `"id":`+string(r.ID)) {
				t.Errorf("id = %s, not the request's", r.ID)
			}

			// The server is unaffected.
			ok, err := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(discoverReq))
			if err != nil {
				t.Fatal(err)
			}
			ok.Header.Set("Content-Type", "application/json")
			ok.Header.Set("Accept", acceptBoth)
			for k, v := range modernHeaders("server/discover", "") {
				ok.Header.Set(k, v)
			}
			resp, err = client.Do(ok)
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"instructions"`) {
				t.Errorf("server/discover after the rejection = %d %s", resp.StatusCode, b)
			}
		})
	}
}

// TestHTTPHealthAndStartup: before the first catalog /mcp answers 503 with a
// JSON-RPC body and /healthz 503; afterwards /healthz reports the catalog.
func TestHTTPHealthAndStartup(t *testing.T) {
	fx := newFixture(t)
	f := mcpface.New(&mcpface.Options{Version: "1.2.3"})
	ts := serveHTTP(t, f, nil)
	status, body := get(t, ts.URL+"/healthz")
	if want := `{"status":"starting","catalogVersion":0,"skills":0}`; status != 503 || body != want {
		t.Errorf("GET /healthz before the catalog = %d %s, want 503 %s", status, body, want)
	}
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(initReq))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server starting: no catalog yet; retry shortly"}}`; resp.StatusCode != 503 || strings.TrimSpace(string(b)) != want {
		t.Errorf("POST /mcp before the catalog = %d %s, want 503 %s", resp.StatusCode, b, want)
	}
	f.SetCatalog(fx.cat)
	status, body = get(t, ts.URL+"/healthz")
	if want := `{"status":"ok","catalogVersion":1,"skills":5}`; status != 200 || body != want {
		t.Errorf("GET /healthz = %d %s, want 200 %s", status, body, want)
	}
	connectHTTP(t, ts, modern, nil, nil)
}

// TestHTTPHealthHost: /healthz applies the DNS-rebinding rule of /mcp: on a
// loopback listener only a loopback Host is answered (issue 10 Low).
func TestHTTPHealthHost(t *testing.T) {
	fx := newFixture(t)
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), nil)
	for _, tc := range []struct {
		host string
		want int
	}{
		{"", 200}, {"localhost:3000", 200}, {"[::1]:80", 200}, {"127.0.0.1", 200},
		{"evil.example", 403}, {"evil.example:3000", 403}, {"127.0.0.1.evil.example", 403},
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/healthz", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET /healthz with Host %q = %d %s, want %d", tc.host, resp.StatusCode, b, tc.want)
		}
	}
}

// TestHTTPNoGoroutineLeft: once the clients and the listener are closed,
// nothing the HTTP handler started is left running.
func TestHTTPNoGoroutineLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fx := newFixture(t)
	f := newFacade(t, fx.cat, nil)
	ts := httptest.NewServer(f.HTTPHandler(nil))
	defer ts.Close()
	for _, era := range eras {
		client := mcp.NewClient(&mcp.Implementation{Name: "leak", Version: "0"}, nil)
		cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: ts.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		cs.Close()
	}
	ts.Close()
}

// BenchmarkHTTPRequest measures one skills/list over HTTP (go-sdk client,
// httptest server) on each era, with the server of the catalog version
// cached, and, as "rebuild", with a new catalog version (so a new server)
// before every request.
func BenchmarkHTTPRequest(b *testing.B) {
	skills := benchSkills(b)
	for _, era := range eras {
		for _, rebuild := range []bool{false, true} {
			name := era
			if rebuild {
				name += "/rebuild"
			}
			b.Run(name, func(b *testing.B) {
				f := mcpface.New(&mcpface.Options{Version: "bench"})
				f.SetCatalog(events.NewCatalog(1, false, skills, nil))
				ts := serveHTTP(b, f, nil)
				cs := connectHTTP(b, ts, era, nil, nil)
				ctx := context.Background()
				version := uint64(1)
				b.ResetTimer()
				for b.Loop() {
					if rebuild {
						version++
						f.SetCatalog(events.NewCatalog(version, false, skills, nil))
					}
					if _, err := mcp.CallCustomMethod[*rawParams, *rawResult](ctx, cs, "skills/list", &rawParams{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkHTTPServerBuild measures building the HTTP server of one catalog
// version, the cost a request would pay without the per-version cache.
func BenchmarkHTTPServerBuild(b *testing.B) {
	f := mcpface.New(&mcpface.Options{Version: "bench"})
	f.SetCatalog(events.NewCatalog(1, false, benchSkills(b), nil))
	for b.Loop() {
		mcpface.BuildHTTPServer(f)
	}
}

// TestHTTPListenAgreesToNothing: a 2026-07-28 subscriptions/listen over
// stateless HTTP is acknowledged with nothing agreed and answered at once,
// so it holds no request open and nothing follows it.
func TestHTTPListenAgreesToNothing(t *testing.T) {
	fx := newFixture(t)
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), nil)
	body := modernCall("subscriptions/listen", `"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["`+emailURI+`"]}`)
	req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", acceptBoth)
	req.Header.Set("Mcp-Protocol-Version", modern)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body) // ends: the stream is not held open
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("subscriptions/listen = %d %s (%v)", resp.StatusCode, b, err)
	}
	var events []string
	for line := range strings.Lines(string(b)) {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			events = append(events, strings.TrimSpace(data))
		}
	}
	if len(events) != 2 {
		t.Fatalf("stream events = %q, want the acknowledgement and the result", events)
	}
	var ack struct {
		Method string `json:"method"`
		Params struct {
			Notifications map[string]any `json:"notifications"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(events[0]), &ack)
	if ack.Method != "notifications/subscriptions/acknowledged" || len(ack.Params.Notifications) != 0 {
		t.Errorf("acknowledgement = %s, want one agreeing to nothing", events[0])
	}
	var res rpcReply
	if err := json.Unmarshal([]byte(events[1]), &res); err != nil || res.Error != nil || res.Result == nil {
		t.Errorf("listen result = %s", events[1])
	}
}

// benchSkills writes 50 one-file skills for the benchmarks.
func benchSkills(b *testing.B) []*events.Skill {
	root := b.TempDir()
	var skills []*events.Skill
	for i := range 50 {
		name := "skill-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		skills = append(skills, writeSkill(b, root, skillSpec{dir: name, name: name, desc: "Benchmark skill " + name + "."}))
	}
	return skills
}

// TestHTTPConcurrentSwaps runs clients of both eras against catalog swaps:
// every answer is whole and the race detector sees no shared write.
func TestHTTPConcurrentSwaps(t *testing.T) {
	fx := newFixture(t)
	f := newFacade(t, fx.cat, nil)
	ts := serveHTTP(t, f, nil)
	var wg sync.WaitGroup
	for i := range 4 {
		cs := connectHTTP(t, ts, eras[i%2], nil, nil)
		wg.Go(func() {
			for range 20 {
				m, err := call(t, cs, "skills/list", nil)
				if err != nil {
					t.Error(err)
					return
				}
				if n := len(m["skills"].([]any)); n != 4 {
					t.Errorf("skills/list has %d skills, want 4", n)
				}
			}
		})
	}
	for v := uint64(2); v <= 20; v++ {
		f.SetCatalog(events.NewCatalog(v, false, fx.cat.Skills, nil))
	}
	wg.Wait()
}
