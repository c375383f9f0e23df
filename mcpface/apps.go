package mcpface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// The MCP Apps surface (issue 14; reference §1.2, §7; SEP-1865, spec
// mcp-apps-and-mcpb.md Part A): two model-visible tools, skill-config and
// skill-display, each linked to its ui:// view, and eight app-only
// mutation tools the views call. The mutations never touch a file: each
// publishes one config.command ([events.ConfigCommand]) and waits for the
// config actor's answer ([events.ConfigApplied]), then for the
// configuration view and the catalog that the change leads to, so that the
// snapshot it answers with is what the server now serves.
//
// They exist on the stdio server only, and not in static mode, as in the
// reference; a client that does not declare the UI extension with the
// HTML profile (APPS-R03) neither lists nor calls the app-only tools: the
// model of a text-only host does not get eight mutation tools.

// Tool names (reference §1.2).
const (
	toolConfig               = "skill-config"
	toolConfigAddDirectory   = "skill-config-add-directory"
	toolConfigRemoveDir      = "skill-config-remove-directory"
	toolConfigAddOrg         = "skill-config-add-allowed-org"
	toolConfigRemoveOrg      = "skill-config-remove-allowed-org"
	toolConfigAddOrigin      = "skill-config-add-allowed-origin"
	toolConfigRemoveOrigin   = "skill-config-remove-allowed-origin"
	toolConfigSetStatic      = "skill-config-set-static-mode"
	toolDisplay              = "skill-display"
	toolDisplayUpdate        = "skill-display-update-invocation"
	toolDisplayResetOverride = "skill-display-reset-override"
)

// appOnlyTools are the tools with _meta.ui.visibility ["app"] (APPS-R11).
var appOnlyTools = []string{
	toolConfigAddDirectory, toolConfigRemoveDir, toolConfigAddOrg, toolConfigRemoveOrg,
	toolConfigAddOrigin, toolConfigRemoveOrigin, toolConfigSetStatic,
	toolDisplayUpdate, toolDisplayResetOverride,
}

func isAppOnlyTool(name string) bool { return slices.Contains(appOnlyTools, name) }

// Waits of a mutation tool.
const (
	// answerWait bounds the wait for the config actor's answer: it edits
	// one small file, so only a stopped pipeline takes this long.
	answerWait = 10 * time.Second
	// servedWait bounds the wait for the catalog a command leads to: a
	// local folder is scanned in well under a second; a remote source's
	// first sync may take longer, and then the tool answers with what is
	// served and says so.
	servedWait = 10 * time.Second
)

// appsEnabled reports whether the stdio server offers the apps: not
// static, and a publisher to send commands on.
func (f *Facade) appsEnabled() bool { return !f.opts.Static && f.opts.Publisher != nil }

// uiSupported reports whether caps declare the MCP Apps extension with the
// HTML profile among its mimeTypes (APPS-R02, R03). Only
// capabilities.extensions counts, as in the current ext-apps SDK
// (TV-APPS-04: experimental alone does not).
func uiSupported(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	raw, ok := caps.Extensions[apps.ExtensionID]
	if !ok || raw == nil {
		return false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var ext struct {
		MIMETypes []string `json:"mimeTypes"`
	}
	if json.Unmarshal(b, &ext) != nil {
		return false
	}
	return slices.Contains(ext.MIMETypes, apps.MIMEType)
}

// hideAppTool reports whether the tool name is withheld from a request
// with client capabilities caps: an app-only tool, for a client without
// the UI extension.
func (f *Facade) hideAppTool(name string, caps *mcp.ClientCapabilities) bool {
	return isAppOnlyTool(name) && !uiSupported(caps)
}

// modelOnlyMeta is the _meta of load-skill and skill-resource: visibility
// ["model"] (APPS-R11), so a host refuses a view's call to them. A view
// reads what it shows through its own tools; these two exist for the model.
func modelOnlyMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{"visibility": []string{"model"}}}
}

// uiMeta is the _meta of a tool linked to the view uri: both the nested
// ui.resourceUri and the deprecated flat ui/resourceUri (APPS-R10), and
// visibility ["app"] for an app-only tool (APPS-R11).
func uiMeta(uri string, appOnly bool) mcp.Meta {
	ui := map[string]any{"resourceUri": uri}
	if appOnly {
		ui["visibility"] = []string{"app"}
	}
	return mcp.Meta{"ui": ui, "ui/resourceUri": uri}
}

// registerApps adds the two views and every UI tool to srv.
func (f *Facade) registerApps(srv *mcp.Server) {
	for _, v := range []struct{ uri, name, title, html string }{
		{apps.ConfigURI, "skill-config-app", "Configure Skills", apps.ConfigHTML()},
		{apps.DisplayURI, "skill-display-app", "View Skills", apps.DisplayHTML()},
	} {
		html := v.html
		srv.AddResource(&mcp.Resource{URI: v.uri, Name: v.name, Title: v.title, MIMEType: apps.MIMEType,
			Description: "The " + v.title + " MCP App view (SEP-1865)."},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				// APPS-R05, R06: one text item, mime exactly the profile.
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: apps.MIMEType, Text: html}}}, nil
			})
	}
	f.registerConfigTools(srv)
	f.registerDisplayTools(srv)
}

