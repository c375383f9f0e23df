package mcpface

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// DrainTimeout bounds how long the stdio transport holds back the end of its
// input so that requests already read get their replies written. Every
// request this server answers reads at most a few files, which takes
// milliseconds; five seconds covers a slow disk or a loaded machine while a
// client that closed stdin without waiting still sees the process exit soon.
const DrainTimeout = 5 * time.Second

// maxReusedLine is the largest line buffer the wire keeps for the next
// line: requests are small, and one huge line should not pin its memory.
const maxReusedLine = 64 << 10

// Limits of the input the stdio transport accepts.
const (
	// maxMessageSize bounds one input line, as the SDK's own stdio transport
	// does by default; a longer line is answered with -32600 and skipped.
	maxMessageSize = mcp.DefaultMaxLineLength
)

// NewStdioTransport returns a transport that speaks newline-delimited
// JSON-RPC over in and out and keeps the session alive through bad input,
// which the SDK's [mcp.IOTransport] answers by ending the connection:
//
//   - a line that is not JSON is answered with -32700 Parse error (id null)
//     and dropped;
//   - a JSON value that is not a JSON-RPC 2.0 message the SDK can decode
//     ("jsonrpc" other than "2.0", a bad id, not an object or array, an empty
//     or duplicate-id batch, a batch after a batchless protocol version was
//     negotiated, a line over 16 MiB or nested deeper than 1000) is answered
//     with -32600 Invalid Request, with its id when it has a valid one, and
//     dropped;
//   - blank lines are ignored; every other line is passed to the SDK as is.
//
// The transport counts the requests it passes on and the replies written.
// When in ends, it holds the end back from the SDK until every request read
// has its reply written, [DrainTimeout] passes, or the ctx given to Connect
// is done, so that replies to the last requests are not lost.
//
// Outgoing error responses whose code is 0 are rewritten with a JSON-RPC
// code: the SDK answers a request before initialize, and initialize with
// null or malformed params, with a plain error (code 0) before any receiving
// middleware runs, so no middleware can fix them. A message about
// unmarshaling params becomes -32602, anything else (a lifecycle error)
// -32600.
//
// Each message is written to out with one Write call, under one mutex shared
// by the SDK's messages and the transport's own answers, so lines never
// interleave. The connection's Close closes in and out. log receives a Debug
// line per refused input line; nil discards it. Connect must be called once.
func NewStdioTransport(in io.ReadCloser, out io.WriteCloser, log *slog.Logger) mcp.Transport {
	if in == nil || out == nil {
		panic("mcpface: NewStdioTransport needs a reader and a writer")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &stdioTransport{in: in, out: out, log: log.With("component", "stdio")}
}

type stdioTransport struct {
	in  io.ReadCloser
	out io.WriteCloser
	log *slog.Logger
	// fast, when set, is the facade whose fast lane answers what it can
	// ([Facade.StdioTransport]).
	fast *Facade
}

// Connect implements [mcp.Transport]: it wraps in and out and delegates the
// framing to [mcp.IOTransport].
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	w := &wire{
		in:       bufio.NewReader(t.in),
		inCloser: t.in,
		out:      t.out,
		log:      t.log,
		answered: make(chan struct{}, 1),
		done:     make(chan struct{}),
		pending:  make(map[jsonrpc.ID]bool),
	}
	if t.fast != nil {
		w.fast = &fastLane{f: t.fast}
	}
	if n := growPipe(t.out); n > 0 {
		t.log.Debug("stdout pipe capacity raised", "bytes", n)
	}
	w.stopAbort = context.AfterFunc(ctx, w.abort)
	// The wire already bounds each line, so the SDK's own cap is off.
	return (&mcp.IOTransport{Reader: (*wireReader)(w), Writer: (*wireWriter)(w), MaxLineLength: -1}).Connect(ctx)
}

