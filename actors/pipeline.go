package actors

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/cluster"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/actors/remote/github"
	"github.com/skilljack/skilljack-mcp/actors/remote/wellknown"
	"github.com/skilljack/skilljack-mcp/actors/watch"
	"github.com/skilljack/skilljack-mcp/events"
)

// PipelineOptions configures [NewPipeline]. The zero value serves local
// sources without watching them and with no bundled skills.
type PipelineOptions struct {
	// Bundled is the file system of the bundled skills ([Bundled]); nil
	// serves none.
	Bundled fs.FS
	// Watch starts the watcher ([watch.Watcher]), so local sources stay
	// live. Off, the skills are scanned once per configuration.
	Watch bool
	// Watcher configures the watcher when Watch is set.
	Watcher watch.Options
	// NotifyDebounce is the notifier's per-URI window; 0 means
	// [notifier.DefaultDebounce].
	NotifyDebounce time.Duration
	// Logger is scoped per actor (log.With("actor", name)); nil discards.
	Logger *slog.Logger
	// HTTPClient sends the remote fetchers' requests (tests inject one
	// that trusts their certificates or maps host names); nil means each
	// fetcher's default client.
	HTTPClient *http.Client
	// RetryBackoff is the remote fetchers' wait before retrying a failed
	// request, doubled per retry; 0 means 1 s. Tests shorten it.
	RetryBackoff time.Duration
	// Reload works the configuration out again as at the start (main:
	// [config.Resolve] with the start's options). Set, the config actor
	// watches the config file and applies config commands while running
	// ([config.Actor]); nil, the first configuration is the only one.
	Reload func() (config.Config, error)
	// ConfigPoll is the config actor's poll interval; 0 means
	// [config.DefaultPoll].
	ConfigPoll time.Duration
	// MaxFileSize and MaxSkillMDSize are the hasher's size caps
	// ([hasher.Options]); 0 means [hasher.DefaultMaxFileSize] and
	// [hasher.DefaultMaxSkillMDSize].
	MaxFileSize, MaxSkillMDSize int64
	// Cluster, if set, runs the pipeline as one replica of a cluster
	// (issue 16): the notifier reads [events.TopicCatalogServed] (the
	// cluster's catalogs, which the importer publishes), and the producers
	// (config, watcher, fetchers, hasher, builder) run only while this
	// replica holds the lease, their catalogs going to the exporter. If
	// nil, nothing changes and nothing talks to NATS.
	Cluster *ClusterOptions
	// DigestCache is the folder of the hasher's persistent digest cache
	// ([hasher.Options.CacheDir]) and of the catalog builder's persisted
	// last catalog ([catalog.Options.CacheDir]; not in cluster mode, where
	// the cluster's snapshot is the catalog served at start); empty keeps
	// both in memory only.
	DigestCache string
}

// ClusterOptions are the cluster part of [PipelineOptions] (issue 16).
type ClusterOptions struct {
	// Conn is the NATS connection ([cluster.Connect]). Required.
	Conn *nats.Conn
	// Name, Node, Lease, Reconcile, OnLeader and Sources are those of
	// [cluster.Options].
	Name, Node string
	Lease      time.Duration
	Reconcile  time.Duration
	OnLeader   func(leader bool)
	Sources    []string
}

// Pipeline is the skill pipeline of [events.NewBus]: config → watcher →
// hasher → catalog builder → notifier, every inbox subscribed. The MCP
// facade is not part of it: main subscribes the facade's inboxes next to it.
//
// Every actor exists from the start: the remote fetchers idle while the
// configuration has no source of their kind, so that a later configuration
// adding one is served. The pipeline exports no actor: a command, such as
// "sync now", is an event on the bus ([events.SyncRequested]).
type Pipeline struct {
	runners []runner
}

type runner interface{ Run(context.Context) error }

// NewPipeline subscribes every actor's inboxes on sub — with ctx bounding
// the subscriptions, so cancel it only when the pipeline has stopped — and
// returns the actors ready to [Pipeline.Run]. The actors publish through pub
// (the bus itself, or a [events.TracePublisher] around it). Subscribe every
// other inbox (the facade's) before calling Run: the bus is not persistent.
// It returns the first subscription error. With [PipelineOptions.Cluster]
// the catalogs to serve are on [events.TopicCatalogServed]: the facade
// subscribes there.
func NewPipeline(ctx context.Context, sub message.Subscriber, pub message.Publisher, cfg config.Config, opts *PipelineOptions) (*Pipeline, error) {
	var o PipelineOptions
	if opts != nil {
		o = *opts
	}
	log := ensureLogger(o.Logger)
	served := events.TopicCatalogChanged
	if o.Cluster != nil {
		served = events.TopicCatalogServed
	}
	notifierIn, err := sub.Subscribe(ctx, served)
	if err != nil {
		return nil, fmt.Errorf("subscribing to %s: %w", served, err)
	}
	p := &Pipeline{}
	if o.Cluster == nil {
		producers, err := newProducers(ctx, sub, pub, cfg, &o, log)
		if err != nil {
			return nil, err
		}
		p.runners = producers
	} else {
		p.runners = []runner{newClusterNode(sub, pub, cfg, &o, log)}
	}
	p.runners = append(p.runners, notifier.New(notifier.Inboxes{Catalog: notifierIn}, pub, &notifier.Options{Debounce: o.NotifyDebounce, Logger: log.With("actor", "notifier")}))
	return p, nil
}

