package mcpface

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestResultID checks the first-bytes reading of outgoing results against
// the SDK's own decoding of the same messages: every message it settles is
// a result with exactly the id the decoder gives; everything else (errors,
// requests, notifications, ids it does not read) is left to the decoder.
func TestResultID(t *testing.T) {
	ids := []any{float64(0), float64(7), float64(-3), float64(123456789012345), float64(1 << 60), "a", "", "with \"quote\"", "tab\t", "é", `back\slash`}
	var msgs [][]byte
	for _, v := range ids {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []jsonrpc.Message{
			&jsonrpc.Response{ID: id, Result: json.RawMessage(`{"skill":{"uri":"x"}}`)},
			&jsonrpc.Response{ID: id, Result: json.RawMessage(`null`)},
			&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: 0, Message: "m"}},
			&jsonrpc.Request{ID: id, Method: "ping", Params: json.RawMessage(`{}`)},
		} {
			b, err := jsonrpc.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, b)
		}
	}
	n, _ := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"result":1}`)})
	msgs = append(msgs, n,
		[]byte(`{"jsonrpc":"2.0","id":1.5,"result":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":1e3,"result":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":1 ,"result":{}}`),
		[]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":0,"message":"m"}}`),
		[]byte(`{"id":1,"jsonrpc":"2.0","result":{}}`),
	)
	settled := 0
	for _, b := range msgs {
		id, ok := resultID(b)
		msg, err := jsonrpc.DecodeMessage(b)
		if !ok {
			continue
		}
		settled++
		resp, isResp := msg.(*jsonrpc.Response)
		if err != nil || !isResp || resp.Error != nil || resp.Result == nil {
			t.Errorf("%s: settled as a result, decoded %T %+v (error %v)", b, msg, msg, err)
			continue
		}
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			t.Errorf("%s: settled, but carries an error", b)
		}
		if id != resp.ID {
			t.Errorf("%s: id %v, decoded %v", b, id.Raw(), resp.ID.Raw())
		}
	}
	// 0, 7, -3, 123456789012345, "a", "", "é": two results each.
	if settled != 14 {
		t.Errorf("settled %d results, want 14", settled)
	}
}
