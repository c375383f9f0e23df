package mcpface

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBodyBytes is the default [HTTPOptions.MaxBodyBytes]: 4 MiB, the
// go-sdk's own default. A request to this server is a few hundred bytes, so
// the cap only bounds what a hostile client can make the server hold.
const DefaultMaxBodyBytes = 4 << 20

// Paths served by [Facade.HTTPHandler].
const (
	httpPathMCP    = "/mcp"
	httpPathHealth = "/healthz"
)

// Header names of the Streamable HTTP transport (2026-07-28).
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// JSON-RPC error codes of MCP 2026-07-28 (BASE-R43).
const (
	codeHeaderMismatch     = -32020
	codeUnsupportedVersion = -32022
)

// HTTPOptions configures [Facade.HTTPHandler]. The zero value allows no
// browser origin and caps bodies at [DefaultMaxBodyBytes].
type HTTPOptions struct {
	// Loopback reports that the listener is bound to a loopback address:
	// then the origins http(s)://localhost, 127.0.0.1 and [::1], on any
	// port, are allowed. If false, only AllowedOrigins are.
	Loopback bool
	// AllowedOrigins are further exact origins ("https://app.example.com"),
	// compared case-insensitively on scheme and host; the port is
	// significant, a default port (80 for http, 443 for https) may be written
	// or left out. An entry that is not an http(s) origin is logged and
	// ignored. If empty, no further origin is allowed.
	AllowedOrigins []string
	// MaxBodyBytes caps a request body. If zero or negative, defaults to
	// [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// MaxConcurrent caps the POST /mcp requests handled at once: reading
	// the body, checking it and answering it. Of these, at most 2 may have
	// a body over 64 KiB (or of unknown length), which costs the SDK
	// megabytes to decode. If zero or negative, defaults to
	// [DefaultMaxConcurrent].
	MaxConcurrent int
	// MaxQueued caps the requests that wait for a slot when MaxConcurrent
	// are being handled; one more gets 503 with Retry-After at once. A
	// waiting request holds no body in memory (it is read only once the
	// request has a slot). If zero, defaults to 64 × MaxConcurrent;
	// negative means none wait.
	MaxQueued int
	// Cluster, if set, gives the cluster membership GET /healthz reports
	// in cluster mode (issue 16); nil outside a cluster, where /healthz has
	// no "cluster" field.
	Cluster func() ClusterHealth
}

// ClusterHealth is the "cluster" object of GET /healthz in cluster mode
// (issue 16).
type ClusterHealth struct {
	// Name is the cluster name (--cluster-name).
	Name string `json:"name"`
	// Node identifies this replica in the cluster.
	Node string `json:"node"`
	// Leader reports whether this replica holds the lease: it alone polls
	// upstream, watches the sources and publishes catalog versions.
	Leader bool `json:"leader"`
}

// DefaultMaxConcurrent returns the default [HTTPOptions.MaxConcurrent]:
// 4 × GOMAXPROCS. Answering a request is CPU work on bytes in memory, so
// more in flight than a few per core only adds memory (each may hold a body
// of up to [HTTPOptions.MaxBodyBytes] and the SDK's decoded copies of it),
// not throughput.
func DefaultMaxConcurrent() int { return 4 * runtime.GOMAXPROCS(0) }

// maxQueueWait bounds how long a queued request waits for a slot before it
// gets 503: a request stuck that long behind slow bodies is better retried
// than held until the client gives up.
const maxQueueWait = 10 * time.Second

