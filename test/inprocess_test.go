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
}

// startStack serves dirs in process. Stop it with stop, which waits for
// every actor.
func startStack(tb testing.TB, pipe *actors.PipelineOptions, dirs ...string) *stack {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	bus := events.NewBus(nil)
	cfg, err := actors.LoadConfig(actors.ConfigOptions{Args: dirs, Home: tb.TempDir(), Getenv: func(string) string { return "" }})
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
	p, err := actors.NewPipeline(ctx, bus, bus, cfg, pipe)
	if err != nil {
		tb.Fatal(err)
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always", Bundled: pipe.Bundled})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return facade.Run(gctx, catalogs, updates) })
	g.Go(func() error { return p.Run(gctx) })
	st := &stack{facade: facade, cancel: cancel, done: make(chan error, 1)}
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
