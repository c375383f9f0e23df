// Package watch is the actor that watches every local source root
// (DESIGN "watcher") and publishes debounced files.changed events, plus a
// periodic rescan. On Linux it uses inotify directly (inotify_linux.go),
// elsewhere github.com/rjeczalik/notify (notify_other.go); it is the only
// package that watches files.
package watch

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// DefaultDebounce is how long the watcher waits after the last file event of
// a burst before it publishes one [events.FilesChanged] for the root: the
// reference server's 500 ms, long enough for an editor's save (write temp,
// rename, chmod) or a `git checkout` to settle into one rescan, short enough
// that a person does not notice the wait.
const DefaultDebounce = 500 * time.Millisecond

// DefaultReconcile is the period of the watcher's safety-net rescan of every
// watched root: [config.DefaultReconcile] (60 s), the settings table's,
// which says why.
const DefaultReconcile = config.DefaultReconcile

// watchBuffer is the capacity of each registration's channel. The file
// system watcher never blocks on a full channel, it drops the event; 4096 events hold a `git checkout` of a
// few thousand files while the drain goroutine, which does nothing but
// append to a slice, catches up. A channel seen full also triggers a rescan.
const watchBuffer = 4096

// burstCap bounds how long a continuous burst can postpone its
// [events.FilesChanged]: at most burstCap debounce intervals after its first
// event, so a process that writes without pause (a build, a log) cannot
// starve the hasher.
const burstCap = 10

// maxPaths bounds how many paths one window of a root collects (a big folder
// moved in, a `git checkout`). Beyond it, the window is published as a
// rescan of the root: one walk by the hasher beats a huge path list.
const maxPaths = 10000

// Inboxes are the subscriptions a [Watcher] reads.
type Inboxes struct {
	// Configured carries sources.configured. Required.
	Configured <-chan *message.Message
	// Catalogs, if set, carries catalog.changed: the roots of the first
	// configuration are watched only once the first catalog arrives (at
	// most holdMax after that configuration), so that the watches' walk of
	// every folder does not compete with the first scan on the way to the
	// first initialize (issue 12). The first catalog's message is acked
	// once they are watched. Unless that catalog is the one persisted by an
	// earlier process (its scans predate the hold: the hasher revalidates
	// it after it is served), or when none came in time, each root watched
	// then gets a rescan, which covers what changed between the scan and
	// the watch. Nil: roots are watched as each configuration is handled.
	Catalogs <-chan *message.Message
}

// Options configure a [Watcher]. A nil *Options means defaults.
type Options struct {
	// Debounce is how long after the last event of a burst the changes of a
	// root are published. If zero, defaults to [DefaultDebounce].
	Debounce time.Duration
	// Reconcile is the period of a rescan ([events.FilesChanged] with Rescan)
	// of every watched root that exists, a safety net for dropped events; the
	// same tick installs watches on roots that appeared and replaces those
	// of roots that vanished or were replaced unnoticed. If zero, defaults to
	// [DefaultReconcile]; if negative, there is no periodic rescan.
	Reconcile time.Duration
	// Logger receives the watcher's log lines. If nil, they are discarded.
	Logger *slog.Logger
}

