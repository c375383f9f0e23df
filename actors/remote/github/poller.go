// Package github is the GitHub poller: the actor ([New]) that keeps the
// cache folders of GitHub sources at the commit their ref points at and
// announces each new commit with an [events.SourceSynced]. Its cache
// plumbing is actors/remote's; its configuration is actors/config's
// [config.GitHub]. (The GitHub REST client itself is fetch's
// [fetch.GitHub].)
package github

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
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

const (
	// ghProgressMin is the download size above which progress lines are
	// logged: smaller tarballs arrive in about a second on any link that
	// can use GitHub at all, so a line would be noise (issue 6: "a download
	// larger than a few MB").
	ghProgressMin = 4 << 20
	// ghProgressEvery spaces progress lines: at most one a second (issue 6).
	ghProgressEvery = time.Second
	// ghMaxEntries caps the entries of one tarball. A whole repository is
	// extracted even when only a subpath is served, so the archive
	// package's default (10,000, sized for one skill) would refuse
	// ordinary monorepos; the unpacked byte cap stays the real bound.
	ghMaxEntries = 200_000
)

// Inboxes are the subscriptions a [Poller] reads.
type Inboxes struct {
	// Configured carries sources.configured. Required.
	Configured <-chan *message.Message
	// SyncRequested carries sync.requested ([events.SyncRequested]), which
	// makes Run check the matching GitHub sources at once. If nil, sources
	// are checked at start and at every poll only.
	SyncRequested <-chan *message.Message
}

// Options configure a [Poller]. A nil *Options means defaults (which poll
// nothing useful: Config.CacheDir comes from [config.Resolve]).
type Options struct {
	// Config is the GitHub configuration of this start ([config.Config]):
	// token, API URL, poll interval (0: no polling), size caps (0: the
	// defaults of [config.DefaultGitHubMaxTarballBytes] and
	// [config.DefaultGitHubMaxUnpackedBytes]).
	Config config.GitHub
	// HTTPClient sends the API and download requests; nil means a client
	// with a 30 s timeout per API request and 5 min per tarball (see
	// [fetch.GitHubOptions]).
	HTTPClient *http.Client
	// Logger receives the poller's lines; nil discards. No line ever holds
	// the token.
	Logger *slog.Logger
}

// Poller is the actor keeping GitHub sources' cache folders in sync
// (DESIGN "github poller", reference §4, issue 6). For each repository of
// the current configuration's GitHub sources (several subpaths of one
// repository at one ref share one clone folder, one check and one download,
// and each gets its [events.SourceSynced]; issue 13 item 2) it asks the REST API which commit the ref points
// at (GET /repos/{owner}/{repo}/commits/{ref} with If-None-Match), and when
// that commit is not the cached one it downloads the commit's tarball,
// extracts it safely into a staging folder and swaps it in as
// <Config.CacheDir>/<owner>/<repo> (the source's Root minus its subpath).
//
// The cache folder of a repository holds, beside <repo>:
//   - .<repo>.sync.json, the sync metadata (ref, commit SHA, ETag, whether
//     the ref is pinned, fetch time), written atomically after each swap
//     and read when a source starts, so a restart with an unchanged commit
//     downloads nothing;
//   - transient .download-<repo>~*, .staging-<repo>~* and .trash-<repo>~*
//     entries during a sync ('~' cannot occur in a repository name, so the
//     names of two repositories never collide); ones older than an hour,
//     left by a crash, are removed at the start of a check (folders only
//     when they hold the marker, files only when they are regular files).
//
// Every write, rename and removal goes through an [os.Root] on the owner
// folder, and only in folders that are the poller's: the owner folder and
// the clone folder hold the [cacheMarker] file (written when the poller
// creates them; a folder an earlier version cached is adopted by its sync
// metadata; an empty one is adopted as it holds nothing). A link, a file
// or a foreign folder in their place — a checkout of the same name under
// a SKILLJACK_CACHE_DIR that is a source tree — is refused with an error
// naming it, and never swapped or removed.
type Poller struct {
	in    <-chan *message.Message
	syncs <-chan *message.Message
	pub   message.Publisher
	opts  Options
	log   *slog.Logger

	syncSeq, failSeq atomic.Uint64

	mu sync.Mutex
	// swapped maps a clone folder to the ConfigSeq of the worker that last
	// swapped it, so a worker of a newer configuration can tell whether an
	// older one changed the folder after the hasher's configuration scan.
	swapped map[string]uint64
}

