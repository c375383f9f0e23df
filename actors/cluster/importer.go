package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wmjs "github.com/ThreeDotsLabs/watermill-nats/v2/pkg/jetstream"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go/jetstream"
	json "github.com/segmentio/encoding/json"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/events"
)

// Importer makes the cluster's catalog the one this replica serves (issue
// 16): it takes the last [Pointer] at start and every later one, fetches
// its snapshot from the snapshot bucket and publishes it on the bus as
// [events.TopicCatalogServed] with the pointer's version. A pointer whose
// version is not above the one served is dropped (a claim, a redelivery, a
// message overtaken by a later one). [Node] creates it.
type Importer struct {
	// fixed at creation
	res       *resources
	sub       message.Subscriber // watermill-nats, on the pointer stream
	subject   string
	pub       message.Publisher // the bus
	node      string
	sources   []string // this replica's, compared with the leader's
	reconcile time.Duration
	served    *atomic.Pointer[events.Catalog] // raised to every newer catalog served; nil: not kept
	// reopen creates the cluster's resources again, for when reading
	// fails: a NATS server restarted without its storage lost them.
	reopen func(context.Context) error
	log    *slog.Logger

	// owned by Run
	version uint64
	blobs   map[string][]byte // element and chunk blobs of the catalog served
	// otherSources is the leader and sources last warned about; "" when
	// the leader's sources are this replica's.
	otherSources string
}

// Run imports the last pointer, then follows the stream — re-subscribing
// when the subscription ends, and reading the last pointer every reconcile
// period besides (a consumer lost with a NATS restart, a message missed) —
// until ctx is done. It returns nil.
func (im *Importer) Run(ctx context.Context) error {
	im.poll(ctx)
	tick := time.NewTicker(im.reconcile)
	defer tick.Stop()
	var sub *subscription
	defer func() { im.unsubscribe(sub) }()
	for {
		if sub == nil {
			sub = im.subscribe(ctx)
		}
		var msgs <-chan *message.Message
		if sub != nil {
			msgs = sub.msgs
		}
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-msgs:
			if !ok {
				im.unsubscribe(sub)
				sub = nil
				continue
			}
			im.receive(ctx, msg)
		case <-tick.C:
			if im.poll(ctx) && sub != nil {
				// The subscription missed a pointer (its consumer went
				// with a NATS restart, say): subscribe again.
				im.unsubscribe(sub)
				sub = nil
			}
		}
	}
}

// subscription is one watermill-nats subscription to the pointer stream.
type subscription struct {
	msgs   <-chan *message.Message
	cancel context.CancelFunc
	name   string // of its JetStream consumer
}

// subscribeKey is the context key under which [Importer.subscribe] passes
// the subscriber's resource initializer a subscribeArgs.
type subscribeKey struct{}

// subscribeArgs are what the resource initializer needs from the
// subscription being made.
type subscribeArgs struct {
	name  string          // the consumer's name
	setup context.Context // bounds creating it (the subscription's own context outlives the importer's)
}

// subscribe subscribes to the pointer stream; nil when it cannot, NATS
// being unreachable say (the reconcile tick retries). Creating the
// consumer is bounded by ctx and a reconcile period; the subscription's
// context does not end with ctx: [Importer.unsubscribe] ends it, in an
// order that is safe.
func (im *Importer) subscribe(ctx context.Context) *subscription {
	if !im.res.js.Conn().IsConnected() {
		return nil
	}
	setup, cancelSetup := context.WithTimeout(ctx, max(im.reconcile, time.Second))
	defer cancelSetup()
	name := "imp-" + im.node + "-" + watermill.NewShortUUID()
	sctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), subscribeKey{}, subscribeArgs{name, setup}))
	msgs, err := im.sub.Subscribe(sctx, im.subject)
	if err != nil {
		cancel()
		im.log.Debug("cluster: subscribing to the pointer stream", "error", err)
		return nil
	}
	return &subscription{msgs: msgs, cancel: cancel, name: name}
}

// drainQuiet is how long unsubscribe waits for in-flight deliveries once
// the consumer is gone.
const drainQuiet = 100 * time.Millisecond

// unsubscribe ends s. watermill-nats (v2.1.3) closes a subscription's
// channel when its context ends, while a delivery may still be about to
// send on it — a send on a closed channel, which panics (the race
// detector saw it). So the consumer is deleted first, then whatever is in
// flight is taken (and nacked) until the channel stays quiet, and only
// then is the context cancelled.
func (im *Importer) unsubscribe(s *subscription) {
	if s == nil {
		return
	}
	if im.res.js.Conn().IsConnected() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Second)
		im.res.js.DeleteConsumer(dctx, im.subject, s.name)
		cancel()
	}
	quiet := time.NewTimer(drainQuiet)
	defer quiet.Stop()
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				s.cancel()
				return
			}
			m.Nack()
			quiet.Reset(drainQuiet)
		case <-quiet.C:
			s.cancel()
			for m := range s.msgs {
				m.Nack()
			}
			return
		}
	}
}