// Watcher is the actor that watches the roots of local sources
// (DESIGN "watcher") and publishes what changed below each root as
// debounced [events.FilesChanged] events. On Linux each Run has an inotify
// instance of its own (inotify_linux.go); elsewhere it uses
// github.com/rjeczalik/notify, whose watch tree is process-global
// (notify_other.go). Either way each root gets a channel of its own, so
// several Watchers in one process never stop each other's watches.
// The watcher covers the gaps of inotify, which is not recursive: files
// created in a new folder before it is watched are found by walking the
// folder when its create event arrives and again when the window is
// published (BR-28); a full channel, a kernel queue overflow or the periodic
// reconcile tick cause a rescan of the root; a root that does not exist
// yet, or whose folders vanish, is watched through its nearest existing
// ancestor, and watched again as soon as it exists (without waiting for the
// reconcile tick). A watch is where a symbolic link points, not on the link,
// so the folder holding a link on the way to a root (the root itself
// included) is watched too, and the watch follows the link when it is
// pointed elsewhere. For the same reason the target of a link to
// a skill folder placed in a root, its skills/ or its .claude/skills (the
// links the hasher follows) is watched too and reported under the link's
// path.
// Paths under .git and node_modules are dropped; everything else is reported
// and the hasher decides what is served.
type Watcher struct {
	in        <-chan *message.Message
	catalogs  <-chan *message.Message
	pub       message.Publisher
	debounce  time.Duration
	reconcile time.Duration
	log       *slog.Logger
}

// New returns a watcher reading [events.SourcesConfigured] messages from
// in and publishing [events.FilesChanged] through pub. It panics if the
// inbox or pub is nil. opts is copied; nil means defaults. Nothing is
// watched before [Watcher.Run] handles a configuration.
func New(in Inboxes, pub message.Publisher, opts *Options) *Watcher {
	if in.Configured == nil || pub == nil {
		panic("watch.New: nil inbox or publisher")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Reconcile == 0 {
		o.Reconcile = DefaultReconcile
	}
	return &Watcher{
		in:        in.Configured,
		catalogs:  in.Catalogs,
		pub:       pub,
		debounce:  o.Debounce,
		reconcile: o.Reconcile,
		log:       o.Logger,
	}
}

// Run watches until ctx is done or the inbox is closed, then returns nil. It
// must be called once.
//
// Each sources.configured message is decoded and handled before it is
// acked (exactly once, never nacked, through [events.Handle]): when its Seq
// is above the last one handled, the watches are set to the roots of its
// local sources (other kinds are ignored), so once the message is acked,
// later changes under those roots are seen — but for the first
// configuration with [Inboxes.Catalogs], whose roots are watched once the
// first catalog.changed message is handled. A root whose source is kept
// keeps its watch and pending changes.
//
// Changes are published, per root, [Options.Debounce] after the last
// event of a burst (at most 10 intervals after its first), as one
// [events.FilesChanged] with increasing Seq, the ConfigSeq of the
// configuration and sorted, de-duplicated absolute Paths (a new folder's
// contents included). Rescan is set instead of Paths when the root appeared,
// vanished or was replaced, when events may have been lost (a full channel,
// over 10,000 paths in one window), and on every reconcile tick for each
// root that exists (a missing root has nothing to rescan). Run publishes
// itself, in order; on [events.Bus] a publish never waits for a consumer.
// The drain goroutines only queue file events, so even a publisher that
// blocks would not make the file system watcher drop events.
//
// On return every watch of this watcher has been dropped (nothing is sent
// on its channels after that) and every goroutine Run started has ended;
// every FilesChanged was handed to the publisher. On Linux that costs one
// close of the inotify instance, whatever the number of watched folders.
func (w *Watcher) Run(ctx context.Context) error {
	r := &watchRun{
		w:     w,
		fs:    newFSWatcher(),
		roots: map[rootKey]*rootWatch{},
		wake:  make(chan struct{}, 1),
	}
	defer func() {
		// STYLE §8: stop the watches first (no sends after that), then end
		// the loops, then wait. Closing the file system watcher drops all
		// watches at once: no per-root stop at exit.
		r.fs.close()
		for _, rw := range r.roots {
			if rw.reg != nil {
				close(rw.reg.done)
			}
		}
		r.wg.Wait()
	}()

	var tick <-chan time.Time
	if w.reconcile > 0 {
		t := time.NewTicker(w.reconcile)
		defer t.Stop()
		tick = t.C
	}
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	catalogs := w.catalogs
	// Every scan this process makes ends after this instant, also one that
	// ended before the first configuration reached this loop (the hasher
	// gets it at the same time): a catalog scanned since was built here.
	r.holding, r.holdStart = catalogs != nil, time.Now()
	var held <-chan time.Time // holdMax after the first configuration held

	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-w.in:
			if !ok {
				return nil
			}
			events.Handle(w.log, msg, func(m *message.Message) error {
				cfg, err := events.Decode[events.SourcesConfigured](m)
				if err != nil {
					return err
				}
				r.configure(cfg)
				return nil
			})
			if r.holding && held == nil {
				held = time.After(holdMax)
			}
		case msg, ok := <-catalogs:
			if !ok {
				catalogs = nil
				r.release(true)
				continue
			}
			events.Handle(w.log, msg, func(m *message.Message) error {
				if !r.holding {
					return nil
				}
				ev, err := events.Decode[events.CatalogChanged](m)
				r.release(err != nil || ev.Catalog == nil || scannedSince(ev.Catalog, r.holdStart))
				return err
			})
		case <-held:
			held = nil
			r.release(true)
		case <-r.wake:
			r.absorb()
		case <-debounce.C:
		case <-tick:
			r.reconcileTick()
		}
		if next, ok := r.flushDue(time.Now()); ok {
			debounce.Reset(time.Until(next))
		} else {
			debounce.Stop()
		}
	}
}