// New returns a poller reading [events.SourcesConfigured] and
// [events.SyncRequested] from in and publishing [events.SourceSynced] /
// [events.SourceFailed] through pub. It panics if in.Configured or pub is
// nil. opts is copied.
func New(in Inboxes, pub message.Publisher, opts *Options) *Poller {
	if in.Configured == nil || pub == nil {
		panic("github.New: nil inbox or publisher")
	}
	p := &Poller{in: in.Configured, syncs: in.SyncRequested, pub: pub, swapped: map[string]uint64{}}
	if opts != nil {
		p.opts = *opts
	}
	p.log = p.opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// Run runs the poller until ctx is done, then returns nil once every check
// it started has stopped (a check in flight is cancelled; a half-made
// staging folder is removed, the cached copy is left as it was).
//
// Each sources.configured message is acked at once. The newest
// configuration (highest Seq) wins: its GitHub sources replace the previous
// set, whose checks are cancelled, and each new source starts only once the
// previous set has stopped, so two checks of one repository never overlap.
// Every source is checked once at once in the background (startup never
// waits for GitHub: the hasher serves the cached copy meanwhile), then
// every Config.PollInterval (0, or a Static configuration: never again
// unless an [events.SyncRequested] asks). A ref that is a full commit SHA or a
// tag is pinned: once its commit is cached it is never checked again. A
// check that finds a new commit publishes one [events.SourceSynced]
// (Rescan set, Revision the commit SHA); a check that finds nothing new
// publishes nothing; a failed check keeps the last good copy, logs one
// line naming the repository and publishes one [events.SourceFailed]. A
// 403/429 with Retry-After or X-RateLimit-Reset delays the next check of
// that source until then.
func (p *Poller) Run(ctx context.Context) error {
	runCtx, stopAll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stopAll()
		wg.Wait()
	}()
	var (
		cfgSeq    uint64
		cancelGen = func() {}
		prevDone  = closedChan()
		workers   []*ghWorker
	)
	in, syncs := p.in, p.syncs
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-syncs:
			if !ok {
				syncs = nil
				continue
			}
			if ev, ok := events.Receive[events.SyncRequested](p.log, msg); ok {
				wakeWorkers(workers, ev.SourceID)
			}
		case msg, ok := <-in:
			if !ok {
				in = nil // keep polling the current sources until ctx is done
				continue
			}
			ev, ok := events.Receive[events.SourcesConfigured](p.log, msg)
			if !ok || ev.Seq <= cfgSeq {
				continue
			}
			cfgSeq = ev.Seq
			cancelGen()
			genCtx, cancel := context.WithCancel(runCtx)
			cancelGen = cancel
			workers = workers[:0:0]
			var gen sync.WaitGroup
			byClone := map[string]*ghWorker{}
			for _, src := range ev.Sources {
				if src.Kind != events.SourceGitHub {
					continue
				}
				w, err := p.newWorker(ev, src)
				if err != nil {
					p.log.Error("GitHub source not synced: "+err.Error(), "source", src.Location)
					continue
				}
				// Several subpaths of one repository share its clone folder:
				// one worker, one download, a SourceSynced for each.
				if first := byClone[w.clone]; first != nil {
					if first.spec.Ref != w.spec.Ref {
						p.log.Error("GitHub source not synced: its repository is already synced at another ref", "source", src.Location)
						continue
					}
					first.srcs = append(first.srcs, src)
					continue
				}
				byClone[w.clone] = w
				workers = append(workers, w)
			}
			for _, w := range workers {
				after := prevDone
				gen.Go(func() { w.run(genCtx, after) })
			}
			done := make(chan struct{})
			wg.Go(func() {
				gen.Wait()
				close(done)
			})
			prevDone = done
		}
	}
}