// HTTPHandler returns the stateless Streamable HTTP handler: POST /mcp for
// MCP (both protocol eras), GET /healthz for load balancers. Until the first
// catalog is set both answer 503 (/mcp with a JSON-RPC error body). The
// options are copied. The handler is safe for concurrent use and starts no
// goroutine that outlives a request.
//
// Every request is served by a server built from the newest catalog (built
// once per catalog version and shared): instructions, tools, prompts,
// resources and the SEP-2640 methods as on stdio, with listChanged and
// subscribe false, no sessions and nothing pushed. Tools mode auto still
// hides the tools from a 2026-07-28 request whose capabilities declare the
// skills extension; a 2025-11-25 request carries no capabilities, so there
// it behaves as "always".
//
// Before the SDK sees a request, the handler answers, on every path: 403 for
// a request that arrived on a loopback address with a Host header that is
// not loopback (the go-sdk's DNS-rebinding rule) and 403 for a present Origin
// that is not allowed; then 404 for any other path, 405 with Allow for any
// other HTTP method, 415 for a Content-Type other than application/json, 413
// for a body over the cap, 503 with Retry-After when MaxConcurrent requests
// are being handled and MaxQueued already wait (or a queued one waited too
// long), 400 -32700 for a body that is not JSON, 400 -32600 for a batch, any
// other non-object or an id over 1 KiB, -32602 (400 on 2026-07-28, else 200)
// for a URI, name or argument over [MaxParamBytes], 400 -32022 (data
// {supported, requested})
// for an MCP-Protocol-Version the SDK does not speak, and 400 -32020 for an
// Mcp-Method or Mcp-Name header that is repeated, holds control characters,
// or is a malformed =?base64?…?= sentinel (a well-formed one is decoded
// before the SDK compares it with the body). Every 4xx and 5xx, its own and
// the SDK's, carries a JSON-RPC error body.
func (f *Facade) HTTPHandler(opts *HTTPOptions) http.Handler {
	var o HTTPOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent()
	}
	switch {
	case o.MaxQueued == 0:
		o.MaxQueued = 64 * o.MaxConcurrent
	case o.MaxQueued < 0:
		o.MaxQueued = 0
	}
	h := &httpHandler{
		f:        f,
		log:      f.log.With("transport", "http"),
		loopback: o.Loopback,
		origins:  make(map[string]bool),
		maxBody:  o.MaxBodyBytes,
		slots:    newSemaphore(o.MaxConcurrent, o.MaxQueued),
		large:    newSemaphore(min(maxLargeConcurrent, o.MaxConcurrent), o.MaxQueued),
		cluster:  o.Cluster,
	}
	for _, a := range o.AllowedOrigins {
		key, ok := originKey(a)
		if !ok {
			h.log.Warn("ignoring allowed origin that is not an http(s) origin", "origin", a)
			continue
		}
		h.origins[key] = true
	}
	h.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := r.Context().Value(httpServerKey{}).(*mcp.Server)
		return srv
	}, &mcp.StreamableHTTPOptions{
		Stateless: true,
		// No server-to-client traffic exists in stateless mode, so one JSON
		// object per response is all a client needs; notifications made
		// while handling a request are dropped rather than streamed.
		JSONResponse:        true,
		Logger:              slog.New(quietHandler{h.log.Handler()}),
		MaxRequestBodyBytes: o.MaxBodyBytes,
	})
	return h
}

// httpServerKey carries the server chosen for a request to the SDK's
// getServer callback, so that one request sees one server.
type httpServerKey struct{}

type httpHandler struct {
	// fixed at creation
	f        *Facade
	log      *slog.Logger
	loopback bool
	origins  map[string]bool // originKey of each allowed origin
	maxBody  int64
	sdk      *mcp.StreamableHTTPHandler
	slots    *semaphore // every POST /mcp being handled
	large    *semaphore // those among them with a body over largeBody
	cluster  func() ClusterHealth

	// buildMu serialises building the server of a new catalog version, so
	// that concurrent requests build it once.
	buildMu sync.Mutex
	cached  atomic.Pointer[versionedServer]
}

// versionedServer is the HTTP server built for one catalog version.
type versionedServer struct {
	version uint64
	srv     *mcp.Server
}

