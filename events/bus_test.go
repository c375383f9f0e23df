package events_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.uber.org/goleak"

	"github.com/skilljack/skilljack-mcp/events"
)

// subscribe subscribes to topic on bus or fails the test.
func subscribe(t *testing.T, bus *events.Bus, ctx context.Context, topic string) <-chan *message.Message {
	t.Helper()
	ch, err := bus.Subscribe(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// publishN publishes messages "0" … "n-1" on topic, one per call, and
// returns the first error.
func publishN(pub message.Publisher, topic string, n int) error {
	for i := range n {
		if err := pub.Publish(topic, message.NewMessage(strconv.Itoa(i), nil)); err != nil {
			return err
		}
	}
	return nil
}

// receiveInOrder reads n messages from in, acking each after wait(i), and
// reports the first one out of order.
func receiveInOrder(in <-chan *message.Message, n int, wait func(i int)) error {
	for i := range n {
		msg, ok := <-in
		if !ok {
			return errors.New("channel closed after " + strconv.Itoa(i) + " messages")
		}
		wait(i)
		msg.Ack()
		if msg.UUID != strconv.Itoa(i) {
			return errors.New("message " + strconv.Itoa(i) + " is " + msg.UUID)
		}
	}
	return nil
}

// TestBusOrder (issue 11 item 3): 10,000 messages from one publisher arrive
// in order at two subscribers of the topic, one of them slow: it takes
// nothing until the fast one has every message, then sleeps 100µs per
// message.
func TestBusOrder(t *testing.T) {
	const n = 10_000
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		defer bus.Close()
		fast := subscribe(t, bus, t.Context(), "t")
		slow := subscribe(t, bus, t.Context(), "t")
		fastDone := make(chan error, 1)
		slowDone := make(chan error, 1)
		go func() { fastDone <- receiveInOrder(fast, n, func(int) {}) }()
		go func() {
			fastErr := <-fastDone
			fastDone <- fastErr
			slowDone <- receiveInOrder(slow, n, func(int) { time.Sleep(100 * time.Microsecond) })
		}()
		if err := publishN(bus, "t", n); err != nil {
			t.Fatalf("Publish = %v", err)
		}
		if err := <-slowDone; err != nil {
			t.Errorf("slow subscriber: %v", err)
		}
		if err := <-fastDone; err != nil {
			t.Errorf("fast subscriber: %v", err)
		}
	})
}

// TestBusSlowSubscriber (issue 11 item 3): a subscriber that takes 2 s per
// message delays neither the publisher (its 10 publishes return before the
// slow subscriber acks its first message) nor another subscriber of the
// topic (it receives all 10 while the slow one still holds its first).
func TestBusSlowSubscriber(t *testing.T) {
	const n = 10
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		defer bus.Close()
		other := subscribe(t, bus, t.Context(), "t")
		slow := subscribe(t, bus, t.Context(), "t")
		// slowAcking is closed just before the slow subscriber acks its
		// first message: whoever waited for that ack has not seen it yet.
		slowAcking := make(chan struct{})
		slowDone := make(chan error, 1)
		go func() {
			slowDone <- receiveInOrder(slow, n, func(i int) {
				time.Sleep(2 * time.Second)
				if i == 0 {
					close(slowAcking)
				}
			})
		}()
		otherDone := make(chan error, 1)
		go func() { otherDone <- receiveInOrder(other, n, func(int) {}) }()
		published := make(chan error, 1)
		go func() { published <- publishN(bus, "t", n) }()

		select {
		case err := <-published:
			if err != nil {
				t.Fatalf("Publish = %v", err)
			}
		case <-slowAcking:
			t.Fatal("Publish waited for the slow subscriber's ack")
		}
		select {
		case err := <-otherDone:
			if err != nil {
				t.Errorf("other subscriber: %v", err)
			}
		case <-slowAcking:
			t.Fatal("the other subscriber waited for the slow subscriber's ack")
		}
		if err := <-slowDone; err != nil {
			t.Errorf("slow subscriber: %v", err)
		}
	})
}

