package mcpface

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// Client roots (issue 13 item 14). The stdio server asks a client that
// declares the roots capability for its workspace roots and publishes them
// as one config.command set-client-roots ([events.ConfigSetClientRoots]);
// the config actor serves each root's skill folders and a new catalog
// follows, announced with the usual list_changed notifications. The HTTP
// server is stateless: it never asks.
//
// How the roots are asked depends on the era:
//   - 2025-11-25: roots/list right after notifications/initialized, and
//     again after each notifications/roots/list_changed.
//   - 2026-07-28 forbids server-initiated requests (SEP-2322, SEP-2575):
//     the first tools/call, prompts/get or resources/read of a client whose
//     _meta declares roots — and the first after each
//     notifications/roots/list_changed — is answered input_required with a
//     roots/list input request; the client's retry carries the roots and is
//     then served as usual.

// The values of [Options.Roots].
const (
	RootsAuto = "auto"
	RootsOff  = "off"
)

// rootsInputKey is the input request ID of the roots/list a 2026-07-28
// client is asked through a multi round-trip result.
const rootsInputKey = "skilljack-roots"

// rootsTimeout bounds one roots/list request on 2025-11-25.
const rootsTimeout = 30 * time.Second

// clientRoots is the facade's state about the stdio client's roots.
type clientRoots struct {
	mu sync.Mutex
	// want is set when the roots must be asked (again); busy while a
	// goroutine asks them on 2025-11-25.
	want, busy bool
	// fresh is the 2026-07-28 session whose roots are known and unchanged
	// since; nil makes its next multi round-trip request ask them.
	fresh *mcp.ServerSession
	// last is the folder list last published; published is set after the
	// first publish.
	last      []string
	published bool
	seq       int
}

// rootsEnabled reports whether the stdio server asks for client roots:
// --roots=auto, a publisher to send the roots on, and not --static (the
// skill set is fixed at startup).
func (f *Facade) rootsEnabled() bool {
	return f.opts.Roots == RootsAuto && f.opts.Publisher != nil && !f.opts.Static
}

// declaresRoots reports whether caps declare the roots capability.
func declaresRoots(caps *mcp.ClientCapabilities) bool {
	return caps != nil && caps.RootsV2 != nil
}

// rootsInitialized is the stdio server's InitializedHandler: a 2025-11-25
// client that declared roots is asked for them.
func (f *Facade) rootsInitialized(_ context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	if ip := ss.InitializeParams(); ip != nil && !modernVersion(ip.ProtocolVersion) && declaresRoots(ip.Capabilities) {
		f.askRoots(ss)
	}
}

// rootsListChanged is the stdio server's RootsListChangedHandler: the roots
// are asked again, at once on 2025-11-25, with the next multi round-trip
// request on 2026-07-28.
func (f *Facade) rootsListChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	ss := req.Session
	ip := ss.InitializeParams()
	if ip == nil {
		return
	}
	if modernVersion(ip.ProtocolVersion) {
		f.roots.mu.Lock()
		f.roots.fresh = nil
		f.roots.mu.Unlock()
		f.log.Debug("client roots changed: asked with the next tools/call, prompts/get or resources/read")
		return
	}
	if declaresRoots(ip.Capabilities) {
		f.askRoots(ss)
	}
}

// askRoots asks ss for its roots in a goroutine (a notification handler
// must not wait for a request of its own), one request at a time: a change
// announced during a request asks again after it.
func (f *Facade) askRoots(ss *mcp.ServerSession) {
	r := &f.roots
	r.mu.Lock()
	r.want = true
	if r.busy {
		r.mu.Unlock()
		return
	}
	r.busy = true
	r.mu.Unlock()
	go func() {
		for {
			r.mu.Lock()
			if !r.want {
				r.busy = false
				r.mu.Unlock()
				return
			}
			r.want = false
			r.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), rootsTimeout)
			f.log.Debug("asking the client for its roots (roots/list)")
			res, err := ss.ListRoots(ctx, nil)
			cancel()
			if err != nil {
				f.log.Debug("roots/list failed; the client's roots are not served", "error", err)
				continue
			}
			f.setRoots(res.Roots)
		}
	}()
}

