package mcpface

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// Names fixed by the wire surface of the reference server.
const (
	serverName = "skilljack-mcp"
	// SkillsExtension is the SEP-2640 extension identifier.
	SkillsExtension = "io.modelcontextprotocol/skills"

	toolLoadSkill     = "load-skill"
	toolSkillResource = "skill-resource"
	promptSkill       = "skill"
	resourceTemplate  = "skill://{+path}"
)

// Tools modes and catalog modes accepted in [Options].
const (
	ToolsAuto   = "auto"
	ToolsAlways = "always"
	ToolsNever  = "never"

	CatalogInstructions    = "instructions"
	CatalogToolDescription = "tool-description"
)

// Defaults of [Options].
const (
	// DefaultMaxFileSize is the reference server's MAX_FILE_SIZE_MB default
	// (1 MB), in bytes.
	DefaultMaxFileSize = 1 << 20
	// DefaultCatalogBudget is the default [Options.CatalogBudget], sized like
	// Claude Code's skill listing budget (issue 13 item 6).
	DefaultCatalogBudget = 16000
	// DefaultPageSize is the skills/list page size of the reference server
	// (the TS SDK's ext/skills lists 10,000 skills in 100 pages). 100
	// entries are 100–150 KB (scientific-skills' first page: 147 KB). Kept
	// (issue 12): over stdio a page costs about its bytes through the pipe
	// plus 10–20 µs of ours — a scientific-skills walk of 2 pages measured
	// 62–67 µs against 47–50 µs for an echo of the same bytes — so fewer,
	// larger pages would save little and make every first page bigger.
	DefaultPageSize = 100
	// maxSubscriptionsPerSession bounds the resources/subscribe entries one
	// session may hold; a catalog has at most a few thousand files, so an
	// honest client stays far below it while a flood is cut off cheaply.
	maxSubscriptionsPerSession = 1000
	// resourcesPageSize is the resources/list page size: large enough that a
	// typical catalog is one page, small enough to keep a response of a
	// 2000-file catalog reasonable.
	resourcesPageSize = 500
)

// Options configures a [Facade]. The zero value is usable.
type Options struct {
	// Version is serverInfo.version. If empty, defaults to "dev".
	Version string
	// Tools is "auto", "always" or "never" and decides who sees load-skill
	// and skill-resource. In auto, a request whose client capabilities hold
	// extensions["io.modelcontextprotocol/skills"] does not see them. Any
	// other value (including empty) means "auto".
	Tools string
	// CatalogMode is "instructions" or "tool-description": where the
	// <available_skills> catalog goes. Any other value means "instructions".
	CatalogMode string
	// Static reports that the skill set is fixed: tools and prompts declare
	// listChanged false and keep the registrations of the first catalog,
	// while resources keep tracking later catalogs and subscribers still get
	// notifications/resources/updated. If false, everything tracks the
	// catalog.
	Static bool
	// MaxFileSize caps, in bytes, the supporting files that skill-resource and
	// resources/read serve; SKILL.md is capped by the hasher, which also
	// leaves files over this cap out of every manifest when given the same
	// value (main passes both). If zero, defaults to [DefaultMaxFileSize].
	MaxFileSize int64
	// PageSize is the skills/list page size. If zero, defaults to
	// [DefaultPageSize].
	PageSize int
	// CatalogBudget is the most characters of the <available_skills> list
	// in the instructions, the skill prompt's description and (in
	// tool-description mode) load-skill's description; over it the list is
	// shortened with one line saying how, and one warning is logged. If
	// zero, defaults to [DefaultCatalogBudget]; negative means no budget.
	CatalogBudget int
	// Bundled holds the files of skills whose source kind is
	// [events.SourceBundled]. Required only when such skills are served.
	Bundled fs.FS
	// Logger receives the facade's logs (and the SDK's, with Info lowered to
	// Debug). If nil, logs are discarded.
	Logger *slog.Logger
	// Warnings, if set, returns the warnings logged so far (the
	// configuration's, the first scan's, and every later one's), oldest
	// first and only ever growing; each session gets each of them once as
	// an MCP log message at level warning, when its client accepts that
	// level (warnings.go).
	Warnings func() []string
	// WarningsAdded, if set, receives a value when Warnings grew: [Facade.Run]
	// then sends the new warnings to every session that accepts them, so
	// that a warning raised later in a session (a config file broken while
	// running) reaches its client without waiting for the client's next
	// request. If nil, new warnings go out at each session's next request.
	WarningsAdded <-chan struct{}
	// Trace, if set, records each client's introduction and, with
	// TraceRequests, every MCP request (issue 13 item 13; trace.go). If
	// nil, nothing is recorded and no request pays for it.
	Trace         Recorder
	TraceRequests bool
	// Roots is "auto" or "off": whether the stdio server asks a client that
	// declares roots for its workspace roots and publishes them on
	// Publisher (roots.go, issue 13 item 14). Any other value, a nil
	// Publisher or Static means off.
	Roots string
	// Files, if set, is where the bytes of every served file (SKILL.md
	// included) come from, by digest, instead of the skill folders on disk:
	// a cluster replica serves files it does not hold (issue 16). The
	// bytes are served only when their SHA-256 is the manifest's digest.
	// If nil, files are read from disk (and bundled) as they were hashed.
	Files FileSource
	// Publisher receives the facade's commands (config.command). Set, and
	// not Static, the stdio server also offers the config and display
	// tools and their views (apps.go), whose answers [Facade.RunConfig]
	// brings back.
	Publisher message.Publisher
}