// rootKey identifies a watched root: a source keeps its watch across
// configurations while its ID and root stay the same.
type rootKey struct{ id, root string }

// watchRun is the state of one [Watcher.Run]; only the Run goroutine touches
// it, except for the fields marked otherwise.
type watchRun struct {
	w      *Watcher
	fs     *fsWatcher
	wg     sync.WaitGroup // drain goroutines
	cfgSeq uint64
	seq    uint64 // of the last FilesChanged
	roots  map[rootKey]*rootWatch
	// holding is set while the roots wait for the first catalog
	// ([Inboxes.Catalogs]); holdStart is when Run began: a catalog built
	// from a scan made since was built here, not persisted before.
	holding   bool
	holdStart time.Time

	// wake says that drain goroutines queued raw events.
	wake chan struct{}
	mu   sync.Mutex
	raw  []rawEvent // guarded by mu; appended by drain goroutines
}

// rawEvent is one file event as a drain goroutine hands it to Run.
type rawEvent struct {
	reg  *registration
	path string
	ev   op
	// full says the channel was full when the event was read (events may
	// have been dropped), or the kernel's event queue overflowed.
	full bool
}

// registration is one channel of a root in the file system watcher, from
// the first watch to its stop, with the goroutine that drains it.
type registration struct {
	fs   *fsWatcher
	ch   chan fsEvent
	done chan struct{} // closed after the stop: ends the drain goroutine
	// watched is the path watched: the root (recursively) or, while the root
	// does not exist, its nearest existing ancestor (not recursively).
	watched   string
	recursive bool
	// real is watched with symbolic links resolved, as events report paths.
	real string
	// info identifies the watched folder, to notice one replaced.
	info os.FileInfo
	// links maps a linked skill folder (a symbolic link the hasher follows)
	// to its resolved target, watched recursively on the same channel.
	// Only Run touches it.
	links map[string]string
	// pathLinks holds the symbolic links on the way to watched (resolved
	// folder, link name), whose folders are watched on the same channel:
	// an event naming one means the link may point elsewhere now. Only Run
	// touches it.
	pathLinks map[string]bool
}

// rootWatch is one watched root and its pending changes.
type rootWatch struct {
	src    events.Source
	cfgSeq uint64
	root   string // src.Root, absolute and clean
	reg    *registration
	failed bool // the last watch of the root failed; logged once

	// The pending window. first is zero when nothing is pending.
	paths       map[string]struct{}
	created     []createdDir // folders created in the window, walked again at flush
	rescan      bool
	first, last time.Time
}

