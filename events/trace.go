package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// TraceLine is one line of a trace file: one published message, or one
// blob of a snapshot (see snapshot.go) that later message lines refer to.
type TraceLine struct {
	// Time is when the message (or the message the blob is first part of)
	// was published.
	Time time.Time `json:"time"`
	// Topic is the topic it was published on; empty on a blob line.
	Topic string `json:"topic"`
	// Blob, set on a blob line only, is "sha256:" and the hex SHA-256 of
	// Payload, the name message lines refer to it by. A trace holds each
	// blob once, before the first line that refers to it.
	Blob string `json:"blob,omitempty"`
	// UUID is the message UUID.
	UUID string `json:"uuid,omitempty"`
	// Metadata is the message metadata (the event name among it).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Payload is the event JSON; on a message line with Lists, the event
	// without its big lists; on a blob line, the blob.
	Payload json.RawMessage `json:"payload"`
	// Lists, set on the message line of a by-reference event
	// ([CatalogChanged], [SourceScanned]), are the lists Payload leaves
	// out ("skills", "diagnostics"), each as the names of the blobs of its
	// chunks: a chunk is a JSON array of the names of the blobs of its
	// elements.
	Lists map[string][]string `json:"lists,omitempty"`
}

// TracePublisher is a [message.Publisher] decorator that writes every
// message as one JSON line ([TraceLine]) to a writer before passing it on.
// A by-reference event ([CatalogChanged], [SourceScanned]) is written as a
// snapshot: the blobs of its skills and diagnostics that the trace does
// not hold yet, then its message line naming them (snapshot.go), so a new
// catalog version costs the trace what changed, not the whole catalog.
// It is safe for concurrent use.
type TracePublisher struct {
	next   message.Publisher
	now    func() time.Time
	redact func([]byte) []byte // nil: lines written as encoded

	mu   sync.Mutex
	w    *bufio.Writer
	snap snapshotWriter // guarded by mu
}

var _ message.Publisher = (*TracePublisher)(nil)

// TraceOption configures a [TracePublisher].
type TraceOption func(*TracePublisher)

// TraceRedact makes a [TracePublisher] pass each line through redact
// (which must not add a newline) before writing it, so that a secret in
// an event (a token in a source's location) never reaches the file
// (issue 10: secrets). A replay then sees the redacted text.
func TraceRedact(redact func([]byte) []byte) TraceOption {
	return func(t *TracePublisher) { t.redact = redact }
}

// NewTracePublisher returns a publisher that records to w and forwards to
// next. Write errors are returned from Publish; the message is still
// forwarded. Call [TracePublisher.Flush] (Close does it) before closing w.
func NewTracePublisher(next message.Publisher, w io.Writer, opts ...TraceOption) *TracePublisher {
	if next == nil || w == nil {
		panic("events.NewTracePublisher: nil publisher or writer")
	}
	t := &TracePublisher{next: next, w: bufio.NewWriter(w), now: time.Now}
	for _, o := range opts {
		o(t)
	}
	t.snap.seen = map[[32]byte]bool{}
	return t
}

// Publish records each message and then publishes it on next.
func (t *TracePublisher) Publish(topic string, msgs ...*message.Message) error {
	var werr error
	for _, m := range msgs {
		if err := t.record(topic, m); err != nil {
			werr = err
		}
	}
	if err := t.next.Publish(topic, msgs...); err != nil {
		return err
	}
	return werr
}

// record writes the lines of m: the new blobs of a by-reference event's
// snapshot, then its message line.
func (t *TracePublisher) record(topic string, m *message.Message) error {
	now := t.now().UTC()
	line := TraceLine{Time: now, Topic: topic, UUID: m.UUID, Metadata: map[string]string(m.Metadata), Payload: json.RawMessage(m.Payload)}
	t.mu.Lock()
	defer t.mu.Unlock()
	if byRef(m.Metadata.Get(MetadataName)) && isRef(m.Payload) {
		val, err := decodeRef(m.Payload)
		if err != nil {
			return fmt.Errorf("tracing message %s: %w", m.UUID, err)
		}
		t.snap.blob = func(name string, data []byte) error {
			return t.writeLine(TraceLine{Time: now, Blob: name, Payload: data})
		}
		head, lists, err := t.snap.snapshot(val)
		if err != nil {
			return fmt.Errorf("tracing message %s: %w", m.UUID, err)
		}
		line.Payload, line.Lists = head, lists
	}
	if err := t.writeLine(line); err != nil {
		return err
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("writing trace line: %w", err)
	}
	return nil
}

// writeLine writes line and a newline. t.mu must be held.
func (t *TracePublisher) writeLine(line TraceLine) error {
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("encoding trace line: %w", err)
	}
	if t.redact != nil {
		b = t.redact(b)
	}
	if _, err := t.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing trace line: %w", err)
	}
	return nil
}

// Record writes ev, a trace-only record ([TraceStarted],
// [SessionInitialized], [MCPRequest]), as one trace line and publishes
// nothing. It is safe for concurrent use.
func (t *TracePublisher) Record(ev any) error {
	topic, ok := TopicOf(ev)
	if !ok || !traceOnly[topic] {
		return fmt.Errorf("events: recording %T: not a trace-only record", ev)
	}
	msg, err := Encode(ev)
	if err != nil {
		return err
	}
	return t.record(topic, msg)
}

// Flush writes any buffered trace lines.
func (t *TracePublisher) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w.Flush()
}

// Close flushes the trace. It does not close next.
func (t *TracePublisher) Close() error { return t.Flush() }

