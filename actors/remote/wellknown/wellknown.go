// Package wellknown is the publisher fetcher: the actor ([New]) that keeps
// the cache folders of /.well-known/agent-skills/ sources in sync and
// announces each change with an [events.SourceSynced]. Its cache plumbing
// is actors/remote's; its configuration is actors/config's
// [config.WellKnown].
package wellknown

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/remote"
	"github.com/skilljack/skilljack-mcp/archive"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/fetch"
)

// DiscoverySchemaV02 is the $schema of a v0.2.0 discovery index (WKAS-R04).
const DiscoverySchemaV02 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// Inboxes are the subscriptions a [Fetcher] reads.
type Inboxes struct {
	// Configured carries sources.configured. Required.
	Configured <-chan *message.Message
	// SyncRequested carries sync.requested ([events.SyncRequested]), which
	// makes Run sync the matching publisher sources at once. If nil,
	// sources are synced at start and at every poll only.
	SyncRequested <-chan *message.Message
}

// Options configure a [Fetcher]. A nil *Options means defaults (and no
// allowlisted origin).
type Options struct {
	// Config is the publisher configuration of this start
	// ([config.Config].WellKnown). Zero caps mean the defaults of
	// actors/config ([config.DefaultMaxArtifactBytes] and the like).
	Config config.WellKnown
	// HTTPClient sends the requests; nil means a client with a 30 s timeout
	// per request.
	HTTPClient *http.Client
	// Backoff is the wait before a retry of a failed request (5xx, network
	// error), doubled for the next; 0 means 1 s. Tests shorten it.
	Backoff time.Duration
	// Logger receives the fetcher's lines; nil discards.
	Logger *slog.Logger
}

// Fetcher is the actor keeping publisher sources' cache folders in
// sync (DESIGN "well-known fetcher", reference §5, WKAS-R26). For each
// /.well-known/agent-skills/ source it fetches the index, checks every
// entry, downloads what changed, verifies each artifact's SHA-256 before
// anything is written (WKAS-R17), unpacks archives safely
// ([archive.Extract]), swaps each skill folder in atomically, prunes skills
// the index dropped, and publishes [events.SourceSynced]. Any failure keeps
// the last good copy served.
//
// Cache layout, per publisher, in filepath.Dir(Source.Root):
//
//	.skilljack-cache  the marker: the folder is the fetcher's (see below)
//	index.json        the cached skills: name → type, URL, digest (written last)
//	.index-meta.json  the index's validators (ETag, Last-Modified) and digest
//	skills/<name>/    one folder per skill: the hasher's root
//	.staging-<name>~N extraction in progress (never scanned)
//	.trash-<name>~N   a replaced skill folder being removed
//
// Every write, rename and removal goes through an [os.Root] on the
// publisher folder, and only touches folders that are the fetcher's: the
// publisher folder, skills/ and each skill folder hold the marker (a
// folder cached by an earlier version is adopted when it holds the cache
// index, or for a skill folder, when it is as the index recorded it). A
// link, a file or a foreign folder in any of these places is refused with
// an error naming it and left as it is. Staging and trash folders older
// than an hour, left by a crash, are removed at the start of a sync when
// they hold the marker. At most Config.MaxSkills skills and
// Config.MaxCacheBytes bytes are cached per publisher.
type Fetcher struct {
	in    <-chan *message.Message
	syncs <-chan *message.Message
	pub   message.Publisher
	opts  Options
	log   *slog.Logger
	c     *fetch.Client
	seq   atomic.Uint64
}

// New returns a fetcher reading [events.SourcesConfigured] and
// [events.SyncRequested] from in and publishing [events.SourceSynced] /
// [events.SourceFailed] through pub. It panics if in.Configured or pub is
// nil. opts is copied.
func New(in Inboxes, pub message.Publisher, opts *Options) *Fetcher {
	if in.Configured == nil || pub == nil {
		panic("wellknown.New: nil inbox or publisher")
	}
	f := &Fetcher{in: in.Configured, syncs: in.SyncRequested, pub: pub}
	if opts != nil {
		f.opts = *opts
	}
	f.log = f.opts.Logger
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	cfg := f.opts.Config
	if cfg.MaxArtifactBytes <= 0 {
		cfg.MaxArtifactBytes = config.DefaultMaxArtifactBytes
	}
	if cfg.MaxUnpackedBytes <= 0 {
		cfg.MaxUnpackedBytes = config.DefaultMaxUnpackedBytes
	}
	if cfg.MaxSkills <= 0 {
		cfg.MaxSkills = config.DefaultWellKnownMaxSkills
	}
	if cfg.MaxCacheBytes <= 0 {
		cfg.MaxCacheBytes = config.DefaultWellKnownMaxCacheBytes
	}
	f.opts.Config = cfg
	f.c = f.client(cfg.AllowedOrigins)
	return f
}

// client returns the HTTP client of a configuration whose allowlisted
// publisher origins are origins: every hop must be on one of them.
func (f *Fetcher) client(origins []string) *fetch.Client {
	cfg := f.opts.Config
	return fetch.New(&fetch.Options{
		HTTPClient: f.opts.HTTPClient,
		Allow:      fetch.AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", origins),
		AllowHTTP:  cfg.AllowHTTP,
		MaxBytes:   cfg.MaxArtifactBytes,
		Backoff:    f.opts.Backoff,
		Logger:     f.log,
	})
}