// rootsMiddleware asks a 2026-07-28 client for its roots through a multi
// round-trip result (see the top of this file) and takes them from its
// retry.
func (f *Facade) rootsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var (
			responses mcp.InputResponseMap
			caps      *mcp.ClientCapabilities
		)
		switch r := req.(type) {
		case *mcp.CallToolRequest:
			if r.Params != nil {
				responses = r.Params.InputResponses
			}
			caps = r.ClientCapabilities()
		case *mcp.GetPromptRequest:
			if r.Params != nil {
				responses = r.Params.InputResponses
			}
			caps = r.ClientCapabilities()
		case *mcp.ReadResourceRequest:
			if r.Params != nil {
				responses = r.Params.InputResponses
			}
			caps = r.ClientCapabilities()
		default:
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil || !f.rootsEnabled() || !modernParams(req.GetParams()) || !declaresRoots(caps) {
			return next(ctx, method, req)
		}
		if res, ok := responses[rootsInputKey].(*mcp.ListRootsResult); ok {
			f.roots.mu.Lock()
			f.roots.fresh = ss
			f.roots.mu.Unlock()
			var version uint64
			if cur := f.current(); cur != nil {
				version = cur.cat.Version
			}
			if folders, published := f.setRoots(res.Roots); published && anySkillFolder(folders) {
				// The retry is served against the roots it carries: wait
				// (up to changedWait) for the catalog they bring.
				f.newer(version)
			}
			return next(ctx, method, req)
		}
		f.roots.mu.Lock()
		fresh := f.roots.fresh == ss
		f.roots.mu.Unlock()
		if fresh {
			return next(ctx, method, req)
		}
		f.log.Debug("asking the client for its roots (input_required roots/list)", "method", method)
		return rootsInputRequired(method)
	}
}

// rootsInputRequired returns the input_required result of method asking
// for roots/list. go-sdk sets a result's resultType only from its own
// handlers or from JSON, so the result is decoded from JSON.
func rootsInputRequired(method string) (mcp.Result, error) {
	var res interface {
		mcp.Result
		json.Unmarshaler
	}
	switch method {
	case "tools/call":
		res = &mcp.CallToolResult{}
	case "prompts/get":
		res = &mcp.GetPromptResult{}
	default:
		res = &mcp.ReadResourceResult{}
	}
	if err := res.UnmarshalJSON([]byte(`{"resultType":"input_required","inputRequests":{"` + rootsInputKey + `":{"method":"roots/list","params":{}}}}`)); err != nil {
		return nil, err
	}
	return res, nil
}

// setRoots publishes the local folders of roots when they differ from the
// last published ones (none at first: a client without roots publishes
// nothing). It returns the folders and whether it published them.
func (f *Facade) setRoots(roots []*mcp.Root) ([]string, bool) {
	var folders []string
	for _, root := range roots {
		if root == nil {
			continue
		}
		dir, ok := rootFolder(root.URI)
		if !ok {
			f.log.Debug("client root ignored: not a local file:// folder", "uri", clip(root.URI))
			continue
		}
		if !slices.Contains(folders, dir) {
			folders = append(folders, dir)
		}
	}
	r := &f.roots
	r.mu.Lock()
	if slices.Equal(folders, r.last) && (r.published || len(folders) == 0) {
		r.mu.Unlock()
		return folders, false
	}
	r.last, r.published = folders, true
	r.seq++
	id := "client-roots-" + strconv.Itoa(r.seq)
	// Published under the lock: commands reach the config actor in order.
	err := events.Publish(f.opts.Publisher, events.ConfigCommand{ID: id, Op: events.ConfigSetClientRoots, Roots: folders})
	r.mu.Unlock()
	if err != nil {
		f.log.Warn("publishing the client's roots", "error", err)
		return folders, false
	}
	f.log.Debug("client roots published", "roots", strings.Join(folders, ","))
	return folders, true
}

// anySkillFolder reports whether one of roots holds a folder the config
// actor serves of a root (.claude/skills, .agents/skills, skills), so that
// a new catalog is to be expected.
func anySkillFolder(roots []string) bool {
	for _, root := range roots {
		for _, sub := range []string{filepath.Join(".claude", "skills"), filepath.Join(".agents", "skills"), "skills"} {
			if fi, err := os.Stat(filepath.Join(root, sub)); err == nil && fi.IsDir() {
				return true
			}
		}
	}
	return false
}

// rootFolder returns the local folder of a file:// root URI: an absolute
// path, on localhost (or no host).
func rootFolder(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "file") || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) {
		return "", false
	}
	p := u.Path
	if runtime.GOOS == "windows" {
		p = strings.TrimPrefix(p, "/") // file:///C:/work → C:/work
	}
	p = filepath.Clean(filepath.FromSlash(p))
	if !filepath.IsAbs(p) {
		return "", false
	}
	return p, true
}
