package test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// stack is the server assembled in process for tests that inject what the
// command line cannot: an HTTP client trusting a fake TLS server, watcher
// timings, a view of source.synced/source.failed. main_test.go runs the
// real wiring (main.run) over pipes; keep this one in step with it.
type stack struct {
	facade *mcpface.Facade
	srv    *mcp.Server
	cancel context.CancelFunc
	done   chan error
	// bus is the stack's bus, for commands such as sync.requested.
	bus *events.Bus
	// remote receives every source.synced and source.failed.
	remote chan remoteEvent
}

// syncNow publishes a sync.requested for every remote source, as the
// remote fetchers' "sync now" command.
func (st *stack) syncNow(tb testing.TB) {
	tb.Helper()
	if err := events.Publish(st.bus, events.SyncRequested{RequestedAt: time.Now()}); err != nil {
		tb.Fatal(err)
	}
}

// remoteEvent is one source.synced (Synced set) or source.failed (Failed
// set) seen on the bus.
type remoteEvent struct {
	Topic  string
	Synced *events.SourceSynced
	Failed *events.SourceFailed
	Err    error
}

// startStack serves dirs in process. Stop it with stop, which waits for
// every actor.
func startStack(tb testing.TB, pipe *actors.PipelineOptions, dirs ...string) *stack {
	tb.Helper()
	return startStackEnv(tb, pipe, nil, dirs...)
}

// startStackEnv is startStack with env as the whole environment config.Resolve
// sees (allowlists, SKILLJACK_CACHE_DIR, poll intervals for remote
// sources); HOME is a fresh temporary folder unless env sets it. The stack's
// bus is in st.bus (st.syncNow asks the remote fetchers for a sync).
func startStackEnv(tb testing.TB, pipe *actors.PipelineOptions, env map[string]string, dirs ...string) *stack {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bus := events.NewBus(nil)
	home := env["HOME"]
	if home == "" {
		home = tb.TempDir()
	}
	cfg, err := config.Resolve(config.ResolveOptions{Args: dirs, Home: home, Getenv: func(k string) string { return env[k] }, Logger: pipe.Logger})
	if err != nil {
		tb.Fatal(err)
	}
	catalogs, err := bus.Subscribe(ctx, events.TopicCatalogChanged)
	if err != nil {
		tb.Fatal(err)
	}
	updates, err := bus.Subscribe(ctx, events.TopicResourcesUpdated)
	if err != nil {
		tb.Fatal(err)
	}
	remote := make(chan remoteEvent, 1000)
	for _, topic := range []string{events.TopicSourceSynced, events.TopicSourceFailed} {
		ch, err := bus.Subscribe(ctx, topic)
		if err != nil {
			tb.Fatal(err)
		}
		go func() {
			for msg := range ch {
				ev := remoteEvent{Topic: topic}
				if topic == events.TopicSourceSynced {
					s, err := events.Decode[events.SourceSynced](msg)
					ev.Synced, ev.Err = &s, err
				} else {
					f, err := events.Decode[events.SourceFailed](msg)
					ev.Failed, ev.Err = &f, err
				}
				msg.Ack()
				offer(remote, ev)
			}
		}()
	}
	p, err := actors.NewPipeline(ctx, bus, bus, cfg, pipe)
	if err != nil {
		tb.Fatal(err)
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always", Bundled: pipe.Bundled, Static: cfg.Static})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return facade.Run(gctx, catalogs, updates) })
	g.Go(func() error { return p.Run(gctx) })
	st := &stack{facade: facade, cancel: cancel, done: make(chan error, 1), bus: bus, remote: remote}
	go func() {
		err := g.Wait()
		bus.Close()
		st.done <- err
	}()
	srv, err := facade.Server(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	st.srv = srv
	return st
}

func (st *stack) stop(tb testing.TB) {
	tb.Helper()
	st.cancel()
	select {
	case err := <-st.done:
		if err != nil {
			tb.Errorf("pipeline: %v", err)
		}
	case <-time.After(30 * time.Second):
		tb.Fatal("pipeline did not stop within 30 s of cancel")
	}
}

// connectNotes connects an in-memory client that records notifications.
func (st *stack) connectNotes(tb testing.TB, n *notes) (*mcp.ClientSession, *mcp.ServerSession) {
	tb.Helper()
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := st.srv.Connect(context.Background(), stt, nil)
	if err != nil {
		tb.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "in-process", Version: "v0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { offer(n.updated, r.Params.URI) },
	})
	cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		tb.Fatal(err)
	}
	return cs, ss
}