// server returns the server of s's catalog version, or of a newer one, built
// once per version.
func (h *httpHandler) server(s *snapshot) *mcp.Server {
	if c := h.cached.Load(); c != nil && c.version >= s.cat.Version {
		return c.srv
	}
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	if c := h.cached.Load(); c != nil && c.version >= s.cat.Version {
		return c.srv
	}
	srv := h.f.newServer(s, true)
	h.cached.Store(&versionedServer{version: s.cat.Version, srv: srv})
	h.log.Debug("http server built", "version", s.cat.Version)
	return srv
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if badHost(r) {
		writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Forbidden: invalid Host header %q", clip(r.Host)), nil)
		return
	}
	if origin, ok := h.badOrigin(r.Header.Values("Origin")); ok {
		writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Forbidden: origin %q is not allowed", clip(origin)), nil)
		return
	}
	switch r.URL.Path {
	case httpPathMCP:
		h.serveMCP(w, r)
	case httpPathHealth:
		h.serveHealth(w, r)
	default:
		writeRPCError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Not found: %s; the MCP endpoint is POST %s", r.URL.Path, httpPathMCP), nil)
	}
}

// serveHealth answers GET /healthz with the catalog version and skill count.
func (h *httpHandler) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "Method not allowed: "+httpPathHealth+" answers GET", nil)
		return
	}
	body := struct {
		Status         string         `json:"status"`
		CatalogVersion uint64         `json:"catalogVersion"`
		Skills         int            `json:"skills"`
		Cluster        *ClusterHealth `json:"cluster,omitempty"`
	}{Status: "starting"}
	if h.cluster != nil {
		c := h.cluster()
		body.Cluster = &c
	}
	status := http.StatusServiceUnavailable
	if s := h.f.current(); s != nil {
		body.Status, body.CatalogVersion, body.Skills = "ok", s.cat.Version, len(s.cat.Skills)
		status = http.StatusOK
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// serveMCP checks what the SDK does not (or not with a JSON-RPC body) and
// hands the request to the SDK's stateless handler.
func (h *httpHandler) serveMCP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeRPCError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "Method not allowed: only POST "+httpPathMCP+" is served", nil)
		return
	}
	s := h.f.current()
	if s == nil {
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusServiceUnavailable, nil, jsonrpc.CodeInternalError, "Server starting: no catalog yet; retry shortly", nil)
		return
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		writeRPCError(w, http.StatusUnsupportedMediaType, nil, jsonrpc.CodeInvalidRequest, "Unsupported media type: Content-Type must be application/json", nil)
		return
	}
	if r.ContentLength > h.maxBody {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Request body exceeds %d bytes", h.maxBody), nil)
		return
	}
	release, ok := h.admit(r)
	if !ok {
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusServiceUnavailable, nil, jsonrpc.CodeInternalError, fmt.Sprintf("Server busy: %d requests are being handled; retry shortly", cap(h.slots.c)), nil)
		return
	}
	defer release()
	body, err := readBody(w, r, h.maxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Request body exceeds %d bytes", h.maxBody), nil)
			return
		}
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Reading request body: "+err.Error(), nil)
		return
	}
	id, tooLong, rpcErr := checkBody(body)
	if rpcErr == nil {
		rpcErr = checkHeaders(r.Header)
	}
	if rpcErr != nil {
		writeRPCError(w, http.StatusBadRequest, id, rpcErr.Code, rpcErr.Message, rpcErr.Data)
		return
	}
	if tooLong != nil {
		// As the SDK answers -32602: 400 on 2026-07-28 (SEP-2575), else a
		// JSON-RPC error in a 200.
		status := http.StatusOK
		if modernVersion(r.Header.Get(headerProtocolVersion)) {
			status = http.StatusBadRequest
		}
		writeRPCError(w, status, id, tooLong.Code, tooLong.Message, nil)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r = r.WithContext(context.WithValue(r.Context(), httpServerKey{}, h.server(s)))
	jw := &rpcErrorWriter{ResponseWriter: w, id: id}
	h.sdk.ServeHTTP(jw, r)
	jw.finish()
}

// maxIDBytes caps the JSON of a request id. Ids are numbers or short
// strings; a longer one would be echoed in every answer.
const maxIDBytes = 1024

// readBody reads r's body, at most limit bytes: into one buffer of the
// announced length when there is one, so a body is held once, not in the
// doubling buffers of [io.ReadAll].
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength < 0 {
		return io.ReadAll(rd)
	}
	b := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(rd, b); err != nil {
		return nil, err
	}
	return b, nil
}

