// Package hasher is the actor that scans sources for skill folders and
// hashes their files (DESIGN "hasher"), with a digest cache; on
// files.changed or source.synced it rescans only the folders a change
// touched, with the same result as a full scan. [Scan] runs one scan
// without the actor, for validation.
package hasher

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// maxDiscoveryDepth is how many folders below a source root a skill folder
// may sit (DESIGN "Where skills come from"): deep enough for
// org/team/area/skill layouts, shallow enough to keep a scan of a home
// directory cheap.
const maxDiscoveryDepth = 6

// maxManifestDepth is how deep below a skill folder supporting files are
// listed, as in the reference's MAX_DIRECTORY_DEPTH.
const maxManifestDepth = 10

// Default size caps of [Options]: the settings table's, owned by
// actors/config.
const (
	// DefaultMaxFileSize is [config.DefaultMaxFileSize] (1 MiB): the
	// largest supporting file served, so the largest hashed.
	DefaultMaxFileSize = config.DefaultMaxFileSize
	// DefaultMaxSkillMDSize is [config.DefaultMaxSkillMDSize] (4 MiB): a
	// SKILL.md's bytes are read whole, for the catalog builder to parse.
	DefaultMaxSkillMDSize = config.DefaultMaxSkillMDSize
)

// Inboxes are the subscriptions a [Hasher] reads.
type Inboxes struct {
	// Configured carries sources.configured. Required.
	Configured <-chan *message.Message
	// Changes carries files.changed ([events.FilesChanged], published by
	// the watcher), which makes Run rescan the changed part of a local
	// source. If nil, sources are scanned only when a configuration
	// arrives.
	Changes <-chan *message.Message
	// Synced carries source.synced ([events.SourceSynced], published by the
	// remote fetchers), which makes Run rescan what the sync changed in the
	// source's cache folder. If nil, a remote source's cache is scanned
	// only when a configuration arrives.
	Synced <-chan *message.Message
	// Catalogs carries catalog.changed. With [Options.DeferHashing], the
	// complete scans that follow partial ones wait for the first catalog
	// (at most restWait), so that building it and answering the first
	// initialize have the machine, and on a warm start the first scans wait
	// for the persisted catalog (at most servedWait, [Hasher.awaitServed]);
	// the messages are acked unread. If nil, they start at once.
	Catalogs <-chan *message.Message
}

// restWait bounds how long the complete scans after partial ones wait for
// the first catalog.
const restWait = 5 * time.Second

// Options configure a [Hasher] or a [Scan]. A nil *Options means defaults.
type Options struct {
	// Bundled is the file system of the skills embedded in the binary; its
	// root holds one folder per skill. If nil, the bundled source has no
	// skills.
	Bundled fs.FS
	// Workers bounds how many files are hashed at once. If zero, defaults to
	// runtime.GOMAXPROCS(0)*2.
	Workers int
	// Logger receives the hasher's log lines. If nil, they are discarded.
	Logger *slog.Logger
	// MaxFileSize is the largest supporting file, in bytes, that is hashed
	// and listed; a larger one is left out of the manifest with a warning,
	// never read. If zero, defaults to [DefaultMaxFileSize].
	MaxFileSize int64
	// MaxSkillMDSize is the largest SKILL.md, in bytes, that is read; a
	// skill whose SKILL.md is larger is skipped with an error diagnostic.
	// If zero, defaults to [DefaultMaxSkillMDSize].
	MaxSkillMDSize int64
	// CacheDir is the folder of the persistent digest cache: one file per
	// source root, keyed by each file's path, size, modification time,
	// inode, device and change time, so that a restart with nothing
	// changed reads no supporting file (issue 12). It is created when
	// needed, safe to delete and may be shared by several processes. If
	// empty, digests are cached in memory only.
	CacheDir string
	// DeferHashing lets [Hasher.Run] publish the first scan of its first
	// configuration as a partial scan ([events.SourceScanned.Partial]) when
	// a root's digest cache misses many supporting files (a first start
	// ever): the SKILL.md files hashed, the other files pending, the
	// complete scan next, so that the first catalog does not wait for every
	// file to be read (issue 12); a first start's first walk reads its
	// folders ahead on the other cores (readahead.go). [Hasher.Scan] and
	// [Scan] always scan completely.
	DeferHashing bool
}

// Hasher is the actor that scans sources for skill folders and hashes their
// files (DESIGN "hasher"). With each file it records what a consumer needs
// besides the bytes, decided from the bytes it hashes: the MIME type and
// text flag ([skill.Content]), and for a SKILL.md it read its bytes (for the
// catalog builder to parse; neither keeps them, issue 12); nobody reads a
// file again to type it (issue 11 item 6). It
// keeps a digest cache keyed by (path, size, mtime, inode, device, change
// time) that holds all of it, so an unchanged file is never read twice
// (BR-35), and with [Options.CacheDir] it persists the cache between
// starts.
type Hasher struct {
	in       <-chan *message.Message
	changes  <-chan *message.Message
	synced   <-chan *message.Message
	catalogs <-chan *message.Message
	// cataloged is closed when the first catalog.changed arrives; nil
	// without Inboxes.Catalogs.
	cataloged chan struct{}
	pub       message.Publisher
	sc        *scanner
	log       *slog.Logger
	seq       atomic.Uint64
	// first is set once a configuration was scanned, or from the start
	// without Options.DeferHashing: no partial scans.
	first atomic.Bool
}

// New returns a hasher reading in and publishing [events.SourceScanned]
// through pub. It panics if in.Configured or pub is nil. opts is copied;
// nil means defaults.
func New(in Inboxes, pub message.Publisher, opts *Options) *Hasher {
	if in.Configured == nil || pub == nil {
		panic("hasher.New: nil inbox or publisher")
	}
	sc := newScanner(opts)
	h := &Hasher{in: in.Configured, changes: in.Changes, synced: in.Synced, catalogs: in.Catalogs, pub: pub, sc: sc, log: sc.log}
	if in.Catalogs != nil {
		h.cataloged = make(chan struct{})
	}
	h.first.Store(opts == nil || !opts.DeferHashing)
	return h
}

// Scan is [Hasher.Scan] without an actor and without a digest cache kept
// between calls, for `skilljack-mcp validate`: it scans src once with
// opts (nil means defaults).
func Scan(ctx context.Context, src events.Source, opts *Options) (events.SourceScanned, error) {
	sc := newScanner(opts)
	out, err := sc.scan(ctx, src)
	sc.flush()
	return out, err
}

// Scan finds the skill folders of one local, remote (its cache folder) or
// bundled source and hashes
// their files, reading only files whose (path, size, mtime, inode, device,
// change time) is not in the digest cache (BR-35); a SKILL.md read carries
// its bytes ([events.ScannedSkill.SkillMD]), one from the cache none, but
// for the bundled source's; Hashed counts the files read. With
// [Options.CacheDir] it writes the cache before it returns. It blocks until done
// and is safe for concurrent use, also while Run runs. Seq and ConfigSeq of
// the result are zero. Symbolic links are followed only when they sit
// directly in the root (or in its skills/ or .claude/skills) and point to a
// skill folder (BR-15); no folder is walked twice. A local skill folder is
// identified once, at discovery (its real path and device/inode), and
// every file is then read below that folder, only while it is still that
// folder and never through a symbolic link at any level
// ([skill.OpenFile]), issue 10 F2. A supporting file over MaxFileSize is
// left out of its manifest and a skill whose SKILL.md is over
// MaxSkillMDSize is skipped, each with a diagnostic, without reading them
// (issue 10 F4). Problems with single
// files or folders (unreadable, broken or unfollowed links, SKILL.md in
// hidden folders) become Diagnostics; a missing root gives no skills and
// one diagnostic, the only report of it. It returns an error only for a
// source kind it does not scan or when ctx is done.
func (h *Hasher) Scan(ctx context.Context, src events.Source) (events.SourceScanned, error) {
	out, err := h.sc.scan(ctx, src)
	h.sc.flush()
	return out, err
}

