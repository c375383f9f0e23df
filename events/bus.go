package events

import (
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// busBuffer is the per-subscriber channel buffer. Publishing blocks until
// every subscriber acked anyway, so a small buffer only smooths hand-over.
const busBuffer = 16

// NewBus returns the in-process bus: a watermill GoChannel on which Publish
// blocks until every subscriber of the topic acked the message
// (BlockPublishUntilSubscriberAck), so a publisher knows its event was
// handled. It is not persistent: a message published before a subscription
// exists is lost, so subscribe every inbox before starting any actor.
// Watermill's own logging goes to log with Info mapped down to Debug. The
// caller closes the bus last, after every actor stopped.
func NewBus(log *slog.Logger) *gochannel.GoChannel {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wlog := watermill.NewSlogLoggerWithLevelMapping(log.With("component", "bus"), map[slog.Level]slog.Level{
		slog.LevelInfo: slog.LevelDebug,
	})
	return gochannel.NewGoChannel(gochannel.Config{
		OutputChannelBuffer:            busBuffer,
		BlockPublishUntilSubscriberAck: true,
	}, wlog)
}

// Handle runs fn on msg and acks msg exactly once, whatever fn does. It never
// nacks (GoChannel would redeliver a nacked message at once, forever). An
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