// TestBusTopics: a subscriber sees only its topic; a topic without
// subscribers drops the message; a subscription made later does not see
// earlier messages.
func TestBusTopics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		defer bus.Close()
		a := subscribe(t, bus, t.Context(), "a")
		if err := bus.Publish("b", message.NewMessage("x", nil)); err != nil { // nobody listens: dropped
			t.Fatal(err)
		}
		if err := bus.Publish("a", message.NewMessage("0", nil)); err != nil {
			t.Fatal(err)
		}
		late := subscribe(t, bus, t.Context(), "a")
		if err := receiveInOrder(a, 1, func(int) {}); err != nil {
			t.Error(err)
		}
		synctest.Wait()
		select {
		case m := <-late:
			t.Errorf("late subscription got %s, published before it existed", m.UUID)
		default:
		}
	})
}

// TestBusNack: a nacked message counts as acked (logged, not redelivered),
// and the next one is delivered.
func TestBusNack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		bus := events.NewBus(slog.New(slog.NewTextHandler(&logs, nil)))
		defer bus.Close()
		in := subscribe(t, bus, t.Context(), "t")
		if err := publishN(bus, "t", 2); err != nil {
			t.Fatal(err)
		}
		(<-in).Nack()
		if m := <-in; m.UUID != "1" {
			t.Errorf("after a Nack got %s, want the next message 1", m.UUID)
		} else {
			m.Ack()
		}
		synctest.Wait()
		if !strings.Contains(logs.String(), "nacked") {
			t.Errorf("log lacks the nack: %s", logs.String())
		}
	})
}

// TestBusCancelSubscription: cancelling a subscription's ctx closes its
// channel, drops what was queued for it, and does not disturb other
// subscriptions; WaitIdle then returns.
func TestBusCancelSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		defer bus.Close()
		ctx, cancel := context.WithCancel(t.Context())
		gone := subscribe(t, bus, ctx, "t")
		kept := subscribe(t, bus, t.Context(), "t")
		if err := publishN(bus, "t", 3); err != nil {
			t.Fatal(err)
		}
		<-gone // handed over, never acked
		cancel()
		for range gone {
			t.Error("message delivered after cancel")
		}
		if err := receiveInOrder(kept, 3, func(int) {}); err != nil {
			t.Error(err)
		}
		if err := bus.WaitIdle(t.Context()); err != nil {
			t.Errorf("WaitIdle = %v", err)
		}
	})
}

// TestBusCloseInFlight (issue 11 item 3): Close with messages queued and
// one handed over but not acked closes every channel, leaks no goroutine,
// does not panic, and later calls fail with ErrClosed.
func TestBusCloseInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	bus := events.NewBus(nil)
	held := subscribe(t, bus, t.Context(), "t")
	idle := subscribe(t, bus, t.Context(), "t") // never read
	if err := publishN(bus, "t", 100); err != nil {
		t.Fatal(err)
	}
	msg := <-held
	var wg sync.WaitGroup
	wg.Go(func() { // races with Close
		for i := range 100 {
			if err := bus.Publish("t", message.NewMessage(strconv.Itoa(i), nil)); err != nil && !errors.Is(err, events.ErrClosed) {
				t.Errorf("Publish = %v, want nil or ErrClosed", err)
			}
		}
	})
	if err := bus.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	wg.Wait()
	msg.Ack() // after Close: harmless
	for _, ch := range []<-chan *message.Message{held, idle} {
		if _, ok := <-ch; ok {
			t.Error("a channel delivered after Close")
		}
	}
	if err := bus.Publish("t", message.NewMessage("x", nil)); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	if _, err := bus.Subscribe(t.Context(), "t"); !errors.Is(err, events.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if err := bus.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// TestBusWaitIdle: WaitIdle returns only once every delivered message was
// acked, and at once on an idle bus.
func TestBusWaitIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		defer bus.Close()
		if err := bus.WaitIdle(t.Context()); err != nil {
			t.Fatalf("WaitIdle on an empty bus = %v", err)
		}
		in := subscribe(t, bus, t.Context(), "t")
		if err := publishN(bus, "t", 2); err != nil {
			t.Fatal(err)
		}
		idle := make(chan error, 1)
		go func() { idle <- bus.WaitIdle(t.Context()) }()
		first := <-in
		first.Ack()
		second := <-in
		synctest.Wait()
		select {
		case err := <-idle:
			t.Fatalf("WaitIdle = %v before the last ack", err)
		default:
		}
		second.Ack()
		if err := <-idle; err != nil {
			t.Errorf("WaitIdle = %v", err)
		}
	})
}
