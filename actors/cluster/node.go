package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	json "github.com/segmentio/encoding/json"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
)

// Options configures [New].
type Options struct {
	// Name is the cluster name every JetStream resource is named after.
	// If empty, defaults to [config.DefaultClusterName].
	Name string
	// Node identifies this replica ([NodeID]). Required.
	Node string
	// Lease is the lease TTL, renewed every third of it. If zero, defaults
	// to [config.DefaultClusterLease].
	Lease time.Duration
	// Reconcile is how often the importer reads the last pointer besides
	// following the stream. If zero, defaults to a third of Lease.
	Reconcile time.Duration
	// Lead runs the pipeline's producers (config, watcher, fetchers,
	// hasher, builder) on the bus until ctx is done, and returns then; it
	// is called every time this replica becomes leader, after the
	// exporter's inbox exists. An error it returns steps the replica down.
	// If nil, a leader produces nothing (tests).
	Lead func(ctx context.Context) error
	// Bundled is the file system of the bundled skills, whose bytes the
	// exporter uploads like any other file's; nil when none are served.
	Bundled fs.FS
	// OnLeader, if set, is called with true on becoming leader and false on
	// stepping down (the /healthz "leader" field). It must not block.
	OnLeader func(leader bool)
	// Sources are the locations of the sources this replica was started
	// with, in priority order (those of its startup line). A leader
	// publishes them with its pointers; a follower whose own differ warns
	// once per leader, as it serves the leader's catalog but would serve
	// its own sources if it led. Nil: none said, nothing compared.
	Sources []string
	// Logger receives the cluster's logs; nil discards them.
	Logger *slog.Logger
}

// Node is one replica's membership of a cluster: the lease campaign, the
// leader's exporter and the importer. Create it with [New] and run it with
// [Node.Run].
type Node struct {
	nc   *nats.Conn
	bus  message.Subscriber
	pub  message.Publisher
	opts Options
	n    names
	log  *slog.Logger
	// autoReconcile reports that Options.Reconcile was derived from the
	// lease, and follows it when the cluster's lease is adopted.
	autoReconcile bool

	// served is the newest cluster catalog this replica has served (nil
	// before the first): a new leader on a pointer stream that lost its
	// history (a NATS server restarted without its storage) numbers its
	// catalogs above its version, and holds the remote sources' skills as
	// this replica serves them (see hold.go). Only the importer stores it.
	served atomic.Pointer[events.Catalog]
}

// New returns the node of this replica over nc. It subscribes nothing yet:
// the exporter's inbox (the local [events.TopicCatalogChanged] on bus) is
// subscribed each time the replica becomes leader, and the importer
// publishes each cluster catalog on pub ([events.TopicCatalogServed]).
func New(nc *nats.Conn, bus message.Subscriber, pub message.Publisher, opts *Options) *Node {
	if nc == nil || bus == nil || pub == nil {
		panic("cluster: New needs a NATS connection, a bus and a publisher")
	}
	o := *opts
	if o.Node == "" {
		panic("cluster: New needs Options.Node")
	}
	if o.Name == "" {
		o.Name = config.DefaultClusterName
	}
	if o.Lease <= 0 {
		o.Lease = config.DefaultClusterLease
	}
	autoReconcile := o.Reconcile <= 0
	if autoReconcile {
		o.Reconcile = o.Lease / 3
	}
	if o.OnLeader == nil {
		o.OnLeader = func(bool) {}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Node{nc: nc, bus: bus, pub: pub, opts: o, n: namesOf(o.Name), autoReconcile: autoReconcile,
		log: log.With("actor", "cluster", "node", o.Node)}
}

// Run opens the cluster's JetStream resources (retrying, with a log line,
// while NATS cannot be reached), then runs the importer and the lease
// campaign until ctx is done. It returns nil then; an error only when a
// part cannot start at all.
func (n *Node) Run(ctx context.Context) error {
	res, err := n.open(ctx)
	if err != nil || res == nil {
		return err
	}
	n.adoptLease(ctx, res)
	imp := &Importer{res: res, sub: n.subscriber(), subject: n.n.pointer, pub: n.pub, node: n.opts.Node,
		sources:   n.opts.Sources,
		reconcile: n.opts.Reconcile, served: &n.served, log: n.log.With("part", "importer"),
		reopen: func(ctx context.Context) error { return n.reopen(ctx, res) }}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return imp.Run(gctx) })
	g.Go(func() error { return n.campaign(gctx, res) })
	return g.Wait()
}

// reopenWithin bounds creating the cluster's resources again: four
// JetStream creations on file storage, slow on a loaded server.
const reopenWithin = 5 * time.Second

// reopen creates the cluster's resources again (NATS came back without
// its storage), waiting at most reopenWithin or a lease.
func (n *Node) reopen(ctx context.Context, res *resources) error {
	rctx, cancel := context.WithTimeout(ctx, max(reopenWithin, n.opts.Lease))
	defer cancel()
	_, err := ensure(rctx, res.js, n.n, n.opts.Lease)
	return err
}

