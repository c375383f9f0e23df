package mcpface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio fast lane (issue 12). go-sdk spends most of a small request's
// time outside the facade: it decodes each incoming message six or seven
// times, each with a fresh 32 KiB buffer, and runs it through every
// middleware; an empty ping costs about 85 µs. The fast lane answers the
// requests a skills client repeats most — skills/list, skills/get,
// resources/read, and ping — in the stdio wire itself, as the line is
// read, with the result the SDK's own path would send: it calls the very
// functions the handlers call ([Facade.skillsPage], [Facade.skillEntry],
// [Facade.resolveRead], [paramsLimitError]) on the current snapshot and
// encodes the result as go-sdk's jsonrpc2 does.
//
// It answers only what it can prove the SDK's path would answer the same,
// with no side effect skipped; every other line goes to the SDK unchanged:
//   - a single JSON-RPC request (never a batch) with an id no request in
//     flight uses, on a session the SDK has initialized (a 2025-11-25
//     initialize answered; on 2026-07-28 a first request served), while
//     the stdio server has that one session and no initialize is pending;
//   - params an object holding only the method's own keys (uri, cursor,
//     _meta), each once, uri and cursor strings of printable ASCII without
//     escapes; _meta absent or empty on 2025-11-25, and on 2026-07-28 only
//     the protocol version 2026-07-28 with client capabilities, client info
//     and log level the SDK accepts (no progress token);
//   - none of: request tracing (--trace-mcp), debug logging of requests, a
//     test panic hook, a hidden-tools notice or startup warnings still due
//     to the session, a 2026-07-28 resources/read whose client declares
//     roots (the roots flow may answer it), a file changed on disk since
//     the snapshot was built (the SDK's path waits for the next one), a
//     resources/read whose URI is not written in its canonical form (the
//     SDK matches the URI as written against the resource template), ping
//     on 2026-07-28 (removed in that era), a handler panic.
//
// fastlane_test.go checks the answers against the SDK's path on both eras
// for every skill and file of real corpora and for the error cases.

// Methods the fast lane answers.
const (
	methodPing          = "ping"
	methodResourcesRead = "resources/read"
)

// StdioTransport is [NewStdioTransport] with the fast lane of f: the
// requests it can answer from f's current snapshot are answered in the
// transport, the rest pass to the SDK (fastlane.go). Connect the transport
// to f's own stdio server ([Facade.Server]).
func (f *Facade) StdioTransport(in io.ReadCloser, out io.WriteCloser, log *slog.Logger) mcp.Transport {
	t := NewStdioTransport(in, out, log).(*stdioTransport)
	t.fast = f
	return t
}

// fastLane is the fast lane of one stdio connection. Its fields are used
// only by the SDK's reading goroutine, which calls [wire.accept].
type fastLane struct {
	f *Facade
	// ss is the connection's session, once found ([fastLane.session]).
	ss *mcp.ServerSession
	// out is the response being built, reused.
	out []byte
}

// fastRequest is a request the fast lane may answer: its parts as read.
type fastRequest struct {
	id     jsonrpc.ID
	method string
	uri    string
	cursor string
	meta   mcp.Meta // nil when absent or empty
	modern bool     // the 2026-07-28 era, from meta
}

// answer returns the response line to req, newline-terminated, or nil
// when the SDK must answer it. w.mu is not held.
func (l *fastLane) answer(w *wire, msg jsonrpc.Message) []byte {
	f := l.f
	if f.fastOff || f.trace != nil || f.panicHook != nil || f.log.Enabled(context.Background(), slog.LevelDebug) {
		return nil
	}
	r, ok := parseFast(msg)
	if !ok {
		return nil
	}
	w.mu.Lock()
	ready := !w.initPending && w.sdkReplied && len(w.partial) == 0 && !w.pending[r.id] && (r.modern || w.version != "")
	w.mu.Unlock()
	if !ready {
		return nil
	}
	ss := l.session()
	if ss == nil || ss.InitializeParams() == nil {
		return nil
	}
	caps, ok := l.clientOf(ss, r)
	if !ok || !f.noticeIdle(ss, caps, r.meta) {
		return nil
	}
	if r.modern && r.method == methodResourcesRead && f.rootsEnabled() && declaresRoots(caps) {
		return nil
	}
	s := f.current()
	if s == nil {
		return nil
	}
	line := l.respond(s, r)
	if line != nil {
		f.fastAnswers.Add(1)
	}
	return line
}

// respond computes and encodes the response to r from snapshot s, or
// returns nil when the SDK must answer (a file changed on disk, a URI not
// in canonical form, a panic).
func (l *fastLane) respond(s *snapshot, r *fastRequest) (line []byte) {
	defer func() {
		if recover() != nil {
			line = nil // the SDK's path answers, and recovers, again
		}
	}()
	f := l.f
	var res mcp.Result
	var err error
	switch r.method {
	case methodPing:
		res = &pingResult{}
	case methodSkillsList:
		res, err = f.skillsPage(s, r.cursor, r.meta)
	case methodSkillsGet:
		if err = paramsLimitError(&skillsGetParams{URI: r.uri}); err == nil {
			res, err = f.skillEntry(s, r.uri, r.meta)
		}
	case methodResourcesRead:
		if err = paramsLimitError(&mcp.ReadResourceParams{URI: r.uri}); err == nil {
			var rr *mcp.ReadResourceResult
			rr, err = f.resolveRead(s, r.uri, false)
			if errors.Is(err, errWouldWait) || err == nil && (len(rr.Contents) != 1 || rr.Contents[0].URI != r.uri) {
				return nil
			}
			if err == nil {
				res = rr
			}
		}
	}
	if err != nil {
		return l.encode(r, nil, clipError(coded(r.method, err)))
	}
	return l.encode(r, res, nil)
}