// newProducers subscribes the inboxes of the actors that make catalogs —
// config, watcher, remote fetchers, hasher, catalog builder — with ctx
// bounding the subscriptions, and returns them ready to run.
func newProducers(ctx context.Context, sub message.Subscriber, pub message.Publisher, cfg config.Config, o *PipelineOptions, log *slog.Logger) ([]runner, error) {
	var subErr error
	inbox := func(topic string) <-chan *message.Message {
		ch, err := sub.Subscribe(ctx, topic)
		if err != nil && subErr == nil {
			subErr = fmt.Errorf("subscribing to %s: %w", topic, err)
		}
		return ch
	}
	hasherIn := inbox(events.TopicSourcesConfigured)
	hasherChanges := inbox(events.TopicFilesChanged)
	hasherSynced := inbox(events.TopicSourceSynced)
	hasherCatalogs := inbox(events.TopicCatalogChanged)
	wkIn := wellknown.Inboxes{Configured: inbox(events.TopicSourcesConfigured), SyncRequested: inbox(events.TopicSyncRequested)}
	ghIn := github.Inboxes{Configured: inbox(events.TopicSourcesConfigured), SyncRequested: inbox(events.TopicSyncRequested)}
	commands := inbox(events.TopicConfigCommand)
	catalogIn := catalog.Inboxes{
		Configured: inbox(events.TopicSourcesConfigured),
		Scanned:    inbox(events.TopicSourceScanned),
		Overrides:  inbox(events.TopicOverridesChanged),
	}
	var watcherIn, watcherCatalogs <-chan *message.Message
	if o.Watch {
		watcherIn = inbox(events.TopicSourcesConfigured)
		watcherCatalogs = inbox(events.TopicCatalogChanged)
	}
	if subErr != nil {
		return nil, subErr
	}
	// A cluster leader starts from no persisted catalog: the cluster's
	// last snapshot is what replicas serve meanwhile, and this replica's
	// file may date from when it last led, long ago (issue 16).
	catalogCache := o.DigestCache
	if o.Cluster != nil {
		catalogCache = ""
	}
	var runners []runner
	if o.Watch {
		wo := o.Watcher
		wo.Logger = log.With("actor", "watcher")
		// The watches wait for the first catalog: their walk of every
		// folder is not on the way to the first initialize (issue 12).
		runners = append(runners, watch.New(watch.Inboxes{Configured: watcherIn, Catalogs: watcherCatalogs}, pub, &wo))
	}
	// A first start hashes supporting files after the first catalog is
	// served (issue 12) — not on a cluster leader, whose catalogs go to
	// every replica and must carry every digest (issue 16).
	runners = append(runners,
		hasher.New(hasher.Inboxes{Configured: hasherIn, Changes: hasherChanges, Synced: hasherSynced, Catalogs: hasherCatalogs}, pub,
			&hasher.Options{Bundled: o.Bundled, Logger: log.With("actor", "hasher"), MaxFileSize: o.MaxFileSize, MaxSkillMDSize: o.MaxSkillMDSize, CacheDir: o.DigestCache,
				DeferHashing: o.Cluster == nil}),
		catalog.New(catalogIn, pub, &catalog.Options{Logger: log.With("actor", "catalog"), CacheDir: catalogCache}),
		wellknown.New(wkIn, pub, &wellknown.Options{Config: cfg.WellKnown, HTTPClient: o.HTTPClient, Backoff: o.RetryBackoff, Logger: log.With("actor", "well-known")}),
		github.New(ghIn, pub, &github.Options{Config: cfg.GitHub, HTTPClient: o.HTTPClient, Logger: log.With("actor", "github")}),
	)
	// The config actor publishes; every other actor is subscribed by now.
	runners = append(runners, config.New(config.Inboxes{Commands: commands}, pub, &config.Options{
		Config: cfg, Reload: o.Reload, Poll: o.ConfigPoll, Logger: log.With("actor", "config")}))
	return runners, nil
}

// newClusterNode returns the cluster node of a replica (issue 16): the
// importer always, and while it leads, a fresh set of producers
// ([newProducers]) and the exporter.
func newClusterNode(sub message.Subscriber, pub message.Publisher, cfg config.Config, o *PipelineOptions, log *slog.Logger) runner {
	c := o.Cluster
	lead := func(ctx context.Context) error {
		producers, err := newProducers(ctx, sub, pub, cfg, o, log)
		if err != nil {
			return err
		}
		return (&Pipeline{runners: producers}).Run(ctx)
	}
	return cluster.New(c.Conn, sub, pub, &cluster.Options{Name: c.Name, Node: c.Node, Lease: c.Lease, Reconcile: c.Reconcile,
		Lead: lead, Bundled: o.Bundled, OnLeader: c.OnLeader, Sources: c.Sources, Logger: log})
}

// Run runs every actor until ctx is done and returns once all of them have
// returned: nil, or the first actor error.
func (p *Pipeline) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, r := range p.runners {
		g.Go(func() error { return r.Run(gctx) })
	}
	return g.Wait()
}

// ensureLogger returns log, or a logger that discards everything when nil.
func ensureLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
