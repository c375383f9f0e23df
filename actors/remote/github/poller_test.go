package github_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/remote/github"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// The GitHub poller on its own (issue 6, reference §4): a small fake of the
// REST API, the poller's inbox fed by hand, its events read from a
// recording publisher. The end-to-end acceptance runs through MCP are in
// test/github_test.go.

// ghAPI is a fake GitHub REST API: /repos/{o}/{r} (default branch "main"),
// commits/{ref} (ETag, 304), git/ref/tags/{ref} and tarball/{sha} (served
// directly, with Content-Length).
type ghAPI struct {
	srv *httptest.Server

	mu       sync.Mutex
	refs     map[string]string      // "o/r@ref" → sha
	tags     map[string]bool        // "o/r@ref"
	tarballs map[string][]byte      // sha → tar.gz
	fail     map[string]http.Header // the next API request of "o/r" fails with failCode and these headers
	failCode int
	hits     []ghHit
	hold     chan struct{} // when set, tarball requests wait on it (or their ctx)
	held     chan struct{} // gets a value when a tarball request waits
}

type ghHit struct {
	path string
	at   time.Time
}

func newGHAPI(t *testing.T) *ghAPI {
	a := &ghAPI{refs: map[string]string{}, tags: map[string]bool{}, tarballs: map[string][]byte{}, fail: map[string]http.Header{}, held: make(chan struct{}, 10)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{o}/{r}", func(w http.ResponseWriter, r *http.Request) {
		if !a.failed(w, r) {
			json.NewEncoder(w).Encode(map[string]string{"default_branch": "main"})
		}
	})
	mux.HandleFunc("GET /repos/{o}/{r}/commits/{ref...}", func(w http.ResponseWriter, r *http.Request) {
		if a.failed(w, r) {
			return
		}
		a.mu.Lock()
		sha, ok := a.refs[r.PathValue("o")+"/"+r.PathValue("r")+"@"+r.PathValue("ref")]
		a.mu.Unlock()
		if !ok {
			http.Error(w, "no such ref", http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("ETag", `"`+sha+`"`)
		if r.Header.Get("If-None-Match") == `"`+sha+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"sha": sha})
	})
	mux.HandleFunc("GET /repos/{o}/{r}/git/ref/tags/{ref...}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		ok := a.tags[r.PathValue("o")+"/"+r.PathValue("r")+"@"+r.PathValue("ref")]
		a.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"ref": "refs/tags/" + r.PathValue("ref")})
	})
	mux.HandleFunc("GET /repos/{o}/{r}/tarball/{sha}", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		body, hold := a.tarballs[r.PathValue("sha")], a.hold
		a.mu.Unlock()
		if hold != nil {
			a.held <- struct{}{}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.hits = append(a.hits, ghHit{r.URL.Path, time.Now()})
		a.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// failed answers r with the failure set for its repository, if any.
func (a *ghAPI) failed(w http.ResponseWriter, r *http.Request) bool {
	a.mu.Lock()
	h, ok := a.fail[r.PathValue("o")+"/"+r.PathValue("r")]
	delete(a.fail, r.PathValue("o")+"/"+r.PathValue("r")) // once
	code := a.failCode
	a.mu.Unlock()
	if !ok {
		return false
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	http.Error(w, `{"message":"API rate limit exceeded"}`, code)
	return true
}

// commit makes sha (with a tarball of files in a GitHub-style top folder)
// the commit of ref.
func (a *ghAPI) commit(t *testing.T, repo, ref, sha string, tag bool, files map[string]string) {
	t.Helper()
	tb := ghTarGz(t, strings.ReplaceAll(repo, "/", "-")+"-"+sha[:7], files)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refs[repo+"@"+ref] = sha
	a.tags[repo+"@"+ref] = tag
	a.tarballs[sha] = tb
}

// count returns how many requests had a path starting with prefix.
func (a *ghAPI) count(prefix string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, h := range a.hits {
		if strings.HasPrefix(h.path, prefix) {
			n++
		}
	}
	return n
}

func (a *ghAPI) hitsOf(prefix string) []ghHit {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []ghHit
	for _, h := range a.hits {
		if strings.HasPrefix(h.path, prefix) {
			out = append(out, h)
		}
	}
	return out
}

// ghTarGz builds a tar.gz as GitHub serves it: a pax global header, then
// every file below top/.
func ghTarGz(t *testing.T, top string, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	// Stored, not compressed: the progress test's 5 MiB of random bytes
	// would not compress anyway, and deflate under -race is slow.
	gz, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	tw := tar.NewWriter(gz)
	hdrs := []*tar.Header{
		{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "commit"}, Format: tar.FormatPAX},
		{Typeflag: tar.TypeDir, Name: top + "/", Mode: 0o755},
	}
	for _, h := range hdrs {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: top + "/" + name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

// pollerRun is one running poller.
type pollerRun struct {
	t  *testing.T
	p  *github.Poller
	in chan *message.Message
	// syncs is the poller's sync.requested inbox.
	syncs chan *message.Message
	pub   *eventstest.Publisher
	logs  *eventstest.LogBuffer
	cache string
	stop  func()
}

// startPoller runs a poller of api with cfg (CacheDir, APIURL filled in
// when empty) and sends it configuration 1 with the GitHub sources locs.
func startPoller(t *testing.T, api *ghAPI, cfg config.GitHub, locs ...string) *pollerRun {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = t.TempDir()
	}
	cfg.APIURL = api.srv.URL
	log, logs := eventstest.CaptureLog()
	r := &pollerRun{t: t, in: make(chan *message.Message, 10), syncs: make(chan *message.Message, 10), pub: eventstest.NewPublisher(), logs: logs, cache: cfg.CacheDir}
	r.p = github.New(github.Inboxes{Configured: r.in, SyncRequested: r.syncs}, r.pub, &github.Options{Config: cfg, HTTPClient: api.srv.Client(), Logger: log})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.p.Run(ctx) }()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10 s of cancel")
			}
		})
	}
	t.Cleanup(r.stop)
	r.configure(1, false, locs...)
	return r
}