// Run handles sources.configured and files.changed messages (and
// catalog.changed, see [Inboxes.Catalogs]) until ctx is
// done or every inbox is closed, then returns nil after the scans it
// started have stopped. Each message is decoded and acked at once (exactly
// once, never nacked, through [events.Receive]); scans run in goroutines Run
// owns and publish their own results, one [events.SourceScanned] each,
// with increasing Seq and ConfigSeq set; a publish never waits for a
// consumer ([events.Bus]).
//
// A configuration newer than the last one cancels every scan still running
// and, once they have stopped, scans every local and bundled source in
// order (a github or well-known source is scanned in its cache folder,
// which a missing one leaves empty without a diagnostic). A
// [events.SourceSynced] for the current configuration rescans what the
// sync changed in the cache folder, as a files.changed does. An
// [events.FilesChanged] for the current configuration (ConfigSeq equal,
// Seq above the last one of its source, a local source of that
// configuration) rescans that source incrementally: only the folders the
// changed paths touch are read again, only files whose path, size or
// mtime changed (or that the change names) are hashed, and every skill
// folder no change touched is published as the very value the scan before
// made of it (its manifest shared: see regions.go); Rescan reads the
// whole root again. The result is what a full [Hasher.Scan] would give. The
// scans of one root never overlap and publish in order: changes that
// arrive while the root is being scanned are merged into one rescan that
// starts when it ends.
func (h *Hasher) Run(ctx context.Context) error {
	runCtx, stopAll := context.WithCancel(ctx)
	r := &hashRun{
		h: h, runCtx: runCtx, cfgCtx: runCtx, cancelCfg: func() {},
		done: make(chan []string), busy: map[string]bool{}, pending: map[string]*rescanJob{},
		lastChange: map[string]uint64{}, lastSync: map[string]uint64{},
	}
	defer func() {
		stopAll()
		r.wg.Wait()
	}()
	in, changes, synced, catalogs := h.in, h.changes, h.synced, h.catalogs
	for in != nil || changes != nil || synced != nil {
		select {
		case <-ctx.Done():
			return nil
		case keys := <-r.done:
			r.finished(keys)
		case msg, ok := <-catalogs:
			if !ok {
				catalogs = nil
				continue
			}
			msg.Ack()
			if !r.cataloged {
				r.cataloged = true
				close(h.cataloged)
			}
		case msg, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			if ev, ok := events.Receive[events.SourcesConfigured](h.log, msg); ok {
				r.configure(ev)
			}
		case msg, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			if ev, ok := events.Receive[events.FilesChanged](h.log, msg); ok {
				r.changed(ev)
			}
		case msg, ok := <-synced:
			if !ok {
				synced = nil
				continue
			}
			if ev, ok := events.Receive[events.SourceSynced](h.log, msg); ok {
				r.synced(ev)
			}
		}
	}
	return nil
}

// hashRun is the state of one [Hasher.Run]: only Run's goroutine touches
// it, except wg and done, which the scan goroutines use to report back.
type hashRun struct {
	h      *Hasher
	runCtx context.Context // cancelled when Run returns
	wg     sync.WaitGroup  // the scan goroutines
	done   chan []string   // root keys of a job that ended

	cfg        events.SourcesConfigured
	cfgCtx     context.Context // cancelled when cfg is replaced
	cancelCfg  context.CancelFunc
	running    int             // jobs started and not yet ended
	busy       map[string]bool // root keys a running job scans
	fullDue    bool            // cfg's full scan waits for older jobs to stop
	pending    map[string]*rescanJob
	lastChange map[string]uint64 // the last files.changed Seq per source ID
	lastSync   map[string]uint64 // the last source.synced Seq per source ID
	cataloged  bool              // a catalog.changed arrived
}

// configure replaces the configuration with a newer one: every scan still
// running is cancelled, queued rescans are dropped and a full scan is due.
func (r *hashRun) configure(ev events.SourcesConfigured) {
	if ev.Seq <= r.cfg.Seq {
		return
	}
	r.cfg = ev
	r.cancelCfg()
	r.cfgCtx, r.cancelCfg = context.WithCancel(r.runCtx) // stopped when Run returns at the latest
	clear(r.pending)
	r.fullDue = true
	r.schedule()
}

// changed queues the rescan a files.changed for the current configuration
// asks for.
func (r *hashRun) changed(ev events.FilesChanged) {
	if ev.ConfigSeq != r.cfg.Seq || ev.Seq <= r.lastChange[ev.Source.ID] {
		return
	}
	r.lastChange[ev.Source.ID] = ev.Seq
	r.queue(ev.Source, ev.Paths, ev.Rescan)
}

// synced queues the rescan a source.synced for the current configuration
// asks for. Seq is per fetcher; two fetchers never share a source ID.
func (r *hashRun) synced(ev events.SourceSynced) {
	if ev.ConfigSeq != r.cfg.Seq || ev.Seq <= r.lastSync[ev.Source.ID] {
		return
	}
	r.lastSync[ev.Source.ID] = ev.Seq
	if len(ev.Paths) > 0 || ev.Rescan {
		r.queue(ev.Source, ev.Paths, ev.Rescan)
	}
}

// finished records the end of the job that scanned keys and starts what
// waited for it.
func (r *hashRun) finished(keys []string) {
	r.running--
	for _, k := range keys {
		delete(r.busy, k)
	}
	r.schedule()
}

// start runs job in a goroutine under the current configuration's context
// and marks keys busy until it ends.
func (r *hashRun) start(keys []string, job func(context.Context)) {
	r.running++
	for _, k := range keys {
		r.busy[k] = true
	}
	jctx, runCtx, done := r.cfgCtx, r.runCtx, r.done
	r.wg.Go(func() {
		job(jctx)
		select {
		case done <- keys:
		case <-runCtx.Done():
		}
	})
}

// schedule starts the full scan of a new configuration once every older
// job has stopped, else every queued rescan whose root is not busy.
func (r *hashRun) schedule() {
	if r.fullDue {
		if r.running > 0 {
			return // a configuration's scans wait for the older ones to stop
		}
		r.fullDue = false
		var keys []string
		for _, src := range r.cfg.Sources {
			if k := cacheKey(src); k != "" {
				keys = append(keys, k)
			}
		}
		c := r.cfg
		r.start(keys, func(ctx context.Context) { r.h.scanAll(ctx, c) })
		return
	}
	for _, k := range slices.Sorted(maps.Keys(r.pending)) {
		if r.busy[k] {
			continue
		}
		job := r.pending[k]
		delete(r.pending, k)
		r.start([]string{k}, func(ctx context.Context) { r.h.rescan(ctx, job) })
	}
}

// queue merges one change into the rescan job of its source, when the
// source is still configured as the change names it.
func (r *hashRun) queue(src events.Source, paths []string, whole bool) {
	i := slices.IndexFunc(r.cfg.Sources, func(s events.Source) bool {
		return s.ID == src.ID && s.Kind == src.Kind && s.Root == src.Root
	})
	if i < 0 || cacheKey(r.cfg.Sources[i]) == "" || r.cfg.Sources[i].Kind == events.SourceBundled {
		return
	}
	k := cacheKey(r.cfg.Sources[i])
	job := r.pending[k]
	if job == nil {
		job = &rescanJob{src: r.cfg.Sources[i], cfgSeq: r.cfg.Seq, paths: map[string]bool{}}
		r.pending[k] = job
	}
	job.whole = job.whole || whole
	for _, p := range paths {
		job.paths[p] = true
	}
	r.schedule()
}

// rescanJob is the merged work of the files.changed messages of one root
// that wait for a scan.
type rescanJob struct {
	src    events.Source
	cfgSeq uint64
	paths  map[string]bool // absolute
	whole  bool
}

// cacheKey names the caches of a scanned source, or "" for a source the
// hasher does not scan.
func cacheKey(src events.Source) string {
	switch src.Kind {
	case events.SourceLocal, events.SourceGitHub, events.SourceWellKnown:
		return "local:" + src.Root
	case events.SourceBundled:
		return bundledKey
	}
	return ""
}

// bundledKey is the cache key of the bundled source, whose digests are
// never persisted and whose SKILL.md bytes stay in the in-memory cache (a
// few small files embedded in the binary).
const bundledKey = "bundled:"

// scanAll scans and publishes every served source of cfg in order. With
// [Options.DeferHashing], the first configuration of a Run may defer
// hashing (issue 12, "no hashing on the way to initialize"): a root whose digest cache misses at least
// deferMin supporting files is published first as a partial scan
// ([events.SourceScanned.Partial]: every SKILL.md hashed, those files
// pending), and once every source is published and the first catalog
// came ([Inboxes.Catalogs]), each partial one is scanned again and
// published complete.
func (h *Hasher) scanAll(ctx context.Context, cfg events.SourcesConfigured) {
	deferOK := h.first.CompareAndSwap(false, true)
	if deferOK {
		h.awaitServed(ctx, cfg)
	}
	var later []events.Source
	for _, src := range cfg.Sources {
		if cacheKey(src) == "" {
			continue
		}
		var scan events.SourceScanned
		var err error
		if deferOK {
			scan, err = h.sc.scanFirst(ctx, src)
		} else {
			scan, err = h.sc.scanKeep(ctx, src, nil, true)
		}
		ok := h.publish(ctx, cfg.Seq, scan, err)
		if scan.Partial {
			later = append(later, src)
		} else {
			h.sc.flush() // after the publish: the catalog does not wait for the disk
		}
		if !ok {
			return
		}
	}
	if len(later) > 0 && h.cataloged != nil {
		wait := time.NewTimer(restWait)
		select {
		case <-h.cataloged:
		case <-wait.C:
		case <-ctx.Done():
		}
		wait.Stop()
	}
	for _, src := range later {
		if holdRest != nil {
			holdRest(ctx)
		}
		scan, err := h.sc.scanRest(ctx, src)
		ok := h.publish(ctx, cfg.Seq, scan, err)
		h.sc.flush()
		if !ok {
			return
		}
	}
}

