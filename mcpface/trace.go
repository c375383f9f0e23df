package mcpface

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// Recorder takes the trace-only records of the MCP sessions (issue 13
// item 13); [events.TracePublisher] is one.
type Recorder interface {
	Record(ev any) error
}

// tracer records, through [Options.Trace], how each client introduced
// itself ([events.SessionInitialized]) and, with [Options.TraceRequests],
// every request ([events.MCPRequest]). Its middleware is installed only
// when tracing is on, so without a trace no request pays for it.
type tracer struct {
	rec      Recorder
	requests bool

	mu sync.Mutex
	// sessions are the stdio sessions whose 2026-07-28 introduction is
	// recorded; seen the stateless HTTP introductions (there is no session
	// to hang them on), each distinct one recorded once.
	sessions map[*mcp.ServerSession]bool
	seen     map[string]bool
}

// maxTraceSeen bounds tracer.seen; past it, the set starts over.
const maxTraceSeen = 256

// traceMiddleware returns the middleware recording each request of the
// server it wraps (a stateless one: over HTTP, each request in a session of
// its own); it is the outermost middleware, so it sees the answer a client
// gets.
func (f *Facade) traceMiddleware(stateless bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return f.trace.handler(next, stateless)
	}
}

func (t *tracer) handler(next mcp.MethodHandler, stateless bool) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		t.introduction(method, req, stateless)
		if !t.requests {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		rec := events.MCPRequest{Method: method, Target: requestTarget(req),
			DurationMS: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			rec.Error = clip(err.Error())
			var we *jsonrpc.Error
			if errors.As(err, &we) {
				rec.Code = we.Code
			}
		} else if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			rec.Error = "tool error"
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					rec.Error = "tool error: " + clip(tc.Text)
					break
				}
			}
		}
		t.record(rec)
		return res, err
	}
}

// introduction records the client's initialize, or on 2026-07-28 the first
// request of a session (or each distinct one over stateless HTTP) carrying
// the protocol _meta.
func (t *tracer) introduction(method string, req mcp.Request, stateless bool) {
	if p, ok := req.GetParams().(*mcp.InitializeParams); ok && method == "initialize" {
		if p != nil {
			t.record(events.SessionInitialized{Method: method, Protocol: p.ProtocolVersion,
				Client: rawJSON(p.ClientInfo), Capabilities: rawJSON(p.Capabilities)})
		}
		return
	}
	meta := paramsMeta(req.GetParams())
	protocol, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	ca, ok := req.(clientAware)
	if protocol == "" || !ok {
		return
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if stateless {
		ss = nil
	}
	t.mu.Lock()
	if ss != nil && t.sessions[ss] {
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	ev := events.SessionInitialized{Method: method, Protocol: protocol,
		Client: rawJSON(ca.ClientInfo()), Capabilities: rawJSON(ca.ClientCapabilities())}
	key := protocol + "\x00" + string(ev.Client) + "\x00" + string(ev.Capabilities)
	t.mu.Lock()
	if t.sessions == nil {
		t.sessions, t.seen = map[*mcp.ServerSession]bool{}, map[string]bool{}
	}
	first := !t.seen[key]
	if ss != nil {
		first = !t.sessions[ss]
		t.sessions[ss] = true
	} else {
		if len(t.seen) >= maxTraceSeen {
			clear(t.seen)
		}
		t.seen[key] = true
	}
	t.mu.Unlock()
	if first {
		t.record(ev)
	}
}

func (t *tracer) record(ev any) {
	// A failed trace write must not fail the request; the trace file's
	// own error is the publisher's to report at close.
	_ = t.rec.Record(ev)
}

// requestTarget is the tool, prompt or resource a request names, clipped.
func requestTarget(req mcp.Request) string {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			return clip(r.Params.Name)
		}
	case *mcp.GetPromptRequest:
		if r.Params != nil {
			return clip(r.Params.Name)
		}
	case *mcp.ReadResourceRequest:
		if r.Params != nil {
			return clip(r.Params.URI)
		}
	case *mcp.SubscribeRequest:
		if r.Params != nil {
			return clip(r.Params.URI)
		}
	}
	return ""
}

// rawJSON is v as JSON, or nil when it is nil or does not encode.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}