// recreateLease creates the cluster's resources again when the lease
// bucket is gone (NATS lost its storage, or a creation of the resources
// ran out of time midway): taking the lease fails then with no answer
// from a stream, or with a deadline as the publish retries.
func (n *Node) recreateLease(ctx context.Context, res *resources) {
	if !n.nc.IsConnected() {
		return
	}
	kctx, cancel := context.WithTimeout(ctx, n.opts.Lease/3)
	_, err := res.js.KeyValue(kctx, n.n.lease)
	cancel()
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return
	}
	if err := n.reopen(ctx, res); err != nil {
		n.log.Debug("cluster: creating the cluster's resources again", "error", err)
	}
}

// adoptLease makes the lease of the cluster's lease bucket this replica's:
// the bucket's TTL is fixed when the first replica creates it, so a
// replica started with another --cluster-lease would renew too seldom (or
// campaign too often) for the keys' real lifetime. A differing value is
// logged with how to change the cluster's lease. It runs before the
// campaign and the importer start.
func (n *Node) adoptLease(ctx context.Context, res *resources) {
	sctx, cancel := context.WithTimeout(ctx, n.opts.Lease)
	defer cancel()
	st, err := res.lease.Status(sctx)
	if err != nil {
		n.log.Debug("cluster: reading the lease bucket", "error", err)
		return
	}
	ttl := st.TTL()
	if ttl <= 0 || ttl == n.opts.Lease {
		return
	}
	n.log.Warn("cluster: the cluster's lease differs from --cluster-lease; using the cluster's (fixed when its lease bucket was created: to change it, stop every replica and delete the bucket)",
		"lease", ttl, "cluster_lease_flag", n.opts.Lease, "bucket", n.n.lease)
	n.opts.Lease = ttl
	if n.autoReconcile {
		n.opts.Reconcile = ttl / 3
	}
}

// open returns the cluster's resources once NATS answers; nil when ctx
// ends first.
func (n *Node) open(ctx context.Context) (*resources, error) {
	js, err := jetstream.New(n.nc)
	if err != nil {
		return nil, fmt.Errorf("opening JetStream: %w", err)
	}
	warned := false
	for {
		res, err := n.tryEnsure(ctx, js)
		if err == nil {
			if warned {
				n.log.Info("cluster: NATS reached")
			}
			return res, nil
		}
		if !warned {
			n.log.Warn("cluster: cannot reach NATS JetStream; serving nothing until it answers (retrying)", "error", err)
			warned = true
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(reconnectWait):
		}
	}
}

// tryEnsure opens or creates the cluster's JetStream resources once,
// waiting at most a lease. While the connection is down it fails at once
// rather than wait that long, so that the first warning is not a lease late
// and retries follow every reconnectWait.
func (n *Node) tryEnsure(ctx context.Context, js jetstream.JetStream) (*resources, error) {
	if !n.nc.IsConnected() {
		return nil, fmt.Errorf("not connected to NATS (%s)", n.nc.Status())
	}
	octx, cancel := context.WithTimeout(ctx, n.opts.Lease)
	defer cancel()
	return ensure(octx, js, n.n, n.opts.Lease)
}

// wmLogger is watermill's logger over log, its Info lowered to Debug.
func wmLogger(log *slog.Logger) watermill.LoggerAdapter {
	return watermill.NewSlogLoggerWithLevelMapping(log, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
}

// leaseValue is the JSON value of the lease key.
type leaseValue struct {
	Node  string    `json:"node"`
	Since time.Time `json:"since"`
}

// campaign tries to take the lease every sixth of the TTL, and at once
// when a leader releases it (a delete seen by a watch on the key), and
// leads while it holds it, until ctx is done. A crashed leader is thus
// replaced within the TTL and a sixth after its last renewal; one that
// shut down, within a round trip.
func (n *Node) campaign(ctx context.Context, res *resources) error {
	val, err := json.Marshal(leaseValue{Node: n.opts.Node, Since: time.Now().UTC()})
	if err != nil {
		return err
	}
	tick := time.NewTicker(n.opts.Lease / 6)
	defer tick.Stop()
	released, stop := n.watchReleases(ctx, res)
	defer stop()
	for {
		actx, cancel := context.WithTimeout(ctx, n.opts.Lease/3)
		rev, err := res.lease.Create(actx, leaderKey, val)
		cancel()
		wake := released
		switch {
		case err == nil:
			n.lead(ctx, res, val, rev)
			// Its own release is no reason to try again at once: a leader
			// that stepped down waits a tick, leaving the lease to others.
			wake = nil
			select {
			case <-released:
			default:
			}
		case ctx.Err() != nil:
		case !errors.Is(err, jetstream.ErrKeyExists):
			n.log.Debug("cluster: cannot take the lease", "error", err)
			n.recreateLease(ctx, res)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-wake:
		}
	}
}

// watchReleases returns a channel that receives when the lease key is
// deleted (a leader released it), and the function that ends the watch and
// waits for its goroutine (which ends with ctx); a nil channel when the
// watch cannot be set up (the ticks alone then drive the campaign).
func (n *Node) watchReleases(ctx context.Context, res *resources) (<-chan struct{}, func()) {
	w, err := res.lease.Watch(ctx, leaderKey, jetstream.UpdatesOnly())
	if err != nil {
		n.log.Debug("cluster: watching the lease", "error", err)
		return nil, func() {}
	}
	out := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e != nil && e.Operation() != jetstream.KeyValuePut {
					select {
					case out <- struct{}{}:
					default:
					}
				}
			}
		}
	})
	stop := func() {
		// Unsubscribing asks the server to delete the watch's consumer,
		// which waits 5 s for an answer when NATS is away; the
		// subscription goes with the connection then.
		if n.nc.IsConnected() {
			w.Stop()
		}
		wg.Wait()
	}
	return out, stop
}

