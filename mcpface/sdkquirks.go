package mcpface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds every place where the facade relies on go-sdk v1.8.0
// beyond its documented API, or works around one of its limits: the text of
// the errors it sends without a JSON-RPC code, how it tells the protocol
// eras apart, how a middleware reaches its own method handler, what it sends
// when a listen stream is acknowledged, and which log record it writes on a
// normal shutdown. Each is pinned by a test in sdkquirks_test.go that runs
// the real SDK and fails when the text or behaviour relied on changes: run
// those tests first when upgrading the SDK.

// # Protocol eras

// eraModern is the first protocol version of the per-request era
// (SEP-2575): no initialize; the version travels in each request's _meta
// (stdio, in memory) and in the Mcp-Protocol-Version header (HTTP). go-sdk's
// own constant (protocolVersion20260728) is unexported. Like the SDK, this
// file compares protocol versions as strings.
const eraModern = "2026-07-28"

// batchlessVersion is the first protocol version without JSON-RPC batches:
// after negotiating it, go-sdk's [mcp.IOTransport] ends the connection on a
// batch line, so the stdio wire refuses such a line itself.
const batchlessVersion = "2025-06-18"

// maxDepth is the JSON nesting depth beyond which go-sdk's decoder
// (internal/json defaultMaxDepth) refuses a message, which
// [mcp.IOTransport] answers by ending the connection; the stdio wire
// answers such lines with -32600 instead, counting depth as [depth] does.
const maxDepth = 1000

// modernVersion reports whether protocol version v belongs to the
// 2026-07-28 era, as go-sdk decides it for the Mcp-Protocol-Version header.
func modernVersion(v string) bool { return v >= eraModern }

// modernMeta reports whether a request's _meta selects the 2026-07-28 era,
// as go-sdk's validateRequestMeta decides it for a call: a string
// _meta["io.modelcontextprotocol/protocolVersion"] of 2026-07-28 or later.
func modernMeta(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return modernVersion(v)
}

// modernParams is [modernMeta] for typed request params; nil params, typed
// or not, are of the 2025-11-25 era.
func modernParams(p mcp.Params) bool { return modernMeta(paramsMeta(p)) }

// paramsMeta returns the _meta of typed request params, or nil for nil
// params, typed or not (go-sdk's GetMeta panics on a typed nil pointer).
func paramsMeta(p mcp.Params) (meta mcp.Meta) {
	if p == nil {
		return nil
	}
	defer func() {
		if recover() != nil { // a typed nil params pointer
			meta = nil
		}
	}()
	return p.GetMeta()
}

// # Errors without a JSON-RPC code

// uncodedSite is where an error that go-sdk sends without a JSON-RPC code
// surfaces, and so where this server gives it one.
type uncodedSite int

const (
	// siteHandler: a plain error returned by the SDK's own method handler,
	// below the receiving middlewares, which would go out with code 0;
	// [coded] gives it a code in the recovering middleware.
	siteHandler uncodedSite = iota
	// siteStdio: an error the SDK answers before any receiving middleware
	// runs (the session lifecycle, initialize's params), written with code
	// 0; the stdio wire rewrites it on the way out ([zeroCode]).
	siteStdio
	// siteHTTP: a plain-text http.Error answer of the streamable handler;
	// [rpcErrorWriter] replaces it with a JSON-RPC error body
	// ([httpErrorCode]).
	siteHTTP
)

// sdkUncoded is the one table of go-sdk v1.8.0 errors known to reach a
// client without a JSON-RPC code, each by a fragment of its text, with the
// code this server sends instead. The first row of the site whose fragment
// the message contains wins; a message that no row matches gets its site's
// default ([coded], [zeroCode], [httpErrorCode]). sdkquirks_test.go
// triggers every row's case on the real SDK and fails when the SDK's text
// no longer holds the fragment or the SDK starts sending a code itself, so
// that an upgrade cannot silently disable a rewrite.
//
// Earlier SDKs also sent malformed list cursors and params that did not
// unmarshal as plain errors; v1.8.0 codes both -32602 itself (pinned by
// TestSDKCodesParamsErrors), so no row matches them.
var sdkUncoded = []struct {
	name     string // the case, as sdkquirks_test.go triggers it
	site     uncodedSite
	fragment string
	code     int64
}{
	// handling 'initialize': unmarshaling "\"x\"" into a *mcp.initializeParamsV2: …
	// (every method's params under MCPGODEBUG=nowrapinvalidparams=1)
	{"initialize params not an object", siteStdio, "unmarshaling", jsonrpc.CodeInvalidParams},
	// handling 'initialize': missing required "params"
	{"initialize params null", siteStdio, `missing required "params"`, jsonrpc.CodeInvalidRequest},
	// method "tools/list" is invalid during session initialization
	{"request before initialize", siteStdio, "is invalid during session initialization", jsonrpc.CodeInvalidRequest},
	// duplicate "initialize" received
	{"second initialize", siteHandler, `duplicate "initialize" received`, jsonrpc.CodeInvalidRequest},
	// JSON RPC not handled: "nope/nope" unsupported (a 2025-11-25 request;
	// on 2026-07-28 the SDK answers 404 -32601 itself)
	{"unknown method over HTTP", siteHTTP, "unsupported", jsonrpc.CodeMethodNotFound},
}

// uncodedCode returns the code of the first [sdkUncoded] row of site whose
// fragment msg contains, and false if none does.
func uncodedCode(site uncodedSite, msg string) (int64, bool) {
	for _, r := range sdkUncoded {
		if r.site == site && strings.Contains(msg, r.fragment) {
			return r.code, true
		}
	}
	return 0, false
}

