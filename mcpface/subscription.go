package mcpface

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// How go-sdk v1.8.0 keeps resource subscriptions, which this file builds on:
//
//   - 2025-11-25: resources/subscribe runs SubscribeHandler, then records
//     (URI, session) in the server's own table; resources/unsubscribe runs
//     UnsubscribeHandler, then deletes the pair.
//   - 2026-07-28: subscriptions/listen runs the same subscribe path for
//     each of its resourceSubscriptions, sends
//     notifications/subscriptions/acknowledged, parks until the client
//     cancels the stream, and then unsubscribes each URI again. The table
//     holds the listen request's ID so that notifications carry its
//     subscriptionId.
//   - Server.ResourceUpdated sends to every session in the table for the URI,
//     on the session channel (2025-11-25) or on the listen stream
//     (2026-07-28).
//
// The SDK offers no way to drop a subscription from the server side, so the
// facade calls the SDK's own resources/unsubscribe handler (captured below
// every middleware) for the session, which works for both eras. A 2026-07-28
// client's listen stream stays open after that; it simply receives nothing
// more for that URI.

// releaseGateKey carries, in the context of a subscriptions/listen request,
// the function that releases the read hold on [Facade.subGate].
type releaseGateKey struct{}

// subscribe is the SDK's SubscribeHandler, for both eras. It accepts only
// served URIs and at most maxSubscriptionsPerSession of them per session; an
// unknown URI costs a lookup and a -32602, and leaves no state behind. It
// rewrites the request's URI to its canonical form, under which the SDK then
// records the subscription, so that notifications/resources/updated for the
// served URI reach it. The facade notes the catalog version it validated the
// URI against, so that a notice that the URI went drops only the
// subscriptions made before it went ([Facade.dropSubscriptions]).
func (f *Facade) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	requested := req.Params.URI
	s := f.current()
	if s == nil || len(requested) > s.maxURI {
		// No spelling this long can name a served URI: refuse before
		// decoding it, and do not echo it.
		return invalidParams("Resource not found", "")
	}
	uri, err := lookupURI(requested, "Resource not found: "+clip(requested))
	if err != nil {
		return err
	}
	if _, ok := s.cat.File(uri); !ok && uri != events.IndexURI {
		return invalidParams("Resource not found: "+clip(requested), requested)
	}
	req.Params.URI = uri
	f.subMu.Lock()
	defer f.subMu.Unlock()
	m := f.subs[req.Session]
	if _, ok := m[uri]; !ok && len(m) >= maxSubscriptionsPerSession {
		return invalidParams(fmt.Sprintf("Too many subscriptions: a session may hold %d", maxSubscriptionsPerSession), requested)
	}
	if m == nil {
		f.pruneSubs()
		m = make(map[string]uint64)
		f.subs[req.Session] = m
	}
	m[uri] = s.cat.Version
	return nil
}

// unsubscribe is the SDK's UnsubscribeHandler, for both eras. Unsubscribing
// from a URI that is unknown or not subscribed succeeds and changes nothing.
func (f *Facade) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	if s := f.current(); s != nil && len(req.Params.URI) <= s.maxURI {
		if uri, err := canonicalURI(req.Params.URI); err == nil {
			req.Params.URI = uri // as subscribe recorded it
		}
	}
	f.subMu.Lock()
	defer f.subMu.Unlock()
	if m := f.subs[req.Session]; m != nil {
		delete(m, req.Params.URI)
		if len(m) == 0 {
			delete(f.subs, req.Session)
		}
	}
	return nil
}

// pruneSubs drops the entries of sessions that ended; called with subMu held
// when a session subscribes for the first time, so the map stays as large as
// the live sessions.
func (f *Facade) pruneSubs() {
	srv := f.srv.Load()
	if srv == nil {
		return
	}
	live := make(map[*mcp.ServerSession]bool)
	for ss := range srv.Sessions() {
		live[ss] = true
	}
	for ss := range f.subs {
		if !live[ss] {
			delete(f.subs, ss)
		}
	}
}

// subscriptionMiddleware holds subGate for reading while a subscription is
// validated and recorded: for resources/subscribe until the SDK has recorded
// it, for a subscriptions/listen with resource subscriptions until the SDK
// acknowledges the stream (see [Facade.ackMiddleware]) or fails it.
func (f *Facade) subscriptionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.SubscribeRequest:
			f.subGate.RLock()
			defer f.subGate.RUnlock()
		case *mcp.SubscriptionsListenRequest:
			if r.Params != nil && r.Params.Notifications != nil && len(r.Params.Notifications.ResourceSubscriptions) > 0 {
				f.subGate.RLock()
				release := sync.OnceFunc(f.subGate.RUnlock)
				defer release() // the listen failed, or ended
				ctx = context.WithValue(ctx, releaseGateKey{}, release)
			}
		}
		return next(ctx, method, req)
	}
}

// ackMiddleware releases the read hold of a subscriptions/listen request on
// subGate when the SDK acknowledges the stream: every subscription of the
// stream is recorded by then, and the listen itself parks until cancelled.
func (f *Facade) ackMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodAcknowledged {
			if release, ok := ctx.Value(releaseGateKey{}).(func()); ok {
				release()
			}
		}
		return next(ctx, method, req)
	}
}

// dropSubscriptions drops, in the SDK and here, the subscriptions to each
// URI of gone made against a catalog older than the version it maps to: the
// version whose notice said the URI went with its skill (after its
// notifications/resources/updated was sent). A subscription made against
// that version or a newer one can only exist because the URI is served
// again, and stays. Called by Run.
func (f *Facade) dropSubscriptions(ctx context.Context, gone map[string]uint64) {
	f.subGate.Lock()
	defer f.subGate.Unlock()
	type sub struct {
		ss  *mcp.ServerSession
		uri string
	}
	var drop []sub
	f.subMu.Lock()
	for ss, m := range f.subs {
		for uri, v := range m {
			if before, ok := gone[uri]; ok && v < before {
				drop = append(drop, sub{ss, uri})
			}
		}
	}
	f.subMu.Unlock()
	for _, d := range drop {
		if err := unsubscribeInSDK(ctx, f.dispatch, d.ss, d.uri); err != nil {
			f.log.Warn("dropping subscription", "uri", d.uri, "session_id", d.ss.ID(), "error", err)
		}
	}
	if len(drop) > 0 {
		f.log.Debug("subscriptions dropped with their skill", "count", len(drop))
	}
}