// Run consumes configurations and sync requests until ctx is done or the
// Configured inbox closes. For every well-known source of the newest
// configuration it runs one worker: a sync at once, in the background (the
// hasher already serves the cached copy, so startup never waits for a
// publisher), then one every PollInterval (none when it is 0 or the
// configuration is static) and one per [events.SyncRequested] naming the
// source or none. Syncs of one source never overlap. A newer configuration
// stops the workers of the older one. Run returns nil after its workers
// stopped.
func (f *Fetcher) Run(ctx context.Context) error {
	r := &fetchRun{f: f, stop: func() {}}
	defer r.stopWorkers()
	syncs := f.syncs
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-f.in:
			if !ok {
				return nil
			}
			if ev, ok := events.Receive[events.SourcesConfigured](f.log, msg); ok && ev.Seq > r.cfgSeq {
				r.configure(ctx, ev)
			}
		case msg, ok := <-syncs:
			if !ok {
				syncs = nil
				continue
			}
			if ev, ok := events.Receive[events.SyncRequested](f.log, msg); ok {
				r.kick(ev.SourceID)
			}
		}
	}
}

// fetchRun is the state of one [Fetcher.Run]: only Run's goroutine
// touches it.
type fetchRun struct {
	f       *Fetcher
	cfgSeq  uint64
	stop    func() // cancels the workers of the current configuration
	wg      sync.WaitGroup
	workers []*wkWorker
}

// stopWorkers stops the workers of the current configuration and waits
// for them.
func (r *fetchRun) stopWorkers() {
	r.stop()
	r.wg.Wait()
}

// configure replaces the workers with those of ev, a newer configuration.
func (r *fetchRun) configure(ctx context.Context, ev events.SourcesConfigured) {
	f := r.f
	r.cfgSeq = ev.Seq
	r.stopWorkers()
	wctx, cancel := context.WithCancel(ctx)
	r.stop = cancel
	c := f.c
	if ev.AllowedOrigins != nil {
		c = f.client(ev.AllowedOrigins)
	}
	interval := f.opts.Config.PollInterval
	if ev.Static {
		interval = 0
	}
	r.workers = nil
	for _, src := range ev.Sources {
		if src.Kind != events.SourceWellKnown {
			continue
		}
		if src.Publisher.IndexURL == "" {
			f.log.Warn("publisher source skipped: the configuration carries no parsed publisher", "source", src.Location)
			continue
		}
		w := &wkWorker{f: f, c: c, src: src, spec: src.Publisher, cfgSeq: ev.Seq, dir: filepath.Dir(src.Root), kick: make(chan struct{}, 1), warned: map[string]bool{}}
		r.workers = append(r.workers, w)
		r.wg.Go(func() { w.run(wctx, interval) })
	}
}

// kick asks the worker of source id (every worker when id is empty) for a
// sync at once; a sync already running is followed by one more. It never
// blocks.
func (r *fetchRun) kick(id string) {
	for _, w := range r.workers {
		if id != "" && w.src.ID != id {
			continue
		}
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// wkWorker syncs one publisher source.
type wkWorker struct {
	f      *Fetcher
	c      *fetch.Client // allowlist of the worker's configuration
	src    events.Source
	spec   events.Publisher
	cfgSeq uint64
	dir    string // the publisher's cache folder
	kick   chan struct{}
	// cachedSkills is how many skills the cache index held at the last
	// sync, for the level of a failure line.
	cachedSkills int
	// warned holds the leftovers already reported as left alone, so each
	// is logged once per worker, not at every poll.
	warned map[string]bool
}

func (w *wkWorker) run(ctx context.Context, interval time.Duration) {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		w.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-w.kick:
		}
	}
}

// wkMeta is .index-meta.json: what the last fully successful index fetch
// answered, for the next conditional request (reference §5).
type wkMeta struct {
	fetch.Validators
	// Digest is "sha256:…" of the index body.
	Digest string `json:"digest"`
	// URL is the final index URL (after redirects).
	URL string `json:"url"`
	// Legacy is true when the index is the v0.1 one.
	Legacy    bool      `json:"legacy,omitempty"`
	FetchedAt time.Time `json:"fetchedAt"`
}

// wkCached is one skill of the cache's index.json: what is on disk in
// skills/<name>.
type wkCached struct {
	Type string `json:"type"`
	URL  string `json:"url"`
	// Digest is the artifact's "sha256:…" (v0.2), or for a v0.1 skill the
	// skill digest of WKAS-R34 over its files.
	Digest string `json:"digest"`
	// Stamp is [treeStamp] of the folder as the sync left it.
	Stamp string `json:"stamp,omitempty"`
	// Bytes is the size of the folder's files, for the cache budget.
	Bytes int64 `json:"bytes,omitempty"`
	// Files is a v0.1 skill's files list.
	Files []string `json:"files,omitempty"`
}

// wkCacheIndex is the cache's index.json.
type wkCacheIndex struct {
	Source    string              `json:"source"`
	FetchedAt time.Time           `json:"fetchedAt"`
	Skills    map[string]wkCached `json:"skills"`
}