// wire is the state shared by the reader and the writer of one connection.
type wire struct {
	// fixed at creation
	in        *bufio.Reader
	inCloser  io.Closer
	out       io.WriteCloser
	log       *slog.Logger
	answered  chan struct{} // 1 slot: a pending request was answered
	done      chan struct{} // closed by abort
	abortOnce sync.Once
	stopAbort func() bool
	fast      *fastLane // nil without a fast lane

	// Read side: used only by the SDK's single reading goroutine.
	line    []byte // rest of the accepted line being handed to the SDK
	lineBuf []byte // the buffer readLine reads into, reused
	readErr error  // the error that ended in
	drained bool   // the drain wait has run

	// mu serialises every write to out and guards the fields below it.
	mu          sync.Mutex
	partial     []byte              // SDK output not yet ended by a newline
	pending     map[jsonrpc.ID]bool // requests passed on and not yet answered
	initID      jsonrpc.ID          // id of the initialize request awaiting its reply
	initPending bool
	version     string // negotiated protocol version, once initialize is answered
	sdkReplied  bool   // the SDK has written a response: its session is bound
}

// abort ends a drain wait for good: the connection is closing or its ctx is
// done.
func (w *wire) abort() { w.abortOnce.Do(func() { close(w.done) }) }

type wireReader wire

// Read hands the SDK the accepted lines, one at a time, each ending in a
// newline. At the end of in it first waits for the pending replies.
func (r *wireReader) Read(p []byte) (int, error) {
	w := (*wire)(r)
	for len(w.line) == 0 {
		if w.readErr != nil {
			if !w.drained {
				w.drained = true
				w.awaitReplies()
			}
			return 0, w.readErr
		}
		line, tooLong, err := w.readLine()
		switch {
		case tooLong:
			w.reply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: message longer than %d bytes", maxMessageSize))
		case len(line) > 0:
			w.line = w.accept(line)
		}
		if err != nil {
			w.readErr = err
		}
	}
	n := copy(p, w.line)
	w.line = w.line[n:]
	return n, nil
}

// Close ends any drain wait and closes in.
func (r *wireReader) Close() error {
	w := (*wire)(r)
	w.abort()
	w.stopAbort()
	return w.inCloser.Close()
}