// wakeWorkers asks the worker of source id (every worker when id is
// empty) for a check at once. It never blocks: requests coalesce, one made
// while a check runs gives one more check after it. A worker that is
// pinned and cached, or under a rate limit until its reset time, ignores
// the request ([ghWorker.wait]).
func wakeWorkers(workers []*ghWorker, id string) {
	for _, w := range workers {
		if id != "" && !slices.ContainsFunc(w.srcs, func(s events.Source) bool { return s.ID == id }) {
			continue
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// ghSyncMeta is the sync metadata of one cached repository
// (.<repo>.sync.json beside the clone folder).
type ghSyncMeta struct {
	// Ref is the ref as configured ("" for the default branch).
	Ref string `json:"ref"`
	// SHA is the commit whose tarball is in the clone folder.
	SHA string `json:"sha"`
	// ETag is the ETag of GET .../commits/{Ref}, sent as If-None-Match.
	ETag string `json:"etag,omitempty"`
	// Pinned is true when Ref is a tag or a full commit SHA.
	Pinned bool `json:"pinned,omitempty"`
	// FetchedAt is when the tarball was swapped in.
	FetchedAt time.Time `json:"fetched_at"`
	// Stamp is [treeStamp] of the clone folder as the swap left it; a
	// clone that no longer matches is downloaded again.
	Stamp string `json:"stamp,omitempty"`
}

// ghWorker checks one GitHub repository of one configuration, for the
// sources that serve its subpaths. Only its run goroutine touches its
// fields once it runs.
type ghWorker struct {
	p   *Poller
	log *slog.Logger
	// srcs are the sources of the repository, in configuration order: one
	// or more subpaths at one ref, sharing the clone folder.
	srcs     []events.Source
	cfgSeq   uint64
	static   bool
	spec     events.GitHubRepo
	name     string // "owner/repo" for log lines and errors
	ownerDir string
	clone    string // <ownerDir>/<repo>
	metaPath string
	gh       *fetch.GitHub
	wake     chan struct{}

	meta ghSyncMeta
	// defaultBranch is the repository's default branch when Ref is "",
	// asked once per worker.
	defaultBranch string
	tagChecked    bool
	pinned        bool
	done          bool      // pinned and cached: never checked again
	notBefore     time.Time // rate limit: no check before
	// warned holds the leftovers already reported as left alone, so each
	// is logged once, not at every poll.
	warned map[string]bool

	// download progress, written by the Progress callback on run's goroutine
	downloading bool
	dlLast      time.Time
	dlLogged    bool
}

// newWorker prepares the worker of src, a GitHub source of cfg.
func (p *Poller) newWorker(cfg events.SourcesConfigured, src events.Source) (*ghWorker, error) {
	if src.GitHub.Owner == "" || src.GitHub.Repo == "" {
		return nil, fmt.Errorf("GitHub source %s: the configuration carries no parsed repository", src.Location)
	}
	spec := src.GitHub
	clone := src.Root
	if spec.Subpath != "" {
		sub := string(filepath.Separator) + filepath.FromSlash(spec.Subpath)
		if !strings.HasSuffix(clone, sub) {
			return nil, fmt.Errorf("GitHub source %s: root %s does not end in its subpath %s", src.Location, src.Root, spec.Subpath)
		}
		clone = strings.TrimSuffix(clone, sub)
	}
	if clone == "" || filepath.Base(clone) != spec.Repo {
		return nil, fmt.Errorf("GitHub source %s: root %s is not a clone folder of %s/%s", src.Location, src.Root, spec.Owner, spec.Repo)
	}
	w := &ghWorker{
		p:        p,
		srcs:     []events.Source{src},
		cfgSeq:   cfg.Seq,
		static:   cfg.Static,
		spec:     spec,
		name:     spec.Owner + "/" + spec.Repo,
		ownerDir: filepath.Dir(clone),
		clone:    clone,
		metaPath: filepath.Join(filepath.Dir(clone), "."+spec.Repo+".sync.json"),
		wake:     make(chan struct{}, 1),
		warned:   map[string]bool{},
	}
	w.log = p.log.With("repo", w.name)
	c := p.opts.Config
	w.gh = fetch.NewGitHub(&fetch.GitHubOptions{
		APIURL: c.APIURL,
		Token:  c.Token,
		Fetch: fetch.Options{
			HTTPClient: p.opts.HTTPClient,
			MaxBytes:   c.MaxTarballBytes,
			Progress:   w.progress,
			Logger:     w.log,
		},
	})
	return w, nil
}

// run checks the source at once (after the previous configuration's
// workers, after, have stopped), then whenever the poll interval passes or
// a sync request arrives, until ctx is done.
func (w *ghWorker) run(ctx context.Context, after <-chan struct{}) {
	select {
	case <-after:
	case <-ctx.Done():
		return
	}
	w.meta = w.readMeta()
	// An older configuration's worker may have swapped the folder after
	// the hasher scanned it for this configuration: have it rescanned.
	w.p.mu.Lock()
	seq, ok := w.p.swapped[w.clone]
	w.p.mu.Unlock()
	if sha := w.cachedSHA(); ok && seq != w.cfgSeq && sha != "" {
		w.publishSynced(sha)
	}
	for {
		next := w.check(ctx)
		if ctx.Err() != nil {
			return
		}
		if !w.wait(ctx, next) {
			return
		}
	}
}

// wait blocks until next (never when zero) or a sync request the worker heeds;
// it returns false when ctx is done.
func (w *ghWorker) wait(ctx context.Context, next time.Time) bool {
	var timer <-chan time.Time
	if !next.IsZero() {
		t := time.NewTimer(time.Until(next))
		defer t.Stop()
		timer = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer:
			return true
		case <-w.wake:
			if w.done {
				continue
			}
			if time.Now().Before(w.notBefore) {
				w.log.Info("GitHub sync request ignored: rate limited", "retry_at", w.notBefore.UTC().Format(time.RFC3339))
				continue
			}
			return true
		}
	}
}

// check runs one check and returns when the next one is due (zero: only on
// a sync request, or never when done).
func (w *ghWorker) check(ctx context.Context) time.Time {
	err := w.sync(ctx)
	if ctx.Err() != nil {
		return time.Time{}
	}
	now := time.Now()
	var next time.Time
	if !w.done && !w.static && w.p.opts.Config.PollInterval > 0 {
		next = now.Add(w.p.opts.Config.PollInterval)
	}
	if err == nil {
		return next
	}
	var se *fetch.StatusError
	if errors.As(err, &se) && se.RetryAt.After(now) {
		w.notBefore = se.RetryAt
		if !next.IsZero() && se.RetryAt.After(next) {
			next = se.RetryAt
		}
	}
	retryAt := next
	if retryAt.IsZero() && w.notBefore.After(now) {
		retryAt = w.notBefore // when a sync request is heard again
	}
	w.fail(err, se, retryAt, now)
	return next
}

// fail logs one line about a failed check and publishes SourceFailed.
func (w *ghWorker) fail(err error, se *fetch.StatusError, retryAt, now time.Time) {
	msg := w.scrub(err.Error())
	if se != nil && (se.Code == http.StatusForbidden || se.Code == http.StatusTooManyRequests) && !se.RetryAt.IsZero() {
		msg += "; rate limited until " + se.RetryAt.UTC().Format(time.RFC3339)
		if w.p.opts.Config.Token == "" {
			msg += " (set GITHUB_TOKEN for a higher limit)"
		}
	}
	// The repo attribute (w.log) names the source; Location is not logged
	// in case someone wrote credentials into it.
	attrs := []any{"error", msg}
	if !retryAt.IsZero() {
		attrs = append(attrs, "retry_at", retryAt.UTC().Format(time.RFC3339))
	}
	switch {
	case errors.Is(err, remote.ErrRefused):
		w.log.Error("GitHub cache of "+w.name+" refused; nothing is synced, written or removed, and what is on disk is served as it is", attrs...)
	case w.meta.SHA != "":
		w.log.Warn("GitHub sync of "+w.name+" failed; serving the last good copy", attrs...)
	default:
		w.log.Error("GitHub sync of "+w.name+" failed; nothing cached to serve", attrs...)
	}
	for _, src := range w.srcs {
		ev := events.SourceFailed{
			Seq: w.p.failSeq.Add(1), ConfigSeq: w.cfgSeq, Source: src,
			Error: msg, RetryAt: retryAt, FailedAt: now,
		}
		if err := events.Publish(w.p.pub, ev); err != nil {
			w.log.Error("publishing source.failed", "error", err)
		}
	}
}

// scrub removes the token from s (fetch never puts it in an error; this
// is the second lock on that door).
func (w *ghWorker) scrub(s string) string {
	if tok := w.p.opts.Config.Token; tok != "" {
		s = strings.ReplaceAll(s, tok, "[REDACTED]")
	}
	return s
}

// sync brings the clone folder to the commit the ref points at and
// publishes SourceSynced when it changed. Once ctx is done it publishes
// nothing (a newer configuration's worker announces a swap it missed).
func (w *ghWorker) sync(ctx context.Context) error {
	owner, err := w.openCache()
	if err != nil {
		return err
	}
	defer owner.Close()
	w.removeStale(owner)
	cached := w.cachedCommit(owner)
	if w.done {
		return nil
	}
	sha, etag, fresh, err := w.resolve(ctx, owner, cached)
	if err != nil || !fresh {
		return err
	}
	return w.swapIn(ctx, owner, sha, etag)
}

// cachedCommit re-reads the sync metadata (another process sharing the
// cache may have synced since: the metadata on disk is the truth) and
// returns the commit in the clone folder, "" when there is none or the
// folder changed on disk since it was stamped (then it is downloaded
// again).
func (w *ghWorker) cachedCommit(owner *os.Root) string {
	if m := w.readMeta(); m.SHA != "" || w.meta.SHA != "" {
		w.meta = m
	}
	cached := w.cachedSHA()
	if cached != "" && w.meta.Stamp != "" {
		if st, _, err := remote.TreeStamp(owner.FS(), w.spec.Repo); err != nil || st != w.meta.Stamp {
			w.log.Warn("cached copy of " + w.name + " changed on disk; downloading it again")
			cached, w.done = "", false
		}
	}
	return cached
}

// resolve works out the commit the ref points at: a full SHA as is, a tag
// once (pinned), a branch by a conditional commits request. fresh is false
// when that commit is the cached one (nothing to download).
func (w *ghWorker) resolve(ctx context.Context, owner *os.Root, cached string) (sha, etag string, fresh bool, err error) {
	ref := w.spec.Ref
	switch {
	case fetch.IsFullSHA(ref):
		w.pinned = true
		sha = strings.ToLower(ref)
		if sha == cached {
			w.done = true
			return "", "", false, nil
		}
		return sha, "", true, nil
	case ref != "" && !w.tagChecked:
		if cached != "" && w.meta.Pinned && w.meta.Ref == ref {
			// A tag cached by an earlier run: no request at all.
			w.tagChecked, w.pinned, w.done = true, true, true
			return "", "", false, nil
		}
		isTag, err := w.gh.IsTag(ctx, w.spec.Owner, w.spec.Repo, ref)
		if err != nil {
			return "", "", false, fmt.Errorf("checking whether %s of %s is a tag: %w", ref, w.name, err)
		}
		w.tagChecked, w.pinned = true, isTag
	}
	return w.resolveCommit(ctx, owner, cached)
}

// resolveCommit asks the API which commit the ref (the default branch when
// it is "") points at, conditionally when that ref is cached, and records a
// changed ETag of an unchanged commit.
func (w *ghWorker) resolveCommit(ctx context.Context, owner *os.Root, cached string) (sha, etag string, fresh bool, err error) {
	ref := w.spec.Ref
	var cond string
	if cached != "" && w.meta.Ref == ref {
		cond = w.meta.ETag
	}
	apiRef := ref
	if apiRef == "" {
		// Resolved once per worker, so a poll costs one conditional
		// request, not two.
		if w.defaultBranch == "" {
			b, err := w.gh.DefaultBranch(ctx, w.spec.Owner, w.spec.Repo)
			if err != nil {
				return "", "", false, fmt.Errorf("finding the default branch of %s: %w", w.name, err)
			}
			w.defaultBranch = b
		}
		apiRef = w.defaultBranch
	}
	sha, etag, notModified, err := w.gh.Commit(ctx, w.spec.Owner, w.spec.Repo, apiRef, cond)
	if err != nil {
		var se *fetch.StatusError
		if ref == "" && errors.As(err, &se) && (se.Code == http.StatusNotFound || se.Code == http.StatusUnprocessableEntity) {
			w.defaultBranch = "" // renamed? ask again next time
		}
		return "", "", false, fmt.Errorf("resolving %s of %s: %w", refName(ref), w.name, err)
	}
	if notModified || sha == cached {
		if !notModified && etag != w.meta.ETag {
			m := w.meta
			m.Ref, m.ETag, m.Pinned = ref, etag, w.pinned
			w.writeMeta(owner, m)
		}
		w.done = w.pinned
		return "", "", false, nil
	}
	return sha, etag, true, nil
}

// swapIn downloads and swaps in commit sha, records it in the sync
// metadata and publishes SourceSynced unless ctx is done.
func (w *ghWorker) swapIn(ctx context.Context, owner *os.Root, sha, etag string) error {
	n, err := w.fetchAndSwap(ctx, owner, sha)
	if err != nil {
		return err
	}
	stamp, _, err := remote.TreeStamp(owner.FS(), w.spec.Repo)
	if err != nil {
		w.log.Warn("cannot stamp the cached copy; changes to it will not be noticed", "error", err)
	}
	ref := w.spec.Ref
	w.writeMeta(owner, ghSyncMeta{Ref: ref, SHA: sha, ETag: etag, Pinned: w.pinned, FetchedAt: time.Now().UTC(), Stamp: stamp})
	w.done = w.pinned
	w.p.mu.Lock()
	w.p.swapped[w.clone] = w.cfgSeq
	w.p.mu.Unlock()
	w.log.Info("GitHub source synced", "ref", refName(ref), "commit", sha, "files", n)
	if ctx.Err() == nil {
		w.publishSynced(sha)
	}
	return nil
}

func refName(ref string) string {
	if ref == "" {
		return "the default branch"
	}
	return ref
}

func (w *ghWorker) publishSynced(sha string) {
	for _, src := range w.srcs {
		ev := events.SourceSynced{
			Seq: w.p.syncSeq.Add(1), ConfigSeq: w.cfgSeq, Source: src,
			Revision: sha, Rescan: true, SyncedAt: time.Now(),
		}
		if err := events.Publish(w.p.pub, ev); err != nil {
			w.log.Error("publishing source.synced", "error", err)
		}
	}
}

// cachedSHA is the commit in the clone folder, or "" when there is no
// usable cached copy (no folder, or no metadata for it).
func (w *ghWorker) cachedSHA() string {
	if w.meta.SHA == "" {
		return ""
	}
	if fi, err := os.Stat(w.clone); err != nil || !fi.IsDir() {
		return ""
	}
	return w.meta.SHA
}

// openCache checks the repository's cache folders and opens its owner
// folder: the top cache folder and the owner folder must be real folders
// of this user, the owner folder the poller's (created with the marker
// when missing), and the clone folder, when it exists, the poller's too
// ([ghWorker.claimClone]). Errors: a [cacheRefusal] naming the folder;
// a foreign folder at the clone's place is named rather than its parent.
func (w *ghWorker) openCache() (*os.Root, error) {
	top, err := remote.OpenCacheDir(filepath.Dir(w.ownerDir))
	if err != nil {
		return nil, err
	}
	defer top.Close()
	owner := filepath.Base(w.ownerDir)
	if _, err := remote.ClaimFolder(top, owner, func() bool {
		return remote.RegularFile(top, filepath.Join(owner, w.metaName()))
	}); err != nil {
		var r *remote.Refusal
		if errors.As(err, &r) && r.Reason == remote.NotOurs {
			if _, lerr := top.Lstat(filepath.Join(owner, w.spec.Repo)); lerr == nil {
				return nil, remote.Refuse(w.clone, remote.NotOurs)
			}
		}
		return nil, err
	}
	root, err := remote.OpenSubRoot(top, owner)
	if err != nil {
		return nil, err
	}
	if err := w.claimClone(root); err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

// metaName is the name of the sync metadata file in the owner folder.
func (w *ghWorker) metaName() string { return "." + w.spec.Repo + ".sync.json" }

// claimClone checks that the clone folder may be swapped out: it is
// missing, or the poller's (marker), or empty, or cached by a version
// before the marker: the sync metadata names a commit and the folder is
// as that sync left it (its stamp matches, or the metadata predates
// stamps). Errors: a [cacheRefusal] naming the clone folder.
func (w *ghWorker) claimClone(owner *os.Root) error {
	repo := w.spec.Repo
	if _, err := owner.Lstat(repo); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, err := remote.ClaimFolder(owner, repo, func() bool {
		var m ghSyncMeta
		if !remote.RegularFile(owner, w.metaName()) {
			return false
		}
		if b, err := owner.ReadFile(w.metaName()); err != nil || json.Unmarshal(b, &m) != nil || !fetch.IsFullSHA(m.SHA) {
			return false
		}
		if m.Stamp == "" {
			return true
		}
		st, _, err := remote.TreeStamp(owner.FS(), repo)
		return err == nil && st == m.Stamp
	})
	return err
}

// fetchAndSwap downloads the tarball of sha into a temporary file in the
// owner folder, extracts it into a staging folder and swaps that in as the
// clone folder, all through owner. It returns the number of files
// extracted. On any failure the clone folder is as it was and the
// temporary entries are gone.
func (w *ghWorker) fetchAndSwap(ctx context.Context, owner *os.Root, sha string) (int, error) {
	dlName := fmt.Sprintf(".download-%s~%d.tar.gz", w.spec.Repo, rand.Uint64())
	tmp, err := owner.OpenFile(dlName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("creating download file for %s: %w", w.name, err)
	}
	defer func() {
		tmp.Close()
		owner.Remove(dlName)
	}()
	w.downloading, w.dlLast, w.dlLogged = true, time.Now(), false
	size, err := w.gh.Tarball(ctx, w.spec.Owner, w.spec.Repo, sha, tmp)
	w.downloading = false
	if err != nil {
		return 0, fmt.Errorf("downloading the tarball of %s@%s: %w", w.name, sha, err)
	}
	if w.dlLogged {
		w.log.Info(fmt.Sprintf("downloaded %s: %s", w.name, remote.MiB(size)))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("reading the tarball of %s: %w", w.name, err)
	}
	staging, err := remote.MakeTempFolder(owner, ".staging-"+w.spec.Repo)
	if err != nil {
		return 0, fmt.Errorf("creating staging folder for %s: %w", w.name, err)
	}
	swapped := false
	defer func() {
		if !swapped {
			owner.RemoveAll(staging)
		}
	}()
	n, err := w.extract(ctx, owner, staging, tmp, sha)
	if err != nil {
		return 0, err
	}
	if err := remote.SwapFolder(owner, staging, w.spec.Repo, fmt.Sprintf(".trash-%s~%d", w.spec.Repo, rand.Uint64())); err != nil {
		return 0, fmt.Errorf("swapping in %s@%s: %w", w.name, sha, err)
	}
	swapped = true
	return n, nil
}

// extract unpacks the tarball r of sha into the staging folder of owner
// and returns the number of files.
func (w *ghWorker) extract(ctx context.Context, owner *os.Root, staging string, r io.Reader, sha string) (int, error) {
	root, err := remote.OpenSubRoot(owner, staging)
	if err != nil {
		return 0, fmt.Errorf("opening staging folder for %s: %w", w.name, err)
	}
	defer root.Close()
	maxBytes := w.p.opts.Config.MaxUnpackedBytes
	if maxBytes <= 0 {
		maxBytes = config.DefaultGitHubMaxUnpackedBytes
	}
	res, err := archive.ExtractTarGz(ghCtxReader{ctx, bufio.NewReaderSize(r, 256<<10)}, root,
		&archive.Options{MaxBytes: maxBytes, MaxEntries: ghMaxEntries, StripTopFolder: true})
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, fmt.Errorf("extracting the tarball of %s@%s: %w", w.name, sha, err)
	}
	for _, src := range w.srcs {
		if sub := src.GitHub.Subpath; sub != "" {
			if fi, err := root.Stat(filepath.FromSlash(sub)); err != nil || !fi.IsDir() {
				w.log.Warn("GitHub source has no folder " + sub + " at commit " + sha + "; it serves no skills")
			}
		}
	}
	return len(res.Files), nil
}

// ghCtxReader stops an extraction when ctx is done.
type ghCtxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ghCtxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// progress is the fetch Progress callback: it logs a line for a tarball
// over ghProgressMin bytes, at most one per ghProgressEvery. It runs on the
// worker's goroutine (fetch calls it from the goroutine of Tarball).
func (w *ghWorker) progress(read, total int64) {
	if !w.downloading || (read <= ghProgressMin && total <= ghProgressMin) {
		return
	}
	now := time.Now()
	if w.dlLogged && now.Sub(w.dlLast) < ghProgressEvery {
		return
	}
	w.dlLogged, w.dlLast = true, now
	of := "unknown size"
	if total >= 0 {
		of = remote.MiB(total)
	}
	w.log.Info(fmt.Sprintf("downloading %s: %s of %s", w.name, remote.MiB(read), of))
}

// readMeta reads the sync metadata; a missing or unreadable file is no
// metadata (the next check downloads).
func (w *ghWorker) readMeta() ghSyncMeta {
	var m ghSyncMeta
	b, err := os.ReadFile(w.metaPath)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.log.Warn("reading GitHub sync metadata; the repository will be downloaded again", "file", w.metaPath, "error", err)
		}
		return ghSyncMeta{}
	}
	if err := json.Unmarshal(b, &m); err != nil || !fetch.IsFullSHA(m.SHA) {
		w.log.Warn("GitHub sync metadata is not valid; the repository will be downloaded again", "file", w.metaPath)
		return ghSyncMeta{}
	}
	return m
}