// wkEntry is one usable index entry.
type wkEntry struct {
	name, typ, url, digest string
	files                  []string // v0.1 only
}

// Types of cached skills beyond the v0.2 skill-md and archive.
const (
	wkTypeSkillMD = "skill-md"
	wkTypeArchive = "archive"
	wkTypeFiles   = "v0.1-files"
)

var wkNameRe = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){0,63}$`)

// sync runs one sync of the publisher and publishes its outcome.
func (w *wkWorker) sync(ctx context.Context) {
	log := w.f.log.With("source", w.src.Location)
	res, err := w.syncOnce(ctx, log, func(part *events.SourceSynced) { w.publishSynced(ctx, log, part, true) })
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		if errors.Is(err, remote.ErrRefused) {
			log.Error(fmt.Sprintf("publisher cache refused; nothing is synced, written or removed, and what is on disk is served as it is: %v", err))
		} else if w.cachedSkills > 0 {
			log.Warn(fmt.Sprintf("publisher sync failed; the last good copy stays served: %v", err))
		} else {
			log.Error(fmt.Sprintf("publisher sync failed; nothing cached to serve: %v", err))
		}
		ev := events.SourceFailed{Seq: w.f.seq.Add(1), ConfigSeq: w.cfgSeq, Source: w.src, Error: err.Error(), FailedAt: time.Now()}
		if iv := w.f.opts.Config.PollInterval; iv > 0 {
			ev.RetryAt = ev.FailedAt.Add(iv)
		}
		if perr := events.Publish(w.f.pub, ev); perr != nil {
			log.Error("publishing source.failed", "error", perr)
		}
		return
	}
	if res != nil {
		w.publishSynced(ctx, log, res, false)
	}
}

// publishSynced publishes one SourceSynced of this worker's source; partial
// marks a checkpoint of a sync still running.
func (w *wkWorker) publishSynced(ctx context.Context, log *slog.Logger, res *events.SourceSynced, partial bool) {
	res.Seq = w.f.seq.Add(1)
	res.ConfigSeq = w.cfgSeq
	res.Source = w.src
	res.SyncedAt = time.Now()
	level := slog.LevelInfo
	if len(res.Paths) == 0 {
		level = slog.LevelDebug // only failures, each already logged
	}
	if partial {
		log.Log(ctx, level, "publisher sync in progress", "synced_so_far", len(res.Synced))
	} else {
		log.Log(ctx, level, "publisher synced", "synced", res.Synced, "removed", res.Removed, "failed", len(res.Errors))
	}
	if perr := events.Publish(w.f.pub, *res); perr != nil {
		log.Error("publishing source.synced", "error", perr)
	}
}

// wkCheckpoint is how often a long sync saves its progress (the cache
// index) and announces the skills swapped in so far, so an interrupted
// first sync of a large index resumes instead of starting over and clients
// see skills as they arrive.
const wkCheckpoint = 2 * time.Second

// wkCache is a publisher's cache folder opened for one sync: every write,
// rename and removal of the sync goes through its Roots.
type wkCache struct {
	pub *os.Root // the publisher folder
	// skills is pub's skills/, nil until it exists.
	skills    *os.Root
	skillsDir string // its path, for events and messages
	// legacy is true when this sync adopted the publisher folder from a
	// version before the marker (by its cache index): its skills/ may
	// lack the marker too.
	legacy bool
	// fresh is true when skills/ did not exist when the sync began.
	fresh bool
}

func (c *wkCache) close() {
	if c.skills != nil {
		c.skills.Close()
	}
	c.pub.Close()
}

// openCache checks and opens the publisher folder, creating it (and the
// top cache folder) with the marker when missing, and its skills/ folder
// when there is one. Errors: a [cacheRefusal] naming the folder refused.
func (w *wkWorker) openCache() (*wkCache, error) {
	top, err := remote.OpenCacheDir(filepath.Dir(w.dir))
	if err != nil {
		return nil, err
	}
	defer top.Close()
	key := filepath.Base(w.dir)
	c := &wkCache{skillsDir: filepath.Join(w.dir, "skills")}
	if _, err := remote.ClaimFolder(top, key, func() bool {
		c.legacy = remote.RegularFile(top, filepath.Join(key, "index.json"))
		return c.legacy
	}); err != nil {
		return nil, err
	}
	if c.pub, err = remote.OpenSubRoot(top, key); err != nil {
		return nil, err
	}
	if _, err := c.pub.Lstat("skills"); errors.Is(err, fs.ErrNotExist) {
		c.fresh = true
		return c, nil
	}
	if err := c.openSkills(); err != nil {
		c.pub.Close()
		return nil, err
	}
	return c, nil
}

// openSkills claims and opens skills/, creating it with the marker when
// it is missing.
func (c *wkCache) openSkills() error {
	if c.skills != nil {
		return nil
	}
	if _, err := remote.ClaimFolder(c.pub, "skills", func() bool { return c.legacy }); err != nil {
		return err
	}
	var err error
	c.skills, err = remote.OpenSubRoot(c.pub, "skills")
	return err
}

// removeStale removes the leftovers of a crash in the publisher folder,
// once they are old enough that no other process sharing the cache can
// still be using them: marked staging and trash folders, temporary JSON
// files. The single .staging folder of versions before the marker goes
// only when it is an empty folder.
func (w *wkWorker) removeStale(c *wkCache, log *slog.Logger) {
	remote.RemoveLeftovers(c.pub, func(name string) remote.LeftoverKind {
		switch {
		case strings.HasPrefix(name, ".staging-") || strings.HasPrefix(name, ".trash-"):
			return remote.LeftoverFolder
		case strings.Contains(name, ".json.tmp"):
			return remote.LeftoverFile
		}
		return remote.NotLeftover
	}, func(err error) {
		if !w.warned[err.Error()] {
			w.warned[err.Error()] = true
			log.Warn("crash leftover not removed: " + err.Error())
		}
	})
	if fi, err := c.pub.Lstat(".staging"); err == nil && remote.CheckFolder(".staging", fi) == nil && remote.EmptyFolder(c.pub, ".staging") {
		c.pub.Remove(".staging")
	}
}

// intact reports whether the cached folder of skill name still is what
// the sync wrote, and the bytes of its files: its tree stamp (paths,
// sizes, mtimes) is unchanged and, for a skill-md skill, its SKILL.md
// still has the index digest. A folder changed by hand or by anything
// else is downloaded again.
func (w *wkWorker) intact(c *wkCache, name string, old wkCached) (ok bool, size int64) {
	if old.Type == wkTypeSkillMD {
		// One file with a known digest: check its bytes, which catches an
		// edit that kept the size and put the mtime back.
		b, err := fs.ReadFile(c.skills.FS(), name+"/SKILL.md")
		if err != nil || fetch.Digest(b) != old.Digest {
			return false, 0
		}
	}
	st, size, err := remote.TreeStamp(c.skills.FS(), name)
	if err != nil {
		return false, 0
	}
	if old.Stamp == "" {
		return remote.RegularFile(c.skills, filepath.Join(name, "SKILL.md")), size
	}
	return st == old.Stamp, size
}

// claimSkill checks that the folder of skill name may be replaced or
// removed: it is missing, or the fetcher's (marker), or empty, or recorded
// in the cache index (had) and still exactly as recorded (a folder cached
// before the marker existed; it gets the marker). Errors: a
// [cacheRefusal] naming the folder.
func claimSkill(c *wkCache, name string, old wkCached, had bool) error {
	if _, err := c.skills.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, err := remote.ClaimFolder(c.skills, name, func() bool {
		if !had || old.Stamp == "" {
			return false
		}
		st, _, err := remote.TreeStamp(c.skills.FS(), name)
		return err == nil && st == old.Stamp
	})
	return err
}

// errCacheBudget marks a skill left out because the publisher's cache
// budget (WELL_KNOWN_MAX_CACHE_MB) is spent.
var errCacheBudget = errors.New("publisher cache budget spent")

// capEntries keeps the first max entries of the index, with a warning
// when it lists more.
func capEntries(entries []wkEntry, max int, log *slog.Logger) []wkEntry {
	if len(entries) <= max {
		return entries
	}
	log.Warn(fmt.Sprintf("publisher index lists %d skills, more than WELL_KNOWN_MAX_SKILLS (%d): only the first %d are served", len(entries), max, max))
	return entries[:max]
}

// wkIndexResult is what the index fetch of a sync brought.
type wkIndexResult struct {
	resp       *fetch.Response
	entries    []wkEntry
	legacy     bool
	revision   string
	validators fetch.Validators
}

// fetchIndex fetches the publisher's index (the v0.1 one when there is no
// v0.2 one), conditionally when something is cached, and returns its
// entries in index order; a 304 gives the cached skills as entries.
func (w *wkWorker) fetchIndex(ctx context.Context, log *slog.Logger, meta wkMeta, cached wkCacheIndex) (*wkIndexResult, error) {
	// The validators go only to the index they came from: a v0.1 index's
	// ETag must not hide a v0.2 index published since.
	var cond, legacyCond *fetch.Validators
	if len(cached.Skills) > 0 && (meta.ETag != "" || meta.LastModified != "") {
		if meta.Legacy {
			legacyCond = &meta.Validators
		} else {
			cond = &meta.Validators
		}
	}
	r := &wkIndexResult{}
	resp, err := w.c.Get(ctx, w.spec.IndexURL, cond)
	if se := (*fetch.StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusNotFound {
		// WKAS-R32/R33: a publisher with only the v0.1 layout.
		lresp, lerr := w.c.Get(ctx, w.spec.LegacyIndexURL, legacyCond)
		if lerr != nil {
			return nil, fmt.Errorf("fetching index %s: %w (and the v0.1 index: %v)", w.spec.IndexURL, err, lerr)
		}
		resp, err, r.legacy = lresp, nil, true
	}
	if err != nil {
		return nil, fmt.Errorf("fetching index: %w", err)
	}
	r.resp, r.revision, r.validators = resp, resp.Digest, resp.Validators
	if resp.NotModified {
		// The index is unchanged: check the cached skills against what a
		// sync wrote, and download again any that changed on disk.
		log.Debug("publisher index not modified", "url", resp.URL.String())
		r.revision, r.validators = meta.Digest, meta.Validators
		for _, name := range slices.Sorted(maps.Keys(cached.Skills)) {
			c := cached.Skills[name]
			r.entries = append(r.entries, wkEntry{name: name, typ: c.Type, url: c.URL, digest: c.Digest, files: c.Files})
		}
	} else {
		var v01 bool
		r.entries, v01, err = parseWellKnownIndex(resp.Body, r.legacy, log.With("index", resp.URL.String()))
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", resp.URL, err)
		}
		if v01 {
			log.Warn("publisher serves a v0.1 index without digests: its files carry no integrity check (WKAS-R33)", "index", resp.URL.String())
		}
	}
	r.entries = capEntries(r.entries, w.f.opts.Config.MaxSkills, log)
	return r, nil
}

// syncOnce fetches the index and brings the cache up to date. It returns
// nil, nil when nothing on disk changed, and an error when the sync failed
// as a whole (nothing was changed then).
func (w *wkWorker) syncOnce(ctx context.Context, log *slog.Logger, emit func(*events.SourceSynced)) (*events.SourceSynced, error) {
	c, err := w.openCache()
	if err != nil {
		return nil, err
	}
	defer c.close()
	w.removeStale(c, log)
	meta, cached := w.readCache(c)
	idx, err := w.fetchIndex(ctx, log, meta, cached)
	if err != nil {
		return nil, err
	}
	if err := c.openSkills(); err != nil {
		return nil, err
	}
	freshRoot := c.fresh
	revision := idx.revision
	out := &events.SourceSynced{Revision: revision, Errors: map[string]string{}}
	next := wkCacheIndex{Source: idx.resp.URL.String(), FetchedAt: time.Now(), Skills: map[string]wkCached{}}
	// checkpoint saves what is on disk so far (the skills processed, and
	// the cached ones not reached yet) and announces the swaps since the
	// last checkpoint.
	lastCheckpoint := time.Now()
	checkpoint := func() {
		if len(out.Paths) == 0 || time.Since(lastCheckpoint) < wkCheckpoint {
			return
		}
		lastCheckpoint = time.Now()
		merged := wkCacheIndex{Source: next.Source, FetchedAt: next.FetchedAt, Skills: maps.Clone(cached.Skills)}
		maps.Copy(merged.Skills, next.Skills)
		if err := remote.WriteJSONAtomic(c.pub, "index.json", merged); err != nil {
			log.Warn("cannot save sync progress", "error", err)
			return
		}
		part := &events.SourceSynced{Revision: revision, Paths: slices.Sorted(slices.Values(out.Paths)), Synced: out.Synced, Rescan: freshRoot}
		freshRoot = false
		out.Paths, out.Synced = nil, nil
		emit(part)
	}
	budget := &wkBudget{max: w.f.opts.Config.MaxCacheBytes}
	for _, e := range idx.entries {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		checkpoint()
		w.syncEntry(ctx, log, c, idx.resp.URL, e, cached, next, out, budget)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return w.finish(c, log, idx, cached, next, out, freshRoot)
}

// readCache reads the publisher folder's index validators and cache index.
func (w *wkWorker) readCache(c *wkCache) (wkMeta, wkCacheIndex) {
	meta := remote.ReadJSON[wkMeta](c.pub, ".index-meta.json")
	cached := remote.ReadJSON[wkCacheIndex](c.pub, "index.json")
	if cached.Skills == nil {
		cached.Skills = map[string]wkCached{}
	}
	w.cachedSkills = len(cached.Skills)
	return meta, cached
}

// finish ends a sync whose entries were all processed: it prunes the
// skills the index dropped, writes the cache index and the validators,
// and returns what changed (nil when nothing did).
func (w *wkWorker) finish(c *wkCache, log *slog.Logger, idx *wkIndexResult, cached, next wkCacheIndex, out *events.SourceSynced, freshRoot bool) (*events.SourceSynced, error) {
	w.prune(c, log, cached, next, out)
	// The cache index last, so a crash leaves the old one (reference §5).
	if err := remote.WriteJSONAtomic(c.pub, "index.json", next); err != nil {
		return nil, err
	}
	w.cachedSkills = len(next.Skills)
	// Validators only after a complete sync: a skill that failed is tried
	// again at the next poll instead of being hidden behind a 304.
	m := wkMeta{Digest: idx.revision, URL: idx.resp.URL.String(), FetchedAt: next.FetchedAt, Legacy: idx.legacy}
	if len(out.Errors) == 0 {
		m.Validators = idx.validators
	}
	if err := remote.WriteJSONAtomic(c.pub, ".index-meta.json", m); err != nil {
		log.Warn("cannot write index validators", "error", err)
	}
	if len(out.Paths) == 0 && len(out.Errors) == 0 && len(out.Removed) == 0 {
		return nil, nil
	}
	slices.Sort(out.Paths)
	out.Rescan = freshRoot && len(out.Paths) > 0
	if len(out.Errors) == 0 {
		out.Errors = nil
	}
	return out, nil
}

// wkBudget counts the bytes cached for a publisher during one sync
// against WELL_KNOWN_MAX_CACHE_MB.
type wkBudget struct {
	max, used int64
	spent     bool // a download did not fit: no more downloads this sync
}

// syncEntry brings the cached copy of index entry e up to date and records
// the outcome in next and out. A failure keeps the cached copy.
func (w *wkWorker) syncEntry(ctx context.Context, log *slog.Logger, c *wkCache, base *url.URL, e wkEntry, cached, next wkCacheIndex, out *events.SourceSynced, budget *wkBudget) {
	old, had := cached.Skills[e.name]
	keep := func() {
		if had {
			next.Skills[e.name] = old
			budget.used += old.Bytes
		}
	}
	if e.typ == "" {
		keep() // an entry skipped by parsing: keep what is cached (last good copy)
		return
	}
	// WKAS-R18: an unchanged digest needs no download, as long as the
	// cached folder is as written. (A v0.1 entry has no digest in the
	// index: its files are fetched whenever the index is.)
	if had && old.Digest == e.digest && old.Type == e.typ {
		if ok, size := w.intact(c, e.name, old); ok {
			old.Bytes = size
			keep()
			return
		}
		log.Warn(fmt.Sprintf("cached copy of publisher skill %s changed on disk; downloading it again", e.name), "skill", e.name)
	}
	if budget.spent {
		keep()
		return
	}
	got, swapped, err := w.fetchSkill(ctx, c, base, e, old, had, budget.max-budget.used)
	switch {
	case errors.Is(err, errCacheBudget):
		budget.spent = true
		log.Warn(fmt.Sprintf("publisher cache budget of %s (WELL_KNOWN_MAX_CACHE_MB) is spent at skill %s: no more skills are downloaded in this sync; what is cached stays served", remote.MiB(budget.max), e.name), "skill", e.name)
		keep()
	case err != nil:
		if ctx.Err() != nil {
			return
		}
		log.Warn(fmt.Sprintf("publisher skill %s not updated; its previous copy (if any) stays served: %v", e.name, err), "skill", e.name)
		out.Errors[e.name] = err.Error()
		keep()
	default:
		next.Skills[e.name] = got
		budget.used += got.Bytes
		if swapped {
			out.Synced = append(out.Synced, e.name)
			out.Paths = append(out.Paths, filepath.Join(c.skillsDir, e.name))
		}
	}
}

// prune removes the skills the index no longer names (reference §5 step
// 4): the folders the cache index records, when they are still the
// fetcher's ([claimSkill]), and folders of skills/ that hold the marker
// but that no index names (a crash between a swap and the index write).
// Anything else in skills/ is left alone; a recorded folder that is not
// the fetcher's any more is reported.
func (w *wkWorker) prune(c *wkCache, log *slog.Logger, cached, next wkCacheIndex, out *events.SourceSynced) {
	names := slices.Concat(slices.Collect(maps.Keys(cached.Skills)), remote.EntryNames(c.skills, "."))
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if _, keep := next.Skills[name]; keep || strings.HasPrefix(name, ".") {
			continue
		}
		if _, err := c.skills.Lstat(name); err != nil {
			continue
		}
		old, had := cached.Skills[name]
		if !had && !remote.OwnedFolder(c.skills, name) {
			continue // not ours: never touched
		}
		err := claimSkill(c, name, old, had)
		if err == nil {
			err = remote.RemoveOwned(c.skills, name)
		}
		if err != nil {
			log.Warn("cannot prune removed skill: "+err.Error(), "skill", name)
			continue
		}
		out.Removed = append(out.Removed, name)
		out.Paths = append(out.Paths, filepath.Join(c.skillsDir, name))
	}
}

// fetchSkill downloads, verifies and swaps in one skill, returning what is
// now cached. Nothing is written unless every check passed; the skill's
// folder is replaced only when it is the fetcher's ([claimSkill]) and the
// new copy fits in remaining bytes (else errCacheBudget).
func (w *wkWorker) fetchSkill(ctx context.Context, c *wkCache, base *url.URL, e wkEntry, old wkCached, had bool, remaining int64) (got wkCached, swapped bool, err error) {
	stage, err := remote.MakeTempFolder(c.pub, ".staging-"+e.name)
	if err != nil {
		return wkCached{}, false, err
	}
	defer c.pub.RemoveAll(stage) // gone already after a swap
	sroot, err := remote.OpenSubRoot(c.pub, stage)
	if err != nil {
		return wkCached{}, false, err
	}
	defer sroot.Close()
	if got, err = w.download(ctx, sroot, base, e); err != nil {
		return wkCached{}, false, err
	}
	if e.typ == wkTypeFiles && got.Digest == old.Digest && old.Type == e.typ {
		if ok, size := w.intact(c, e.name, old); ok {
			got.Stamp, got.Bytes = old.Stamp, size
			return got, false, nil // same files: keep the folder as it is
		}
	}
	if _, size, err := remote.TreeStamp(sroot.FS(), "."); err != nil {
		return wkCached{}, false, fmt.Errorf("measuring %s: %w", remote.DisplayPath(c.pub, stage), err)
	} else if size > remaining {
		return wkCached{}, false, fmt.Errorf("%w: skill %s needs %s", errCacheBudget, e.name, remote.MiB(size))
	}
	if err := claimSkill(c, e.name, old, had); err != nil {
		return wkCached{}, false, err
	}
	dst := filepath.Join("skills", e.name)
	if err := remote.SwapFolder(c.pub, stage, dst, fmt.Sprintf(".trash-%s~%d", e.name, rand.Uint64())); err != nil {
		return wkCached{}, false, fmt.Errorf("replacing %s: %w", remote.DisplayPath(c.pub, dst), err)
	}
	if got.Stamp, got.Bytes, err = remote.TreeStamp(c.skills.FS(), e.name); err != nil {
		w.f.log.Warn("cannot stamp cached skill; it will be checked by its SKILL.md only", "skill", e.name, "error", err)
	}
	return got, true, nil
}

// download fetches the artifact (or v0.1 files) of e into the staging
// folder stage, verifying each digest before anything is written, and
// returns the cache record without stamp and size.
func (w *wkWorker) download(ctx context.Context, stage *os.Root, base *url.URL, e wkEntry) (wkCached, error) {
	got := wkCached{Type: e.typ, Files: e.files}
	if e.typ == wkTypeFiles {
		return w.downloadFiles(ctx, stage, base, e, got)
	}
	u, err := base.Parse(e.url) // WKAS-R15: against the final index URL
	if err != nil {
		return wkCached{}, fmt.Errorf("bad url %q: %w", e.url, err)
	}
	got.URL = u.String()
	resp, err := w.c.Get(ctx, got.URL, nil)
	if err != nil {
		return wkCached{}, err
	}
	if err := fetch.VerifyDigest(resp.Body, e.digest); err != nil {
		return wkCached{}, fmt.Errorf("%s: %w", got.URL, err) // WKAS-R17: nothing written
	}
	got.Digest = e.digest
	if e.typ == wkTypeSkillMD {
		if err := stage.WriteFile("SKILL.md", resp.Body, 0o644); err != nil {
			return wkCached{}, fmt.Errorf("writing %s: %w", remote.DisplayPath(stage, "SKILL.md"), err)
		}
		return got, nil
	}
	format, err := archive.DetectFormat(resp.ContentType, u.Path)
	if err != nil {
		return wkCached{}, fmt.Errorf("%s: %w", got.URL, err)
	}
	if _, err := archive.Extract(format, resp.Body, stage, &archive.Options{MaxBytes: w.f.opts.Config.MaxUnpackedBytes, RequireSkillMD: true}); err != nil {
		return wkCached{}, fmt.Errorf("%s: %w", got.URL, err)
	}
	return got, nil
}

// downloadFiles fetches a v0.1 skill's files (WKAS-R32:
// /.well-known/skills/{name}/{path}, relative to the index) into stage and
// records the skill digest of WKAS-R34 over them, for change detection.
func (w *wkWorker) downloadFiles(ctx context.Context, stage *os.Root, base *url.URL, e wkEntry, got wkCached) (wkCached, error) {
	type fileDigest struct{ path, digest string }
	var fds []fileDigest
	for _, p := range e.files {
		u, err := base.Parse(url.PathEscape(e.name) + "/" + escapePath(p))
		if err != nil {
			return wkCached{}, fmt.Errorf("bad file path %q: %w", p, err)
		}
		resp, err := w.c.Get(ctx, u.String(), nil)
		if err != nil {
			return wkCached{}, err
		}
		if err := stage.MkdirAll(filepath.FromSlash(path.Dir(p)), 0o755); err != nil {
			return wkCached{}, fmt.Errorf("creating %s: %w", remote.DisplayPath(stage, path.Dir(p)), err)
		}
		if err := stage.WriteFile(filepath.FromSlash(p), resp.Body, 0o644); err != nil {
			return wkCached{}, fmt.Errorf("writing %s: %w", remote.DisplayPath(stage, p), err)
		}
		fds = append(fds, fileDigest{p, strings.TrimPrefix(resp.Digest, "sha256:")})
	}
	slices.SortFunc(fds, func(a, b fileDigest) int { return strings.Compare(a.path, b.path) })
	var sum bytes.Buffer
	for _, fd := range fds {
		sum.WriteString(fd.path + "\x00" + fd.digest + "\n")
	}
	got.Digest = fetch.Digest(sum.Bytes())
	got.URL = base.String()
	return got, nil
}

// escapePath escapes each segment of a '/'-separated relative path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// parseWellKnownIndex validates an index document (WKAS-R03–R12, R26 step
// 2, R32). It returns the entries in index order — an entry that is
// skipped but has a usable name is returned with typ "" so the caller can
// keep its cached copy — and whether it was read as v0.1. Each skipped entry
// is logged once per sync. Errors: not a JSON object, $schema not a string
// or unknown (WKAS-R05: warn and do not process), skills missing or not an
// array.
func parseWellKnownIndex(body []byte, legacy bool, log *slog.Logger) ([]wkEntry, bool, error) {
	items, v01, err := indexItems(body, legacy, log)
	if err != nil {
		return nil, v01, err
	}
	p := indexParser{v01: v01, log: log, seen: map[string]bool{}}
	for i, item := range items {
		p.entry(i, item)
	}
	return p.out, v01, nil
}

// indexItems checks the index document's $schema and returns its skills
// array and whether it is read as v0.1 ([parseWellKnownIndex]).
func indexItems(body []byte, legacy bool, log *slog.Logger) ([]json.RawMessage, bool, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return nil, false, fmt.Errorf("not a JSON object: %v", err)
	}
	v01 := legacy
	if raw, ok := doc["$schema"]; ok {
		var schema string
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, false, errors.New("$schema is not a string")
		}
		if schema != DiscoverySchemaV02 {
			return nil, false, fmt.Errorf("unknown $schema %q: not processed (WKAS-R05)", schema)
		}
		v01 = false
	} else if !legacy {
		log.Warn("publisher index has no $schema: read as v0.1 (WKAS-R05)")
		v01 = true
	}
	raw, ok := doc["skills"]
	if !ok {
		return nil, v01, errors.New("no skills array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, v01, errors.New("skills is not an array")
	}
	return items, v01, nil
}

// indexParser collects the entries of one index ([parseWellKnownIndex]).
type indexParser struct {
	v01  bool
	log  *slog.Logger
	seen map[string]bool // names returned so far
	out  []wkEntry
}

// skip logs why the entry name is skipped and, when the name is usable,
// returns it with no type so that its cached copy is kept.
func (p *indexParser) skip(name, why string) {
	p.log.Warn(fmt.Sprintf("index entry %q skipped: %s", name, why), "skill", name)
	if wkNameRe.MatchString(name) && !p.seen[name] {
		p.seen[name] = true
		p.out = append(p.out, wkEntry{name: name})
	}
}

// stringField returns the string at key k of m and whether it is one.
func stringField(m map[string]json.RawMessage, k string) (string, bool) {
	var s string
	v, ok := m[k]
	return s, ok && json.Unmarshal(v, &s) == nil
}

// entry checks item, the i-th entry of the skills array.
func (p *indexParser) entry(i int, item json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil || m == nil {
		p.log.Warn(fmt.Sprintf("index entry %d skipped: not an object", i))
		return
	}
	name, _ := stringField(m, "name")
	if !wkNameRe.MatchString(name) {
		p.skip(name, "name must be 1-64 characters of a-z, 0-9 and single inner hyphens (WKAS-R08)")
		return
	}
	if p.seen[name] {
		p.log.Warn(fmt.Sprintf("index entry %q skipped: the name appears twice; the first entry wins", name), "skill", name)
		return
	}
	if desc, ok := stringField(m, "description"); !ok || strings.TrimSpace(desc) == "" {
		p.skip(name, "description is missing or not a string (WKAS-R07)")
		return
	} else if n := len([]rune(desc)); n > 1024 {
		p.skip(name, fmt.Sprintf("description is %d characters, over 1024 (WKAS-R10)", n))
		return
	}
	if p.v01 {
		p.entryV01(name, m)
		return
	}
	typ, _ := stringField(m, "type")
	u, okURL := stringField(m, "url")
	d, okDigest := stringField(m, "digest")
	switch {
	case typ != wkTypeSkillMD && typ != wkTypeArchive:
		p.skip(name, fmt.Sprintf("unknown type %q (WKAS-R09)", typ))
	case !okURL || u == "":
		p.skip(name, "url is missing (WKAS-R07)")
	case !okDigest || !fetch.ValidDigest(d):
		p.skip(name, fmt.Sprintf("malformed digest %q: want sha256: and 64 lowercase hex digits (WKAS-R12)", d))
	default:
		p.seen[name] = true
		p.out = append(p.out, wkEntry{name: name, typ: typ, url: u, digest: d})
	}
}

// entryV01 checks the files list of the v0.1 entry name (WKAS-R32).
func (p *indexParser) entryV01(name string, m map[string]json.RawMessage) {
	var files []string
	if v, ok := m["files"]; !ok || json.Unmarshal(v, &files) != nil {
		p.skip(name, "files is missing or not a list of strings (WKAS-R32)")
		return
	}
	if why := checkV01Files(files); why != "" {
		p.skip(name, why)
		return
	}
	p.seen[name] = true
	p.out = append(p.out, wkEntry{name: name, typ: wkTypeFiles, files: files})
}

// checkV01Files applies WKAS-R32 to a v0.1 files list; "" when it is fine.
func checkV01Files(files []string) string {
	if len(files) == 0 {
		return "files is empty (WKAS-R32)"
	}
	if !slices.Contains(files, "SKILL.md") {
		return "files does not list SKILL.md (WKAS-R32)"
	}
	seen := map[string]bool{}
	for _, p := range files {
		bad := p == "" || strings.HasPrefix(p, "/") || seen[strings.ToLower(p)]
		for _, r := range p {
			if r < 0x20 || r > 0x7e || strings.ContainsRune(`\?#[]`, r) {
				bad = true
			}
		}
		for s := range strings.SplitSeq(p, "/") {
			if s == ".." || s == "." || s == "" {
				bad = true
			}
		}
		if bad || path.Clean(p) != p {
			return fmt.Sprintf("file path %q is not allowed (WKAS-R32)", p)
		}
		seen[strings.ToLower(p)] = true
	}
	return ""
}
