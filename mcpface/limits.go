package mcpface

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxParamBytes caps each URI, name and tool argument a request may carry
// (resources/read, resources/subscribe and unsubscribe, skills/get,
// resources/directory/read, the uri and name of completion/complete, the
// name and arguments of tools/call and prompts/get). The longest URI a
// catalog serves is a few hundred bytes; 8 KiB leaves room for any
// percent-encoded spelling of it while staying far below the 4 MiB body cap,
// so that a hostile request is refused before anything is resolved, quoted
// or copied.
const MaxParamBytes = 8 << 10

// maxQuoted is how many bytes of a client's URI, name or path an error
// message or a log line quotes: enough to recognise it, never an echo of a
// hostile request.
const maxQuoted = 200

// clip returns s cut to maxQuoted bytes, on a rune boundary, with "…"
// appended when something was cut.
func clip(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	n := maxQuoted
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// sizedString is the decoded byte length of a JSON string (or the raw length
// of any other JSON value), read without copying a value under the cap.
type sizedString int

// UnmarshalJSON records the length of b's value.
func (s *sizedString) UnmarshalJSON(b []byte) error {
	// A JSON string decodes to at most its raw length less the quotes, so
	// only a long one needs decoding to be measured exactly.
	if len(b) < 2 || b[0] != '"' || len(b)-2 <= MaxParamBytes {
		*s = sizedString(max(len(b)-2, 0))
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		*s = sizedString(len(b))
		return nil
	}
	*s = sizedString(len(v))
	return nil
}

// paramProbe holds the lengths of the params fields that [MaxParamBytes]
// caps, whatever the method.
type paramProbe struct {
	URI       sizedString            `json:"uri"`
	Name      sizedString            `json:"name"`
	Arguments map[string]sizedString `json:"arguments"`
	Ref       struct {
		URI  sizedString `json:"uri"`
		Name sizedString `json:"name"`
	} `json:"ref"`
	Argument struct {
		Value sizedString `json:"value"`
	} `json:"argument"`
}

// err returns the -32602 answer for the first field over [MaxParamBytes],
// or nil.
func (p *paramProbe) err() *jsonrpc.Error {
	for _, f := range []struct {
		name string
		n    sizedString
	}{{"uri", p.URI}, {"name", p.Name}, {"ref.uri", p.Ref.URI}, {"ref.name", p.Ref.Name}, {"argument.value", p.Argument.Value}} {
		if f.n > MaxParamBytes {
			return tooLong(f.name, int(f.n))
		}
	}
	keys := make([]string, 0, len(p.Arguments))
	for k, n := range p.Arguments {
		if n > MaxParamBytes || len(k) > MaxParamBytes {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	k := slices.Min(keys)
	if len(k) > MaxParamBytes {
		return tooLong("an argument name", len(k))
	}
	return tooLong("arguments."+clip(k), int(p.Arguments[k]))
}

func tooLong(field string, n int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s is %d bytes; the limit is %d", field, n, MaxParamBytes)}
}

// probeParams returns the lengths of the capped fields of typed params.
func probeParams(p mcp.Params) paramProbe {
	var pr paramProbe
	switch p := p.(type) {
	case *mcp.ReadResourceParams:
		if p != nil {
			pr.URI = sizedString(len(p.URI))
		}
	case *mcp.SubscribeParams:
		if p != nil {
			pr.URI = sizedString(len(p.URI))
		}
	case *mcp.UnsubscribeParams:
		if p != nil {
			pr.URI = sizedString(len(p.URI))
		}
	case *skillsGetParams:
		if p != nil {
			pr.URI = sizedString(len(p.URI))
		}
	case *dirReadParams:
		if p != nil {
			pr.URI = sizedString(len(p.URI))
		}
	case *mcp.CallToolParamsRaw:
		if p != nil {
			pr.Name = sizedString(len(p.Name))
			// Not an object: the tool's own schema check answers it.
			_ = json.Unmarshal(p.Arguments, &pr.Arguments)
		}
	case *mcp.GetPromptParams:
		if p != nil {
			pr.Name = sizedString(len(p.Name))
			pr.Arguments = make(map[string]sizedString, len(p.Arguments))
			for k, v := range p.Arguments {
				pr.Arguments[k] = sizedString(len(v))
			}
		}
	case *mcp.CompleteParams:
		if p != nil {
			if p.Ref != nil {
				pr.Ref.URI, pr.Ref.Name = sizedString(len(p.Ref.URI)), sizedString(len(p.Ref.Name))
			}
			pr.Argument.Value = sizedString(len(p.Argument.Value))
		}
	}
	return pr
}

// limitMiddleware refuses, with -32602, a request whose URI, name or tool
// argument is over [MaxParamBytes], before any handler resolves or quotes
// it. Over HTTP the handler has already refused such a body before the SDK
// decoded it; this covers stdio.
func (f *Facade) limitMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if nilExtensionParams(req.GetParams()) {
			// "params": null on one of this server's own methods: the SDK
			// hands over a nil pointer its own request accessors would
			// dereference.
			return nil, invalidParams(method+": params must be an object", "")
		}
		if err := paramsLimitError(req.GetParams()); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	}
}

// nilExtensionParams reports whether p is a nil pointer to the params of
// skills/list, skills/get or resources/directory/read.
func nilExtensionParams(p mcp.Params) bool {
	switch p := p.(type) {
	case *skillsListParams:
		return p == nil
	case *skillsGetParams:
		return p == nil
	case *dirReadParams:
		return p == nil
	}
	return false
}

// paramsLimitError returns the -32602 answer for params p with a field over
// [MaxParamBytes], or nil. The middleware and the stdio fast lane
// (fastlane.go) both refuse with it.
func paramsLimitError(p mcp.Params) error {
	if p == nil || smallArguments(p) {
		return nil
	}
	pr := probeParams(p)
	if err := pr.err(); err != nil {
		return err
	}
	return nil
}

// smallArguments reports whether p is a tools/call whose raw arguments are
// no longer than [MaxParamBytes] in all, so that no argument can be over
// it: the common call skips decoding them once more. Other params are
// checked without decoding anything.
func smallArguments(p mcp.Params) bool {
	c, ok := p.(*mcp.CallToolParamsRaw)
	return ok && len(c.Arguments) <= MaxParamBytes && len(c.Name) <= MaxParamBytes
}