// writeMeta stores m in the owner folder (temporary file + rename) and
// keeps it as the worker's metadata even when the write fails (then the
// next start downloads again).
func (w *ghWorker) writeMeta(owner *os.Root, m ghSyncMeta) {
	w.meta = m
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = remote.WriteFileAtomic(owner, w.metaName(), append(b, '\n'))
	}
	if err != nil {
		w.log.Warn("writing GitHub sync metadata", "file", w.metaPath, "error", err)
	}
}

// removeStale removes transient entries of this repository in the owner
// folder that a crashed run left behind (older than [remote.StaleAge]): staging and
// trash folders that hold the marker, download and temporary metadata
// files that are regular files. Anything else by such a name is left
// alone and reported once.
func (w *ghWorker) removeStale(owner *os.Root) {
	repo := w.spec.Repo
	remote.RemoveLeftovers(owner, func(name string) remote.LeftoverKind {
		switch {
		case strings.HasPrefix(name, ".staging-"+repo+"~") || strings.HasPrefix(name, ".trash-"+repo+"~"):
			return remote.LeftoverFolder
		case strings.HasPrefix(name, ".download-"+repo+"~") || strings.HasPrefix(name, w.metaName()+".tmp"):
			return remote.LeftoverFile
		}
		return remote.NotLeftover
	}, func(err error) {
		if !w.warned[err.Error()] {
			w.warned[err.Error()] = true
			w.log.Warn("crash leftover not removed: " + err.Error())
		}
	})
}