// appState is the facade's side of the config commands: the newest
// configuration view and the commands waiting for their answer.
type appState struct {
	mu sync.Mutex
	// view is the newest [events.ConfigView]; nil before the first.
	view *events.ConfigView
	// changed is closed and replaced whenever view changes.
	changed chan struct{}
	// waiting maps a command ID to the channel its answer goes to.
	waiting map[string]chan events.ConfigApplied
	seq     uint64
}

// RunConfig consumes config.applied messages, handing each
// [events.ConfigApplied] to the tool call waiting for it, and config.view
// messages, keeping the newest [events.ConfigView] (by Seq) for the config
// tools. Each message is acked once and never nacked. It blocks until ctx
// is done and then returns nil; a closed channel is no longer read. Without
// it the mutation tools time out and skill-config reports that the
// configuration is not known.
func (f *Facade) RunConfig(ctx context.Context, applied, views <-chan *message.Message) error {
	for applied != nil || views != nil {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-applied:
			if !ok {
				applied = nil
				continue
			}
			if ans, ok := events.Receive[events.ConfigApplied](f.log, msg); ok {
				f.app.mu.Lock()
				ch := f.app.waiting[ans.ID]
				delete(f.app.waiting, ans.ID)
				f.app.mu.Unlock()
				if ch != nil {
					ch <- ans // buffered: one answer per ID
				}
			}
		case msg, ok := <-views:
			if !ok {
				views = nil
				continue
			}
			if v, ok := events.Receive[events.ConfigView](f.log, msg); ok {
				f.setView(v)
			}
		}
	}
	<-ctx.Done()
	return nil
}

func (f *Facade) setView(v events.ConfigView) {
	a := &f.app
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.view != nil && a.view.Seq >= v.Seq {
		return
	}
	a.view = &v
	if a.changed != nil {
		close(a.changed)
	}
	a.changed = make(chan struct{})
}

// viewAtLeast waits (bounded by ctx) for a configuration view of Seq at
// least seq, and returns the newest one; nil when none came.
func (f *Facade) viewAtLeast(ctx context.Context, seq uint64) *events.ConfigView {
	a := &f.app
	for {
		a.mu.Lock()
		v := a.view
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		ch := a.changed
		a.mu.Unlock()
		if v != nil && v.Seq >= seq {
			return v
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v
		}
	}
}

// servedAtLeast waits (bounded by ctx) until the served catalog was built
// from configuration cfgSeq and overrides ovSeq or later ones, and reports
// whether it is.
func (f *Facade) servedAtLeast(ctx context.Context, cfgSeq, ovSeq uint64) bool {
	for {
		f.swapMu.Lock()
		if f.swapped == nil {
			f.swapped = make(chan struct{})
		}
		ch := f.swapped
		f.swapMu.Unlock()
		if s := f.current(); s != nil && s.cat.ConfigSeq >= cfgSeq && s.cat.OverridesSeq >= ovSeq {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// errNotServed is the note of a command whose catalog did not come in time.
var errNotServed = errors.New("the change is saved, but the server is still working it out (a remote source syncing, a large folder scanning): call skill-config or skill-display again in a moment to see it served")

// command publishes cmd (its ID set here) and waits for the config actor's
// answer, then for the view and the catalog it leads to. It returns the
// answer; err is set when no answer came (the text is for the model).
// notServed is set when the answer came but the catalog did not follow in
// time.
func (f *Facade) command(ctx context.Context, cmd events.ConfigCommand) (ans events.ConfigApplied, notServed bool, err error) {
	a := &f.app
	ch := make(chan events.ConfigApplied, 1)
	a.mu.Lock()
	a.seq++
	cmd.ID = "app-" + strconv.FormatUint(a.seq, 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if a.waiting == nil {
		a.waiting = make(map[string]chan events.ConfigApplied)
	}
	a.waiting[cmd.ID] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, cmd.ID)
		a.mu.Unlock()
	}()
	if err := events.Publish(f.opts.Publisher, cmd); err != nil {
		return ans, false, fmt.Errorf("could not send the change to the configuration: %w", err)
	}
	timer := time.NewTimer(answerWait)
	defer timer.Stop()
	select {
	case ans = <-ch:
	case <-timer.C:
		return ans, false, fmt.Errorf("the configuration did not answer within %v; the change may not be saved: call skill-config to see the configuration", answerWait)
	case <-ctx.Done():
		return ans, false, ctx.Err()
	}
	if ans.Error != "" {
		return ans, false, nil
	}
	wctx, cancel := context.WithTimeout(ctx, servedWait)
	defer cancel()
	f.viewAtLeast(wctx, ans.ViewSeq)
	served := f.servedAtLeast(wctx, ans.ConfigSeq, ans.OverridesSeq)
	return ans, !served, nil
}

// isAppURI reports whether uri names one of the views.
func isAppURI(uri string) bool { return uri == apps.ConfigURI || uri == apps.DisplayURI }

// instructionsMiddleware gives each new stdio session (initialize, or a
// 2026-07-28 server/discover) the instructions of the catalog served now,
// not of the first one, which go-sdk fixed when the server was built: an
// invocation override saved by the display app (assistant off) takes the
// skill out of the <available_skills> of the next session (issue 14). A
// static server keeps the first catalog's, as its tools and prompts do.
func (f *Facade) instructionsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || f.opts.Static || f.opts.CatalogMode != CatalogInstructions {
			return res, err
		}
		s := f.current()
		if s == nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Instructions = f.catalogInstructions(s.cat, false)
		case *mcp.DiscoverResult:
			r.Instructions = f.catalogInstructions(s.cat, false)
		}
		return res, err
	}
}