// Facade serves the current catalog over MCP. Create it with [New]; its
// methods are safe for concurrent use.
type Facade struct {
	// fixed at creation
	opts  Options
	log   *slog.Logger
	ready chan struct{}

	readyOnce sync.Once
	snap      atomic.Pointer[snapshot]
	// swapMu guards swapped, which is closed and replaced after every new
	// snapshot, so a request can wait for the catalog after its own.
	swapMu  sync.Mutex
	swapped chan struct{}

	buildOnce sync.Once
	built     chan struct{} // closed once srv is set
	// srv is set once, by build, before built is closed.
	srv atomic.Pointer[mcp.Server]
	// dispatch is the SDK's own receiving method handler, below every
	// middleware; set by build before srv. It lets the facade drop a
	// session's subscription the way resources/unsubscribe does.
	dispatch mcp.MethodHandler
	// syncedCh gets a value (non-blocking send) whenever sync has brought the
	// registrations to a new catalog version, so that Run can relay the
	// resource updates it holds for that version.
	syncedCh chan struct{}

	// regMu serialises changes to the SDK registrations; the fields below it
	// are the bookkeeping of what is registered.
	regMu      sync.Mutex
	synced     bool
	regVersion uint64
	reg        registrations
	regSnap    *snapshot   // the snapshot whose resources/list content was last announced
	diffs      diffMemo    // how the last snapshot set differs from the one before
	viewsTimer *time.Timer // builds the first snapshot's views ([viewsDelay]); stopped when Run returns

	// subGate is held for reading while the SDK records a subscription
	// (from the subscribe handler until the SDK's own bookkeeping is done)
	// and for writing while Run drops the subscriptions of URIs that went,
	// so that no subscription validated against an older catalog is
	// recorded after the drop.
	subGate sync.RWMutex

	subMu sync.Mutex
	// subs maps a session to its subscribed canonical URIs, each to the
	// catalog version the subscription was validated against.
	subs map[*mcp.ServerSession]map[string]uint64
	// listens counts each session's open subscriptions/listen streams.
	listens map[*mcp.ServerSession]int

	// budgetWarned is set once the over-budget catalog warning is logged.
	budgetWarned atomic.Bool
	// blocks remembers the last rendered skill catalogs ([blockMemo]).
	blocks blockMemo

	// noticeMu guards notices and httpNotice: what each session, and the
	// stateless HTTP server, was told about hidden tools (toolsnotice.go).
	noticeMu   sync.Mutex
	notices    map[*mcp.ServerSession]*toolsNotice
	httpNotice toolsNotice

	// roots is what the stdio client's roots are known to be (roots.go).
	roots clientRoots

	// app is the config tools' state: the configuration view and the
	// commands waiting for an answer (apps.go).
	app appState

	// panicHook, when set by tests, runs at the top of every request.
	panicHook func(method string)
	// fastOff, set by tests before a session starts, turns the stdio fast
	// lane off (fastlane.go), so that its answers can be compared with the
	// SDK's path.
	fastOff bool
	// fastAnswers counts the requests the fast lane answered, for tests.
	fastAnswers atomic.Int64

	// trace is set when [Options.Trace] is (trace.go).
	trace *tracer
}