// lead runs the exporter and the producers of term (the lease revision
// rev) while the lease is renewed, and returns when it is lost, when they
// stop (fenced, or failed) or when ctx is done — then releasing the lease
// so that another replica takes over at once.
func (n *Node) lead(ctx context.Context, res *resources, val []byte, rev uint64) {
	term := rev
	log := n.log.With("term", term)
	log.Info("cluster: leader")
	n.opts.OnLeader(true)
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.produce(lctx, res, term) }()
	reason := n.renew(ctx, res, val, &rev, done)
	cancel()
	if sd, ok := reason.(*stepDown); !ok || !sd.consumed {
		<-done
	}
	n.opts.OnLeader(false)
	n.release(ctx, res, rev, log)
	log.Info("cluster: follower", "reason", describe(reason, ctx))
}

// release deletes the lease of revision rev so that another replica takes
// over at once; with NATS unreachable it does not wait (the lease lapses on
// its own), so that a shutdown is not held up.
func (n *Node) release(ctx context.Context, res *resources, rev uint64, log *slog.Logger) {
	if !n.nc.IsConnected() {
		log.Debug("cluster: lease not released: NATS is unreachable; it lapses on its own")
		return
	}
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), n.opts.Lease/3)
	defer dcancel()
	if err := res.lease.Delete(dctx, leaderKey, jetstream.LastRevision(rev)); err != nil {
		log.Debug("cluster: lease not released", "error", err)
	}
}

// renew renews the lease every third of its TTL until the renewal is
// refused, NATS has not answered for two thirds of the TTL, the
// producers return on done (whose error it returns, consumed) or ctx is
// done (nil).
func (n *Node) renew(ctx context.Context, res *resources, val []byte, rev *uint64, done <-chan error) error {
	tick := time.NewTicker(n.opts.Lease / 3)
	defer tick.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			if err == nil {
				err = errors.New("the producers stopped")
			}
			return &stepDown{err, true}
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, n.opts.Lease/3)
		r, err := res.lease.Update(rctx, leaderKey, val, *rev)
		cancel()
		switch {
		case err == nil:
			*rev, lastOK = r, time.Now()
		case ctx.Err() != nil:
			return nil
		case refused(err):
			return &stepDown{fmt.Errorf("lease renewal refused: %w", err), false}
		case time.Since(lastOK) >= n.opts.Lease*2/3:
			return &stepDown{fmt.Errorf("lease not renewed for %s: %w", time.Since(lastOK).Round(time.Millisecond), err), false}
		}
	}
}

// stepDown is why a leader stepped down; consumed reports that the
// producers' result was already taken from their channel.
type stepDown struct {
	err      error
	consumed bool
}

func (s *stepDown) Error() string { return s.err.Error() }

// describe words why lead returned, for the log.
func describe(reason error, ctx context.Context) string {
	if reason == nil || ctx.Err() != nil {
		return "shutting down"
	}
	return reason.Error()
}

// refused reports whether err is JetStream refusing a compare-and-set:
// the lease is someone else's, or it expired.
func refused(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return true
	}
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyNotFound)
}

// produce subscribes the exporter's inbox, then runs it and [Options.Lead]
// until ctx is done or one of them returns.
func (n *Node) produce(ctx context.Context, res *resources, term uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var inboxes [3]<-chan *message.Message
	for i, topic := range []string{events.TopicCatalogChanged, events.TopicSourcesConfigured, events.TopicSourceSynced} {
		ch, err := n.bus.Subscribe(ctx, topic)
		if err != nil {
			return fmt.Errorf("subscribing the exporter to %s: %w", topic, err)
		}
		inboxes[i] = ch
	}
	pub, err := n.publisher()
	if err != nil {
		return err
	}
	exp := &Exporter{in: inboxes[0], configured: inboxes[1], synced: inboxes[2], res: res, pub: pub, subject: n.n.pointer, term: term, node: n.opts.Node,
		sources: n.opts.Sources, bundled: n.opts.Bundled, served: &n.served, log: n.log.With("part", "exporter", "term", term)}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := exp.Run(gctx); err != nil {
			return err
		}
		return gctx.Err()
	})
	if n.opts.Lead != nil {
		g.Go(func() error {
			if err := n.opts.Lead(gctx); err != nil {
				return err
			}
			return gctx.Err()
		})
	}
	err = g.Wait()
	if ctx.Err() != nil && !errors.Is(err, ErrFenced) {
		return nil
	}
	return err
}