// receive imports the pointer msg holds, and acks it; it nacks it (to be
// redelivered) when the import failed.
func (im *Importer) receive(ctx context.Context, msg *message.Message) {
	var p Pointer
	if err := json.Unmarshal(msg.Payload, &p); err != nil {
		im.log.Warn("cluster: dropping a pointer that does not decode", "error", err)
		msg.Ack()
		return
	}
	if err := im.apply(ctx, p); err != nil {
		im.log.Warn("cluster: importing catalog failed; retrying", "version", p.Version, "error", err)
		msg.Nack()
		return
	}
	msg.Ack()
}

// poll imports the last pointer of the stream, if newer, and reports
// whether it did.
func (im *Importer) poll(ctx context.Context) (imported bool) {
	pctx, cancel := context.WithTimeout(ctx, max(im.reconcile, time.Second))
	defer cancel()
	p, _, err := lastPointer(pctx, im.res.pointer, im.subject)
	if err != nil {
		if ctx.Err() == nil {
			im.log.Debug("cluster: reading the last pointer", "error", err)
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) && im.reopen != nil {
			if err := im.reopen(ctx); err != nil {
				im.log.Debug("cluster: creating the cluster's resources again", "error", err)
			}
		}
		return false
	}
	before := im.version
	if err := im.apply(ctx, p); err != nil && ctx.Err() == nil {
		im.log.Warn("cluster: importing catalog failed; retrying", "version", p.Version, "error", err)
	}
	return im.version > before
}

// apply serves the catalog of p when its version is above the one served.
func (im *Importer) apply(ctx context.Context, p Pointer) error {
	im.compareSources(p)
	if p.Version <= im.version {
		return nil
	}
	cat, have, err := loadSnapshot(ctx, im.res, p.Snapshot, p.Version, im.blobs)
	if err != nil {
		return err
	}
	msg, err := events.Encode(events.CatalogChanged{Catalog: cat})
	if err != nil {
		return err
	}
	if err := im.pub.Publish(events.TopicCatalogServed, msg); err != nil {
		return fmt.Errorf("publishing the catalog: %w", err)
	}
	im.version, im.blobs = p.Version, have
	if im.served != nil {
		if cur := im.served.Load(); cur == nil || cur.Version < p.Version {
			im.served.Store(cat) // only Run's goroutine stores it
		}
	}
	im.log.Info("cluster: serving catalog", "version", p.Version, "skills", len(cat.Skills), "leader", p.Node)
	return nil
}

// compareSources warns, once per leader and its sources, when p's leader
// was started with other sources than this replica: this replica serves
// the leader's catalog, but would serve its own sources if it led — most
// likely a deployment mistake (issue 16: every replica gets the same
// sources). Pointers of this replica, or without sources, are not compared.
func (im *Importer) compareSources(p Pointer) {
	if im.sources == nil || p.Sources == nil || p.Node == im.node {
		return
	}
	if slices.Equal(p.Sources, im.sources) {
		im.otherSources = ""
		return
	}
	key := p.Node + "\x00" + strings.Join(p.Sources, "\x00")
	if key == im.otherSources {
		return
	}
	im.otherSources = key
	im.log.Warn("cluster: this replica was started with other sources than the leader; it serves the leader's catalog, and would serve its own sources if it led",
		"leader", p.Node, "leader_sources", strings.Join(p.Sources, ","), "sources", strings.Join(im.sources, ","))
}

// fetchers is how many blobs the importer and the exporter move at once:
// each read or write is a round trip or more, so a catalog of
// thousands of blobs moves in a fraction of the time it takes one by one.
const fetchers = 16