// New returns a facade configured by opts (nil means defaults). The options
// are copied. The facade serves nothing until the first [Facade.SetCatalog].
func New(opts *Options) *Facade {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	o.Tools = strings.ToLower(strings.TrimSpace(o.Tools))
	switch o.Tools {
	case ToolsAuto, ToolsAlways, ToolsNever:
	default:
		o.Tools = ToolsAuto
	}
	o.CatalogMode = strings.ToLower(strings.TrimSpace(o.CatalogMode))
	if o.CatalogMode != CatalogToolDescription {
		o.CatalogMode = CatalogInstructions
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.CatalogBudget == 0 {
		o.CatalogBudget = DefaultCatalogBudget
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "mcpface")
	if o.CatalogMode == CatalogToolDescription && o.Tools == ToolsAuto {
		// The catalog lives in the load-skill description, so the tool must
		// stay visible to everyone (reference §1.2).
		log.Warn("tools mode auto is ignored with catalog mode tool-description; load-skill and skill-resource stay offered")
	}
	f := &Facade{
		opts:     o,
		log:      log,
		ready:    make(chan struct{}),
		built:    make(chan struct{}),
		syncedCh: make(chan struct{}, 1),
		subs:     make(map[*mcp.ServerSession]map[string]uint64),
	}
	if o.Trace != nil {
		f.trace = &tracer{rec: o.Trace, requests: o.TraceRequests}
	}
	return f
}

// toolsAuto reports whether tools are withheld from clients that declare
// the skills extension.
func (f *Facade) toolsAuto() bool {
	return f.opts.Tools == ToolsAuto && f.opts.CatalogMode != CatalogToolDescription
}

// Ready returns a channel that is closed once the first catalog is set.
func (f *Facade) Ready() <-chan struct{} { return f.ready }

// Catalog returns the catalog being served, or nil before the first one.
// The caller must treat it as read-only.
func (f *Facade) Catalog() *events.Catalog {
	if s := f.snap.Load(); s != nil {
		return s.cat
	}
	return nil
}

// current returns the snapshot every request reads; nil before the first
// catalog.
func (f *Facade) current() *snapshot { return f.snap.Load() }

// changedWait is how long a read whose file changed on disk since it was
// hashed waits for the catalog that describes the new bytes (a rescan
// follows every change: the watcher's 500 ms debounce, or a remote swap's
// source.synced) before it answers with the error.
const changedWait = 2 * time.Second

// readCurrent reads the supporting file file of sk from snapshot s like
// readFile; when the file changed on disk since s was built, it waits for
// the next snapshot ([Facade.newer]) and reads the file of the same URI
// from it, so a read during a rescan returns the new bytes (still only with
// their own digest). It returns the manifest entry the bytes match, whose
// MIME type and text flag describe them.
func (f *Facade) readCurrent(s *snapshot, sk *events.Skill, file *events.File, max int64) ([]byte, *events.File, error) {
	return f.readCurrentOf(s, sk, file, max, true)
}

// errWouldWait is what [Facade.readCurrentOf] and [Facade.currentSkillMDOf]
// return, without waiting, where the file changed on disk since the
// snapshot was built and they were told not to wait for the next one.
var errWouldWait = errors.New("changed on disk since the snapshot was built")

// readCurrentOf is [Facade.readCurrent]; with wait false it returns
// errWouldWait where readCurrent would wait for a newer snapshot.
func (f *Facade) readCurrentOf(s *snapshot, sk *events.Skill, file *events.File, max int64, wait bool) ([]byte, *events.File, error) {
	if f.opts.Files != nil {
		data, err := readSourced(f.opts.Files, sk, file, max)
		return data, file, err
	}
	var verified *sync.Map
	if s != nil {
		verified = &s.verified
	}
	data, err := readFile(sk, file, f.opts.Bundled, max, verified)
	if !errors.Is(err, errChanged) || s == nil {
		return data, file, err
	}
	if !wait {
		return nil, nil, errWouldWait
	}
	next := f.newer(s.cat.Version)
	if next == nil {
		return nil, nil, err
	}
	ref, ok := next.cat.File(sk.FileURI(file.Path))
	if !ok {
		return nil, nil, err
	}
	data, err = readFile(ref.Skill, ref.File, f.opts.Bundled, max, &next.verified)
	return data, ref.File, err
}

// currentSkillMD returns the SKILL.md of sk, a skill of snapshot s: the one
// function every request path (resources/read, load-skill, prompts) gets a
// SKILL.md's bytes through. A catalog the builder made holds no bytes
// (issue 12): the file is read on demand like a supporting file
// ([Facade.readCurrent]: through the skill opener, served only when its
// bytes match Files[0]'s digest, without hashing again while its identity
// stays the one verified; a file changed since waits for the next
// snapshot). A catalog carrying the bytes (made by hand, or recorded
// before) is served from them ([skillMD]); when the file on disk no longer
// has the size and modification time it was hashed with, or its folder
// was swapped, that waits for the next snapshot too.
func (f *Facade) currentSkillMD(s *snapshot, sk *events.Skill) ([]byte, error) {
	return f.currentSkillMDOf(s, sk, true)
}

// currentSkillMDOf is [Facade.currentSkillMD]; with wait false it returns
// errWouldWait where currentSkillMD would wait for a newer snapshot.
func (f *Facade) currentSkillMDOf(s *snapshot, sk *events.Skill, wait bool) ([]byte, error) {
	if (sk.SkillMD == nil || f.opts.Files != nil) && len(sk.Files) > 0 {
		data, _, err := f.readCurrentOf(s, sk, &sk.Files[0], 0, wait)
		return data, err
	}
	data, err := skillMD(sk)
	if err != nil || s == nil || !skillMDChanged(sk) {
		return data, err
	}
	if !wait {
		return nil, errWouldWait
	}
	if next := f.newer(s.cat.Version); next != nil {
		if nsk := next.cat.SkillByURI(sk.URI); nsk != nil {
			return f.currentSkillMDOf(nil, nsk, wait)
		}
	}
	return data, nil
}

// newer waits up to changedWait for a snapshot newer than version and
// returns it, or nil when none came.
func (f *Facade) newer(version uint64) *snapshot {
	timer := time.NewTimer(changedWait)
	defer timer.Stop()
	for {
		f.swapMu.Lock()
		ch := f.swapped
		f.swapMu.Unlock()
		if s := f.current(); s != nil && s.cat.Version > version {
			return s
		}
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return nil
		}
	}
}