// configure applies a configuration newer than the last one handled.
func (r *watchRun) configure(cfg events.SourcesConfigured) {
	if cfg.Seq <= r.cfgSeq {
		return
	}
	r.cfgSeq = cfg.Seq
	keep := map[rootKey]bool{}
	for _, src := range cfg.Sources {
		// Remote sources' cache folders are watched too: another process
		// sharing the cache, or a person, may change them (our own swaps
		// give a redundant, cheap rescan).
		if src.Kind == events.SourceBundled || src.Root == "" {
			continue
		}
		root, err := filepath.Abs(src.Root)
		if err != nil {
			r.w.log.Warn("cannot watch skill directory", "root", src.Root, "error", err)
			continue
		}
		k := rootKey{src.ID, root}
		if keep[k] {
			continue
		}
		keep[k] = true
		rw, ok := r.roots[k]
		if !ok {
			rw = &rootWatch{root: root, paths: map[string]struct{}{}}
			r.roots[k] = rw
		}
		rw.src, rw.cfgSeq = src, cfg.Seq
		if !ok && !r.holding {
			r.establish(rw)
		}
	}
	for k, rw := range r.roots {
		if !keep[k] {
			rw.unwatch()
			delete(r.roots, k)
		}
	}
}

// holdMax bounds how long the first configuration's roots wait for the
// first catalog before they are watched ([Inboxes.Catalogs]).
const holdMax = 5 * time.Second

// scannedSince reports whether c was built from a scan made at or after
// t, or may have been (a pending catalog, or one that does not say): not
// a catalog persisted by an earlier process and served before any scan.
func scannedSince(c *events.Catalog, t time.Time) bool {
	if c.Pending || c.Scanned == nil {
		return true
	}
	for _, at := range c.Scanned {
		if !at.Before(t) {
			return true
		}
	}
	return false
}

// release ends the hold of [Inboxes.Catalogs]: it watches every root held,
// with a rescan of each when rescan is set (what changed before the watch
// was in place would be missed otherwise).
func (r *watchRun) release(rescan bool) {
	if !r.holding {
		return
	}
	r.holding = false
	now := time.Now()
	for _, rw := range r.roots {
		if rw.reg != nil {
			continue
		}
		r.establish(rw)
		if rescan && rw.reg != nil && rw.reg.recursive {
			rw.rescan = true
			rw.touch(now)
		}
	}
}

// maxEstablish bounds the rounds of [watchRun.establish]: each round
// installs a watch or finds the current one right, so only folders that
// keep appearing and vanishing while it looks can use them all up.
const maxEstablish = 64