// ErrNotTrace is returned, wrapped, by [CreateTraceFile] for an existing
// file that is not a trace.
var ErrNotTrace = errors.New("events: not a skilljack trace")

// CreateTraceFile returns a new, empty file at path for a [TracePublisher];
// the caller closes it. The file is created under a fresh name in path's
// folder (exclusively, mode 0600) and renamed to path, so that nothing is
// ever written through a link or into another file's bytes. What was at
// path is replaced only if it is a trace: a regular file that is empty or
// whose first line is a [TraceLine]. A symbolic link, anything that is not
// a regular file, and a file holding anything else are refused with an
// error naming path (for the last, wrapping [ErrNotTrace]) and left as they
// are.
func CreateTraceFile(path string) (*os.File, error) {
	if err := checkTraceTarget(path); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("creating trace file: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("creating trace file: %w", err)
	}
	return f, nil
}

// checkTraceTarget returns nil if path does not exist or holds a trace that
// may be replaced, else why not.
func checkTraceTarget(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("checking trace file: %w", err)
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("trace file %s is a symbolic link; traces are written only to a regular file, choose another file", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("trace file %s is not a regular file; choose another file", path)
	case fi.Size() == 0:
		return nil
	}
	// Non-blocking: a FIFO swapped in after the Lstat must not hang the
	// start; the SameFile check below then refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("checking trace file: %w", err)
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	if fi2, err := f.Stat(); err != nil || !os.SameFile(fi, fi2) || !isTraceStart(head[:n]) {
		return fmt.Errorf("%w: %s exists and is not a skilljack trace; choose another file", ErrNotTrace, path)
	}
	return nil
}

// isTraceStart reports whether b starts as a line written by
// [TracePublisher] does: {"time":"<RFC 3339 time>","topic":"….
func isTraceStart(b []byte) bool {
	rest, ok := bytes.CutPrefix(b, []byte(`{"time":"`))
	if !ok {
		return false
	}
	ts, rest, ok := bytes.Cut(rest, []byte(`"`))
	if !ok {
		return false
	}
	if _, err := time.Parse(time.RFC3339Nano, string(ts)); err != nil {
		return false
	}
	return bytes.HasPrefix(rest, []byte(`,"topic":"`))
}

// ReplayOptions narrows [Replay]. A nil *ReplayOptions replays everything
// without waiting between messages.
type ReplayOptions struct {
	// Topics, if non-empty, are the only topics replayed. Trace-only
	// records (records.go) are replayed only when named here.
	Topics []string
	// Wait, if set, is called after each message is published, and Replay
	// stops with its error. Pass the bus's [Bus.WaitIdle] so that the
	// consumers take the messages one at a time, in file order across
	// topics, as in the recorded run; without it only the order within a
	// topic is kept.
	Wait func(context.Context) error
}

// Replay reads a trace written by [TracePublisher] from r and publishes each
// message, with its recorded UUID and metadata, on its topic through pub, in
// file order, calling [ReplayOptions.Wait] after each. A snapshot line's
// event is rebuilt from the blob lines before it and published by
// reference, as [Publish] does; trace-only records (the server, its
// clients and their requests) are skipped unless opts names their topics; a trace recorded before snapshots (every
// event as JSON) replays as it is. It returns how many
// were published once the last one was (and, with Wait, waited for): on
// [Bus] without Wait they may still be queued. It stops at the first
// malformed line, with an error giving its line number, or when ctx is done.
func Replay(ctx context.Context, r io.Reader, pub message.Publisher, opts *ReplayOptions) (int, error) {
	var (
		topicsWanted []string
		wait         func(context.Context) error
	)
	if opts != nil {
		topicsWanted, wait = opts.Topics, opts.Wait
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	snaps := snapshotReader{blobs: map[string][]byte{}}
	n, lineNo := 0, 0
	for sc.Scan() {
		lineNo++
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if len(sc.Bytes()) == 0 {
			continue
		}
		var line TraceLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return n, fmt.Errorf("reading trace line %d: %w", lineNo, err)
		}
		if line.Blob != "" {
			snaps.blobs[line.Blob] = line.Payload
			continue
		}
		topic := line.Topic
		if len(topicsWanted) > 0 && !slices.Contains(topicsWanted, topic) ||
			len(topicsWanted) == 0 && traceOnly[topic] {
			continue
		}
		msg, err := traceMessage(line, &snaps)
		if err != nil {
			return n, fmt.Errorf("reading trace line %d: %w", lineNo, err)
		}
		if err := pub.Publish(topic, msg); err != nil {
			return n, fmt.Errorf("replaying trace line %d: %w", lineNo, err)
		}
		n++
		if wait != nil {
			if err := wait(ctx); err != nil {
				return n, fmt.Errorf("waiting after trace line %d: %w", lineNo, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("reading trace: %w", err)
	}
	return n, nil
}

// traceMessage returns the message of one trace line, with the recorded
// UUID, metadata and payload. The event of a snapshot line is rebuilt from
// the blobs read so far and held by reference, as [Encode] does.
func traceMessage(line TraceLine, snaps *snapshotReader) (*message.Message, error) {
	payload := []byte(line.Payload)
	if line.Lists != nil {
		ev, err := snaps.event(line.Metadata[MetadataName], line.Payload, line.Lists)
		if err != nil {
			return nil, err
		}
		if payload, err = encodeRef(ev); err != nil {
			return nil, err
		}
	}
	msg := message.NewMessage(line.UUID, payload)
	for k, v := range line.Metadata {
		msg.Metadata.Set(k, v)
	}
	return msg, nil
}