// SetCatalog makes c the served catalog if its Version is above the one held
// and reports whether it did. The facade takes c as read-only and keeps it.
// Once the server is built, it brings the registrations up to date and sends
// only the notifications that describe a change clients can see:
// tools/list_changed when the load-skill description (which carries the
// catalog in tool-description mode) changed, prompts/list_changed when a
// per-skill prompt came, went, came back or got a new description, and
// resources/list_changed when the resources/list content changed. Which
// resources get notifications/resources/updated, skill://index.json
// included, is the notifier's to decide; [Facade.Run] relays its
// decisions. With [Options.Static] the
// tools and prompts stay as the first catalog registered them; resources
// keep tracking the catalog. A new version with the same content sends
// nothing. A pending catalog ([events.Catalog.Pending], issue 12) is
// taken only while no complete one is served: it answers initialize,
// while every request that serves a digest or a file waits for the
// complete one (pending.go), and completing it sends no resources
// list_changed (no client was served its resource list).
//
// The new catalog is readable by every request that starts after the swap;
// registrations and notifications follow it, so a client never hears of a
// change before it can read it. SetCatalog is safe for concurrent use,
// starts no goroutine, and returns once the notifications are sent; it
// reads no file (the catalog carries every file's MIME type).
func (f *Facade) SetCatalog(c *events.Catalog) bool {
	if c == nil {
		return false
	}
	if old := f.snap.Load(); old != nil && (old.cat.Version >= c.Version || c.Pending && !old.cat.Pending) {
		// A pending catalog never follows a complete one: requests that
		// waited for a complete catalog read the current one after.
		return false
	}
	prev := f.snap.Load()
	var d skillDiff
	if prev != nil {
		d = diffSkills(prev.cat, c)
	}
	s := newSnapshotOf(c, prev, d)
	// The swap and the registrations that follow it happen under regMu,
	// which requests for tools and prompts pass through
	// ([Facade.featureMiddleware]): a client that read the new catalog
	// (skills/list, resources/list) never then lists the old tools and
	// prompts.
	f.regMu.Lock()
	defer f.regMu.Unlock()
	for {
		old := f.snap.Load()
		if old != nil && (old.cat.Version >= c.Version || c.Pending && !old.cat.Pending) {
			return false
		}
		if f.snap.CompareAndSwap(old, s) {
			if old == prev {
				f.diffs = diffMemo{from: prev, to: s, d: d}
			}
			break
		}
	}
	f.swapMu.Lock()
	if f.swapped != nil {
		close(f.swapped)
	}
	f.swapped = make(chan struct{})
	f.swapMu.Unlock()
	f.log.Debug("catalog set", "version", c.Version, "skills", len(c.Skills))
	f.readyOnce.Do(func() { close(f.ready) })
	f.syncLocked()
	return true
}

