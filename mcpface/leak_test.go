package mcpface_test

import (
	"context"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestNoGoroutineLeft runs the facade with sessions of both eras,
// subscriptions, a catalog swap and an update through Run, then cancels Run
// and closes the sessions: no goroutine that the test started (facade, SDK
// server or client) is left.
func TestNoGoroutineLeft(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fx := newFixture(t)
	f := newFacade(t, fx.cat, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	catalogs, updates := make(chan *message.Message), make(chan *message.Message)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, catalogs, updates) }()
	srv, err := f.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}

	updated := make(chan string, 10)
	acks := make(chan struct{}, 10)
	type conn struct {
		cs *mcp.ClientSession
		ss *mcp.ServerSession
	}
	var conns []conn
	for _, era := range eras {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "leak", Version: "0"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
		})
		client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "notifications/subscriptions/acknowledged" {
					acks <- struct{}{}
				}
				return next(ctx, method, req)
			}
		})
		cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn{cs, ss})
		if era == modern {
			waitFor(t, acks, "list_changed listen acknowledgement")
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: emailURI}); err != nil {
			t.Fatal(err)
		}
		if era == modern {
			waitFor(t, acks, "subscription acknowledgement")
		}
	}

	cr := rewrite(t, fx.skills["skills__code-review"], "templates/email.md", []byte("leak check\n"))
	msg, err := events.Encode(&events.CatalogChanged{Catalog: events.NewCatalog(2, false, replaceSkill(fx.cat.Skills, cr, false), nil)})
	if err != nil {
		t.Fatal(err)
	}
	catalogs <- msg
	<-msg.Acked()
	deliver(t, updates, 2, emailURI)
	for range conns {
		if got := waitFor(t, updated, "resources/updated"); got != emailURI {
			t.Errorf("resources/updated uri = %s, want %s", got, emailURI)
		}
	}

	cancel()
	if err := waitFor(t, done, "Run to return"); err != nil {
		t.Errorf("Run = %v", err)
	}
	for _, c := range conns {
		c.cs.Close()
		c.ss.Wait()
	}
}