// servedWait bounds how long a warm start's first scans wait for the first
// catalog ([Hasher.awaitServed]): the persisted one comes in tens of
// milliseconds; when there is none to come (the sources changed since it
// was written), the scans start this much later.
const servedWait = 200 * time.Millisecond

// awaitServed lets a warm start's first catalog be served before the first
// scans of cfg begin (issue 12): when the digest cache of every root of cfg
// is on disk, the catalog builder has most likely published the catalog it
// persisted, and the revalidation walk (folder listings for 27,000 folders
// at 10,000 skills, some 10 MB) need not run beside the first initialize.
// It waits for the first catalog.changed ([Inboxes.Catalogs]), at most
// servedWait; a first start (a cold digest cache) does not wait, its scans
// make the first catalog.
func (h *Hasher) awaitServed(ctx context.Context, cfg events.SourcesConfigured) {
	if h.cataloged == nil || h.sc.disk == nil {
		return
	}
	roots := 0
	for _, src := range cfg.Sources {
		if key := cacheKey(src); key != "" && key != bundledKey {
			if h.sc.cold(key) {
				return
			}
			roots++
		}
	}
	if roots == 0 {
		return
	}
	wait := time.NewTimer(servedWait)
	defer wait.Stop()
	select {
	case <-h.cataloged:
	case <-wait.C:
	case <-ctx.Done():
	}
}

// holdRest, when set (by tests), is called before each complete scan that
// follows a partial one, so that a test can look at the partial state.
var holdRest func(context.Context)

// deferMin is how many supporting files a root's first scan must miss in
// its digest cache for their hashing to be deferred to a second scan: below
// it, hashing them costs less than a second catalog version.
var deferMin = 256

// rescan scans and publishes the source of job.
func (h *Hasher) rescan(ctx context.Context, job *rescanJob) {
	scan, err := h.sc.scanKeep(ctx, job.src, slices.Sorted(maps.Keys(job.paths)), job.whole)
	h.publish(ctx, job.cfgSeq, scan, err)
	h.sc.flush()
}

// publish publishes a finished scan unless it failed or its configuration
// was replaced meanwhile, and reports whether it did.
func (h *Hasher) publish(ctx context.Context, cfgSeq uint64, scan events.SourceScanned, err error) bool {
	if err != nil {
		if ctx.Err() == nil {
			h.log.Error("scanning source", "source", scan.Source.Location, "error", err)
		}
		return false
	}
	if ctx.Err() != nil {
		return false
	}
	scan.Seq = h.seq.Add(1)
	scan.ConfigSeq = cfgSeq
	if err := events.Publish(h.pub, scan); err != nil {
		h.log.Error("publishing scan", "source", scan.Source.Location, "error", err)
	}
	h.log.Debug("source scanned", "source", scan.Source.Location, "skills", len(scan.Skills), "hashed", scan.Hashed)
	return true
}

// scanner is the synchronous part of the hasher, shared with [Scan].
type scanner struct {
	bundled fs.FS
	workers int
	log     *slog.Logger
	maxFile int64 // cap of a supporting file
	maxMD   int64 // cap of a SKILL.md

	mu sync.Mutex
	// cache maps a source root key to the digests of its files, by path in
	// the source's file system. Each scan replaces its root's value, so
	// files that vanished leave the cache.
	cache map[string]*digests
	// replays counts the rescans that replayed the walk before
	// (replay.go), for tests.
	replays atomic.Uint64
	// memos maps a local root key to what the last scan of the hasher's
	// Run read of its folders and made of its skill folders; a rescan takes
	// it out while it runs.
	memos map[string]*rootMemo

	// disk is the persistent digest cache, nil without Options.CacheDir.
	disk *diskCache
	// persisted counts the durable entries of each root's cache file as
	// last read or written; unsaved holds the caches to write next
	// ([scanner.flush]), by root key.
	persisted map[string]int
	unsaved   map[string]*digests
	saveMu    sync.Mutex // serializes flushes, so a newer cache is written last
	saveWarn  bool       // a failed write was logged as a warning
}

// cacheEntry describes one file as it was hashed, keyed by its size,
// modification time and, where the platform has them ([fileIdent]), its
// inode, device and change time.
type cacheEntry struct {
	size    int64
	modTime time.Time
	ino     uint64
	dev     uint64
	ctime   int64 // ns
	id      bool  // ino, dev and ctime are known
	// durable is set when the entry may be persisted ([diskCache]): its
	// key is the identity of the very file hashed, whose change time was
	// older than the scan's start by [racySlack].
	durable bool
	digest  string
	// mime and text are what the facade serves the file as, decided from
	// the bytes hashed ([skill.Content]).
	mime string
	text bool
	// content is kept for the bundled source's SKILL.md files only: a
	// local SKILL.md's bytes go with the scan that read them
	// ([hashResult.contents]) and are not cached.
	content []byte
}

func newScanner(opts *Options) *scanner {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0) * 2
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxSkillMDSize <= 0 {
		o.MaxSkillMDSize = DefaultMaxSkillMDSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var disk *diskCache
	if o.CacheDir != "" {
		disk = &diskCache{dir: o.CacheDir, log: o.Logger}
	}
	return &scanner{
		bundled: o.Bundled,
		workers: o.Workers,
		log:     o.Logger,
		maxFile: o.MaxFileSize,
		maxMD:   o.MaxSkillMDSize,
		cache:   map[string]*digests{},
		memos:   map[string]*rootMemo{},
		disk:    disk,

		persisted: map[string]int{},
		unsaved:   map[string]*digests{},
	}
}

// matches reports whether e describes the file fi, by its key.
func (e *cacheEntry) matches(fi fs.FileInfo) bool {
	if e.size != fi.Size() || !e.modTime.Equal(fi.ModTime()) {
		return false
	}
	ino, dev, ctime, ok := fileIdent(fi)
	if ok != e.id {
		return false
	}
	return !ok || e.ino == ino && e.dev == dev && e.ctime == ctime
}