// Run consumes catalog.changed messages (each passed to [Facade.SetCatalog])
// and resources.updated messages, and relays each [events.ResourcesUpdated]
// as the notifier decided it: notifications/resources/updated for each of
// its URIs to the sessions subscribed to it, on either protocol era, and
// then, for each URI in its Gone, the subscriptions made before its Version
// are dropped (so a skill that comes back later notifies none of them). An
// event is held until the facade serves a catalog whose Version is at least
// the event's, so that a client reading the resource after the notification
// gets the new bytes; updates of one URI held together are sent once. Each
// message is acked once and never nacked.
//
// Run blocks until ctx is done and then returns nil; a closed channel is
// simply no longer read. It starts no goroutine, and sends from its own, so
// nothing it began outlives it.
func (f *Facade) Run(ctx context.Context, catalogs, updates <-chan *message.Message) error {
	defer f.stopViewsTimer()
	held := heldUpdates{
		uris: make(map[string]uint64),
		gone: make(map[string]uint64),
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-catalogs:
			if !ok {
				catalogs = nil
				continue
			}
			if ev, ok := events.Receive[events.CatalogChanged](f.log, msg); ok {
				f.SetCatalog(ev.Catalog) // its sync wakes the case below
			}
		case msg, ok := <-updates:
			if !ok {
				updates = nil
				continue
			}
			if ev, ok := events.Receive[events.ResourcesUpdated](f.log, msg); ok {
				held.add(ev)
			}
			f.sendUpdates(ctx, held)
		case <-f.syncedCh:
			f.sendUpdates(ctx, held)
		case <-f.opts.WarningsAdded:
			f.pushWarnings(ctx)
		}
	}
}

