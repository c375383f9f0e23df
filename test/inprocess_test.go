package test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// stack is the whole server assembled in process as main assembles it: the
// bus, the pipeline with its watcher, and the facade, served to in-memory
// clients.
type stack struct {
	facade *mcpface.Facade
	srv    *mcp.Server
	cancel context.CancelFunc
	done   chan error
	pipe   *actors.Pipeline
	// remote receives every source.synced and source.failed.
	remote chan remoteEvent
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

// startStackEnv is startStack with env as the whole environment LoadConfig
// sees (allowlists, SKILLJACK_CACHE_DIR, poll intervals for remote
// sources); HOME is a fresh temporary folder unless env sets it. The stack's
// pipeline is in st.pipe (its remote fetchers have SyncNow).
func startStackEnv(tb testing.TB, pipe *actors.PipelineOptions, env map[string]string, dirs ...string) *stack {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bus := events.NewBus(nil)
	home := env["HOME"]
	if home == "" {
		home = tb.TempDir()
	}
	cfg, err := actors.LoadConfig(actors.ConfigOptions{Args: dirs, Home: home, Getenv: func(k string) string { return env[k] }, Logger: pipe.Logger})
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
	facade := mcpface.New(&mcpface.Options{Tools: "always", Bundled: pipe.Bundled})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return facade.Run(gctx, catalogs, updates) })
	g.Go(func() error { return p.Run(gctx) })
	st := &stack{facade: facade, cancel: cancel, done: make(chan error, 1), pipe: p, remote: remote}
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

// notifyGoroutines are the goroutines rjeczalik/notify keeps for the life of
// the process (its watch tree is package state, started at init and on the
// first watch); none belongs to the server.
var notifyGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*nonrecursiveTree).dispatch"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*nonrecursiveTree).dispatch.func1"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*nonrecursiveTree).internal"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*inotify).loop"),
	goleak.IgnoreAnyFunction("github.com/rjeczalik/notify.(*inotify).send"),
}

// TestShutdownNoLeak: the whole server — pipeline with a live watcher,
// facade, a subscribed client that saw a live update — stops on cancel
// (what SIGTERM and stdin EOF do in main) and leaves no goroutine behind.
func TestShutdownNoLeak(t *testing.T) {
	before := goleak.IgnoreCurrent()
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Leak check."))
	writeFile(t, filepath.Join(root, "s", "f.md"), "v1\n")
	st := startStack(t, &actors.PipelineOptions{Watch: true, // A short reconcile backs the watcher up on a loaded machine: this
		// test is about shutdown, not about file events (TestLive* are).
		Watcher: actors.WatcherOptions{Debounce: 20 * time.Millisecond, Reconcile: time.Second}}, root)
	n := newNotes()
	cs, ss := st.connectNotes(t, n)
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "skill://lib/s/f.md"}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "s", "f.md"), "v2\n")
	select {
	case <-n.updated:
	case <-time.After(notifyTimeout):
		t.Fatal("no resources/updated")
	}
	cs.Close()
	ss.Wait()
	st.stop(t)
	goleak.VerifyNone(t, append([]goleak.Option{before}, notifyGoroutines...)...)
}