// checkBody accepts one JSON object and returns its id (nil if it has none),
// and in tooLong the -32602 answer when a URI, name or argument of its
// params is over [MaxParamBytes]. In invalid: -32700 for a body that is not
// JSON, -32600 for a batch (BASE-R44), any other value, or an id over
// maxIDBytes. It decodes the body once and copies nothing of it but a short
// id.
func checkBody(body []byte) (id json.RawMessage, tooLong, invalid *jsonrpc.Error) {
	if !json.Valid(body) {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: the body is not valid JSON"}
	}
	switch bytes.TrimLeft(body, " \t\r\n")[0] {
	case '[':
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: batches are not supported; send one JSON-RPC message per POST"}
	case '{':
	default:
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the body must be one JSON-RPC message object"}
	}
	var msg struct {
		ID     shortRaw   `json:"id"`
		Method present    `json:"method"`
		Result present    `json:"result"`
		Error  present    `json:"error"`
		Params paramProbe `json:"params"`
	}
	// A params member of the wrong shape is a type error after which the
	// rest is still decoded; the SDK answers the shape itself.
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(body, &msg); err != nil && !errors.As(err, &te) {
		return nil, nil, nil
	}
	if msg.ID.n > maxIDBytes {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: the id is %d bytes; the limit is %d", msg.ID.n, maxIDBytes)}
	}
	id = echoID(msg.ID.raw)
	if !msg.Method && !msg.Result && !msg.Error {
		return id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a message needs a method (request or notification), or a result or error (response)"}
	}
	return id, msg.Params.err(), nil
}

// present records that a JSON member was there, even as null, without
// copying its value.
type present bool

// UnmarshalJSON records that the member was there.
func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

// shortRaw holds a JSON value's length, and the value itself when it is at
// most maxIDBytes long.
type shortRaw struct {
	raw json.RawMessage
	n   int
}

// UnmarshalJSON records b's length and keeps b if it is short.
func (s *shortRaw) UnmarshalJSON(b []byte) error {
	s.n = len(b)
	if s.n <= maxIDBytes {
		s.raw = bytes.Clone(b)
	}
	return nil
}

// echoID returns id when it is a string or number (the only request ids
// worth echoing), else nil.
func echoID(id json.RawMessage) json.RawMessage {
	if len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
		return id
	}
	return nil
}

// largeBody is the body size above which a request also needs one of the
// maxLargeConcurrent slots. A request to this server is a few hundred bytes;
// a body of megabytes costs the SDK several copies and decodings of it, so
// only a few such may be handled at once, whatever the core count.
const (
	largeBody          = 64 << 10
	maxLargeConcurrent = 2
)

// admit takes the slots r needs: one of MaxConcurrent, and first one of the
// large slots when its body is over largeBody or of unknown length. It
// reports false when r gets none; else the caller must call release once
// done.
func (h *httpHandler) admit(r *http.Request) (release func(), ok bool) {
	if r.ContentLength >= 0 && r.ContentLength <= largeBody {
		return h.slots.acquire(r.Context())
	}
	releaseLarge, ok := h.large.acquire(r.Context())
	if !ok {
		return nil, false
	}
	releaseSlot, ok := h.slots.acquire(r.Context())
	if !ok {
		releaseLarge()
		return nil, false
	}
	return func() { releaseSlot(); releaseLarge() }, true
}

// semaphore hands out a fixed number of slots, with a bounded queue of
// waiters.
type semaphore struct {
	c        chan struct{} // one token per slot taken
	maxQueue int64
	queued   atomic.Int64
}

func newSemaphore(slots, maxQueue int) *semaphore {
	return &semaphore{c: make(chan struct{}, slots), maxQueue: int64(maxQueue)}
}