// readLine returns the next line of in without its newline, and whether it
// was longer than maxMessageSize (then the line is nil: it was discarded).
func (w *wire) readLine() (line []byte, tooLong bool, err error) {
	// The previous line is consumed by now (Read asks for the next one only
	// then), so its buffer is reused.
	line = w.lineBuf[:0]
	defer func() {
		if cap(line) <= maxReusedLine {
			w.lineBuf = line[:0]
		}
	}()
	for {
		chunk, err := w.in.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) > maxMessageSize+1 {
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// accept checks one input line and returns it, newline-terminated, when the
// SDK can take it; otherwise it answers the line itself and returns nil.
func (w *wire) accept(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if !json.Valid(line) {
		// The same check, now for its message; Valid copies nothing.
		var raw json.RawMessage
		err := json.Unmarshal(line, &raw)
		w.reply(nil, jsonrpc.CodeParseError, "Parse error: "+err.Error())
		return nil
	}
	if depth(line) > maxDepth {
		w.reply(rawID(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: nested deeper than %d levels", maxDepth))
		return nil
	}
	if w.fast != nil && line[0] == '{' {
		if out := w.fast.answer(w, line); out != nil {
			w.writeLine(out)
			return nil
		}
	}
	var msgs []jsonrpc.Message
	switch line[0] {
	case '{':
		if req, _, ok := plainRequest(line); ok {
			// Read as the SDK will, without its decoder's 32 KiB buffer.
			msgs = []jsonrpc.Message{req}
			break
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			w.reply(rawID(line), jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
			return nil
		}
		msgs = []jsonrpc.Message{msg}
	case '[':
		var err error
		if msgs, err = w.decodeBatch(line); err != nil {
			w.reply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
			return nil
		}
	default:
		w.reply(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a JSON-RPC message is an object or an array of objects")
		return nil
	}
	w.mu.Lock()
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if req.IsCall() {
			w.pending[req.ID] = true
			if req.Method == "initialize" {
				w.initID, w.initPending = req.ID, true
			}
		} else if req.Method == "notifications/cancelled" {
			// A cancelled request may never be answered; the client no
			// longer waits for it, so neither does the drain.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					delete(w.pending, id)
				}
			}
		}
	}
	w.mu.Unlock()
	return append(line, '\n')
}

// decodeBatch decodes a batch line exactly as the SDK will, and returns an
// error for each batch the SDK would answer by ending the connection.
func (w *wire) decodeBatch(line []byte) ([]jsonrpc.Message, error) {
	w.mu.Lock()
	batchless := w.initPending || w.version >= batchlessVersion
	version := w.version
	w.mu.Unlock()
	if batchless {
		if version == "" {
			return nil, errors.New("no batch while initialize is in progress")
		}
		return nil, fmt.Errorf("JSON-RPC batches are not supported in protocol version %s", version)
	}
	var raws []json.RawMessage
	if err := sjson.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	seen := make(map[jsonrpc.ID]bool)
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("batch element %s: %w", raw, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			w.mu.Lock()
			inFlight := w.pending[req.ID]
			w.mu.Unlock()
			if seen[req.ID] || inFlight {
				return nil, fmt.Errorf("batch reuses request id %v", req.ID.Raw())
			}
			seen[req.ID] = true
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// awaitReplies blocks until no request is pending, DrainTimeout passes, or
// the connection is aborted.
func (w *wire) awaitReplies() {
	timer := time.NewTimer(DrainTimeout)
	defer timer.Stop()
	for {
		w.mu.Lock()
		n := len(w.pending)
		w.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-w.answered:
		case <-w.done:
			return
		case <-timer.C:
			w.log.Warn("input ended; gave up waiting for replies", "pending", n, "timeout", DrainTimeout)
			return
		}
	}
}

func (w *wire) signalAnswered() {
	select {
	case w.answered <- struct{}{}:
	default:
	}
}

// errorReply is a JSON-RPC error response whose id may be null.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *jsonrpc.Error  `json:"error"`
}

// reply writes an error response for a refused input line; id is the raw id
// (nil for null).
func (w *wire) reply(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.log.Debug("refused input line", "code", code, "error", msg)
	data, err := json.Marshal(errorReply{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		panic(err) // plain strings and a validated raw id: cannot fail
	}
	w.writeLine(append(data, '\n'))
}

// writeLine writes one newline-terminated message the wire answered
// itself, under the shared mutex.
func (w *wire) writeLine(line []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.out.Write(line); err != nil {
		w.log.Debug("writing a reply", "error", err)
	}
}

// rawID returns the id of a JSON object line when it is a string or a
// number, the only ids a reply may echo; else nil.
func rawID(line []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
		return nil
	}
	switch c := m.ID[0]; {
	case c == '"', c == '-', '0' <= c && c <= '9':
		return m.ID
	}
	return nil
}

// depth returns the deepest nesting of arrays and objects in the JSON text b,
// counted as the SDK counts it.
func depth(b []byte) int {
	var d, deepest int
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			d++
			deepest = max(deepest, d)
		case '}', ']':
			if d > 0 {
				d--
			}
		}
	}
	return deepest
}

type wireWriter wire

// Write takes the SDK's output, passes each complete line to out with one
// Write call under the shared mutex, and records the replies it carries.
func (ww *wireWriter) Write(p []byte) (int, error) {
	w := (*wire)(ww)
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := p
	if len(w.partial) > 0 {
		w.partial = append(w.partial, p...)
		buf = w.partial
	}
	answered := false
	var werr error
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		line := w.outgoing(buf[:i+1], &answered)
		buf = buf[i+1:]
		if _, err := w.out.Write(line); err != nil {
			werr = err
			break
		}
	}
	w.partial = append(w.partial[:0], buf...)
	if answered {
		w.signalAnswered()
	}
	if werr != nil {
		return 0, werr
	}
	return len(p), nil
}

// Close closes out; output not ended by a newline is dropped, since it is no
// message.
func (ww *wireWriter) Close() error {
	w := (*wire)(ww)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.log.Warn("dropping unterminated output", "bytes", len(w.partial))
		w.partial = nil
	}
	return w.out.Close()
}