// establish makes the watch of rw match the disk: a recursive watch of the
// root when it is a folder, otherwise a watch of its nearest existing
// ancestor that can be watched (one that cannot, say for its permissions,
// is climbed over). Either way the folders holding the symbolic links on
// the way are watched too (see watchPathLinks). A watch already on the
// right folder is kept; a root or ancestor replaced by another folder, or
// reached through a link that now points elsewhere, is watched anew.
// Folders appear and vanish while a watch is installed (`rm -rf` of a
// parent, `mkdir -p` of the root), so after each installation it looks
// again, until the watch matches the disk. It reports whether the root is
// watched recursively and whether the watch changed.
func (r *watchRun) establish(rw *rootWatch) (recursive, changed bool) {
	log := r.w.log
	var above string // an existing ancestor that cannot be watched: look above it
	for range maxEstablish {
		fi, err := os.Stat(rw.root)
		if err == nil && fi.IsDir() {
			real, err := filepath.EvalSymlinks(rw.root)
			if err != nil {
				continue // changed while looking
			}
			if reg := rw.reg; reg != nil && reg.recursive && reg.real == real && os.SameFile(fi, reg.info) {
				return true, changed
			}
			changed = true
			rw.unwatch()
			reg := r.newRegistration(rw.root, true, real, fi)
			err = r.fs.watch(reg, rw.root, true, opAll)
			if err == nil {
				rw.failed = false
				r.start(rw, reg)
				r.watchLinks(rw)
				r.watchPathLinks(rw, rw.root)
				log.Debug("watching root", "root", rw.root, "target", real)
				continue // the root may have been replaced meanwhile: look again
			}
			r.fs.stop(reg)
			if errors.Is(err, fs.ErrNotExist) {
				continue // the root, or a folder in it, vanished meanwhile
			}
			// A folder below the root that cannot be read fails the whole
			// recursive watch.
			if !rw.failed {
				log.Warn("cannot watch skill directory; "+r.fallback(), "root", rw.root, "error", err)
			}
			rw.failed = true
			return false, changed
		}

		from := rw.root
		if above != "" {
			from = above
		}
		anc, ainfo := nearestDir(from)
		if anc == "" {
			changed = changed || rw.reg != nil
			rw.unwatch()
			if !rw.failed {
				log.Warn("cannot watch any parent of a missing skill directory; "+r.fallback(), "root", rw.root)
			}
			rw.failed = true
			return false, changed
		}
		real, err := filepath.EvalSymlinks(anc)
		if err != nil {
			continue
		}
		if reg := rw.reg; reg != nil && !reg.recursive && reg.watched == anc && reg.real == real && os.SameFile(ainfo, reg.info) {
			return false, changed
		}
		changed = true
		rw.unwatch()
		reg := r.newRegistration(anc, false, real, ainfo)
		if err := r.fs.watch(reg, anc, false, opCreate|opRename|opRemove); err != nil {
			r.fs.stop(reg)
			if !errors.Is(err, fs.ErrNotExist) {
				// It exists but cannot be watched: watch a folder above it.
				log.Debug("cannot watch parent of missing root; climbing", "root", rw.root, "parent", anc, "error", err)
				above = anc
			}
			// Otherwise it vanished meanwhile (a folder of the same name and
			// even inode number may be there again): look again.
			continue
		}
		rw.failed = false
		r.start(rw, reg)
		r.watchPathLinks(rw, anc)
		log.Debug("watching parent of missing root", "root", rw.root, "parent", anc)
		// A folder on the way to the root may have appeared, or anc vanished,
		// while the watch was installed: look again.
	}
	return rw.reg != nil && rw.reg.recursive, changed
}

// fallback says, for a log line, what becomes of changes nothing watches.
func (r *watchRun) fallback() string {
	if r.w.reconcile > 0 {
		return "changes are picked up by the periodic rescan"
	}
	return "changes are missed (the periodic rescan is disabled)"
}

func (r *watchRun) newRegistration(watched string, recursive bool, real string, info os.FileInfo) *registration {
	return &registration{
		fs:        r.fs,
		ch:        make(chan fsEvent, watchBuffer),
		done:      make(chan struct{}),
		watched:   watched,
		recursive: recursive,
		real:      real,
		info:      info,
		links:     map[string]string{},
		pathLinks: map[string]bool{},
	}
}

