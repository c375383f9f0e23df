package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/ThreeDotsLabs/watermill/message"
)

// ErrClosed is returned by [Bus.Publish] and [Bus.Subscribe] once
// [Bus.Close] was called.
var ErrClosed = errors.New("events: bus closed")

// Bus is the in-process bus the actors talk over: a [message.Publisher] and
// [message.Subscriber] on which publishing never waits for a consumer.
//
// Each subscription has its own unbounded FIFO queue and one delivery
// goroutine. [Bus.Publish] appends a copy of each message to the queue of
// every current subscription of the topic and returns; it never blocks on a
// consumer. The delivery goroutine hands the oldest queued message to the
// subscription's channel and waits until the consumer acks it before it
// hands over the next. So:
//   - the messages of one topic arrive at every subscription in the order
//     Publish was called (one publisher's messages keep their order; the
//     calls of several publishers are interleaved the same way at every
//     subscription);
//   - a slow consumer delays only its own subscription: neither the
//     publisher nor the other subscriptions, of its topic or any other;
//   - each message is delivered once per subscription and must be acked once
//     ([Handle] does it). A Nack is treated as an Ack and logged at Error:
//     redelivering would hand a handler the input it just failed on.
//
// Messages of different topics, or of different publishers, have no order
// between them. An actor needs no outbox of its own: it publishes from its
// Run goroutine, in order, and what it published before returning stays
// queued for the subscribers.
//
// The bus is not persistent: a message published while a topic has no
// subscription is dropped, and a subscription sees only messages published
// after Subscribe returned. Subscribe every inbox before starting anything
// that publishes.
//
// A queue grows without bound while its consumer lags; the actors' events
// are coarse (one per scan or catalog version), so it stays short.
//
// A Bus is safe for concurrent use. Its zero value is not usable; call
// [NewBus].
type Bus struct {
	log     *slog.Logger
	closing chan struct{}  // closed by Close: every delivery goroutine stops
	wg      sync.WaitGroup // the delivery goroutines

	mu      sync.Mutex
	closed  bool
	subs    map[string][]*subscription // by topic
	pending int                        // messages queued or being delivered, all subscriptions
	idle    chan struct{}              // closed when pending drops to 0; nil while it is 0
}

var (
	_ message.Publisher  = (*Bus)(nil)
	_ message.Subscriber = (*Bus)(nil)
)

// NewBus returns an empty, open bus. Its log lines (a nacked message) go to
// log scoped with component=bus; a nil log discards them. The caller closes
// the bus last, after every actor stopped.
func NewBus(log *slog.Logger) *Bus {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Bus{
		log:     log.With("component", "bus"),
		closing: make(chan struct{}),
		subs:    map[string][]*subscription{},
	}
}

// Publish queues a copy of each message, in order, for every current
// subscription of topic, and returns without waiting for any consumer. The
// caller must not change the messages afterwards. Each copy carries its
// subscription's context. Publish returns [ErrClosed] after [Bus.Close];
// with no subscription it drops the messages and returns nil.
func (b *Bus) Publish(topic string, msgs ...*message.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("publishing on %s: %w", topic, ErrClosed)
	}
	for _, s := range b.subs[topic] {
		for _, m := range msgs {
			c := m.Copy()
			c.SetContext(s.ctx)
			s.q = append(s.q, c)
		}
		b.addPending(len(msgs))
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// Subscribe returns a channel that receives every message published on
// topic from now on, one at a time: the next is sent only once the previous
// one was acked. The channel is closed, and the messages still queued for
// it dropped, when ctx is done or the bus is closed. It returns
// [ErrClosed] after [Bus.Close].
func (b *Bus) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("subscribing to %s: %w", topic, ErrClosed)
	}
	s := &subscription{
		bus:   b,
		topic: topic,
		ctx:   ctx,
		out:   make(chan *message.Message),
		wake:  make(chan struct{}, 1),
	}
	b.subs[topic] = append(b.subs[topic], s)
	b.wg.Go(s.run)
	return s.out, nil
}

// Close stops the bus and returns nil once every delivery goroutine ended
// and every subscription channel is closed. It does not drain: messages
// still queued, and a message handed over but not acked yet, are dropped,
// because by then their consumers have stopped (main closes the bus last).
// A message published before Close reaches a consumer that is still reading
// only if it is delivered before Close is called. Later Publish and
// Subscribe calls return [ErrClosed]; Close may be called more than once.
func (b *Bus) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.closing)
	}
	b.mu.Unlock()
	b.wg.Wait()
	return nil
}