// outgoing inspects one newline-terminated line the SDK writes: it clears the
// pending requests it answers and rewrites code-0 errors. Called with mu held.
func (w *wire) outgoing(line []byte, answered *bool) []byte {
	body := bytes.TrimSpace(line)
	if len(body) == 0 {
		return line
	}
	if body[0] == '[' {
		var raws []json.RawMessage
		if sjson.Unmarshal(body, &raws) != nil {
			return line
		}
		changed := false
		for i, raw := range raws {
			if out, ok := w.settle(raw, answered); ok {
				raws[i], changed = out, true
			}
		}
		if !changed {
			return line
		}
		data, err := json.Marshal(raws)
		if err != nil {
			return line
		}
		return append(data, '\n')
	}
	if out, ok := w.settle(body, answered); ok {
		return append(out, '\n')
	}
	return line
}

// settle records the reply in one outgoing message and returns the message
// re-encoded, and true, when its error code had to be rewritten. A plain
// result ([resultID]) is settled from its first bytes; anything else is
// decoded.
func (w *wire) settle(raw []byte, answered *bool) ([]byte, bool) {
	if id, ok := resultID(raw); ok && !(w.initPending && id == w.initID) {
		w.sdkReplied = true
		if w.pending[id] {
			delete(w.pending, id)
			*answered = true
		}
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return nil, false
	}
	if n, ok := msg.(*jsonrpc.Request); ok && n.Method == methodAcknowledged {
		// An acknowledged subscriptions/listen stream runs until the input
		// ends: it has its answer as far as the drain is concerned (BASE-R26),
		// or the drain would wait out its timeout at every EOF.
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(n.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.Meta[mcp.MetaKeySubscriptionID]); err == nil && w.pending[id] {
				delete(w.pending, id)
				*answered = true
			}
		}
		return nil, false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, false
	}
	w.sdkReplied = true
	if w.pending[resp.ID] {
		delete(w.pending, resp.ID)
		*answered = true
	}
	if w.initPending && resp.ID == w.initID {
		w.initPending = false
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if resp.Error == nil && json.Unmarshal(resp.Result, &r) == nil {
			w.version = r.ProtocolVersion
		}
	}
	var we *jsonrpc.Error
	if !errors.As(resp.Error, &we) || we.Code != 0 {
		return nil, false
	}
	we.Code = zeroCode(we.Message)
	out, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return nil, false
	}
	return out, true
}

// resultPrefix starts every message the SDK encodes: its wire struct puts
// the version tag first and the id second.
const resultPrefix = `{"jsonrpc":"2.0","id":`

// resultID returns the id of a successful response as the SDK encodes it,
// {"jsonrpc":"2.0","id":<id>,"result":..., read from the bytes before its
// result, and true; false for any other message or spelling (an error, a
// request, a notification, an id that is not a plain integer or a string
// without escapes), which the caller decodes in full. A result needs
// nothing but its id recorded, and decoding it would cost as much as
// encoding it did (issue 12).
func resultID(raw []byte) (jsonrpc.ID, bool) {
	rest, ok := bytes.CutPrefix(raw, []byte(resultPrefix))
	if !ok || len(rest) == 0 {
		return jsonrpc.ID{}, false
	}
	var id jsonrpc.ID
	var n int
	if rest[0] == '"' {
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 || bytes.IndexByte(rest[1:1+end], '\\') >= 0 {
			return jsonrpc.ID{}, false
		}
		n = end + 2
		id, _ = jsonrpc.MakeID(string(rest[1 : 1+end]))
	} else {
		for n < len(rest) && (rest[n] >= '0' && rest[n] <= '9' || n == 0 && rest[n] == '-') {
			n++
		}
		// 15 digits convert to and from float64 exactly, as the SDK's
		// decoder reads a request id.
		v, err := strconv.ParseInt(string(rest[:n]), 10, 64)
		if err != nil || n > 15 {
			return jsonrpc.ID{}, false
		}
		id, _ = jsonrpc.MakeID(float64(v))
	}
	if !bytes.HasPrefix(rest[n:], []byte(`,"result":`)) {
		return jsonrpc.ID{}, false
	}
	return id, true
}

// PeerGone reports whether err only says that the stdio client went away:
// a write to a pipe or stdout it no longer reads (EPIPE, a closed pipe or
// file) or the end of its input. The SDK reports such a write, for example
// a 2026-07-28 subscriptions/listen stream still open when the client
// closes its pipes, as the session's error; for a stdio server it is how a
// client leaves, not a failure.
func PeerGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
}
