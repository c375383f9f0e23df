package mcpface_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/mcpface"
)

// postRaw POSTs body to ts/mcp with the headers of a raw client; version ""
// sends no MCP-Protocol-Version (a 2025-11-25 request).
func postRaw(t *testing.T, url, version, method, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", acceptBoth)
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
		req.Header.Set("Mcp-Method", method)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, b
}

// legacyCall is a 2025-11-25 request body of method with params.
func legacyCall(method, params string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `}}`
}

// paramCases are requests carrying value where a URI, name or argument goes,
// and the field the cap error names.
func paramCases(value string) []struct{ name, method, params, field string } {
	return []struct{ name, method, params, field string }{
		{"resources/read", "resources/read", `"uri":"` + value + `"`, "uri"},
		{"resources/subscribe", "resources/subscribe", `"uri":"` + value + `"`, "uri"},
		{"resources/unsubscribe", "resources/unsubscribe", `"uri":"` + value + `"`, "uri"},
		{"skills/get", "skills/get", `"uri":"` + value + `"`, "uri"},
		{"resources/directory/read", "resources/directory/read", `"uri":"` + value + `"`, "uri"},
		{"load-skill name", "tools/call", `"name":"load-skill","arguments":{"name":"` + value + `"}`, "arguments.name"},
		{"skill-resource skill", "tools/call", `"name":"skill-resource","arguments":{"skill":"` + value + `","path":"x"}`, "arguments.skill"},
		{"skill-resource path", "tools/call", `"name":"skill-resource","arguments":{"skill":"skills__code-review","path":"` + value + `"}`, "arguments.path"},
		{"tool name", "tools/call", `"name":"` + value + `","arguments":{}`, "name"},
		{"prompt name", "prompts/get", `"name":"` + value + `"`, "name"},
		{"skill prompt argument", "prompts/get", `"name":"skill","arguments":{"name":"` + value + `"}`, "arguments.name"},
		{"completion ref", "completion/complete", `"ref":{"type":"ref/resource","uri":"` + value + `"},"argument":{"name":"path","value":"x"}`, "ref.uri"},
	}
}

// TestHTTPParamCap: a URI, name or tool argument one byte over
// MaxParamBytes is refused with -32602 "… is N bytes; the limit is 8192"
// before anything resolves it, on both eras, with a small answer; at the
// cap it is handled as usual (issue 10 F3).
func TestHTTPParamCap(t *testing.T) {
	fx := newFixture(t)
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), nil)
	over := "skill://" + strings.Repeat("a/", mcpface.MaxParamBytes/2-4) + "a"
	for _, tc := range paramCases(over) {
		for _, era := range eras {
			t.Run(tc.name+"/"+era, func(t *testing.T) {
				version, body, wantStatus := "", legacyCall(tc.method, tc.params), 200
				if era == modern {
					version, body, wantStatus = modern, modernCall(tc.method, tc.params), 400
				}
				resp, b := postRaw(t, ts.URL, version, tc.method, body)
				var r rpcReply
				if err := json.Unmarshal(b, &r); err != nil || r.Error == nil {
					t.Fatalf("answer %d %.300s, want a JSON-RPC error", resp.StatusCode, b)
				}
				want := fmt.Sprintf("%s is %d bytes; the limit is %d", tc.field, mcpface.MaxParamBytes+1, mcpface.MaxParamBytes)
				if resp.StatusCode != wantStatus || r.Error.Code != -32602 || r.Error.Message != want || string(r.ID) != "7" {
					t.Errorf("answer = %d id %s %d %q, want %d id 7 -32602 %q", resp.StatusCode, r.ID, r.Error.Code, r.Error.Message, wantStatus, want)
				}
				if len(b) > 1024 {
					t.Errorf("answer is %d bytes, want < 1 KiB", len(b))
				}
			})
		}
	}
	// At the cap the request reaches its handler, which does not find it.
	atCap := over[:mcpface.MaxParamBytes]
	resp, b := postRaw(t, ts.URL, "", "", legacyCall("resources/read", `"uri":"`+atCap+`"`))
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Resource not found") {
		t.Errorf("resources/read at the cap = %d %.300s, want 200 Resource not found", resp.StatusCode, b)
	}
}

// TestParamCapStdio: the same cap over the in-memory transport, where the
// SDK decoded the request before the facade sees it (issue 10 F3).
func TestParamCapStdio(t *testing.T) {
	fx := newFixture(t)
	over := strings.Repeat("a/", mcpface.MaxParamBytes)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, fx.cat, nil), era, nil)
			ctx := t.Context()
			want := fmt.Sprintf("is %d bytes; the limit is %d", len(over)+8, mcpface.MaxParamBytes)
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://" + over})
			if we := wireError(t, err); we.Code != -32602 || we.Message != "uri "+want {
				t.Errorf("ReadResource(long) = %d %q, want -32602 %q", we.Code, we.Message, "uri "+want)
			}
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "skill-resource", Arguments: map[string]any{"skill": "skills__code-review", "path": over}})
			want = fmt.Sprintf("arguments.path is %d bytes; the limit is %d", len(over), mcpface.MaxParamBytes)
			if we := wireError(t, err); we.Code != -32602 || we.Message != want {
				t.Errorf("skill-resource(long path) = %d %q, want -32602 %q", we.Code, we.Message, want)
			}
		})
	}
}

