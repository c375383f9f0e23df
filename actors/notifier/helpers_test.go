package notifier_test

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
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