// encode returns the response line to r with result res or error rerr,
// byte for byte as go-sdk writes it: the result encoded by
// [encoding/json.Encoder] without HTML escaping, in the wire envelope
// {"jsonrpc":"2.0","id":…,"result":…} (or "error"); on 2026-07-28 a result
// also carries resultType "complete" and _meta[serverInfo], as the SDK adds
// them to every result of that era. Nil when encoding fails.
func (l *fastLane) encode(r *fastRequest, res mcp.Result, rerr error) []byte {
	if rerr != nil {
		data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: r.id, Error: rerr})
		if err != nil {
			return nil
		}
		return append(data, '\n')
	}
	if r.modern {
		res.SetMeta(mcp.Meta{mcp.MetaKeyServerInfo: l.f.implementation()})
	}
	var buf bytes.Buffer
	buf.Grow(len(l.out))
	buf.WriteString(resultPrefix)
	id, err := json.Marshal(r.id.Raw())
	if err != nil {
		return nil
	}
	buf.Write(id)
	buf.WriteString(`,"result":`)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if _, ok := res.(*mcp.ReadResourceResult); ok && r.modern {
		// The SDK's wire form of a read result puts its resultType last.
		out = append(out[:len(out)-1], `,"resultType":"complete"}`...)
	}
	out = append(out, "}\n"...)
	l.out = out
	return out
}

// session returns the connection's session: the one session of f's stdio
// server, found once the SDK has answered a request of this connection
// (so its session is bound and listed), or nil while the server has more
// than one session.
func (l *fastLane) session() *mcp.ServerSession {
	if l.ss != nil {
		return l.ss
	}
	srv := l.f.srv.Load()
	if srv == nil {
		return nil
	}
	var only *mcp.ServerSession
	n := 0
	for ss := range srv.Sessions() {
		only, n = ss, n+1
	}
	if n != 1 {
		return nil
	}
	l.ss = only
	return only
}

// clientOf returns the client capabilities a request r of session ss is
// served with, as the SDK reads them (per request on 2026-07-28, from the
// session's initialize before), and false when the SDK would refuse r's
// _meta.
func (l *fastLane) clientOf(ss *mcp.ServerSession, r *fastRequest) (*mcp.ClientCapabilities, bool) {
	if !r.modern {
		return ss.InitializeParams().Capabilities, true
	}
	req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{Meta: r.meta}}
	caps := req.ClientCapabilities()
	if caps == nil {
		return nil, false
	}
	if _, ok := r.meta[mcp.MetaKeyClientInfo]; ok && req.ClientInfo() == nil {
		return nil, false
	}
	return caps, true
}

// parseFast returns the parts of msg when it is a request the fast lane
// answers, with only the params it understands (see the top of this file).
func parseFast(msg jsonrpc.Message) (*fastRequest, bool) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil, false
	}
	r := &fastRequest{id: req.ID, method: req.Method}
	var keys []string
	switch req.Method {
	case methodPing:
		if len(req.Params) == 0 {
			return r, true
		}
		keys = []string{"_meta"}
	case methodSkillsList:
		keys = []string{"cursor", "_meta"}
	case methodSkillsGet, methodResourcesRead:
		keys = []string{"uri", "_meta"}
	default:
		return nil, false
	}
	fields, ok := objectFields(req.Params, keys)
	if !ok {
		return nil, false
	}
	if raw, ok := fields["uri"]; ok {
		if r.uri, ok = plainString(raw); !ok {
			return nil, false
		}
	}
	if raw, ok := fields["cursor"]; ok {
		if r.cursor, ok = plainString(raw); !ok {
			return nil, false
		}
	}
	if raw, ok := fields["_meta"]; ok {
		if !r.setMeta(raw) {
			return nil, false
		}
	}
	if r.modern && r.method == methodPing {
		return nil, false
	}
	return r, true
}

// setMeta takes the raw _meta of a request and reports whether the fast
// lane may answer with it: empty (the 2025-11-25 era), or the 2026-07-28
// era's protocol version, client capabilities (an object), and optionally
// client info (an object) and log level; nothing else.
func (r *fastRequest) setMeta(raw json.RawMessage) bool {
	var meta mcp.Meta
	if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
		return false
	}
	if len(meta) == 0 {
		return true
	}
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v != eraModern {
		return false
	}
	if _, ok := meta[mcp.MetaKeyClientCapabilities].(map[string]any); !ok {
		return false
	}
	for k, v := range meta {
		switch k {
		case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities:
		case mcp.MetaKeyClientInfo:
			if _, ok := v.(map[string]any); !ok {
				return false
			}
		case mcp.MetaKeyLogLevel:
			if _, ok := v.(string); !ok {
				return false
			}
		default:
			return false
		}
	}
	r.meta, r.modern = meta, true
	return true
}

// objectFields returns the members of the JSON object raw, which may hold
// only the keys allowed, each once; false for anything else (not an
// object, another key, a key twice).
func objectFields(raw json.RawMessage, allowed []string) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	fields := make(map[string]json.RawMessage, len(allowed))
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		if _, dup := fields[k]; dup || !contains(allowed, k) {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fields[k] = v
	}
	return fields, true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// plainString returns the value of the JSON string raw when it is written
// in printable ASCII without escapes (so any decoder reads the same bytes).
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return "", false
		}
	}
	return string(body), true
}

// pingResult is the result of ping: {}, as the SDK's empty result.
type pingResult struct{ mcp.ResultBase }

// implementation is the serverInfo of every server the facade builds.
func (f *Facade) implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: serverName, Version: f.opts.Version}
}
