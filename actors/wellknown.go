package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/skilljack/skilljack-mcp/archive"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/fetch"
)

// DiscoverySchemaV02 is the $schema of a v0.2.0 discovery index (WKAS-R04).
const DiscoverySchemaV02 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// WellKnownOptions configures a [WellKnownFetcher].
type WellKnownOptions struct {
	// Config is the publisher configuration of this start
	// ([Config.WellKnown]).
	Config WellKnownConfig
	// HTTPClient sends the requests; nil means a client with a 30 s timeout
	// per request.
	HTTPClient *http.Client
	// Backoff is the wait before a retry of a failed request (5xx, network
	// error), doubled for the next; 0 means 1 s. Tests shorten it.
	Backoff time.Duration
	// Logger receives the fetcher's lines; nil discards.
	Logger *slog.Logger
}

// WellKnownFetcher is the actor keeping publisher sources' cache folders in
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
//	index.json        the cached skills: name → type, URL, digest (written last)
//	.index-meta.json  the index's validators (ETag, Last-Modified) and digest
//	skills/<name>/    one folder per skill: the hasher's root
//	.staging/         extraction in progress (never scanned; cleared at start)
type WellKnownFetcher struct {
	in   <-chan *message.Message
	pub  message.Publisher
	opts WellKnownOptions
	log  *slog.Logger
	c    *fetch.Client
	seq  atomic.Uint64

	mu      sync.Mutex
	workers []*wkWorker
}

// NewWellKnownFetcher returns a fetcher reading [events.SourcesConfigured]
// from configured and publishing [events.SourceSynced] /
// [events.SourceFailed] through pub. It panics if configured or pub is nil.
// opts is copied; nil means defaults (and no allowlisted origin).
func NewWellKnownFetcher(configured <-chan *message.Message, pub message.Publisher, opts *WellKnownOptions) *WellKnownFetcher {
	if configured == nil || pub == nil {
		panic("actors.NewWellKnownFetcher: nil inbox or publisher")
	}
	f := &WellKnownFetcher{in: configured, pub: pub}
	if opts != nil {
		f.opts = *opts
	}
	f.log = ensureLogger(f.opts.Logger)
	cfg := f.opts.Config
	if cfg.MaxArtifactBytes <= 0 {
		cfg.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	if cfg.MaxUnpackedBytes <= 0 {
		cfg.MaxUnpackedBytes = DefaultMaxUnpackedBytes
	}
	f.opts.Config = cfg
	f.c = fetch.New(&fetch.Options{
		HTTPClient: f.opts.HTTPClient,
		Allow:      fetch.AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", cfg.AllowedOrigins),
		AllowHTTP:  cfg.AllowHTTP,
		MaxBytes:   cfg.MaxArtifactBytes,
		Backoff:    f.opts.Backoff,
		Logger:     f.log,
	})
	return f
}

// Run consumes configurations until ctx is done or the inbox closes. For
// every well-known source of the newest configuration it runs one worker:
// a sync at once, in the background (the hasher already serves the cached
// copy, so startup never waits for a publisher), then one every
// PollInterval (none when it is 0 or the configuration is static). Syncs
// of one source never overlap. A newer configuration stops the workers of
// the older one. Run returns nil after its workers stopped.
func (f *WellKnownFetcher) Run(ctx context.Context) error {
	var (
		cfgSeq uint64
		stop   = func() {}
		wg     sync.WaitGroup
	)
	defer func() {
		stop()
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-f.in:
			if !ok {
				return nil
			}
			ev, newer := newerConfig(f.log, msg, cfgSeq)
			if !newer {
				continue
			}
			cfgSeq = ev.Seq
			stop()
			wg.Wait()
			wctx, cancel := context.WithCancel(ctx)
			stop = cancel
			var workers []*wkWorker
			for _, src := range ev.Sources {
				if src.Kind != events.SourceWellKnown {
					continue
				}
				spec, err := ParseWellKnownURL(src.Location, f.opts.Config.AllowHTTP)
				if err != nil {
					f.log.Warn("publisher source skipped: "+err.Error(), "source", src.Location)
					continue
				}
				w := &wkWorker{f: f, src: src, spec: spec, cfgSeq: ev.Seq, dir: filepath.Dir(src.Root), kick: make(chan struct{}, 1)}
				workers = append(workers, w)
				interval := f.opts.Config.PollInterval
				if ev.Static {
					interval = 0
				}
				wg.Go(func() { w.run(wctx, interval) })
			}
			f.mu.Lock()
			f.workers = workers
			f.mu.Unlock()
		}
	}
}