// acquire takes a slot, waiting in the queue when every slot is taken and
// the queue has room, until a slot frees, ctx is done or maxQueueWait
// passes. It reports false when it got no slot; else the caller must call
// release once.
func (s *semaphore) acquire(ctx context.Context) (release func(), ok bool) {
	release = func() { <-s.c }
	select {
	case s.c <- struct{}{}:
		return release, true
	default:
	}
	if s.queued.Add(1) > s.maxQueue {
		s.queued.Add(-1)
		return nil, false
	}
	defer s.queued.Add(-1)
	t := time.NewTimer(maxQueueWait)
	defer t.Stop()
	select {
	case s.c <- struct{}{}:
		return release, true
	case <-ctx.Done():
	case <-t.C:
	}
	return nil, false
}

// badHost applies the go-sdk's DNS-rebinding rule to every path: a request
// that arrived on a loopback address must name a loopback host.
func badHost(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && isLoopback(local.String()) && !isLoopback(r.Host)
}

// isLoopback reports whether addr (host, host:port or [v6]:port) names
// localhost or a loopback IP, as the go-sdk decides it.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// checkHeaders applies the header rules the SDK leaves out (BASE-R49..R51):
// an MCP-Protocol-Version it does not speak is -32022 whatever the era, and
// on 2026-07-28 requests Mcp-Method and Mcp-Name must appear at most once,
// hold no control characters, and have their =?base64?…?= sentinel decoded
// (in h, for the SDK's comparison with the body), else -32020. The SDK then
// rejects a missing or mismatched header with -32020 itself.
func checkHeaders(h http.Header) *jsonrpc.Error {
	versions := h.Values(headerProtocolVersion)
	if len(versions) == 0 {
		return nil
	}
	supported := mcp.SupportedProtocolVersions()
	if len(versions) > 1 || !slices.Contains(supported, versions[0]) {
		data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: supported, Requested: strings.Join(versions, ", ")})
		return &jsonrpc.Error{Code: codeUnsupportedVersion, Message: fmt.Sprintf("Unsupported protocol version %q", clip(strings.Join(versions, ", "))), Data: data}
	}
	if !modernVersion(versions[0]) {
		return nil
	}
	for _, name := range []string{headerMethod, headerName} {
		vals := h.Values(name)
		switch {
		case len(vals) == 0:
			continue
		case len(vals) > 1:
			return &jsonrpc.Error{Code: codeHeaderMismatch, Message: fmt.Sprintf("Header mismatch: %s appears %d times", name, len(vals))}
		}
		v, ok := decodeHeaderValue(vals[0])
		if !ok {
			return &jsonrpc.Error{Code: codeHeaderMismatch, Message: fmt.Sprintf("Header mismatch: %s holds a malformed base64 value", name)}
		}
		if strings.ContainsFunc(vals[0], isControl) {
			return &jsonrpc.Error{Code: codeHeaderMismatch, Message: fmt.Sprintf("Header mismatch: %s holds control characters; encode it as =?base64?…?=", name)}
		}
		h.Set(name, v)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// decodeHeaderValue decodes a =?base64?…?= sentinel (SEP-2243); any other
// value is returned as is. It reports false for a sentinel whose payload is
// not standard base64 of UTF-8.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// badOrigin returns the first Origin value that is not allowed (BASE-R48).
// No Origin at all (a non-browser client) is allowed.
func (h *httpHandler) badOrigin(origins []string) (string, bool) {
	for _, o := range origins {
		if !h.originAllowed(o) {
			return o, true
		}
	}
	return "", false
}

func (h *httpHandler) originAllowed(origin string) bool {
	key, ok := originKey(origin)
	if !ok {
		return false
	}
	if h.origins[key] {
		return true
	}
	if !h.loopback {
		return false
	}
	u, _ := url.Parse(key)
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// originKey returns origin as scheme://host[:port], lower-cased, without a
// default port, or false if origin is not an http(s) origin (no path, query,
// fragment or user info; "/" alone is tolerated).
func originKey(origin string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(origin))
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return "", false
		}
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// writeRPCError writes status with a JSON-RPC error response as the body;
// id nil means null.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string, data json.RawMessage) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg, data}})
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	hd := w.Header()
	hd.Del("Content-Length")
	hd.Del("X-Content-Type-Options")
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
