// Package eventstest provides what tests of bus actors share: a
// [Publisher] that records what an actor publishes, [Encode] and
// [DecodeCatalog] around the events codec, and [CaptureLog] for the
// lines an actor logs. It is imported only by tests, like
// net/http/httptest, and imports nothing of this module but events.
package eventstest

import (
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"
)

// publisherBuffer is how many messages [Publisher.C] holds: more than any
// test publishes before it reads, so an actor never blocks on a test that
// has not read yet.
const publisherBuffer = 100

// Publisher is a message.Publisher that keeps every message it is given,
// in order, and hands each to [Publisher.C] as well. It is safe for
// concurrent use.
type Publisher struct {
	// C receives every published message, in order. It holds 100; Publish
	// blocks while it is full. A test may close it once nothing publishes
	// any more, to end a range over it.
	C chan *message.Message

	mu   sync.Mutex
	msgs []*message.Message
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher returns an empty Publisher.
func NewPublisher() *Publisher {
	return &Publisher{C: make(chan *message.Message, publisherBuffer)}
}

// Publish records msgs and sends them to [Publisher.C], blocking while it
// is full; the topic is ignored. It always returns nil.
func (p *Publisher) Publish(_ string, msgs ...*message.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msgs...)
	for _, m := range msgs {
		p.C <- m
	}
	return nil
}

// Close does nothing and returns nil; [Publisher.C] stays open.
func (p *Publisher) Close() error { return nil }

// All returns every message published so far, in order, in a new slice.
func (p *Publisher) All() []*message.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*message.Message(nil), p.msgs...)
}