// SyncNow asks every publisher worker for a sync at once; a sync already
// running is followed by one more. It never blocks.
func (f *WellKnownFetcher) SyncNow() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.workers {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// wkWorker syncs one publisher source.
type wkWorker struct {
	f      *WellKnownFetcher
	src    events.Source
	spec   WellKnownSpec
	cfgSeq uint64
	dir    string // the publisher's cache folder
	kick   chan struct{}
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
		if cached := readJSON[wkCacheIndex](filepath.Join(w.dir, "index.json")); len(cached.Skills) > 0 {
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

// intact reports whether the cached folder of skill name still is what
// the sync wrote: its tree stamp (paths, sizes, mtimes) is unchanged and,
// for a skill-md skill, its SKILL.md still has the index digest. A folder
// changed by hand or by anything else is downloaded again.
func (w *wkWorker) intact(skillsDir, name string, c wkCached) bool {
	dir := filepath.Join(skillsDir, name)
	if c.Type == wkTypeSkillMD {
		// One file with a known digest: check its bytes, which catches an
		// edit that kept the size and put the mtime back.
		b, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil || fetch.Digest(b) != c.Digest {
			return false
		}
	}
	if c.Stamp == "" {
		return fileExists(filepath.Join(dir, "SKILL.md"))
	}
	st, err := treeStamp(dir)
	return err == nil && st == c.Stamp
}

// syncOnce fetches the index and brings the cache up to date. It returns
// nil, nil when nothing on disk changed, and an error when the sync failed
// as a whole (nothing was changed then).
func (w *wkWorker) syncOnce(ctx context.Context, log *slog.Logger, emit func(*events.SourceSynced)) (*events.SourceSynced, error) {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating cache folder %s: %w", w.dir, err)
	}
	// Leftovers of a crash, once they are old enough that no other
	// process sharing the cache can still be using them.
	stale, _ := filepath.Glob(filepath.Join(w.dir, ".staging", "*"))
	trash, _ := filepath.Glob(filepath.Join(w.dir, ".trash-*"))
	for _, p := range append(stale, trash...) {
		if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > staleAge {
			os.RemoveAll(p)
		}
	}
	meta := readJSON[wkMeta](filepath.Join(w.dir, ".index-meta.json"))
	cached := readJSON[wkCacheIndex](filepath.Join(w.dir, "index.json"))
	if cached.Skills == nil {
		cached.Skills = map[string]wkCached{}
	}
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

	legacy := false
	resp, err := w.f.c.Get(ctx, w.spec.IndexURL, cond)
	if se := (*fetch.StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusNotFound {
		// WKAS-R32/R33: a publisher with only the v0.1 layout.
		lresp, lerr := w.f.c.Get(ctx, w.spec.LegacyIndexURL, legacyCond)
		if lerr != nil {
			return nil, fmt.Errorf("fetching index %s: %w (and the v0.1 index: %v)", w.spec.IndexURL, err, lerr)
		}
		resp, err, legacy = lresp, nil, true
	}
	if err != nil {
		return nil, fmt.Errorf("fetching index: %w", err)
	}
	var entries []wkEntry
	revision, validators := resp.Digest, resp.Validators
	if resp.NotModified {
		// The index is unchanged: check the cached skills against what a
		// sync wrote, and download again any that changed on disk.
		log.Debug("publisher index not modified", "url", resp.URL.String())
		revision, validators = meta.Digest, meta.Validators
		for _, name := range slices.Sorted(maps.Keys(cached.Skills)) {
			c := cached.Skills[name]
			entries = append(entries, wkEntry{name: name, typ: c.Type, url: c.URL, digest: c.Digest, files: c.Files})
		}
	} else {
		var v01 bool
		entries, v01, err = parseWellKnownIndex(resp.Body, legacy, log.With("index", resp.URL.String()))
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", resp.URL, err)
		}
		if v01 {
			log.Warn("publisher serves a v0.1 index without digests: its files carry no integrity check (WKAS-R33)", "index", resp.URL.String())
		}
	}

	skillsDir := filepath.Join(w.dir, "skills")
	_, statErr := os.Stat(skillsDir)
	freshRoot := statErr != nil
	if err := os.MkdirAll(skillsDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating cache folder %s: %w", skillsDir, err)
	}
	out := &events.SourceSynced{Revision: revision, Errors: map[string]string{}}
	next := wkCacheIndex{Source: resp.URL.String(), FetchedAt: time.Now(), Skills: map[string]wkCached{}}
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
		if err := writeJSONAtomic(filepath.Join(w.dir, "index.json"), merged); err != nil {
			log.Warn("cannot save sync progress", "error", err)
			return
		}
		part := &events.SourceSynced{Revision: revision, Paths: slices.Sorted(slices.Values(out.Paths)), Synced: out.Synced, Rescan: freshRoot}
		freshRoot = false
		out.Paths, out.Synced = nil, nil
		emit(part)
	}
	for _, e := range entries {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		checkpoint()
		if e.typ == "" {
			// An entry skipped by parsing: keep what is cached (last good copy).
			if c, ok := cached.Skills[e.name]; ok {
				next.Skills[e.name] = c
			}
			continue
		}
		old, had := cached.Skills[e.name]
		// WKAS-R18: an unchanged digest needs no download, as long as the
		// cached folder is as written. (A v0.1 entry has no digest in the
		// index: its files are fetched whenever the index is.)
		if had && old.Digest == e.digest && old.Type == e.typ && w.intact(skillsDir, e.name, old) {
			next.Skills[e.name] = old
			continue
		}
		if had && old.Digest == e.digest && old.Type == e.typ {
			log.Warn(fmt.Sprintf("cached copy of publisher skill %s changed on disk; downloading it again", e.name), "skill", e.name)
		}
		got, swapped, err := w.fetchSkill(ctx, resp.URL, e, skillsDir, old)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			log.Warn(fmt.Sprintf("publisher skill %s not updated; its previous copy (if any) stays served: %v", e.name, err), "skill", e.name)
			out.Errors[e.name] = err.Error()
			if had {
				next.Skills[e.name] = old
			}
			continue
		}
		next.Skills[e.name] = got
		if swapped {
			out.Synced = append(out.Synced, e.name)
			out.Paths = append(out.Paths, filepath.Join(skillsDir, e.name))
		}
	}
	// Prune the skills the index no longer names (reference §5 step 4), and
	// any folder the cache index does not know.
	ents, _ := os.ReadDir(skillsDir)
	for _, d := range ents {
		name := d.Name()
		if _, keep := next.Skills[name]; keep {
			continue
		}
		if err := os.RemoveAll(filepath.Join(skillsDir, name)); err != nil {
			log.Warn("cannot prune removed skill", "skill", name, "error", err)
			continue
		}
		out.Removed = append(out.Removed, name)
		out.Paths = append(out.Paths, filepath.Join(skillsDir, name))
	}
	// The cache index last, so a crash leaves the old one (reference §5).
	if err := writeJSONAtomic(filepath.Join(w.dir, "index.json"), next); err != nil {
		return nil, err
	}
	// Validators only after a complete sync: a skill that failed is tried
	// again at the next poll instead of being hidden behind a 304.
	m := wkMeta{Digest: revision, URL: resp.URL.String(), FetchedAt: next.FetchedAt, Legacy: legacy}
	if len(out.Errors) == 0 {
		m.Validators = validators
	}
	if err := writeJSONAtomic(filepath.Join(w.dir, ".index-meta.json"), m); err != nil {
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

// fetchSkill downloads, verifies and swaps in one skill, returning what is
// now cached. Nothing is written unless every check passed.
func (w *wkWorker) fetchSkill(ctx context.Context, base *url.URL, e wkEntry, skillsDir string, old wkCached) (got wkCached, swapped bool, err error) {
	stageRoot := filepath.Join(w.dir, ".staging")
	if err := os.MkdirAll(stageRoot, 0o755); err != nil {
		return wkCached{}, false, err
	}
	stage, err := os.MkdirTemp(stageRoot, e.name+"-")
	if err != nil {
		return wkCached{}, false, err
	}
	defer os.RemoveAll(stage)
	got = wkCached{Type: e.typ, Files: e.files}

	switch e.typ {
	case wkTypeSkillMD, wkTypeArchive:
		u, err := base.Parse(e.url) // WKAS-R15: against the final index URL
		if err != nil {
			return wkCached{}, false, fmt.Errorf("bad url %q: %w", e.url, err)
		}
		got.URL = u.String()
		resp, err := w.f.c.Get(ctx, got.URL, nil)
		if err != nil {
			return wkCached{}, false, err
		}
		if err := fetch.VerifyDigest(resp.Body, e.digest); err != nil {
			return wkCached{}, false, fmt.Errorf("%s: %w", got.URL, err) // WKAS-R17: nothing written
		}
		got.Digest = e.digest
		if e.typ == wkTypeSkillMD {
			if err := os.WriteFile(filepath.Join(stage, "SKILL.md"), resp.Body, 0o644); err != nil {
				return wkCached{}, false, err
			}
			break
		}
		format, err := archive.DetectFormat(resp.ContentType, u.Path)
		if err != nil {
			return wkCached{}, false, fmt.Errorf("%s: %w", got.URL, err)
		}
		root, err := os.OpenRoot(stage)
		if err != nil {
			return wkCached{}, false, err
		}
		_, err = archive.Extract(format, resp.Body, root, &archive.Options{MaxBytes: w.f.opts.Config.MaxUnpackedBytes, RequireSkillMD: true})
		root.Close()
		if err != nil {
			return wkCached{}, false, fmt.Errorf("%s: %w", got.URL, err)
		}
	case wkTypeFiles:
		// WKAS-R32: /.well-known/skills/{name}/{path}, relative to the index.
		var sum bytes.Buffer
		type fileDigest struct{ path, digest string }
		var fds []fileDigest
		for _, p := range e.files {
			u, err := base.Parse(url.PathEscape(e.name) + "/" + escapePath(p))
			if err != nil {
				return wkCached{}, false, fmt.Errorf("bad file path %q: %w", p, err)
			}
			resp, err := w.f.c.Get(ctx, u.String(), nil)
			if err != nil {
				return wkCached{}, false, err
			}
			dst := filepath.Join(stage, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return wkCached{}, false, err
			}
			if err := os.WriteFile(dst, resp.Body, 0o644); err != nil {
				return wkCached{}, false, err
			}
			fds = append(fds, fileDigest{p, strings.TrimPrefix(resp.Digest, "sha256:")})
		}
		// The skill digest of WKAS-R34 over the files, for change detection.
		slices.SortFunc(fds, func(a, b fileDigest) int { return strings.Compare(a.path, b.path) })
		for _, fd := range fds {
			sum.WriteString(fd.path + "\x00" + fd.digest + "\n")
		}
		got.Digest = fetch.Digest(sum.Bytes())
		got.URL = base.String()
		if got.Digest == old.Digest && old.Type == e.typ && w.intact(skillsDir, e.name, old) {
			got.Stamp = old.Stamp
			return got, false, nil // same files: keep the folder as it is
		}
	}
	dst := filepath.Join(skillsDir, e.name)
	if err := swapFolder(stage, dst, filepath.Join(w.dir, fmt.Sprintf(".trash-%s~%d", e.name, rand.Int64()))); err != nil {
		return wkCached{}, false, fmt.Errorf("replacing %s: %w", dst, err)
	}
	if got.Stamp, err = treeStamp(dst); err != nil {
		w.f.log.Warn("cannot stamp cached skill; it will be checked by its SKILL.md only", "skill", e.name, "error", err)
	}
	return got, true, nil
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
	var out []wkEntry
	seen := map[string]bool{}
	for i, item := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(item, &m) != nil || m == nil {
			log.Warn(fmt.Sprintf("index entry %d skipped: not an object", i))
			continue
		}
		str := func(k string) (string, bool) {
			var s string
			v, ok := m[k]
			return s, ok && json.Unmarshal(v, &s) == nil
		}
		name, _ := str("name")
		skip := func(why string) {
			log.Warn(fmt.Sprintf("index entry %q skipped: %s", name, why), "skill", name)
			if wkNameRe.MatchString(name) && !seen[name] {
				seen[name] = true
				out = append(out, wkEntry{name: name})
			}
		}
		if !wkNameRe.MatchString(name) {
			skip("name must be 1-64 characters of a-z, 0-9 and single inner hyphens (WKAS-R08)")
			continue
		}
		if seen[name] {
			log.Warn(fmt.Sprintf("index entry %q skipped: the name appears twice; the first entry wins", name), "skill", name)
			continue
		}
		if desc, ok := str("description"); !ok || strings.TrimSpace(desc) == "" {
			skip("description is missing or not a string (WKAS-R07)")
			continue
		} else if n := len([]rune(desc)); n > 1024 {
			skip(fmt.Sprintf("description is %d characters, over 1024 (WKAS-R10)", n))
			continue
		}
		if v01 {
			var files []string
			if v, ok := m["files"]; !ok || json.Unmarshal(v, &files) != nil {
				skip("files is missing or not a list of strings (WKAS-R32)")
				continue
			}
			if why := checkV01Files(files); why != "" {
				skip(why)
				continue
			}
			seen[name] = true
			out = append(out, wkEntry{name: name, typ: wkTypeFiles, files: files})
			continue
		}
		typ, _ := str("type")
		u, okURL := str("url")
		d, okDigest := str("digest")
		switch {
		case typ != wkTypeSkillMD && typ != wkTypeArchive:
			skip(fmt.Sprintf("unknown type %q (WKAS-R09)", typ))
		case !okURL || u == "":
			skip("url is missing (WKAS-R07)")
		case !okDigest || !fetch.ValidDigest(d):
			skip(fmt.Sprintf("malformed digest %q: want sha256: and 64 lowercase hex digits (WKAS-R12)", d))
		default:
			seen[name] = true
			out = append(out, wkEntry{name: name, typ: typ, url: u, digest: d})
		}
	}
	return out, v01, nil
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

// readJSON reads a cache file; a missing or broken one gives the zero
// value (the next sync rewrites it).
func readJSON[T any](name string) T {
	var v T
	if b, err := os.ReadFile(name); err == nil {
		if json.Unmarshal(b, &v) != nil {
			var zero T
			return zero
		}
	}
	return v
}

// writeJSONAtomic writes v as indented JSON to name through a temporary
// file and a rename, so a reader never sees half a file.
func writeJSONAtomic(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = writeFileAtomic(name, append(b, '\n'))
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

func fileExists(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}