// coded returns err as a JSON-RPC error; an error that already carries a
// code keeps it. A plain error, which the SDK would send with code 0, gets
// the code of its [sdkUncoded] row, else -32600 when it answers the session
// lifecycle (initialize, a notification), else -32603.
func coded(method string, err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return err
	}
	msg := err.Error()
	code, ok := uncodedCode(siteHandler, msg)
	switch {
	case ok:
	case method == "initialize" || strings.HasPrefix(method, "notifications/"):
		code = jsonrpc.CodeInvalidRequest
	default:
		code = jsonrpc.CodeInternalError
	}
	return &jsonrpc.Error{Code: code, Message: msg}
}

// zeroCode is the code given to an error the SDK writes with code 0 before
// any middleware runs (see [NewStdioTransport]): that of its [sdkUncoded]
// row, else -32600, since every such error is about the session lifecycle
// or the message itself.
func zeroCode(msg string) int64 {
	if code, ok := uncodedCode(siteStdio, msg); ok {
		return code
	}
	return jsonrpc.CodeInvalidRequest
}

// httpErrorCode is the code given to the SDK's plain-text answer msg with
// HTTP status: -32603 for a 5xx, else that of its [sdkUncoded] row, else
// -32600.
func httpErrorCode(status int, msg string) int64 {
	if status >= 500 {
		return jsonrpc.CodeInternalError
	}
	if code, ok := uncodedCode(siteHTTP, msg); ok {
		return code
	}
	return jsonrpc.CodeInvalidRequest
}

// rpcErrorWriter passes the SDK's response through, except an error status
// written without a JSON body (go-sdk's streamable handler answers many
// refusals with plain-text http.Error): that one is held and, in finish,
// replaced by the same status with a JSON-RPC error body carrying the SDK's
// text and the code of [httpErrorCode].
type rpcErrorWriter struct {
	http.ResponseWriter
	id      json.RawMessage
	written bool
	held    int // status held back; 0 if none
	text    bytes.Buffer
}

func (w *rpcErrorWriter) WriteHeader(status int) {
	if w.written {
		return
	}
	w.written = true
	if status >= 400 {
		if ct, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type")); ct != "application/json" {
			w.held = status
			return
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *rpcErrorWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	if w.held != 0 {
		if w.text.Len() < 1024 {
			w.text.Write(b[:min(len(b), 1024)])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes on a flush unless the status is held.
func (w *rpcErrorWriter) Flush() {
	if w.held != 0 {
		return
	}
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets [http.ResponseController] reach the connection's writer.
func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the held error, if any.
func (w *rpcErrorWriter) finish() {
	if w.held == 0 {
		return
	}
	msg := strings.TrimSpace(w.text.String())
	code := httpErrorCode(w.held, msg)
	if msg == "" {
		msg = http.StatusText(w.held)
	}
	writeRPCError(w.ResponseWriter, w.held, w.id, code, msg, nil)
}

// # The SDK's own handler

// captureHandler returns a receiving middleware that stores the handler it
// wraps in *dst and adds nothing. Listed last in AddReceivingMiddleware, it
// captures go-sdk's own method handler, below every middleware: v1.8.0
// applies the middlewares when AddReceivingMiddleware is called, innermost
// first, so *dst is set before that call returns.
func captureHandler(dst *mcp.MethodHandler) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		*dst = next
		return next
	}
}

// unsubscribeInSDK drops ss's subscription to uri from the SDK's own table
// by calling its resources/unsubscribe handler, sdk, captured by
// [captureHandler]. go-sdk offers no server-side way to drop a subscription;
// its handler deletes the (uri, session) pair whichever era recorded it (a
// resources/subscribe, or a subscriptions/listen stream, which stays open
// and receives nothing more for uri). The SDK runs the server's
// UnsubscribeHandler first.
func unsubscribeInSDK(ctx context.Context, sdk mcp.MethodHandler, ss *mcp.ServerSession, uri string) error {
	_, err := sdk(ctx, "resources/unsubscribe", &mcp.UnsubscribeRequest{Session: ss, Params: &mcp.UnsubscribeParams{URI: uri}})
	return err
}

// # Subscription streams (2026-07-28)

// methodAcknowledged is the notification go-sdk sends once it has recorded
// every subscription of a subscriptions/listen stream, before the stream
// parks. It sends it through the sending middlewares with the listen
// request's context, carrying the listen request's id in
// _meta[[mcp.MetaKeySubscriptionID]]; [Facade.ackMiddleware] and the stdio
// wire rely on both.
const methodAcknowledged = "notifications/subscriptions/acknowledged"

// # Logging

// quietHandler lowers the SDK's Info records to Debug: it logs every session
// and subscription at Info, which would drown the server's own log.
type quietHandler struct{ slog.Handler }

// sdkRunCancelled is the message go-sdk's Server.Run logs at Error when its
// context is cancelled: a normal shutdown (SIGTERM, stdin EOF) here, which
// quietHandler lowers to Debug.
const sdkRunCancelled = "server run cancelled"

// sdkSessionEnded is the message go-sdk's Server.Run logs at Error with
// the session's error; quietHandler lowers it to Debug when the error only
// says that the stdio client went away ([PeerGone]).
const sdkSessionEnded = "server session ended with error"

// errorAttr reports whether r carries an "error" attribute holding an
// error for which is returns true.
func errorAttr(r slog.Record, is func(error) bool) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "error" {
			found = is(err)
			return false
		}
		return true
	})
	return found
}

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	if l == slog.LevelInfo {
		l = slog.LevelDebug
	}
	return h.Handler.Enabled(ctx, l)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo || r.Message == sdkRunCancelled || r.Message == sdkSessionEnded && errorAttr(r, PeerGone) {
		r.Level = slog.LevelDebug
		// Enabled let the record through at its own level; a lowered one
		// must pass the handler's level again.
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}
