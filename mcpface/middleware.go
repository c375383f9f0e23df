package mcpface

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recoverMiddleware turns a panic in any handler into a -32603 answer, so the
// process and the session stay alive, gives every error a JSON-RPC code
// (see [coded]) and keeps every error short (see [clipError]).
func (f *Facade) recoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				f.log.Error("handler panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res = nil
				err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error handling %s", method)}
			}
		}()
		if f.panicHook != nil {
			f.panicHook(method)
		}
		res, err = next(ctx, method, req)
		return res, clipError(coded(method, err))
	}
}

// maxErrorMessage is the longest error message or data passed on whole. The
// facade's own messages quote a client's URI or name through [clip]; the
// SDK's (an unknown tool or prompt) quote it whole, so a longer one is cut.
const maxErrorMessage = 1024

// clipError returns err with a message over maxErrorMessage cut by [clip]
// and data over it dropped.
func clipError(err error) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || (len(we.Message) <= maxErrorMessage && len(we.Data) <= maxErrorMessage) {
		return err
	}
	c := *we
	if len(c.Message) > maxErrorMessage {
		c.Message = clip(c.Message)
	}
	if len(c.Data) > maxErrorMessage {
		c.Data = nil
	}
	return &c
}

// logMiddleware logs one Debug line per request.
func (f *Facade) logMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !f.log.Enabled(ctx, slog.LevelDebug) {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		attrs := []any{"method", method, "duration_ms", time.Since(start).Milliseconds()}
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			if r.Params != nil {
				attrs = append(attrs, "tool", clip(r.Params.Name))
			}
		case *mcp.ReadResourceRequest:
			if r.Params != nil {
				attrs = append(attrs, "uri", clip(r.Params.URI))
			}
		case *mcp.GetPromptRequest:
			if r.Params != nil {
				attrs = append(attrs, "prompt", clip(r.Params.Name))
			}
		}
		if err != nil {
			attrs = append(attrs, "error", err)
		}
		f.log.Debug("request", attrs...)
		return res, err
	}
}

// featureMiddleware answers what the facade serves from its snapshot rather
// than from SDK registrations (resources/list, resources/read) and hides the
// tools from clients that load skills themselves (--tools=auto).
func (f *Facade) featureMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s := f.current(); s != nil && s.cat.Pending && waitsForDigests(method) {
			// A pending catalog (issue 12) answers names and descriptions
			// only: everything that serves a digest or a file waits.
			if err := f.awaitComplete(ctx); err != nil {
				return nil, err
			}
		}
		switch method {
		case "tools/list", "tools/call", "prompts/list", "prompts/get":
			// Wait out a catalog swap in progress: its tools and prompts
			// are registered before regMu is released, so a request that
			// follows one that saw the new catalog sees them too.
			f.regMu.Lock()
			f.regMu.Unlock() //nolint:staticcheck // an empty critical section is the point
		}
		// subscriptions/listen exists only in 2026-07-28 (BASE-R23, R25): a
		// request without that era's _meta is a 2025-11-25 client, whose
		// subscriptions are resources/subscribe. Accepting it would send
		// every list_changed twice to such a session.
		if method == "subscriptions/listen" {
			if !modernParams(req.GetParams()) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: subscriptions/listen is a 2026-07-28 method; on 2025-11-25 use resources/subscribe"}
			}
			// Each open stream parks a handler; cap them per session like
			// the subscriptions they carry.
			ss, _ := req.GetSession().(*mcp.ServerSession)
			f.subMu.Lock()
			if f.listens == nil {
				f.listens = make(map[*mcp.ServerSession]int)
			}
			if f.listens[ss] >= maxListensPerSession {
				f.subMu.Unlock()
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Too many listen streams: a session may hold %d", maxListensPerSession)}
			}
			f.listens[ss]++
			f.subMu.Unlock()
			defer func() {
				f.subMu.Lock()
				if f.listens[ss]--; f.listens[ss] <= 0 {
					delete(f.listens, ss)
				}
				f.subMu.Unlock()
			}()
		}
		switch r := req.(type) {
		case *mcp.ListResourcesRequest:
			return f.listResources(r)
		case *mcp.ReadResourceRequest:
			if r.Params == nil {
				return nil, invalidParams("params.uri is required", "")
			}
			if isAppURI(r.Params.URI) && f.appsEnabled() && f.srv.Load() != nil {
				return next(ctx, method, req) // the registered view (apps.go)
			}
			res, err := f.readResource(r.Params.URI)
			if err != nil {
				return nil, err
			}
			return next(context.WithValue(ctx, readResultKey{}, res), method, req)
		case *mcp.ListToolsRequest:
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			caps := r.ClientCapabilities()
			if lr, ok := res.(*mcp.ListToolsResult); ok && (f.hideTools(caps) || !uiSupported(caps)) {
				lr.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *mcp.Tool) bool { return f.hidden(t.Name, caps) })
			}
			return res, nil
		case *mcp.CallToolRequest:
			if r.Params != nil && f.hidden(r.Params.Name, r.ClientCapabilities()) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", clip(r.Params.Name))}
			}
		}
		return next(ctx, method, req)
	}
}

func isSkillTool(name string) bool { return name == toolLoadSkill || name == toolSkillResource }

// hidden reports whether the tool name is withheld from a request with
// client capabilities caps: load-skill and skill-resource under
// --tools=auto from a client that loads skills itself, and the app-only
// tools from a client that renders no MCP Apps ([Facade.hideAppTool]).
func (f *Facade) hidden(name string, caps *mcp.ClientCapabilities) bool {
	return isSkillTool(name) && f.hideTools(caps) || f.hideAppTool(name, caps)
}

// hideTools reports whether a request with client capabilities caps must not
// see load-skill and skill-resource: in auto mode, when the client declares
// the skills extension and so loads skills by URI itself.
func (f *Facade) hideTools(caps *mcp.ClientCapabilities) bool {
	if !f.toolsAuto() || caps == nil {
		return false
	}
	_, ok := caps.Extensions[SkillsExtension]
	return ok
}

// complete answers completion/complete: qualified names for the name
// argument of the skill prompt, served paths for the skill://{+path}
// template (case-insensitive substring, at most 100 values, BASE-R29).
func (f *Facade) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	s := f.current()
	ref, arg := req.Params.Ref, req.Params.Argument
	var candidates []string
	switch {
	case ref.Type == "ref/prompt" && ref.Name == promptSkill:
		if arg.Name == "name" {
			candidates = qualifiedNames(s.cat)
		}
	case ref.Type == "ref/prompt":
		if sk := s.cat.SkillByName(ref.Name); sk == nil || !sk.UserInvocable {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", clip(ref.Name))}
		}
	case ref.Type == "ref/resource" && ref.URI == resourceTemplate:
		if arg.Name == "path" {
			for _, r := range s.resources() {
				if r != indexRef {
					candidates = append(candidates, strings.TrimPrefix(s.uri(r), "skill://"))
				}
			}
		}
	}
	needle := strings.ToLower(arg.Value)
	values := []string{}
	total := 0
	for _, c := range candidates {
		if strings.Contains(strings.ToLower(c), needle) {
			total++
			if len(values) < 100 {
				values = append(values, c)
			}
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{
		Values:  values,
		Total:   total,
		HasMore: total > len(values),
	}}, nil
}

// maxListensPerSession caps the subscriptions/listen streams one session
// may hold open at once. Each costs a parked handler; the go-sdk client
// opens one per subscribed URI, so the cap equals the subscription cap.
const maxListensPerSession = maxSubscriptionsPerSession
