package config_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// writeTree writes files (slash paths relative to root → content) below root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// recordingPublisher keeps every published message; it is safe for
// concurrent use.
type recordingPublisher struct {
	mu   sync.Mutex
	msgs []*message.Message
	ch   chan *message.Message
}

var _ message.Publisher = (*recordingPublisher)(nil)

func newRecordingPublisher() *recordingPublisher {
	return &recordingPublisher{ch: make(chan *message.Message, 100)}
}

func (p *recordingPublisher) Publish(_ string, msgs ...*message.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msgs...)
	for _, m := range msgs {
		p.ch <- m
	}
	return nil
}

func (p *recordingPublisher) Close() error { return nil }

func (p *recordingPublisher) all() []*message.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*message.Message(nil), p.msgs...)
}

func encode(t *testing.T, ev any) *message.Message {
	t.Helper()
	m, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// syncBuffer is a bytes.Buffer safe for concurrent writes, for log capture.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func captureLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}