// heldUpdates are the resource updates Run holds until the registrations
// reach their catalog version.
type heldUpdates struct {
	uris map[string]uint64 // URI to notify → catalog version it waits for
	gone map[string]uint64 // URI whose subscriptions go → version they go in
}

func (h heldUpdates) add(ev events.ResourcesUpdated) {
	for _, u := range ev.URIs {
		h.uris[u] = max(h.uris[u], ev.Version)
	}
	for _, u := range ev.Gone {
		h.gone[u] = max(h.gone[u], ev.Version)
	}
}

// sendUpdates sends notifications/resources/updated for every held URI whose
// version the registrations have reached, and forgets it; then it drops the
// subscriptions of every held gone URI whose version they have reached and
// whose update is sent. Before the server is built no session can hold a
// subscription, so held updates are dropped.
func (f *Facade) sendUpdates(ctx context.Context, held heldUpdates) {
	if len(held.uris) == 0 && len(held.gone) == 0 {
		return
	}
	srv := f.srv.Load()
	if srv == nil {
		clear(held.uris)
		clear(held.gone)
		return
	}
	f.regMu.Lock()
	synced, version := f.synced, f.regVersion
	f.regMu.Unlock()
	if !synced {
		return
	}
	var due []string
	for u, v := range held.uris {
		if v <= version {
			due = append(due, u)
			delete(held.uris, u)
		}
	}
	slices.Sort(due)
	for _, u := range due {
		if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil {
			f.log.Warn("sending resources/updated", "uri", u, "error", err)
		}
	}
	gone := make(map[string]uint64)
	for u, v := range held.gone {
		if _, waiting := held.uris[u]; v <= version && !waiting {
			gone[u] = v
			delete(held.gone, u)
		}
	}
	if len(gone) > 0 {
		f.dropSubscriptions(ctx, gone)
	}
}