// ghSource is the source config.Resolve makes of loc.
func ghSource(t *testing.T, cache, id, loc string) events.Source {
	t.Helper()
	spec, err := config.ParseGitHubURL(loc)
	if err != nil {
		t.Fatal(err)
	}
	return events.Source{ID: id, Kind: events.SourceGitHub, Location: loc, Prefix: spec.Prefix(), GitHub: spec.ForEvent(),
		Root: filepath.Join(cache, spec.Owner, spec.Repo, filepath.FromSlash(spec.Subpath))}
}

// syncNow publishes a sync.requested for every source to the poller.
func (r *pollerRun) syncNow() {
	r.syncs <- eventstest.Encode(r.t, events.SyncRequested{})
}

func (r *pollerRun) configure(seq uint64, static bool, locs ...string) {
	var srcs []events.Source
	for i, l := range locs {
		srcs = append(srcs, ghSource(r.t, r.cache, strconv.Itoa(i), l))
	}
	srcs = append(srcs, events.Source{ID: "bundled", Kind: events.SourceBundled, Location: "bundled", Root: "."})
	r.in <- eventstest.Encode(r.t, events.SourcesConfigured{Seq: seq, Sources: srcs, Static: static})
}

// next returns the next published event: *events.SourceSynced or
// *events.SourceFailed.
func (r *pollerRun) next() any {
	r.t.Helper()
	select {
	case m := <-r.pub.C:
		switch m.Metadata.Get(events.MetadataName) {
		case "SourceSynced":
			ev, err := events.Decode[events.SourceSynced](m)
			if err != nil {
				r.t.Fatal(err)
			}
			return &ev
		case "SourceFailed":
			ev, err := events.Decode[events.SourceFailed](m)
			if err != nil {
				r.t.Fatal(err)
			}
			return &ev
		}
		r.t.Fatalf("unexpected message %s", m.Metadata.Get(events.MetadataName))
	case <-time.After(10 * time.Second):
		r.t.Fatalf("no event within 10 s; log:\n%s", r.logs.String())
	}
	return nil
}

func (r *pollerRun) synced() *events.SourceSynced {
	r.t.Helper()
	ev, ok := r.next().(*events.SourceSynced)
	if !ok {
		r.t.Fatalf("got %+v, want source.synced; log:\n%s", ev, r.logs.String())
	}
	return ev
}

func (r *pollerRun) failed() *events.SourceFailed {
	r.t.Helper()
	ev, ok := r.next().(*events.SourceFailed)
	if !ok {
		r.t.Fatalf("got %+v, want source.failed", ev)
	}
	return ev
}