// watchPathLinks watches, on the channel of rw's registration and not
// recursively, the folder that holds each symbolic link on the way to dir
// (dir itself included), so that a link replaced or pointing elsewhere is
// noticed: watches are where links point, not on the links. Links directly
// in the file system root (/tmp, /var on some systems) are system layout
// and left out; a watch of / is costly where notify emulates it.
func (r *watchRun) watchPathLinks(rw *rootWatch, dir string) {
	reg := rw.reg
	for p := dir; ; p = filepath.Dir(p) {
		parent := filepath.Dir(p)
		if parent == p || filepath.Dir(parent) == parent {
			return
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		real, err := filepath.EvalSymlinks(parent)
		if err == nil {
			err = r.fs.watch(reg, parent, false, opCreate|opRename|opRemove)
		}
		if err != nil {
			r.w.log.Warn("cannot watch the folder of a symbolic link to a skill directory; "+r.fallback(),
				"root", rw.root, "link", p, "error", err)
			continue
		}
		reg.pathLinks[filepath.Join(real, filepath.Base(p))] = true
	}
}

// linkContainers returns the folders, relative to a root, whose symbolic
// links to skill folders the hasher follows (DESIGN: D/skills and
// D/.claude/skills count as D itself).
func linkContainers() []string {
	out := []string{""}
	for _, c := range skill.Containers() {
		out = append(out, filepath.FromSlash(c))
	}
	return out
}

// watchLinks adds a recursive watch of the target of every symbolic link to
// a skill folder in a link container of rw's root: recursive watches do not
// follow links, but the hasher serves linked skill folders (BR-15).
func (r *watchRun) watchLinks(rw *rootWatch) {
	for _, c := range linkContainers() {
		dir := filepath.Join(rw.root, c)
		if c != "" && !isRealDir(rw.root, c) {
			continue // a linked container is not followed by the hasher
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				r.watchLink(rw, filepath.Join(dir, e.Name()))
			}
		}
	}
}

// isRealDir reports whether every folder of rel below root is a folder, not
// a symbolic link.
func isRealDir(root, rel string) bool {
	p := root
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// watchLink watches the target of link when it is a skill folder and not
// watched yet.
func (r *watchRun) watchLink(rw *rootWatch, link string) {
	reg := rw.reg
	if reg == nil || !reg.recursive || skippedPath(rw.root, link) {
		return
	}
	target, err := filepath.EvalSymlinks(link)
	if err != nil || reg.links[link] == target || !skill.HoldsMD(target) {
		return
	}
	if err := r.fs.watch(reg, target, true, opAll); err != nil {
		r.w.log.Warn("cannot watch linked skill folder; changes are picked up by the periodic rescan",
			"link", link, "target", target, "error", err)
		return
	}
	reg.links[link] = target
}

// start makes reg the registration of rw and starts its drain goroutine.
func (r *watchRun) start(rw *rootWatch, reg *registration) {
	rw.reg = reg
	r.wg.Go(func() { r.drain(reg) })
}

// unwatch stops the watch of rw, if any, and ends its drain goroutine.
// Nothing is sent on the channel once the stop returned.
func (rw *rootWatch) unwatch() {
	if rw.reg == nil {
		return
	}
	rw.reg.fs.stop(rw.reg)
	close(rw.reg.done)
	rw.reg = nil
}

// nearestDir returns the nearest existing folder above p and its info, or
// "".
func nearestDir(p string) (string, os.FileInfo) {
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return "", nil
		}
		p = parent
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p, fi
		}
	}
}

// drain moves events from reg's channel to the run's queue as fast as it
// can, so that the file system watcher does not drop them, and wakes Run. It does nothing
// else: no I/O, no publishing.
func (r *watchRun) drain(reg *registration) {
	var batch []rawEvent
	for {
		select {
		case <-reg.done:
			return
		case ei := <-reg.ch:
			// The channel held cap-1 more events: it was full, and the file
			// system watcher drops what does not fit.
			full := len(reg.ch) >= cap(reg.ch)-1 || ei.overflow
			batch = append(batch[:0], rawEvent{reg: reg, path: ei.path, ev: ei.op, full: full})
		more:
			for len(batch) < watchBuffer {
				select {
				case ei := <-reg.ch:
					batch = append(batch, rawEvent{reg: reg, path: ei.path, ev: ei.op, full: ei.overflow})
				default:
					break more
				}
			}
			r.mu.Lock()
			r.raw = append(r.raw, batch...)
			r.mu.Unlock()
			select {
			case r.wake <- struct{}{}:
			default:
			}
		}
	}
}