// Server waits until the first catalog is set (or ctx is done, returning
// ctx.Err()), then builds the server once and returns it; later calls return
// the same server. It waits because go-sdk fixes the instructions, which
// carry the catalog, when the server is constructed.
func (f *Facade) Server(ctx context.Context) (*mcp.Server, error) {
	select {
	case <-f.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.buildOnce.Do(f.build)
	<-f.built
	return f.srv.Load(), nil
}

func (f *Facade) build() {
	srv := f.newServer(f.current(), false)
	f.srv.Store(srv)
	close(f.built)
	f.sync()
}

// registrations is what one server has registered of the catalog, so that a
// later catalog re-adds only what changed.
type registrations struct {
	tool    string            // description of the registered load-skill
	prompts map[string]string // registered prompt name → description
	// remote is true for the HTTP servers: their catalog shows no server
	// paths (issue 13 item 11).
	remote bool
	// snap is the snapshot tool and prompts were registered from, nil
	// before the first registration; a later snapshot of the same shape
	// re-checks only its changed skills ([Facade.registerPrompts]).
	snap *snapshot
}

// newServer builds a server for snapshot s, with the instructions of s.
//
// The stdio server (stateless false) declares listChanged and subscribe,
// takes subscriptions and captures the SDK's own handler in f.dispatch; its
// tools, prompts and index resource are left to [Facade.sync], which keeps
// them in step with later catalogs. The HTTP server (stateless true) is built
// for one catalog version and never changed: it declares listChanged and
// subscribe false, has no subscribe handler, and registers everything of s
// here. Both serve the same methods through the same middlewares.
func (f *Facade) newServer(s *snapshot, stateless bool) *mcp.Server {
	caps := &mcp.ServerCapabilities{
		Completions: &mcp.CompletionCapabilities{},
		Prompts:     &mcp.PromptCapabilities{ListChanged: !f.opts.Static},
		Resources:   &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true},
		Tools:       &mcp.ToolCapabilities{ListChanged: !f.opts.Static},
	}
	if !stateless {
		// The hidden-tools notice is a log message (issue 13 item 3), which
		// a 2025-11-25 server must declare.
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	if stateless {
		caps.Prompts = &mcp.PromptCapabilities{}
		caps.Resources = &mcp.ResourceCapabilities{}
		caps.Tools = &mcp.ToolCapabilities{}
	}
	caps.AddExtension(SkillsExtension, map[string]any{"directoryRead": true})
	var instructions string
	if f.opts.CatalogMode == CatalogInstructions {
		instructions = f.catalogInstructions(s.cat, stateless)
	}
	opts := &mcp.ServerOptions{
		Instructions:      instructions,
		Logger:            slog.New(quietHandler{f.log.Handler()}),
		Capabilities:      caps,
		CompletionHandler: f.complete,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs = 0
			c.CacheScope = "private"
		},
	}
	if !stateless {
		opts.SubscribeHandler = f.subscribe
		opts.UnsubscribeHandler = f.unsubscribe
		if f.rootsEnabled() {
			opts.InitializedHandler = f.rootsInitialized
			opts.RootsListChangedHandler = f.rootsListChanged
		}
	}
	srv := mcp.NewServer(f.implementation(), opts)
	f.addCustomMethods(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: resourceTemplate,
		Name:        "Skill",
		Description: "A file of a served skill: skill://<skill-path>/SKILL.md or skill://<skill-path>/<file-path>.",
	}, f.readResourceHandler)
	// The middlewares wrap every method; the first one listed runs first.
	if stateless {
		srv.AddReceivingMiddleware(f.recoverMiddleware, f.limitMiddleware, f.logMiddleware, f.toolsNoticeMiddleware, f.featureMiddleware)
		reg := registrations{remote: true}
		f.registerTools(srv, s, &reg, true)
		f.registerPrompts(srv, s, &reg)
		srv.AddResource(indexResource(), f.readResourceHandler)
		f.addTraceMiddleware(srv, true)
		return srv
	}
	if f.appsEnabled() {
		f.registerApps(srv)
	}
	// The last one only captures the SDK's own handler.
	srv.AddReceivingMiddleware(f.recoverMiddleware, f.limitMiddleware, f.logMiddleware, f.rootsMiddleware, f.toolsNoticeMiddleware, f.instructionsMiddleware, f.featureMiddleware, f.subscriptionMiddleware,
		captureHandler(&f.dispatch))
	srv.AddSendingMiddleware(f.ackMiddleware)
	f.addTraceMiddleware(srv, false)
	return srv
}

// addTraceMiddleware makes tracing, when on, the outermost middleware of
// srv (added last, it runs first).
func (f *Facade) addTraceMiddleware(srv *mcp.Server, stateless bool) {
	if f.trace != nil {
		srv.AddReceivingMiddleware(f.traceMiddleware(stateless))
	}
}

// sync brings the SDK registrations up to the current snapshot. Adding a
// feature makes the SDK send the matching list_changed notification to every
// session (debounced; on 2026-07-28 only to listen streams that asked for
// it), which is how refreshes reach clients.
func (f *Facade) sync() {
	f.regMu.Lock()
	defer f.regMu.Unlock()
	f.syncLocked()
}