// quiet stops the poller and requires that it published nothing more.
func (r *pollerRun) quiet() {
	r.t.Helper()
	r.stop()
	select {
	case m := <-r.pub.C:
		r.t.Errorf("unexpected %s: %s", m.Metadata.Get(events.MetadataName), m.Payload)
	default:
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not so within 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const (
	shaA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	shaB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	shaC = "cccccccccccccccccccccccccccccccccccccccc"
)

// TestGitHubPollerSyncAndRestart: the first check swaps the tarball in
// (top folder stripped), publishes SourceSynced{Rescan, Revision} for the
// configuration and stores the metadata; a second poller on the same cache
// (a restart) asks with the stored ETag, gets a 304 and downloads and
// publishes nothing (issue 6).
func TestGitHubPollerSyncAndRestart(t *testing.T) {
	api := newGHAPI(t)
	api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S.")})
	cache := t.TempDir()
	r := startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
	ev := r.synced()
	want := ghSource(t, cache, "0", "github.com/acme/skills")
	if ev.Revision != shaA || !ev.Rescan || ev.ConfigSeq != 1 || ev.Source != want {
		t.Errorf("source.synced = %+v, want revision %s, rescan, config 1, source %+v", ev, shaA, want)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "acme", "skills", "s", "SKILL.md")); err != nil || string(b) != skilltest.SkillMD("s", "S.") {
		t.Errorf("cached SKILL.md = %q, %v", b, err)
	}
	var meta struct{ SHA, ETag, Ref string }
	b, err := os.ReadFile(filepath.Join(cache, "acme", ".skills.sync.json"))
	if err != nil || json.Unmarshal(b, &meta) != nil || meta.SHA != shaA || meta.ETag != `"`+shaA+`"` {
		t.Errorf("metadata = %s, %v; want sha and etag of %s", b, err, shaA)
	}
	r.quiet()

	r2 := startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
	waitUntil(t, "a second commits request", func() bool { return api.count("/repos/acme/skills/commits/") == 2 })
	// Checks of one source never overlap: once a third one has begun,
	// the restart's first check has finished.
	r2.syncNow()
	waitUntil(t, "a third commits request", func() bool { return api.count("/repos/acme/skills/commits/") == 3 })
	r2.quiet()
	if n := api.count("/repos/acme/skills/tarball/"); n != 1 {
		t.Errorf("tarball downloads = %d, want 1 (the restart found the commit cached)", n)
	}
}

// TestGitHubPollerPinnedSHA: a full commit SHA as ref is fetched without
// asking the API which commit it is, and never checked again, while a
// branch source beside it is polled; after a restart nothing at all is
// requested for it (reference §4 "pinned").
func TestGitHubPollerPinnedSHA(t *testing.T) {
	api := newGHAPI(t)
	api.commit(t, "acme/skills", "main", shaB, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S.")})
	api.commit(t, "acme/live", "main", shaC, false, map[string]string{"l/SKILL.md": skilltest.SkillMD("l", "L.")})
	cache := t.TempDir()
	pinned := "github.com/acme/skills@" + strings.ToUpper(shaB)
	cfg := config.GitHub{CacheDir: cache, PollInterval: 10 * time.Millisecond}
	for run := range 2 {
		r := startPoller(t, api, cfg, pinned, "github.com/acme/live")
		if run == 0 {
			for range 2 {
				if ev := r.synced(); ev.Revision != shaB && ev.Revision != shaC {
					t.Errorf("revision %s, want %s or %s", ev.Revision, shaB, shaC)
				}
			}
		}
		r.syncNow()
		polls := api.count("/repos/acme/live/commits/")
		waitUntil(t, "three polls of the branch source", func() bool { return api.count("/repos/acme/live/commits/") >= polls+3 })
		r.quiet()
		if n, all := api.count("/repos/acme/skills/tarball/"), api.count("/repos/acme/skills"); n != 1 || all != 1 {
			t.Errorf("run %d: requests for the pinned repository: %d tarballs of %d, want the one tarball only", run, n, all)
		}
	}
}

// TestGitHubPollerRetryAfter: a 429 with Retry-After fails the check with
// RetryAt set, and the next check waits until then although the poll
// interval is much shorter; a sync request is ignored meanwhile (issue 6
// "rate limits ... back off until then").
func TestGitHubPollerRetryAfter(t *testing.T) {
	api := newGHAPI(t)
	api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S.")})
	api.fail["acme/skills"] = http.Header{"Retry-After": {"1"}}
	api.failCode = http.StatusTooManyRequests
	r := startPoller(t, api, config.GitHub{PollInterval: 10 * time.Millisecond, Token: "tok-secret"}, "github.com/acme/skills")
	f := r.failed()
	if f.RetryAt.IsZero() || time.Until(f.RetryAt) > 2*time.Second {
		t.Errorf("RetryAt = %v, want about a second from now", f.RetryAt)
	}
	if !strings.Contains(f.Error, "429") || !strings.Contains(f.Error, "rate limited until") {
		t.Errorf("error = %q, want the 429 and the rate limit", f.Error)
	}
	r.syncNow()
	ev := r.synced()
	if ev.Revision != shaA {
		t.Errorf("revision %s, want %s", ev.Revision, shaA)
	}
	hits := api.hitsOf("/repos/acme/skills")
	if len(hits) < 2 {
		t.Fatalf("hits %+v", hits)
	}
	// Requests of the failed check, then the first one after the limit.
	for _, h := range hits[1:] {
		if h.at.Before(f.RetryAt) {
			t.Errorf("request %s at %v, before RetryAt %v", h.path, h.at, f.RetryAt)
		}
	}
	if strings.Contains(r.logs.String(), "tok-secret") {
		t.Errorf("token in the log:\n%s", r.logs.String())
	}
}

// TestGitHubPollerProgress: a tarball over 4 MiB logs progress lines
// ("downloading owner/repo: x MiB of y MiB") and a final line; a small one
// logs none (issue 6 "progress ... at most one line a second").
func TestGitHubPollerProgress(t *testing.T) {
	api := newGHAPI(t)
	big := make([]byte, 5<<20)
	rand.Read(big)
	api.commit(t, "acme/big", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S."), "s/blob.bin": string(big)})
	api.commit(t, "acme/small", "main", shaB, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S.")})
	start := time.Now()
	r := startPoller(t, api, config.GitHub{}, "github.com/acme/big", "github.com/acme/small")
	r.synced()
	r.synced()
	elapsed := time.Since(start)
	logs := r.logs.String()
	var progress int
	for line := range strings.Lines(logs) {
		if strings.Contains(line, "downloading acme/big: ") {
			progress++
			if !strings.Contains(line, "level=INFO") || !strings.Contains(line, " MiB of 5.0 MiB") {
				t.Errorf("progress line %q, want INFO with the total", line)
			}
		}
	}
	if progress < 1 || progress > 2+int(elapsed/time.Second) {
		t.Errorf("%d progress lines in %v, want at least one and at most one a second:\n%s", progress, elapsed, logs)
	}
	if !strings.Contains(logs, "downloaded acme/big: 5.0 MiB") {
		t.Errorf("no final download line:\n%s", logs)
	}
	if strings.Contains(logs, "downloading acme/small") || strings.Contains(logs, "downloaded acme/small") {
		t.Errorf("progress lines for a small tarball:\n%s", logs)
	}
}

// TestGitHubPollerNewConfigCancels: a newer configuration replaces the set
// of sources; the old one's download is cancelled, nothing is published
// for it and its staging files are gone, and the new sources sync under the
// new ConfigSeq. An older configuration arriving late is ignored.
func TestGitHubPollerNewConfigCancels(t *testing.T) {
	api := newGHAPI(t)
	api.commit(t, "acme/old", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S.")})
	api.commit(t, "acme/new", "main", shaC, false, map[string]string{"t/SKILL.md": skilltest.SkillMD("t", "T.")})
	api.hold = make(chan struct{})
	r := startPoller(t, api, config.GitHub{}, "github.com/acme/old")
	<-api.held // the old source's tarball download is in flight
	api.mu.Lock()
	api.hold = nil
	api.mu.Unlock()
	r.configure(2, false, "github.com/acme/new")
	ev := r.synced()
	if ev.ConfigSeq != 2 || ev.Revision != shaC || !strings.Contains(ev.Source.Location, "acme/new") {
		t.Errorf("source.synced = %+v, want acme/new under configuration 2", ev)
	}
	r.configure(1, false, "github.com/acme/old")
	r.quiet()
	ents, _ := os.ReadDir(filepath.Join(r.cache, "acme"))
	for _, e := range ents {
		if e.Name() != "new" && e.Name() != ".new.sync.json" && e.Name() != ".skilljack-cache" {
			t.Errorf("cache holds %s after the old configuration was cancelled", e.Name())
		}
	}
}

// TestGitHubPollerCancel: Run returns promptly when ctx is cancelled in
// the middle of a download (STYLE §13 cancellation test).
func TestGitHubPollerCancel(t *testing.T) {
	api := newGHAPI(t)
	api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "S.")})
	api.hold = make(chan struct{})
	r := startPoller(t, api, config.GitHub{PollInterval: time.Hour}, "github.com/acme/skills")
	<-api.held
	r.quiet() // fails if Run takes over 10 s
	if _, err := os.Stat(filepath.Join(r.cache, "acme", "skills")); err == nil {
		t.Error("a cancelled download was swapped in")
	}
}
