package mcpface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"

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
//     to a 2026-07-28 session (on 2025-11-25 the fast lane gives them as
//     the SDK's path does, with the same functions, before it answers), a
//     2026-07-28 resources/read whose client declares
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
	// out is the response being built, and tail the end of a result kept
	// aside while entries are spliced in; both reused.
	out, tail []byte
}

// fastRequest is a request the fast lane may answer: its parts as read.
type fastRequest struct {
	id     jsonrpc.ID
	rawID  []byte // the id as written: as the SDK writes it back
	method string
	uri    string
	cursor string
	meta   mcp.Meta // nil when absent or empty
	modern bool     // the 2026-07-28 era, from meta
}

// answer returns the response line to req, newline-terminated, or nil
// when the SDK must answer it. w.mu is not held.
func (l *fastLane) answer(w *wire, line []byte) []byte {
	f := l.f
	if f.fastOff || f.trace != nil || f.panicHook != nil || f.log.Enabled(context.Background(), slog.LevelDebug) {
		return nil
	}
	r, ok := parseFast(line)
	if !ok {
		return nil
	}
	w.mu.Lock()
	// One era per connection: a 2026-07-28 request on a connection that
	// began with a 2025-11-25 initialize (or the reverse) is the SDK's.
	ready := !w.initPending && w.sdkReplied && len(w.partial) == 0 && !w.pending[r.id] && (r.modern == (w.version == ""))
	w.mu.Unlock()
	if !ready {
		return nil
	}
	ss := l.session()
	if ss == nil || ss.InitializeParams() == nil {
		return nil
	}
	caps, ok := l.clientOf(ss, r)
	if !ok {
		return nil
	}
	if !f.noticeIdle(ss, caps, r.meta) {
		if r.modern {
			// The SDK sends a 2026-07-28 log message at the level the
			// request's context carries, which only its own path sets.
			return nil
		}
		// What toolsNoticeMiddleware does first on the SDK's path, with
		// the same functions: on 2025-11-25 the client's capabilities and
		// log level are the session's.
		req := &mcp.ReadResourceRequest{Session: ss, Params: &mcp.ReadResourceParams{}}
		f.noticeHiddenTools(context.Background(), req)
		f.sendWarnings(context.Background(), req)
	}
	if r.modern && r.method == methodResourcesRead && f.rootsEnabled() && declaresRoots(caps) {
		return nil
	}
	s := f.current()
	if s == nil || s.cat.Pending && waitsForDigests(r.method) {
		return nil // the SDK's path waits for a complete catalog
	}
	out := l.respond(s, r)
	if out != nil {
		f.fastAnswers.Add(1)
	}
	return out
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
		if r.uri != "" && !strings.HasPrefix(r.uri, "skill://") {
			// Another scheme: a resource registered with the SDK (the
			// apps' ui:// views) or none; the SDK answers either way.
			return nil
		}
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
	// The pre-encoded entries are spliced in after encoding: encoding/json
	// would re-validate and copy every byte of a 50 KB page, 40% of its
	// CPU time (issue 12). They are compact already, encoded by the same
	// encoder settings, so the bytes are the same. A page's entries go
	// straight from the snapshot into the response.
	var raw json.RawMessage
	var page pageEntries
	var key string
	switch v := res.(type) {
	case *skillsListResult:
		page, key, v.Skills = v.Skills, `"skills":null`, pageEntries{}
	case *skillsGetResult:
		raw, key, v.Skill = v.Skill, `"skill":null`, nil
	}
	buf := bytes.NewBuffer(l.out[:0])
	buf.WriteString(resultPrefix)
	buf.Write(r.rawID)
	buf.WriteString(`,"result":`)
	if m, ok := res.(json.Marshaler); ok {
		// What encoding/json would do with it, without compacting again
		// what json.Marshal made compact (a read result's text is most of
		// its bytes).
		data, err := m.MarshalJSON()
		if err != nil || len(data) == 0 || data[0] != '{' {
			return nil
		}
		buf.Write(data)
	} else {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return nil
		}
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if key != "" {
		// The first occurrence is the result's own member: only _meta
		// (serverInfo, no such key) comes before it, and a string cannot
		// hold the unescaped quotes.
		i := bytes.Index(out, []byte(key))
		if i < 0 {
			return nil
		}
		// The tail (nextCursor, the closing brace) is small: kept aside
		// before the entries overwrite it. The entries themselves are
		// shared and never appended to.
		l.tail = append(l.tail[:0], out[i+len(key):]...)
		out = out[:i+len(key)-len("null")]
		if page.s != nil {
			out = page.appendJSON(out)
		} else {
			out = append(out, raw...)
		}
		out = append(out, l.tail...)
	}
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

// plainRequest reads line, a valid JSON text of one object, as go-sdk's
// decoder would read a request or notification, without that decoder
// (which allocates 32 KiB per message), when line is spelled so that the
// decoder certainly agrees: the keys jsonrpc, id, method and params, each
// at most once and exactly so spelled (jsonrpc and method required);
// jsonrpc "2.0"; an id that is an integer of at most 15 digits or a plain
// string ([plainString]); a plain method; params an object or an array.
// It also returns the id as written. The request's params alias line.
func plainRequest(line []byte) (req *jsonrpc.Request, rawID []byte, ok bool) {
	var version, method, params []byte
	ok = eachMember(line, func(k string, v []byte) bool {
		switch {
		case k == "jsonrpc" && version == nil:
			version = v
		case k == "id" && rawID == nil:
			rawID = v
		case k == "method" && method == nil:
			method = v
		case k == "params" && params == nil:
			params = v
		default:
			return false
		}
		return true
	})
	if !ok || string(version) != `"2.0"` || method == nil || params != nil && params[0] != '{' && params[0] != '[' {
		return nil, nil, false
	}
	req = &jsonrpc.Request{Params: params}
	if req.Method, ok = plainString(method); !ok {
		return nil, nil, false
	}
	if rawID != nil {
		if req.ID, ok = plainID(rawID); !ok {
			return nil, nil, false
		}
	}
	return req, rawID, true
}

// parseFast returns the parts of line, a valid JSON text of one object,
// when it is a request the fast lane answers (see the top of this file),
// read by [plainRequest].
func parseFast(line []byte) (*fastRequest, bool) {
	req, rawID, ok := plainRequest(line)
	if !ok || !req.IsCall() {
		return nil, false
	}
	r := &fastRequest{id: req.ID, rawID: rawID, method: req.Method}
	params := []byte(req.Params)
	switch r.method {
	case methodPing:
		if params == nil {
			return r, true
		}
	case methodSkillsList, methodSkillsGet, methodResourcesRead:
	default:
		return nil, false
	}
	if params == nil || !r.setParams(params) {
		return nil, false
	}
	if r.modern && r.method == methodPing {
		return nil, false
	}
	return r, true
}

// setParams takes the params object of r: only the keys of r's method,
// each once, uri and cursor plain strings.
func (r *fastRequest) setParams(params []byte) bool {
	var uri, cursor, meta []byte
	ok := eachMember(params, func(k string, v []byte) bool {
		switch {
		case k == "uri" && uri == nil && (r.method == methodSkillsGet || r.method == methodResourcesRead):
			uri = v
		case k == "cursor" && cursor == nil && r.method == methodSkillsList:
			cursor = v
		case k == "_meta" && meta == nil:
			meta = v
		default:
			return false
		}
		return true
	})
	if !ok {
		return false
	}
	if uri != nil {
		if r.uri, ok = plainString(uri); !ok {
			return false
		}
	}
	if cursor != nil {
		if r.cursor, ok = plainString(cursor); !ok {
			return false
		}
	}
	return meta == nil || r.setMeta(meta)
}

// eachMember calls fn with each key and raw value of the JSON object obj,
// which must be valid JSON, in order, and reports whether obj is an object
// whose keys are all plain (no escapes) and fn returned true for each.
func eachMember(obj []byte, fn func(key string, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return skipSpace(obj, i+1) == len(obj)
	}
	for i < len(obj) {
		end := valueEnd(obj, i)
		if obj[i] != '"' || end < 0 {
			return false
		}
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		end = valueEnd(obj, i)
		if end < 0 || !fn(string(key), obj[i:end]) {
			return false
		}
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == '}' {
			return skipSpace(obj, i+1) == len(obj)
		}
		if i >= len(obj) || obj[i] != ',' {
			return false
		}
		i = skipSpace(obj, i+1)
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just after the JSON value starting at b[i]
// (valid JSON assumed), or -1.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		d := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := valueEnd(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				d++
			case '}', ']':
				if d--; d == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !bytes.ContainsRune([]byte(",}] \t\n\r"), rune(b[j])) {
		j++
	}
	return j
}

// plainID returns the request id raw as go-sdk decodes it, when raw is an
// integer of at most 15 digits (exact as the float64 the SDK makes of it,
// and written back as the same digits) or a plain string.
func plainID(raw []byte) (jsonrpc.ID, bool) {
	if raw[0] == '"' {
		s, ok := plainString(raw)
		if !ok {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	}
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || len(digits) > 1 && digits[0] == '0' {
		return jsonrpc.ID{}, false
	}
	var v int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return jsonrpc.ID{}, false
		}
		v = 10*v + int64(c-'0')
	}
	if len(digits) < len(raw) {
		if v == 0 {
			return jsonrpc.ID{}, false // -0
		}
		v = -v
	}
	id, err := jsonrpc.MakeID(float64(v))
	return id, err == nil
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