// loadSnapshot returns the catalog of the snapshot named digest, with
// version version, and the blobs it is made of; cache holds blobs already
// fetched (those of the catalog served), which are not fetched again.
func loadSnapshot(ctx context.Context, res *resources, digest string, version uint64, cache map[string][]byte) (*events.Catalog, map[string][]byte, error) {
	root, err := getSnapshotBlob(ctx, res, digest)
	if err != nil {
		return nil, nil, err
	}
	var snap events.CatalogSnapshot
	if err := json.Unmarshal(root, &snap); err != nil {
		return nil, nil, fmt.Errorf("decoding snapshot %s: %w", digest, err)
	}
	have, err := prefetch(ctx, res, snap, cache)
	if err != nil {
		return nil, nil, err
	}
	cat, err := events.ReadCatalogSnapshot(snap, version, func(d string) ([]byte, error) {
		if data, ok := have[d]; ok {
			return data, nil
		}
		return nil, fmt.Errorf("blob %s not fetched", d)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading snapshot %s: %w", digest, err)
	}
	return cat, have, nil
}

// prefetch returns every chunk and element blob snap names, from cache
// when they are there, else fetched from the cluster, fetchers at a time
// (each checked against its digest).
func prefetch(ctx context.Context, res *resources, snap events.CatalogSnapshot, cache map[string][]byte) (map[string][]byte, error) {
	have := map[string][]byte{}
	var chunks []string
	for _, list := range snap.Lists {
		chunks = append(chunks, list...)
	}
	if err := fetchAll(ctx, res, chunks, cache, have); err != nil {
		return nil, err
	}
	var elems []string
	for _, c := range chunks {
		var names []string
		if err := json.Unmarshal(have[c], &names); err != nil {
			return nil, fmt.Errorf("decoding chunk %s: %w", c, err)
		}
		elems = append(elems, names...)
	}
	if err := fetchAll(ctx, res, elems, cache, have); err != nil {
		return nil, err
	}
	return have, nil
}

// fetchAll adds the blobs named digests to have: those in cache from
// memory, the others from the cluster, in parallel.
func fetchAll(ctx context.Context, res *resources, digests []string, cache, have map[string][]byte) error {
	var missing []string
	for _, d := range digests {
		if data, ok := cache[d]; ok {
			have[d] = data
		} else if _, ok := have[d]; !ok {
			missing = append(missing, d)
		}
	}
	got := make([][]byte, len(missing))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchers)
	for i, d := range missing {
		g.Go(func() error {
			data, err := getSnapshotBlob(gctx, res, d)
			got[i] = data
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, d := range missing {
		have[d] = got[i]
	}
	return nil
}

// subscriber returns the watermill-nats subscriber of the pointer stream:
// an ephemeral consumer per subscription that starts at the last pointer
// (deliver last per subject) and acks explicitly, after the import — so a
// pointer whose import failed is redelivered; the version check drops
// redeliveries that arrive after later pointers.
func (n *Node) subscriber() message.Subscriber {
	sub, err := wmjs.NewSubscriber(wmjs.SubscriberConfig{
		Conn:           n.nc,
		Logger:         wmLogger(n.log),
		AckWaitTimeout: n.opts.Lease,
		// A pointer whose import failed comes back after a reconcile
		// period, not at once in a tight loop.
		NakDelay:        wmjs.NewStaticDelay(n.opts.Reconcile),
		ConfigureStream: streamConfig,
		ResourceInitializer: func(ctx context.Context, js jetstream.JetStream, topic string) (jetstream.Consumer, func(context.Context, watermill.LoggerAdapter), error) {
			args, ok := ctx.Value(subscribeKey{}).(subscribeArgs)
			if !ok {
				args = subscribeArgs{name: "imp-" + n.opts.Node + "-" + watermill.NewShortUUID(), setup: ctx}
			}
			cfg := jetstream.ConsumerConfig{
				Name:              args.name,
				FilterSubject:     topic,
				DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
				AckPolicy:         jetstream.AckExplicitPolicy,
				AckWait:           n.opts.Lease,
				InactiveThreshold: time.Minute,
			}
			c, err := js.CreateOrUpdateConsumer(args.setup, topic, cfg)
			if err != nil {
				return nil, nil, fmt.Errorf("creating the pointer consumer: %w", err)
			}
			// Called with the subscription's context, already done.
			closer := func(ctx context.Context, _ watermill.LoggerAdapter) {
				dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
				defer cancel()
				js.DeleteConsumer(dctx, topic, cfg.Name)
			}
			return c, closer, nil
		},
	})
	if err != nil {
		panic(fmt.Sprintf("cluster: watermill-nats subscriber: %v", err)) // only fails on jetstream.New, which cannot with a live Conn
	}
	return sub
}

// publisher returns the watermill-nats publisher of the pointer stream.
// Its subject is the stream name (watermill-nats publishes to the name
// its stream configurator returns, ignoring any subject calculator), so
// the stream's one subject is its name, namespaced by the cluster name.
func (n *Node) publisher() (message.Publisher, error) {
	pub, err := wmjs.NewPublisher(wmjs.PublisherConfig{Conn: n.nc, Logger: wmLogger(n.log), ConfigureStream: streamConfig})
	if err != nil {
		return nil, fmt.Errorf("creating the pointer publisher: %w", err)
	}
	return pub, nil
}

// streamConfig is the stream of a watermill topic: named after it, its one
// subject.
func streamConfig(topic string) jetstream.StreamConfig {
	return jetstream.StreamConfig{Name: topic, Subjects: []string{topic}}
}