// absorb takes the queued raw events into the pending windows of their
// roots.
func (r *watchRun) absorb() {
	r.mu.Lock()
	raw := r.raw
	r.raw = nil
	r.mu.Unlock()
	byReg := map[*registration]*rootWatch{}
	for _, rw := range r.roots {
		if rw.reg != nil {
			byReg[rw.reg] = rw
		}
	}
	now := time.Now()
	for _, e := range raw {
		rw := byReg[e.reg]
		if rw == nil || rw.reg != e.reg {
			continue // from a registration stopped since
		}
		if e.full {
			r.w.log.Debug("watch channel full; rescanning root", "root", rw.root)
			rw.rescan = true
			rw.touch(now)
		}
		if e.path == "" {
			continue // an overflow: the rescan is set
		}
		if e.path == e.reg.real && e.ev&(opRemove|opRename) != 0 {
			// The watched folder itself was removed or moved away: its watch
			// is dead even if a new folder gets its name (and inode number).
			rw.unwatch()
		}
		if !e.reg.recursive {
			// Something changed in the ancestor of a missing root, or the
			// ancestor itself vanished: watch the deepest folder on the way
			// to the root that exists now, or the root.
			if rec, changed := r.establish(rw); rec && changed {
				r.w.log.Debug("root appeared", "root", rw.root)
				rw.rescan = true
				rw.touch(now)
			}
			byReg[rw.reg] = rw
			continue
		}
		if e.reg.pathLinks[e.path] {
			// A symbolic link on the way to the root was replaced, removed
			// or created: follow it if it points elsewhere now.
			if _, changed := r.establish(rw); changed {
				r.w.log.Debug("root link changed", "root", rw.root)
				rw.rescan = true
				rw.touch(now)
			}
			byReg[rw.reg] = rw
			continue
		}
		p, ok := display(e.reg, rw.root, e.path)
		if !ok {
			continue
		}
		if p == rw.root {
			// The root itself was removed or moved away (or replaced).
			if e.ev&(opRemove|opRename) != 0 {
				r.w.log.Debug("root vanished or moved", "root", rw.root)
				r.establish(rw)
				byReg[rw.reg] = rw
				rw.rescan = true
				rw.touch(now)
			}
			continue
		}
		if skippedPath(rw.root, p) {
			continue
		}
		rw.add(p)
		rw.touch(now)
		if e.ev&opCreate != 0 {
			// A new folder is watched only after its create event; what
			// was created in it before is never reported (BR-28), nor are
			// the files of a folder moved in. List them now, and again at
			// flush, when the folder is surely watched.
			if fi, err := os.Lstat(p); err == nil {
				switch {
				case fi.IsDir():
					rw.created = append(rw.created, createdDir{p, now})
					r.walk(rw, p)
				case fi.Mode()&fs.ModeSymlink != 0:
					r.linkCreated(rw, p)
				}
			}
		}
	}
}

// createdDir is a folder whose create event was seen at at.
type createdDir struct {
	path string
	at   time.Time
}

// display maps a path the file system watcher reported (symbolic links resolved) to the path
// under root as configured.
func display(reg *registration, root, p string) (string, bool) {
	switch {
	case p == reg.real:
		return root, true
	case strings.HasPrefix(p, reg.real+string(filepath.Separator)):
		return root + p[len(reg.real):], true
	case p == root || strings.HasPrefix(p, root+string(filepath.Separator)):
		return p, true
	}
	for link, target := range reg.links {
		if p == target || strings.HasPrefix(p, target+string(filepath.Separator)) {
			return link + p[len(target):], true
		}
	}
	return "", false
}

// relDir returns the folder of p relative to root ("" for root itself).
func relDir(root, p string) string {
	d := filepath.Dir(p)
	if d == root {
		return ""
	}
	return strings.TrimPrefix(d, root+string(filepath.Separator))
}

// skippedPath reports whether p, below root, is inside a .git or
// node_modules folder, never served and often busy.
func skippedPath(root, p string) bool {
	rel := strings.TrimPrefix(p, root+string(filepath.Separator))
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		if skill.Noisy(seg) {
			return true
		}
	}
	return false
}