// syncLocked is [Facade.sync] with regMu held.
func (f *Facade) syncLocked() {
	srv := f.srv.Load()
	s := f.current()
	if srv == nil || s == nil || (f.synced && s.cat.Version == f.regVersion) {
		return
	}
	first := !f.synced
	f.synced = true
	f.regVersion = s.cat.Version

	if first || !f.opts.Static {
		f.registerTools(srv, s, &f.reg, first)
		f.registerPrompts(srv, s, &f.reg)
		f.reg.snap = s
	}
	// skill://index.json is registered as a plain resource so that replacing
	// it triggers notifications/resources/list_changed; resources/list and
	// resources/read are answered from the snapshot.
	if first {
		srv.AddResource(indexResource(), f.readResourceHandler)
	} else if !f.regSnap.cat.Pending && !f.sameResourcesAs(f.regSnap, s) {
		// (No client was served a pending catalog's resources/list:
		// completing it is no change, issue 12.)
		srv.AddResource(indexResource(), f.readResourceHandler)
	}
	if f.viewsTimer == nil && !s.cat.Pending {
		// The first complete snapshot's views are built a moment after
		// the first initialize, not before it, nor while the first
		// requests and the revalidation of a persisted catalog run (issue
		// 12); the next catalog reuses them.
		f.viewsTimer = time.AfterFunc(viewsDelay, s.ensureViews)
	}
	f.regSnap = s
	select {
	case f.syncedCh <- struct{}{}:
	default:
	}
}

// stopViewsTimer stops the build of the first snapshot's views if it has
// not run: a facade that stopped serving does not need them.
func (f *Facade) stopViewsTimer() {
	f.regMu.Lock()
	defer f.regMu.Unlock()
	if f.viewsTimer != nil {
		f.viewsTimer.Stop()
	}
}

// viewsDelay is how long after the first server is built the first
// snapshot's views are built, if nothing needed them before.
const viewsDelay = 3 * time.Second

// sameResourcesAs is [sameResources] of a and b, comparing only the
// resources of the skills that changed between them when their catalogs
// keep their shape and no changed skill is nested or holds one: then
// every other skill lists the same resources in the same place in both.
func (f *Facade) sameResourcesAs(a, b *snapshot) bool {
	d := f.diffs.diffOf(a, b)
	if !d.shape {
		return sameResources(a, b)
	}
	a.ensureViews()
	b.ensureViews()
	for _, i := range d.changed {
		if a.views[i].nested || b.views[i].nested {
			return sameResources(a, b)
		}
	}
	for _, i := range d.changed {
		fa, fb := a.views[i].files, b.views[i].files
		if len(fa) != len(fb) {
			return false
		}
		for k := range fa {
			if !sameResource(a, b, resRef{int32(i), fa[k]}, resRef{int32(i), fb[k]}) {
				return false
			}
		}
	}
	return true
}

// sameResources reports whether resources/list would send the same content
// for a as for b: the same resources in the same order, equal in every
// field as encoded. It compares what [snapshot.resource] makes them from
// ([fileResource]), without making 10,000s of resources per catalog
// version (issue 12: edit latency).
func sameResources(a, b *snapshot) bool {
	return slices.EqualFunc(a.resources(), b.resources(), func(x, y resRef) bool {
		return sameResource(a, b, x, y)
	})
}

// sameResource reports whether resource x of a has the same
// resources/list entry as resource y of b.
func sameResource(a, b *snapshot, x, y resRef) bool {
	if x == indexRef || y == indexRef {
		return x == y
	}
	ska, skb := a.cat.Skills[x.skill], b.cat.Skills[y.skill]
	fa, fb := &ska.Files[x.file], &skb.Files[y.file]
	if fa.Path != fb.Path || ska.SkillRootURI() != skb.SkillRootURI() || ska.Name != skb.Name ||
		fa.Size != fb.Size || ska.ModelInvocable != skb.ModelInvocable || ska.UserInvocable != skb.UserInvocable ||
		!fa.ModTime.Equal(fb.ModTime) && isoTime(fa.ModTime) != isoTime(fb.ModTime) {
		return false
	}
	if fa.Path == "SKILL.md" {
		return strings.TrimSpace(ska.Description) == strings.TrimSpace(skb.Description)
	}
	return fileMIME(fa) == fileMIME(fb)
}