// WaitIdle blocks until no message is queued or being delivered on any
// subscription — every message published so far was acked, or dropped with
// its subscription — or until ctx is done (returning ctx.Err()). It does not
// see work a consumer does after acking, nor what that work will publish:
// tests and [Replay] users combine it with a barrier message the consumer
// takes only after that work (test/replay_test.go). While anything keeps
// publishing, the bus may never be idle.
func (b *Bus) WaitIdle(ctx context.Context) error {
	b.mu.Lock()
	idle := b.idle
	b.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// addPending adds n (negative when messages were acked or dropped) to the
// pending count and opens or closes the idle channel. b.mu must be held.
func (b *Bus) addPending(n int) {
	was := b.pending
	b.pending += n
	switch {
	case was == 0 && b.pending > 0:
		b.idle = make(chan struct{})
	case was > 0 && b.pending == 0:
		close(b.idle)
		b.idle = nil
	}
}

// subscription is one Subscribe call: its queue and the goroutine that
// delivers it.
type subscription struct {
	bus   *Bus
	topic string
	ctx   context.Context
	out   chan *message.Message // unbuffered: a message is handed over only when read
	wake  chan struct{}         // 1 slot: q got a message
	q     []*message.Message    // guarded by bus.mu
}

// run delivers queued messages one at a time until the subscription's ctx
// is done or the bus closes, then unsubscribes and closes out.
func (s *subscription) run() {
	defer close(s.out)
	defer s.unsubscribe()
	for {
		msg, ok := s.next()
		if !ok {
			return
		}
		s.deliver(msg)
		s.bus.mu.Lock()
		s.bus.addPending(-1)
		s.bus.mu.Unlock()
	}
}

// next returns the oldest queued message, waiting for one, or false once
// the subscription is stopping.
func (s *subscription) next() (*message.Message, bool) {
	for {
		if s.stopping() {
			return nil, false
		}
		s.bus.mu.Lock()
		var msg *message.Message
		if len(s.q) > 0 {
			msg = s.q[0]
			s.q[0] = nil
			s.q = s.q[1:]
		}
		s.bus.mu.Unlock()
		if msg != nil {
			return msg, true
		}
		select {
		case <-s.wake:
		case <-s.ctx.Done():
		case <-s.bus.closing:
		}
	}
}

// stopping reports whether the subscription's ctx is done or the bus is
// closing.
func (s *subscription) stopping() bool {
	select {
	case <-s.ctx.Done():
		return true
	case <-s.bus.closing:
		return true
	default:
		return false
	}
}

// deliver hands msg to the consumer and waits for its ack; it gives up when
// the subscription stops. A Nack counts as an ack and is logged.
func (s *subscription) deliver(msg *message.Message) {
	select {
	case s.out <- msg:
	case <-s.ctx.Done():
		return
	case <-s.bus.closing:
		return
	}
	select {
	case <-msg.Acked():
	case <-msg.Nacked():
		s.bus.log.Error("message nacked; treated as acked, not redelivered",
			"topic", s.topic, "uuid", msg.UUID, "name", msg.Metadata.Get(MetadataName))
	case <-s.ctx.Done():
	case <-s.bus.closing:
	}
}

// unsubscribe removes s from its topic, so Publish queues nothing more for
// it, and drops what is still queued.
func (s *subscription) unsubscribe() {
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	subs := b.subs[s.topic]
	for i, x := range subs {
		if x == s {
			b.subs[s.topic] = append(subs[:i:i], subs[i+1:]...)
			break
		}
	}
	if len(b.subs[s.topic]) == 0 {
		delete(b.subs, s.topic)
	}
	b.addPending(-len(s.q))
	s.q = nil
}

// Handle runs fn on msg and acks msg exactly once, whatever fn does. It never
// nacks (a nacked message is not redelivered; [Bus] logs it as an error). An
// error from fn is logged with the message topic and UUID; a panic in fn is
// recovered, logged with its stack and reported as an error. Handle returns
// fn's error (or the recovered panic) so the caller may publish it.
func Handle(log *slog.Logger, msg *message.Message, fn func(*message.Message) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic handling message %s: %v", msg.UUID, r)
			log.Error("handler panicked", "uuid", msg.UUID, "name", msg.Metadata.Get(MetadataName),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
		msg.Ack()
	}()
	if err = fn(msg); err != nil {
		log.Error("handling message", "uuid", msg.UUID, "name", msg.Metadata.Get(MetadataName), "error", err)
	}
	return err
}

// Receive decodes msg as a T and acks it exactly once ([Handle]): ok is
// false, and the failure logged, when msg is not a T. It lets an actor's
// loop case be one line:
//
//	case msg := <-in:
//		if ev, ok := events.Receive[events.SourcesConfigured](log, msg); ok && ev.Seq > r.cfg.Seq { ... }
func Receive[T any](log *slog.Logger, msg *message.Message) (ev T, ok bool) {
	err := Handle(log, msg, func(m *message.Message) error {
		var err error
		ev, err = Decode[T](m)
		return err
	})
	return ev, err == nil
}