func (rw *rootWatch) touch(now time.Time) {
	if rw.first.IsZero() {
		rw.first = now
	}
	rw.last = now
}

// add adds p to the pending window; past maxPaths the window becomes a
// rescan and stops collecting paths.
func (rw *rootWatch) add(p string) {
	if rw.rescan {
		return
	}
	rw.paths[p] = struct{}{}
	if len(rw.paths) > maxPaths {
		rw.rescan = true
		clear(rw.paths)
	}
}

// walk adds every path below dir (itself included) to the pending window of
// rw, and watches the links to skill folders it finds in link containers.
func (r *watchRun) walk(rw *rootWatch, dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if rw.rescan {
			return filepath.SkipAll
		}
		if err != nil {
			return nil // vanished or unreadable: the hasher sees it too
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Type()&fs.ModeSymlink != 0 {
			r.linkCreated(rw, p)
		}
		rw.add(p)
		return nil
	})
}

// linkCreated watches the target of a new symbolic link when it sits in a
// link container of rw's root.
func (r *watchRun) linkCreated(rw *rootWatch, link string) {
	if slices.Contains(linkContainers(), relDir(rw.root, link)) {
		r.watchLink(rw, link)
	}
}

// flushDue publishes the windows that are due at now and returns when the
// next one is due.
func (r *watchRun) flushDue(now time.Time) (next time.Time, ok bool) {
	for _, rw := range r.roots {
		if rw.first.IsZero() {
			continue
		}
		due := rw.last.Add(r.w.debounce)
		if c := rw.first.Add(burstCap * r.w.debounce); c.Before(due) {
			due = c
		}
		if !due.After(now) {
			r.flush(rw)
			continue
		}
		if !ok || due.Before(next) {
			next, ok = due, true
		}
	}
	return next, ok
}

// flush publishes the pending window of rw and empties it.
// Folders created less than a debounce interval ago (a burst cut by
// burstCap) may not be watched yet: they are walked again in the
// next window.
func (r *watchRun) flush(rw *rootWatch) {
	now := time.Now()
	var carry []createdDir
	for _, dir := range rw.created {
		r.walk(rw, dir.path)
		if now.Sub(dir.at) < r.w.debounce {
			carry = append(carry, dir)
		}
	}
	ev := events.FilesChanged{ConfigSeq: rw.cfgSeq, Source: rw.src, Rescan: rw.rescan}
	if !rw.rescan {
		ev.Paths = make([]string, 0, len(rw.paths))
		for p := range rw.paths {
			ev.Paths = append(ev.Paths, p)
		}
		slices.Sort(ev.Paths)
	}
	rw.paths = map[string]struct{}{}
	rw.created = carry
	rw.rescan = false
	rw.first, rw.last = time.Time{}, time.Time{}
	if len(carry) > 0 {
		rw.touch(now)
	}
	if !ev.Rescan && len(ev.Paths) == 0 {
		return
	}
	r.seq++
	ev.Seq = r.seq
	if err := events.Publish(r.w.pub, ev); err != nil {
		r.w.log.Error("publishing files changed", "root", ev.Source.Root, "error", err)
	}
}

// reconcileTick repairs watches that events could not (a root that appeared
// or vanished unnoticed, a watch that failed) and publishes a rescan of
// every root that exists.
func (r *watchRun) reconcileTick() {
	for _, rw := range r.roots {
		r.establish(rw)
		if rw.reg != nil && rw.reg.recursive {
			r.watchLinks(rw)
		}
		if fi, err := os.Stat(rw.root); err == nil && fi.IsDir() {
			// A missing root gets no rescan: there is nothing to scan, and
			// the hasher would report it missing again.
			rw.rescan = true
			r.flush(rw)
		}
	}
}