// flush writes the digest caches the scans since the last flush changed.
// A failed write is logged (a warning the first time) and otherwise
// ignored: the cache is an optimisation.
func (s *scanner) flush() {
	if s.disk == nil {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	todo := s.unsaved
	s.unsaved = map[string]*digests{}
	s.mu.Unlock()
	for _, key := range slices.Sorted(maps.Keys(todo)) {
		if err := s.disk.save(key, todo[key].all()); err != nil {
			level := slog.LevelDebug
			s.mu.Lock()
			if !s.saveWarn {
				s.saveWarn, level = true, slog.LevelWarn
			}
			s.mu.Unlock()
			s.log.Log(context.Background(), level, "cannot write the digest cache; the next start hashes every file again", "dir", s.disk.dir, "error", err)
		}
	}
}

// scan implements [Hasher.Scan]: a full scan that reads every folder.
func (s *scanner) scan(ctx context.Context, src events.Source) (events.SourceScanned, error) {
	return s.scanWith(ctx, src, nil, nil)
}

// scanKeep scans src for the hasher's Run and keeps what discovery read
// of a local root, and what it made of each skill folder, for the next
// call. With changed nil or whole set it reads every folder again;
// otherwise it reads again only what the absolute changed paths touched
// ([dirCache.invalidate]) and reuses what the last call made of every
// skill folder no change touched (regions.go), which gives the same result
// as a full scan as long as every change since the previous call is in
// changed. Calls for one root must not overlap.
func (s *scanner) scanKeep(ctx context.Context, src events.Source, changed []string, whole bool) (events.SourceScanned, error) {
	if src.Kind == events.SourceBundled {
		return s.scan(ctx, src)
	}
	key := cacheKey(src)
	s.mu.Lock()
	memo := s.memos[key]
	delete(s.memos, key)
	s.mu.Unlock()
	var force map[string]bool
	fresh := memo == nil || whole || changed == nil
	if !fresh {
		var ok bool
		force, ok = memo.dc.invalidate(changed)
		fresh = !ok
	}
	if fresh {
		next := &rootMemo{dc: newDirCache(src.Root)}
		if memo != nil {
			next.regions, next.whole = memo.regions, true
		}
		memo = next
	}
	out, err := s.scanWith(ctx, src, memo, force)
	if err == nil {
		s.mu.Lock()
		s.memos[key] = memo
		s.mu.Unlock()
	}
	return out, err
}

// scanFirst is scanKeep's full scan of a root not scanned before by this
// Run, except that it may leave supporting files unhashed: when at least
// deferMin of them miss the digest cache, it hashes the SKILL.md files
// only (and takes every cache hit) and returns a partial scan, whose
// pending files have an empty Digest, MIME and Text; [scanner.scanRest]
// then completes it. A partial scan keeps nothing a later scan reuses as
// it is: the next scan of the root walks every folder again (from the
// folder cache) and hashes what is still pending.
func (s *scanner) scanFirst(ctx context.Context, src events.Source) (events.SourceScanned, error) {
	if src.Kind == events.SourceBundled {
		return s.scan(ctx, src)
	}
	key := cacheKey(src)
	s.mu.Lock()
	delete(s.memos, key)
	s.mu.Unlock()
	memo := &rootMemo{dc: newDirCache(src.Root)}
	out, err := s.scanOf(ctx, src, memo, nil, modeDefer)
	if err == nil {
		memo.whole = memo.whole || out.Partial
		s.mu.Lock()
		s.memos[key] = memo
		s.mu.Unlock()
	}
	return out, err
}

// scanRest completes the partial scan [scanner.scanFirst] made of src: a
// whole scan through the folder cache that scan filled (a change since is
// rescanned after it, as the watcher reports it), hashing every file the
// digest cache does not hold.
func (s *scanner) scanRest(ctx context.Context, src events.Source) (events.SourceScanned, error) {
	key := cacheKey(src)
	s.mu.Lock()
	memo := s.memos[key]
	delete(s.memos, key)
	s.mu.Unlock()
	if memo == nil {
		memo = &rootMemo{dc: newDirCache(src.Root)}
	}
	memo.whole = true
	out, err := s.scanOf(ctx, src, memo, nil, modeRest)
	if err == nil {
		s.mu.Lock()
		s.memos[key] = memo
		s.mu.Unlock()
	}
	return out, err
}

// scanWith scans src. For a local source, memo (if not nil) holds the file
// system discovery reads through, so that it answers from memory what no
// change touched, and the regions of the scan before, reused where no
// change touched them; scanWith replaces them with this scan's. force
// lists the paths (relative to the root) whose digests are recomputed even
// when size and mtime match, because a watcher saw them written.
func (s *scanner) scanWith(ctx context.Context, src events.Source, memo *rootMemo, force map[string]bool) (events.SourceScanned, error) {
	return s.scanOf(ctx, src, memo, force, modeFull)
}

// scanMode says how a scan hashes.
type scanMode int

const (
	// modeFull hashes every file the digest cache does not hold.
	modeFull scanMode = iota
	// modeDefer may leave supporting files pending ([scanner.scanFirst]).
	modeDefer
	// modeRest is modeFull with half the workers (one at least): the
	// complete scan after a partial one runs while the first initialize
	// and the first requests are answered, and leaves them part of the
	// machine.
	modeRest
)

// scanOf is [scanner.scanWith], hashing as mode says.
func (s *scanner) scanOf(ctx context.Context, src events.Source, memo *rootMemo, force map[string]bool, mode scanMode) (events.SourceScanned, error) {
	out := events.SourceScanned{Source: src}
	start := time.Now() // before any stat: see racySlack
	var dc *dirCache
	if memo != nil {
		dc = memo.dc
	}
	w, rootKey, diag, err := s.newWalker(src, dc)
	if err != nil {
		return out, err
	}
	if w == nil { // nothing to walk
		if diag != nil {
			out.Diagnostics = append(out.Diagnostics, *diag)
		}
		out.ScannedAt = time.Now()
		if memo != nil {
			memo.forget()
		}
		return out, nil
	}
	w.ctx = ctx
	if dc, ok := w.fsys.(*dirCache); ok && mode == modeDefer && len(dc.dirs) == 0 && s.cold(rootKey) {
		defer startReadAhead(ctx, dc).stop()
	}
	rp := walk(ctx, w, memo, mode)
	if rp != nil {
		s.replays.Add(1)
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("scanning source %s: %w", src.Location, err)
	}
	wants, order, over := s.wanted(w)
	var removed []string
	switch {
	case rp != nil:
		removed = rp.staleFiles(memo)
	case w.reused > 0:
		removed = memo.staleFiles()
	}
	part := w.reused > 0 || rp != nil
	h, err := s.hashAll(ctx, w.fsys, rootKey, wants, order, force, start, removed, part, mode)
	if err != nil {
		return out, fmt.Errorf("hashing source %s: %w", src.Location, err)
	}
	out.Partial = len(h.pending) > 0
	m := manifests{w: w, fresh: h.fresh, contents: h.contents, failed: h.failed, pending: h.pending, over: over, reported: map[string]bool{}}
	if rp != nil {
		assembleReplay(&out, w, &m, memo, rp)
	} else {
		assemble(&out, w, &m, memo)
	}
	if len(out.Skills) == 0 && src.Kind != events.SourceBundled {
		out.Diagnostics = append(out.Diagnostics, noSkillDiag(src))
	}
	out.Diagnostics = append(out.Diagnostics, m.diags...)
	out.Hashed = h.hashed
	out.ScannedAt = time.Now()
	return out, nil
}

// walk runs discovery for scanOf: a replay of the walk before when memo
// allows it (replay.go; returned), else a walk of the root that reuses the
// regions of the scan before no change touched.
func walk(ctx context.Context, w *walker, memo *rootMemo, mode scanMode) *replay {
	if memo != nil && mode == modeFull {
		if rp := memo.replayable(); rp != nil {
			w.replay(memo, rp)
			return rp
		}
	}
	if memo != nil && !memo.whole && !memo.followed && memo.regions != nil {
		w.prev, w.changed = memo.regions, memo.dc.changed
		w.pieces = make([]piece, 0, len(w.prev)+8)
	}
	w.discover()
	if w.followed && w.reused > 0 {
		// A link followed may lead into a region taken as it was: walk
		// everything, so that a folder met twice is reported as a full
		// scan reports it.
		*w = walker{ctx: ctx, fsys: w.fsys, display: w.display, rootReal: w.rootReal, resolve: w.resolve, local: w.local, rootName: w.rootName}
		w.discover()
	}
	return nil
}

// newWalker prepares the walk of src and names its digest cache. It
// returns a nil walker when there is nothing to walk: a bundled source
// without skills, a remote source not synced yet (its fetcher reports), or
// a local root that is missing or unusable, with diag its one diagnostic.
// It returns an error for a source kind it does not scan.
func (s *scanner) newWalker(src events.Source, dc *dirCache) (w *walker, rootKey string, diag *events.Diagnostic, err error) {
	w = &walker{}
	switch src.Kind {
	case events.SourceLocal, events.SourceGitHub, events.SourceWellKnown:
		root := src.Root
		if diag, ok := rootProblem(src); !ok {
			return nil, "", diag, nil
		}
		w.display = func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
		if w.rootName = filepath.Base(root); !skill.SegmentSafe(w.rootName) {
			w.rootName = "root"
		}
		w.fsys = os.DirFS(root)
		w.local = true
		w.rootReal = root
		if r, err := filepath.EvalSymlinks(root); err == nil {
			w.rootReal = r
		}
		w.resolve = func(p string) (string, error) { return filepath.EvalSymlinks(w.display(p)) }
		if dc == nil {
			// Even a one-off scan reads each folder once: discovery and the
			// manifest listing both look into every folder of a skill.
			dc = newDirCache(root)
		}
		w.fsys = dc
		w.resolve = dc.resolver(w.resolve)
		return w, "local:" + root, nil, nil
	case events.SourceBundled:
		if s.bundled == nil {
			return nil, "", nil, nil
		}
		w.display = func(p string) string { return p }
		w.fsys = s.bundled
		w.rootReal = "."
		w.resolve = func(p string) (string, error) { return filepath.FromSlash(p), nil }
		return w, bundledKey, nil, nil
	}
	return nil, "", nil, fmt.Errorf("scanning source %s: kind %s is not scanned by this release", src.Location, src.Kind)
}

// noSkillDiag is the warning about a source whose root holds no skill
// folder (issue 13 item 1): it names the source and says what discovery
// looked for, so a mistyped path or a collection in an unexpected layout
// is not served silently as nothing.
func noSkillDiag(src events.Source) events.Diagnostic {
	name := src.Location
	if name != src.Root {
		name += " (" + src.Root + ")"
	}
	return events.Diagnostic{File: src.Root, Level: events.LevelWarn, Unserved: true, Rule: events.RuleNoSkill,
		Message: fmt.Sprintf("no skill found in the source %s: looked for a SKILL.md (or skill.md) in the folder itself and in its folders down to %d levels "+
			"(skills/ and .claude/skills count as the folder itself; hidden folders are searched, version-control and tool folders such as .git and node_modules are not); "+
			"give a skill folder or a folder that holds skill folders", name, maxDiscoveryDepth)}
}

// rootProblem checks the root folder of a local or remote source; ok is
// false when it cannot be walked. This is the only report of a missing or
// unusable root: config.Resolve does not warn about it, so the server logs it
// once and validate lists it. A remote source not synced yet gets no
// diagnostic: its fetcher reports.
func rootProblem(src events.Source) (diag *events.Diagnostic, ok bool) {
	root := src.Root
	fi, err := os.Stat(root)
	if err == nil && fi.IsDir() {
		return nil, true
	}
	if src.Kind != events.SourceLocal && errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	var msg string
	switch {
	case err == nil:
		msg = "skill directory is not a directory: " + root + "; no skills are served from it"
	case errors.Is(err, fs.ErrNotExist):
		msg = "skill directory not found: " + root + "; no skills are served from it"
	default:
		msg = fmt.Sprintf("cannot read skill directory %s: %v; no skills are served from it", root, err)
	}
	return &events.Diagnostic{File: root, Level: events.LevelWarn, Unserved: true, Rule: events.RuleRootUnreadable, Message: msg}, false
}

// hashResult is what [scanner.hashAll] found.
type hashResult struct {
	fresh  map[string]cacheEntry // by path in the scan's file system
	failed map[string]error      // files that could not be read
	// contents holds the bytes of the local SKILL.md files this scan
	// read, by path; a cached entry of a local root holds no bytes.
	contents map[string][]byte
	hashed   int // files read
	// durable counts the entries of fresh that may be persisted, newly
	// those of them that were hashed by this scan.
	durable, newly int
	// pending holds the supporting files left unhashed (a deferred first
	// scan), with their listing; they are in neither fresh nor failed.
	pending map[string]fs.FileInfo
}

// hashJob is the files of one skill folder a worker hashes, opening the
// folder once (dir "" for a file of the bundled source, one per job).
type hashJob struct {
	dir   string
	id    events.FolderID
	paths []string
}

// hashAll describes every wanted file of fsys, in order: from the digest
// cache of rootKey (in memory, else the persistent one) when its key
// matches ([cacheEntry.matches]; and its bytes are there if needed) and
// force does not name it, else by reading it, s.workers skill folders at a
// time. It then replaces the cache of rootKey with the result, and marks
// it for [scanner.flush] when its durable part changed. With part set the
// wanted files are only those of the skill folders walked again: the new
// cache is the old one without the removed files, with the result; it is
// marked for flush only when it gained durable entries (one an edit made
// stale is keyed by what changed, so the file on disk stays true). start
// is when the scan began, before any stat. With mode modeDefer, when at
// least deferMin supporting files miss the cache, they are not read but
// listed in the result's pending (and left out of the new cache). It
// returns an error only when ctx is done.
func (s *scanner) hashAll(ctx context.Context, fsys fs.FS, rootKey string, wants map[string]*want, order []string, force map[string]bool, start time.Time, removed []string, part bool, mode scanMode) (hashResult, error) {
	old := s.entries(rootKey)
	r := hashResult{fresh: make(map[string]cacheEntry, len(order)), failed: map[string]error{}, contents: map[string][]byte{}}
	misses := r.cacheHits(old, rootKey, wants, order, force)
	if mode == modeDefer && !part && rootKey != bundledKey {
		misses = r.deferFiles(wants, misses)
	}
	limit := s.workers
	if mode == modeRest {
		limit = max(1, s.workers/2)
	}
	if err := r.hashJobs(ctx, fsys, rootKey, wants, hashJobsOf(wants, misses), start.Add(-racySlack).UnixNano(), limit); err != nil {
		return r, err
	}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	s.store(rootKey, old, &r, removed, part)
	return r, nil
}

// cacheHits puts into r.fresh every file of order whose cached entry in
// old still matches it (and is not forced), and returns the others.
func (r *hashResult) cacheHits(old *digests, rootKey string, wants map[string]*want, order []string, force map[string]bool) (misses []string) {
	for _, p := range order {
		x := wants[p]
		// A local SKILL.md's bytes are not kept (issue 12): its cached
		// digest is enough, the catalog builder has what it built of them.
		if e, ok := old.get(p); ok && !force[p] && e.matches(x.info) && (!x.need || e.content != nil || rootKey != bundledKey) {
			e.modTime = x.info.ModTime()
			r.fresh[p] = e
			if e.durable && e.content == nil {
				r.durable++
			}
			continue
		}
		misses = append(misses, p)
	}
	return misses
}

// hashJobsOf groups misses into jobs: one per skill folder (opened once),
// and one per file outside any.
func hashJobsOf(wants map[string]*want, misses []string) []*hashJob {
	var jobs []*hashJob
	byDir := map[string]*hashJob{}
	for _, p := range misses {
		x := wants[p]
		if x.dir == "" {
			jobs = append(jobs, &hashJob{paths: []string{p}})
			continue
		}
		j := byDir[x.dir]
		if j == nil {
			j = &hashJob{dir: x.dir, id: x.id}
			byDir[x.dir] = j
			jobs = append(jobs, j)
		}
		j.paths = append(j.paths, p)
	}
	return jobs
}

// hashJobs hashes the files of jobs, at most limit jobs at a time, into r;
// racy is the modification time (Unix nanoseconds) from which an entry is
// not durable. It returns an error only when ctx is done.
func (r *hashResult) hashJobs(ctx context.Context, fsys fs.FS, rootKey string, wants map[string]*want, jobs []*hashJob, racy int64, limit int) error {
	var mu sync.Mutex // guards r
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for _, j := range jobs {
		g.Go(func() error {
			var root *os.Root
			var rootErr error
			if j.dir != "" {
				if root, rootErr = skill.OpenDir(j.dir, j.id); rootErr == nil {
					defer root.Close()
				}
			}
			for _, p := range j.paths {
				if err := gctx.Err(); err != nil {
					return err
				}
				ce, err := cacheEntry{}, rootErr
				if err == nil {
					ce, err = hashWanted(fsys, root, p, wants[p], racy)
				}
				mu.Lock()
				r.record(rootKey, p, ce, err)
				mu.Unlock()
			}
			return nil
		})
	}
	return g.Wait()
}

// record notes in r the outcome of hashing the file p.
func (r *hashResult) record(rootKey, p string, ce cacheEntry, err error) {
	if err != nil {
		r.failed[p] = err
		return
	}
	if ce.content != nil && rootKey != bundledKey {
		// Carried by this scan only, never kept in the cache.
		r.contents[p], ce.content = ce.content, nil
	}
	r.hashed++
	if ce.durable && ce.content == nil {
		r.durable++
		r.newly++
	}
	r.fresh[p] = ce
}

// store replaces the cache of rootKey with r's result (with part, old
// without removed plus r's entries) and marks it for [scanner.flush] when
// its durable part changed.
func (s *scanner) store(rootKey string, old *digests, r *hashResult, removed []string, part bool) {
	next := &digests{base: r.fresh, durable: r.durable}
	if part {
		next = old.with(removed, r.fresh)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache[rootKey] = next
	if s.disk != nil && rootKey != bundledKey {
		if n, ok := s.persisted[rootKey]; r.newly > 0 || !part && (!ok || n != r.durable) {
			s.persisted[rootKey] = next.durable
			s.unsaved[rootKey] = next
		}
	}
}

// deferFiles moves the supporting files of misses to r.pending when there
// are at least deferMin of them, and returns the misses left to hash.
func (r *hashResult) deferFiles(wants map[string]*want, misses []string) []string {
	n := 0
	for _, p := range misses {
		if !wants[p].need {
			n++
		}
	}
	if n < deferMin || n == 0 {
		return misses
	}
	r.pending = make(map[string]fs.FileInfo, n)
	return slices.DeleteFunc(misses, func(p string) bool {
		if x := wants[p]; !x.need {
			r.pending[p] = x.info
			return true
		}
		return false
	})
}

// entries returns the digest cache of rootKey: the last scan's, else (on
// a root's first scan) what the persistent cache holds for it.
func (s *scanner) entries(rootKey string) *digests {
	s.mu.Lock()
	old, ok := s.cache[rootKey]
	s.mu.Unlock()
	if ok || s.disk == nil || rootKey == bundledKey {
		return old
	}
	m := s.disk.load(rootKey)
	if m == nil {
		return nil
	}
	s.mu.Lock()
	s.persisted[rootKey] = len(m)
	s.mu.Unlock()
	return &digests{base: m, durable: len(m)}
}

// cold reports whether the digest cache holds nothing for rootKey, in
// memory or on disk: the first scan of a first start, whose walk the
// initialize waits for (issue 12). A warm start's first walk revalidates a
// catalog already served, beside the first requests: it is left to one
// core.
func (s *scanner) cold(rootKey string) bool {
	s.mu.Lock()
	_, ok := s.cache[rootKey]
	s.mu.Unlock()
	if ok {
		return false
	}
	if s.disk == nil {
		return true
	}
	_, err := os.Stat(filepath.Join(s.disk.dir, s.disk.fileName(rootKey)))
	return errors.Is(err, fs.ErrNotExist)
}

// want is one file a scan describes.
type want struct {
	info fs.FileInfo // from the folder listing
	need bool        // its bytes are kept (a SKILL.md)
	max  int64       // size cap
	// dir is the real skill folder it is read from, with its identity, and
	// rel its path there; dir is empty for the bundled source, whose files
	// are read through the scan's file system.
	dir string
	id  events.FolderID
	rel string
}

// overCap holds the diagnostics of the files left out for their size, by
// path in the scan's file system: md for a SKILL.md (the skill is
// skipped), file for a supporting file (left out of the manifest).
type overCap struct {
	md, file map[string]events.Diagnostic
}

// wanted lists every file the skills of w describe, once, in walk order,
// with whether its bytes are needed, leaving out (with a diagnostic) every
// file over its cap before anything is read: a skill whose SKILL.md is
// over the cap contributes no file.
func (s *scanner) wanted(w *walker) (map[string]*want, []string, overCap) {
	wants := map[string]*want{}
	over := overCap{md: map[string]events.Diagnostic{}, file: map[string]events.Diagnostic{}}
	var order []string
	add := func(sk *foundSkill, f foundFile, rel string, need bool) bool {
		limit, o := s.maxFile, over.file
		if need {
			limit, o = s.maxMD, over.md
		}
		if f.info.Size() > limit {
			o[f.path] = overCapDiag(w.display(f.path), f.info, limit, need)
			return false
		}
		if x, ok := wants[f.path]; ok {
			x.need = x.need || need
			x.max = max(x.max, limit)
			return true
		}
		wants[f.path] = &want{info: f.info, need: need, max: limit, dir: sk.real, id: sk.id, rel: rel}
		order = append(order, f.path)
		return true
	}
	for i := range w.skills {
		sk := &w.skills[i]
		if !add(sk, sk.md, path.Base(sk.md.path), true) {
			continue
		}
		for _, f := range sk.files {
			add(sk, f, f.rel, false)
		}
	}
	return wants, order, over
}

// overCapDiag is the one finding about a file over its size cap.
func overCapDiag(file string, fi fs.FileInfo, max int64, skillMD bool) events.Diagnostic {
	version := fmt.Sprintf("%d@%d", fi.Size(), fi.ModTime().UnixNano())
	if skillMD {
		return events.Diagnostic{File: file, Level: events.LevelError, Version: version, Rule: events.RuleOverCap,
			Message: fmt.Sprintf("skipped %s: it is %s, over the %s cap for SKILL.md (MAX_SKILL_MD_MB); the skill is not served and the file is not read", file, mebibytes(fi.Size()), mebibytes(max))}
	}
	return events.Diagnostic{File: file, Level: events.LevelWarn, Unserved: true, Version: version, Rule: events.RuleOverCap,
		Message: fmt.Sprintf("%s: %s, over the %s cap for a supporting file (MAX_FILE_SIZE_MB); left out of the manifest, not served and not read", file, mebibytes(fi.Size()), mebibytes(max))}
}

// mebibytes formats n bytes for a person: "256.00 MiB", or "1001 bytes"
// below one MiB.
func mebibytes(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

// manifests turns the skills of one scan into [events.ScannedSkill]s,
// collecting the diagnostics of the files left out, each once.
type manifests struct {
	w        *walker
	fresh    map[string]cacheEntry
	contents map[string][]byte
	failed   map[string]error
	pending  map[string]fs.FileInfo // supporting files not hashed yet
	over     overCap
	reported map[string]bool
	diags    []events.Diagnostic
}

// report adds d unless a finding about p was already added.
func (m *manifests) report(p string, d events.Diagnostic) {
	if !m.reported[p] {
		m.reported[p] = true
		m.diags = append(m.diags, d)
	}
}

// skill returns the scanned skill sk, or false when it is skipped.
func (m *manifests) skill(sk foundSkill) (events.ScannedSkill, bool) {
	mdFile := m.w.display(sk.md.path)
	if d, ok := m.over.md[sk.md.path]; ok {
		m.report(sk.md.path, d)
		return events.ScannedSkill{}, false
	}
	if err := m.failed[sk.md.path]; err != nil {
		m.report(sk.md.path, events.Diagnostic{File: mdFile, Level: events.LevelError, Rule: events.RuleUnreadable,
			Message: fmt.Sprintf("skipped %s: cannot read it: %v", mdFile, err)})
		return events.ScannedSkill{}, false
	}
	md := m.fresh[sk.md.path]
	first := events.File{Path: "SKILL.md", Digest: md.digest, Size: md.size, ModTime: md.modTime, MIME: md.mime, Text: md.text}
	if base := path.Base(sk.md.path); base != "SKILL.md" {
		first.DiskName = base
	}
	content := md.content
	if content == nil {
		content = m.contents[sk.md.path]
	}
	ss := events.ScannedSkill{Dir: m.w.display(sk.dir), RelDir: sk.rel, RealDir: sk.real, DirID: sk.id,
		SkillMD: content, Files: []events.File{first}}
	for _, f := range sk.files {
		if d, ok := m.over.file[f.path]; ok {
			m.report(f.path, d)
			continue
		}
		if err := m.failed[f.path]; err != nil {
			file := m.w.display(f.path)
			m.report(f.path, events.Diagnostic{File: file, Level: events.LevelWarn, Unserved: true, Rule: events.RuleUnreadable,
				Message: fmt.Sprintf("cannot read %s: %v; left out of the manifest", file, err)})
			continue
		}
		if fi, ok := m.pending[f.path]; ok {
			// Pending (a partial scan): no digest, MIME type or text flag.
			ss.Files = append(ss.Files, events.File{Path: f.rel, Size: fi.Size(), ModTime: fi.ModTime()})
			continue
		}
		e := m.fresh[f.path]
		ss.Files = append(ss.Files, events.File{Path: f.rel, Digest: e.digest, Size: e.size, ModTime: e.modTime, MIME: e.mime, Text: e.text})
	}
	return ss, true
}

// anyFailed reports whether a file of sk could not be read.
func (m *manifests) anyFailed(sk foundSkill) bool {
	if len(m.failed) == 0 {
		return false
	}
	if m.failed[sk.md.path] != nil {
		return true
	}
	for _, f := range sk.files {
		if m.failed[f.path] != nil {
			return true
		}
	}
	return false
}

// errGrew reports a file that grew over its cap while it was read.
var errGrew = errors.New("grew over the size cap while it was read")

// hashWanted reads the file x at p and returns its digest and size, and
// its bytes when x.need is set. A local file is opened below root, its
// skill folder opened by its real path ([skill.OpenDir]: only while that
// folder is the one discovery found), and only when no component of its
// path is a symbolic link ([skill.OpenFile]): a file reached through a
// link is never hashed. A bundled file (root nil) is read through fsys. At
// most x.max bytes are read. The entry is keyed by the listing's
// FileInfo, and durable when the file opened is the one listed and its
// change time is before racy (ns).
func hashWanted(fsys fs.FS, root *os.Root, p string, x *want, racy int64) (cacheEntry, error) {
	var f io.ReadCloser
	var fi fs.FileInfo
	if root == nil {
		bf, err := fsys.Open(p)
		if err != nil {
			return cacheEntry{}, fmt.Errorf("opening %s: %w", p, err)
		}
		f = bf
	} else {
		of, ofi, err := skill.OpenFile(root, x.rel)
		if err != nil {
			return cacheEntry{}, err
		}
		if ofi.Size() > x.max {
			of.Close()
			return cacheEntry{}, fmt.Errorf("reading %s: %w (%s, cap %s)", p, errGrew, mebibytes(ofi.Size()), mebibytes(x.max))
		}
		f, fi = of, ofi
	}
	defer f.Close()
	e, err := digest(f, p, x.need, x.max, x.info.Size())
	if err != nil {
		return e, err
	}
	e.modTime = x.info.ModTime()
	e.ino, e.dev, e.ctime, e.id = fileIdent(x.info)
	if e.id && fi != nil && e.size == x.info.Size() && e.ctime < racy {
		ino, dev, ctime, ok := fileIdent(fi)
		e.durable = ok && ino == e.ino && dev == e.dev && ctime == e.ctime &&
			fi.Size() == e.size && fi.ModTime().Equal(e.modTime)
	}
	return e, nil
}

// copyBufs are the read buffers of [digest], reused across files.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// hashers are SHA-256 states reused across files.
var hashers = sync.Pool{New: func() any { return sha256.New() }}

// digest reads r (the file at p) to its end, or to max bytes, and returns
// its digest and size, its MIME type and text flag (decided from the same
// bytes, so the facade never reads the file to tell them), and its bytes
// when keep is set. hint is the size the listing gave.
func digest(r io.Reader, p string, keep bool, max, hint int64) (cacheEntry, error) {
	var e cacheEntry
	h := hashers.Get().(hash.Hash)
	defer hashers.Put(h)
	h.Reset()
	c := skill.NewContent(p)
	var err error
	if keep {
		e.content, err = readUpTo(r, max, hint)
		h.Write(e.content)
		c.Write(e.content)
		e.size = int64(len(e.content))
	} else {
		bp := copyBufs.Get().(*[]byte)
		defer copyBufs.Put(bp)
		buf := *bp
		for e.size <= max {
			n, rerr := r.Read(buf)
			if n > 0 {
				e.size += int64(n)
				h.Write(buf[:n])
				c.Write(buf[:n])
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				err = rerr
				break
			}
		}
	}
	if err != nil {
		return cacheEntry{}, fmt.Errorf("reading %s: %w", p, err)
	}
	if e.size > max {
		return cacheEntry{}, fmt.Errorf("reading %s: %w (cap %s)", p, errGrew, mebibytes(max))
	}
	var sum [sha256.Size]byte
	var text [len("sha256:") + 2*sha256.Size]byte
	copy(text[:], "sha256:")
	hex.Encode(text[len("sha256:"):], h.Sum(sum[:0]))
	e.digest = string(text[:])
	e.mime, e.text = c.MIME(), c.Text()
	return e, nil
}

// readUpTo reads r to its end, or to just over limit bytes, into one
// buffer sized for hint bytes (grown if the file grew).
func readUpTo(r io.Reader, limit, hint int64) ([]byte, error) {
	buf := make([]byte, 0, min(max(hint, 0), limit)+1)
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), int(limit)+1)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// walker is the state of one discovery pass over a source's file system.
type walker struct {
	ctx     context.Context
	fsys    fs.FS
	display func(fsPath string) string
	// rootReal is the root's path with symbolic links resolved; resolve
	// gives the same for a followed link. Together they key entered.
	rootReal string
	resolve  func(fsPath string) (string, error)
	// local is set for a source on disk, whose skill folders are identified
	// ([skill.Identify]) and read by their real path.
	local bool
	// rootName is the name of the source's root folder, the RelDir of the
	// root when it is a skill folder itself ("" for the bundled source).
	rootName string
	// collapsed holds the container folders (.claude/skills, skills) that
	// are walked as roots of their own, so the walk of the root skips them.
	collapsed map[string]bool

	skills []foundSkill
	warned map[string]bool
	// entered maps the real path of every folder discovery has read to its
	// path in the walk's file system, so that no folder is walked twice,
	// whatever links say.
	entered map[string]string
	diags   []events.Diagnostic

	// prev holds the regions of the scan before, by folder, when this walk
	// may reuse those no change touched (see regions.go); changed tells
	// whether one was.
	prev    map[string]*region
	changed func(fsPath string) bool
	// pieces are the regions of this walk in order; reused counts those
	// taken from prev, reusedSkills their skills; key is a buffer for
	// looking them up.
	pieces       []piece
	reused       int
	reusedSkills int
	key          []byte
	// followed is set once the walk follows a symbolic link.
	followed bool
}

type foundSkill struct {
	dir   string // path in fsys
	rel   string // RelDir
	real  string // the folder's real path; "" for the bundled source
	id    events.FolderID
	md    foundFile
	files []foundFile
}

type foundFile struct {
	path string // path in fsys
	rel  string // path relative to the skill folder
	info fs.FileInfo
}

// discover walks the root, then the collapsed container roots .claude/skills
// and skills, collecting skill folders in walk order. A collapsed root that
// is, or sits under, a symbolic link is a linked container: not followed.
// A root that holds a SKILL.md is a skill folder itself (issue 13 item 1):
// it is served as that skill, with its folder name as RelDir, so that its
// skill path is the one it has in its parent folder, and nested skills
// are found below it; nothing is collapsed.
func (w *walker) discover() {
	w.warned = map[string]bool{}
	w.entered = map[string]string{}
	w.collapsed = map[string]bool{skill.ClaudeSkillsDir: true}
	if w.rootName != "" {
		if ents, err := fs.ReadDir(w.fsys, "."); err == nil && skill.FindMD(ents) != nil {
			w.visit(".", w.rootName, w.rootReal, 0, false)
			return
		}
	}
	var roots []string
	for _, r := range skill.Containers() {
		if r == skill.ClaudeSkillsDir && w.isLink(path.Dir(skill.ClaudeSkillsDir)) {
			w.warnLink(path.Dir(skill.ClaudeSkillsDir), "it is a linked folder, not a skill folder")
			continue
		}
		if w.isLink(r) {
			if r == skill.ClaudeSkillsDir {
				w.warnLink(r, "it is a linked container folder, not a skill folder")
			}
			continue // a linked skills/ is a direct child of the root: visit judges it
		}
		fi, err := fs.Stat(w.fsys, r)
		if err != nil || !fi.IsDir() {
			continue
		}
		if ents, err := fs.ReadDir(w.fsys, r); err == nil && r == skill.SkillsDir && skill.FindMD(ents) != nil {
			continue // a skill named "skills", not a container
		}
		roots = append(roots, r)
		w.collapsed[r] = true
	}
	w.visit(".", "", w.rootReal, 0, false)
	for _, r := range roots {
		w.visit(r, "", filepath.Join(w.rootReal, filepath.FromSlash(r)), 0, false)
	}
}

// isLink reports whether the entry at p is a symbolic link.
func (w *walker) isLink(p string) bool {
	fi, err := fs.Lstat(w.fsys, p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// warnLink reports a symbolic link discovery does not follow, once.
func (w *walker) warnLink(p, why string) {
	d := w.display(p)
	w.warn(d, events.RuleLinkNotFollowed, fmt.Sprintf("symbolic link not followed: %s: %s; only a link to a skill folder placed directly in a source root is followed", d, why))
}

func (w *walker) warn(file, rule, msg string) {
	w.report(events.Diagnostic{File: file, Level: events.LevelWarn, Rule: rule, Message: msg})
}

// report adds d once per file and message.
func (w *walker) report(d events.Diagnostic) {
	if w.warned[d.File+"\x00"+d.Message] {
		return
	}
	w.warned[d.File+"\x00"+d.Message] = true
	w.diags = append(w.diags, d)
}

// visit looks at one folder: records it when it holds a SKILL.md (below the
// root, or the root itself when rel is set), then descends into its
// subfolders: outside a skill into every folder but version-control and
// tool folders, hidden ones included (issue 13 item 2); inside a skill
// into none that is hidden ([skill.Descend]). real is the folder's path with
// links resolved; a folder already entered is not walked again (link
// cycles, two links to one folder). A symbolic link is followed only when it
// is a direct child of a root (depth 0) and points to a skill folder, one
// holding a SKILL.md or skill.md itself; linked containers and links further
// down are not followed (BR-15, DESIGN "never let lenience weaken
// containment"), and inside a skill folder links are skipped silently.
func (w *walker) visit(dir, rel, real string, depth int, inSkill bool) {
	if w.ctx.Err() != nil {
		return
	}
	if first, ok := w.entered[real]; ok {
		w.warn(w.display(dir), events.RuleFolderTwice, fmt.Sprintf("%s is the same folder as %s, already scanned; skipped", w.display(dir), w.display(first)))
		return
	}
	w.entered[real] = dir
	ents, err := fs.ReadDir(w.fsys, dir)
	if err != nil {
		w.warn(w.display(dir), events.RuleUnreadable, fmt.Sprintf("cannot read folder %s: %v", w.display(dir), err))
		return
	}
	if depth > 0 || rel != "" {
		if md := skill.FindMD(ents); md != nil {
			if inSkill {
				w.addSkill(dir, rel, real, md)
			} else {
				end := w.openRegion(dir, rel, depth)
				ok := w.addSkill(dir, rel, real, md)
				defer end(ok)
			}
			inSkill = true
		} else if n := skill.MisnamedMD(ents); n != "" {
			w.undiscovered(path.Join(dir, n), inSkill, "ASF-R22", "it is not named SKILL.md or skill.md, in this exact casing")
		}
	}
	for _, e := range ents {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue // a loose file: nothing to discover
		}
		name := e.Name()
		if !inSkill && e.IsDir() && w.reuse(dir, rel, name, depth+1) {
			continue // a skill folder no change touched, as it was
		}
		p := path.Join(dir, name)
		if w.collapsed[p] {
			continue
		}
		if !skill.Descend(name, inSkill) {
			if e.IsDir() {
				w.hint(p, name)
			}
			continue
		}
		isDir := e.IsDir()
		childReal := filepath.Join(real, name)
		if e.Type()&fs.ModeSymlink != 0 {
			if inSkill {
				continue
			}
			target, ok := w.followable(p, depth)
			if !ok {
				continue
			}
			isDir, childReal = true, target
		}
		if !isDir {
			continue
		}
		if depth+1 > maxDiscoveryDepth {
			w.tooDeep(p, depth+1, inSkill)
			continue
		}
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		w.visit(p, childRel, childReal, depth+1, inSkill)
	}
}

// followable decides about the symbolic link p found depth folders below a
// root, outside any skill folder, and warns once when it is not followed.
// It returns the link's resolved target when it is followed. A link to a
// file is ignored silently, like any loose file.
func (w *walker) followable(p string, depth int) (target string, ok bool) {
	fi, err := fs.Stat(w.fsys, p)
	if err != nil {
		w.warn(w.display(p), events.RuleBrokenLink, fmt.Sprintf("broken symbolic link ignored: %s: %v", w.display(p), err))
		return "", false
	}
	if !fi.IsDir() {
		return "", false
	}
	if depth > 0 {
		w.warnLink(p, "it is not directly in a source root")
		return "", false
	}
	ents, err := fs.ReadDir(w.fsys, p)
	if err != nil {
		w.warn(w.display(p), events.RuleUnreadable, fmt.Sprintf("cannot read folder %s: %v", w.display(p), err))
		return "", false
	}
	if skill.FindMD(ents) == nil {
		w.warnLink(p, "its target holds no SKILL.md, so it is a linked container, not a skill folder")
		return "", false
	}
	target, err = w.resolve(p)
	if err != nil {
		w.warn(w.display(p), events.RuleBrokenLink, fmt.Sprintf("broken symbolic link ignored: %s: %v", w.display(p), err))
		return "", false
	}
	if rel, err := filepath.Rel(target, w.rootReal); err == nil && filepath.IsLocal(rel) {
		// A skill folder holding the source itself would serve the source
		// again below it: a cycle.
		w.warnLink(p, "its target is the source root or a folder above it")
		return "", false
	}
	w.followed = true
	return target, true
}

// addSkill records the skill folder dir, whose real path is real, and lists
// its manifest. Two folders with one RelDir (x and skills/x) are both kept:
// which one is served is the catalog builder's call, made on names and
// URIs once the frontmatter is read, so that a broken one never hides a
// good one. A local skill folder is identified here, once: every later
// read opens real and checks it is still this folder (issue 10 F2). It
// reports whether it recorded the skill.
func (w *walker) addSkill(dir, rel, real string, md fs.DirEntry) bool {
	mdPath := path.Join(dir, md.Name())
	info, err := md.Info()
	if err != nil {
		w.warn(w.display(mdPath), events.RuleUnreadable, fmt.Sprintf("cannot read %s: %v", w.display(mdPath), err))
		return false
	}
	sk := foundSkill{dir: dir, rel: rel, md: foundFile{path: mdPath, rel: "SKILL.md", info: info}}
	if w.local {
		id, err := w.identify(dir, real)
		if err != nil {
			w.warn(w.display(dir), events.RuleChangedInScan, fmt.Sprintf("skill folder %s changed while it was scanned (%v); skipped until the next scan", w.display(dir), err))
			return false
		}
		sk.real, sk.id = real, id
	}
	w.list(dir, "", 0, md.Name(), &sk.files)
	w.skills = append(w.skills, sk)
	return true
}

// identify returns the identity of the skill folder dir (a path in the
// walk's file system) whose real path is real. When real is dir under the
// root's real path (no link in between) the Lstat comes through the walk's
// file system, which a rescan answers from memory for a folder no change
// touched ([dirCache]); otherwise real is stat'ed.
func (w *walker) identify(dir, real string) (events.FolderID, error) {
	if !underRoot(real, w.rootReal, dir) {
		return skill.Identify(real)
	}
	fi, err := fs.Lstat(w.fsys, dir)
	if err != nil {
		return events.FolderID{}, err
	}
	if si, ok := fi.(*statInfo); ok && si.IsDir() {
		// What skill.IdentifyInfo reads of a system stat, which a
		// remembered one no longer holds: the same numbers on every
		// platform that gives fileIdent.
		return events.FolderID{Dev: si.id.dev, Ino: si.id.ino}, nil
	}
	return skill.IdentifyInfo(fi, real)
}

// underRoot reports whether real is filepath.Join(rootReal, dir) for the
// slash path dir, without building that path.
func underRoot(real, rootReal, dir string) bool {
	if dir == "." {
		return real == rootReal
	}
	n := len(rootReal)
	return len(real) == n+1+len(dir) && strings.HasPrefix(real, rootReal) &&
		os.IsPathSeparator(real[n]) && filepath.ToSlash(real[n+1:]) == dir
}

// list appends the regular files below dir in walk order, skipping hidden
// names, node_modules, symbolic links and the skill's own SKILL.md
// (SEP2640-R25, BR-18, BR-20).
func (w *walker) list(dir, sub string, depth int, mdName string, out *[]foundFile) {
	ents, err := fs.ReadDir(w.fsys, dir)
	if err != nil {
		w.warn(w.display(dir), events.RuleUnreadable, fmt.Sprintf("cannot read folder %s: %v", w.display(dir), err))
		return
	}
	for _, e := range ents {
		name := e.Name()
		if skill.Excluded(name) {
			continue
		}
		p := path.Join(dir, name)
		if e.Type()&fs.ModeSymlink != 0 {
			// Never served, even when it stays inside the skill (issue 13
			// item 10: say so).
			f := w.display(p)
			w.report(events.Diagnostic{File: f, Level: events.LevelWarn, Unserved: true, Rule: "SEP2640-R59",
				Message: fmt.Sprintf("%s is a symbolic link inside a skill; links are never served, even when they stay inside the skill: copy the file in to serve it", f)})
			continue
		}
		rel := name
		if sub != "" {
			rel = sub + "/" + name
		}
		switch {
		case e.IsDir():
			if depth+1 <= maxManifestDepth {
				w.list(p, rel, depth+1, mdName, out)
			}
		case e.Type().IsRegular():
			if depth == 0 && name == mdName {
				continue
			}
			info, err := e.Info()
			if err != nil {
				w.warn(w.display(p), events.RuleUnreadable, fmt.Sprintf("cannot read %s: %v; left out of the manifest", w.display(p), err))
				continue
			}
			*out = append(*out, foundFile{path: p, rel: rel, info: info})
		}
	}
}

// tooDeep reports the SKILL.md files in folder p, depth folders below the
// root and so past maxDiscoveryDepth, and in its subfolders down to
// maxManifestDepth (issue 13 item 10). Hidden folders, node_modules and
// links are not entered.
func (w *walker) tooDeep(p string, depth int, inSkill bool) {
	ents, err := fs.ReadDir(w.fsys, p)
	if err != nil {
		return
	}
	name := skill.MisnamedMD(ents)
	if md := skill.FindMD(ents); md != nil {
		name = md.Name()
	}
	if name != "" {
		w.undiscovered(path.Join(p, name), inSkill, events.RuleTooDeep, fmt.Sprintf("its folder is %d levels below the source root, past the discovery depth of %d", depth, maxDiscoveryDepth))
		if !inSkill {
			return
		}
	}
	if depth >= maxManifestDepth {
		return
	}
	for _, e := range ents {
		if e.IsDir() && skill.Descend(e.Name(), inSkill) {
			w.tooDeep(path.Join(p, e.Name()), depth+1, inSkill)
		}
	}
}

// undiscovered reports the SKILL.md-like file f that discovery does not
// take for a skill, and why: inside a skill it is a note, as it is served
// as a file of that skill; elsewhere the skill is not served (issue 13
// item 10).
func (w *walker) undiscovered(f string, inSkill bool, rule, why string) {
	d := w.display(f)
	if inSkill {
		parent := "the skill that holds it"
		for i := len(w.skills) - 1; i >= 0; i-- {
			if dir := w.skills[i].dir; dir == "." || strings.HasPrefix(f, dir+"/") {
				parent = "the skill in " + w.display(dir)
				break
			}
		}
		w.report(events.Diagnostic{File: d, Level: events.LevelNote, Rule: rule,
			Message: fmt.Sprintf("%s is not a skill of its own: %s; served as a file of %s", d, why, parent)})
		return
	}
	w.report(events.Diagnostic{File: d, Level: events.LevelWarn, Unserved: true, Rule: rule,
		Message: fmt.Sprintf("%s is not served as a skill: %s", d, why)})
}

// hint warns about SKILL.md files directly inside a folder discovery does
// not descend into (or in its immediate subfolders, for a hidden folder
// inside a skill), which are not served.
func (w *walker) hint(p, name string) {
	check := func(dir string) {
		ents, err := fs.ReadDir(w.fsys, dir)
		if err != nil {
			return
		}
		if md := skill.FindMD(ents); md != nil {
			f := w.display(path.Join(dir, md.Name()))
			w.warn(f, events.RuleSkippedFolder, fmt.Sprintf("%s is inside %s, which is not scanned for skills (version-control and tool folders such as .git, .github and node_modules are skipped, and so are hidden folders inside a skill); move it to serve it", f, name))
		}
	}
	check(p)
	if skill.Noisy(name) {
		return
	}
	ents, err := fs.ReadDir(w.fsys, p)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() {
			check(path.Join(p, e.Name()))
		}
	}
}