// TestQuotedURIsClipped: an error that names the client's URI or path
// quotes its first 200 bytes and "…", in the message and in the data, so
// the answer stays small: a request of 8 KiB or of 1 MiB gets an answer
// under 4 KiB (issue 10 F3: a 10 MiB request got a 20 MiB answer).
func TestQuotedURIsClipped(t *testing.T) {
	fx := newFixture(t)
	ts := serveHTTP(t, newFacade(t, fx.cat, nil), nil)
	for _, n := range []int{mcpface.MaxParamBytes - 100, 1 << 20} {
		long := "skill://skills/" + strings.Repeat("b", n)
		for _, tc := range paramCases(long) {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				resp, b := postRaw(t, ts.URL, "", "", legacyCall(tc.method, tc.params))
				if len(b) >= 4096 {
					t.Errorf("answer is %d bytes, want < 4 KiB: %.300s", len(b), b)
				}
				if n < mcpface.MaxParamBytes && strings.Contains(string(b), long[:300]) {
					t.Errorf("answer %d quotes more than 200 bytes of the request: %.400s", resp.StatusCode, b)
				}
			})
		}
	}
	// The clipped quote ends in "…" where it was cut.
	resp, b := postRaw(t, ts.URL, "", "", legacyCall("resources/read", `"uri":"skill://skills/`+strings.Repeat("c", 1000)+`"`))
	var r rpcReply
	json.Unmarshal(b, &r)
	wantQuote := "skill://skills/" + strings.Repeat("c", 200-len("skill://skills/")) + "…"
	if r.Error == nil || r.Error.Message != "Resource not found: "+wantQuote || string(r.Error.Data) != mustJSON(t, map[string]string{"uri": wantQuote}) {
		t.Errorf("resources/read(1000-byte URI) = %d %s, want Resource not found: %s…", resp.StatusCode, b, wantQuote[:30])
	}
}

// TestHTTPBusy: with every slot taken and no queue, a request gets 503 with
// Retry-After and a JSON-RPC body, and succeeds once a slot is free; with a
// queue of one, of two further requests one waits and is answered, the
// other gets 503. Handlers are held by a hook, not by timing (issue 10 F3).
func TestHTTPBusy(t *testing.T) {
	tests := []struct {
		name   string
		queued int
		extra  int // requests sent while the slots are held
		want   map[int]int
	}{
		{name: "no queue", queued: -1, extra: 1, want: map[int]int{503: 1}},
		{name: "queue of one", queued: 1, extra: 2, want: map[int]int{200: 1, 503: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			f := newFacade(t, fx.cat, nil)
			const slots = 2
			entered, gate := make(chan struct{}, slots), make(chan struct{})
			var once sync.Once
			held := 0
			var mu sync.Mutex
			mcpface.SetPanicHook(f, func(method string) {
				mu.Lock()
				hold := method == "tools/list" && held < slots
				if hold {
					held++
				}
				mu.Unlock()
				if hold {
					entered <- struct{}{}
					<-gate
				}
			})
			release := func() { once.Do(func() { close(gate) }) }
			t.Cleanup(release)
			ts := serveHTTP(t, f, &mcpface.HTTPOptions{MaxConcurrent: slots, MaxQueued: tc.queued})
			list := legacyCall("tools/list", "")
			var wg sync.WaitGroup
			for range slots {
				wg.Go(func() {
					if resp, b := postRaw(t, ts.URL, "", "", list); resp.StatusCode != 200 {
						t.Errorf("held request = %d %s", resp.StatusCode, b)
					}
				})
			}
			for range slots {
				waitFor(t, entered, "a held handler")
			}
			statuses := make(chan int, tc.extra)
			for range tc.extra {
				wg.Go(func() {
					resp, b := postRaw(t, ts.URL, "", "", list)
					if resp.StatusCode == 503 {
						var r rpcReply
						if resp.Header.Get("Retry-After") != "1" || json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "busy") {
							t.Errorf("503 answer: Retry-After %q body %s", resp.Header.Get("Retry-After"), b)
						}
					}
					statuses <- resp.StatusCode
				})
			}
			got := map[int]int{}
			got[waitFor(t, statuses, "the refused request")]++ // arrives while the slots are held
			release()
			for range tc.extra - 1 {
				got[waitFor(t, statuses, "a queued request")]++
			}
			wg.Wait()
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("statuses of the extra requests = %v, want %v", got, tc.want)
			}
			if resp, b := postRaw(t, ts.URL, "", "", list); resp.StatusCode != 200 {
				t.Errorf("request after the slots were freed = %d %s, want 200", resp.StatusCode, b)
			}
		})
	}
}
