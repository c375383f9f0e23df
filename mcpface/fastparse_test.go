package mcpface

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestParseFastAgreesWithSDK: every line the fast lane's own parser takes
// is one go-sdk's decoder reads as a request with the same id, method and
// params; the spellings it is not sure of are left to the SDK.
func TestParseFastAgreesWithSDK(t *testing.T) {
	for _, c := range []struct {
		line string
		take bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
		{` { "jsonrpc" : "2.0" , "id" : 7 , "method" : "skills/get" , "params" : { "uri" : "skill://a/SKILL.md" } } `, true},
		{`{"method":"skills/list","params":{"cursor":"abc=","_meta":{}},"id":"x-1","jsonrpc":"2.0"}`, true},
		{`{"jsonrpc":"2.0","id":-5,"method":"resources/read","params":{"uri":"skill://a/b c.md"}}`, true},
		{`{"jsonrpc":"2.0","id":0,"method":"ping","params":{}}`, true},
		{`{"jsonrpc":"2.0","id":123456789012345,"method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":"<&>","method":"ping"}`, true},
		{`{"jsonrpc":"2.0","id":1234567890123456,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":"\u0061","method":"ping"}`, false},
		{`{"jsonrpc":"2.0","ID":1,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0 ","id":1,"method":"ping"}`, false},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"\u0070ing"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":[1]}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":null}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/\u0053KILL.md"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","cursor":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"cursor":"x","cursor":"y"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"Cursor":"x"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://a/SKILL.md","_meta":{"progressToken":1}}}`, false},
	} {
		if !json.Valid([]byte(c.line)) {
			t.Fatalf("not JSON: %s", c.line)
		}
		r, ok := parseFast([]byte(c.line))
		if ok != c.take {
			t.Errorf("parseFast(%s) took it: %v, want %v", c.line, ok, c.take)
		}
		if !ok {
			continue
		}
		msg, err := jsonrpc.DecodeMessage([]byte(c.line))
		if err != nil {
			t.Errorf("parseFast took %s, which go-sdk refuses: %v", c.line, err)
			continue
		}
		req, isReq := msg.(*jsonrpc.Request)
		if !isReq || req.ID != r.id || req.Method != r.method {
			t.Errorf("%s: go-sdk reads %#v, the fast lane id %v method %q", c.line, msg, r.id, r.method)
			continue
		}
		var p struct {
			URI    string `json:"uri"`
			Cursor string `json:"cursor"`
		}
		if len(req.Params) > 0 {
			if err := json.Unmarshal(req.Params, &p); err != nil {
				t.Fatal(err)
			}
		}
		if p.URI != r.uri || p.Cursor != r.cursor {
			t.Errorf("%s: params uri %q cursor %q, the fast lane %q %q", c.line, p.URI, p.Cursor, r.uri, r.cursor)
		}
		// As go-sdk encodes a message: no HTML escaping.
		var got bytes.Buffer
		enc := json.NewEncoder(&got)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(req.ID.Raw()); err != nil || strings.TrimSpace(got.String()) != string(r.rawID) {
			t.Errorf("%s: the SDK writes id %s back, the fast lane %s", c.line, got.String(), r.rawID)
		}
	}
}

// TestPlainRequestAgreesWithSDK: every line the stdio wire reads without
// go-sdk's decoder is one that decoder reads as the same request or
// notification: the same id, method and params.
func TestPlainRequestAgreesWithSDK(t *testing.T) {
	for _, c := range []struct {
		line string
		take bool
	}{
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"load-skill","arguments":{"name":"a"}}}`, true},
		{`{"jsonrpc":"2.0","id":"s","method":"x/y","params":[1,{"a":[]}]}`, true},
		{` {"params" : {} , "method":"ping","jsonrpc":"2.0","id":-12} `, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":7}`, false},
		{`{"jsonrpc":"2.0","id":1}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"a\/b"}`, false},
		{`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, false},
		{`{"jsonrpc":"2.0","method":"ping","method":"ping"}`, false},
		{`{}`, false},
	} {
		req, _, ok := plainRequest([]byte(c.line))
		if ok != c.take {
			t.Errorf("plainRequest(%s) took it: %v, want %v", c.line, ok, c.take)
		}
		if !ok {
			continue
		}
		msg, err := jsonrpc.DecodeMessage([]byte(c.line))
		if err != nil {
			t.Errorf("plainRequest took %s, which go-sdk refuses: %v", c.line, err)
			continue
		}
		sdk, isReq := msg.(*jsonrpc.Request)
		if !isReq || sdk.ID != req.ID || sdk.Method != req.Method || !bytes.Equal(sdk.Params, req.Params) {
			t.Errorf("%s: go-sdk reads %#v, the wire %#v", c.line, msg, req)
		}
	}
}
