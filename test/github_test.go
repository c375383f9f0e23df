package test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/events"
)

// GitHub sources end to end (issue 6 acceptance, reference §4, BR-22): the
// in-process server with its real pipeline and GitHub poller, a fake GitHub
// REST API on loopback TLS, and an MCP client reading what is served.
// Polling is off (GITHUB_POLL_INTERVAL_MS=0): every check after the first
// is asked for with a sync.requested event, and the tests wait on bus events, requests the
// fake saw, or log lines — never on time alone.

// ghToken is the GITHUB_TOKEN of these tests; it must never reach a log.
const ghToken = "ghp_T0kenThatMustNeverBeLogged1234567890"

// ghRequest is one request the fake GitHub saw.
type ghRequest struct {
	Path          string
	Authorization string
	IfNoneMatch   string
	Status        int
}

// ghFail is the answer every API request of a repository gets instead of
// the normal one.
type ghFail struct {
	code   int
	header map[string]string
	body   string
}

// ghRepo is one repository of the fake.
type ghRepo struct {
	defaultBranch string
	refs          map[string]string // branch or tag → commit SHA
	tags          map[string]bool
	tarballs      map[string][]byte // commit SHA → tar.gz
	fail          *ghFail
}

// fakeGitHub serves the part of the GitHub REST API the poller uses:
// GET /repos/{o}/{r}, /repos/{o}/{r}/commits/{ref} (ETag, 304 on a
// matching If-None-Match), /repos/{o}/{r}/git/ref/tags/{ref} and
// /repos/{o}/{r}/tarball/{sha} (a 302 to /_codeload/… on the same server,
// as api.github.com redirects to codeload.github.com).
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu    sync.Mutex
	repos map[string]*ghRepo // "owner/repo"
	reqs  []ghRequest
	n     int // commits made
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	g := &fakeGitHub{t: t, repos: map[string]*ghRepo{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{o}/{r}", g.repo)
	mux.HandleFunc("GET /repos/{o}/{r}/commits/{ref...}", g.commit)
	mux.HandleFunc("GET /repos/{o}/{r}/git/ref/tags/{ref...}", g.tag)
	mux.HandleFunc("GET /repos/{o}/{r}/tarball/{sha}", g.tarballRedirect)
	mux.HandleFunc("GET /_codeload/{o}/{r}/legacy.tar.gz/{sha}", g.codeload)
	g.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		mux.ServeHTTP(rec, r)
		g.mu.Lock()
		g.reqs = append(g.reqs, ghRequest{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), IfNoneMatch: r.Header.Get("If-None-Match"), Status: rec.code})
		g.mu.Unlock()
	}))
	t.Cleanup(g.srv.Close)
	return g
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// push makes a commit of files (slash path → content) on ref of owner/repo
// and returns its SHA; tag makes ref a tag. The tarball has GitHub's layout:
// a pax global header holding the commit id, then everything inside one
// "owner-repo-<sha7>/" folder.
func (g *fakeGitHub) push(owner, repo, ref string, tag bool, files map[string]string) string {
	g.mu.Lock()
	g.n++
	sum := sha1.Sum([]byte(owner + "/" + repo + "@" + strconv.Itoa(g.n)))
	g.mu.Unlock()
	sha := hex.EncodeToString(sum[:])
	return g.pushTarball(owner, repo, ref, tag, sha, ghTarball(g.t, owner+"-"+repo+"-"+sha[:7], sha, files, nil))
}

// pushTarball makes sha (with the given tarball bytes) the commit of ref.
func (g *fakeGitHub) pushTarball(owner, repo, ref string, tag bool, sha string, tarball []byte) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repos[owner+"/"+repo]
	if r == nil {
		r = &ghRepo{defaultBranch: "main", refs: map[string]string{}, tags: map[string]bool{}, tarballs: map[string][]byte{}}
		g.repos[owner+"/"+repo] = r
	}
	r.refs[ref] = sha
	r.tags[ref] = tag
	r.tarballs[sha] = tarball
	return sha
}

// failWith makes every API request of owner/repo answer f (nil: normal).
func (g *fakeGitHub) failWith(owner, repo string, f *ghFail) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.repos[owner+"/"+repo].fail = f
}

// requests returns the requests so far.
func (g *fakeGitHub) requests() []ghRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.reqs)
}

// count returns how many requests had a path starting with prefix and, if
// inm is not "", that If-None-Match.
func (g *fakeGitHub) count(prefix, inm string) int {
	n := 0
	for _, r := range g.requests() {
		if strings.HasPrefix(r.Path, prefix) && (inm == "" || r.IfNoneMatch == inm) {
			n++
		}
	}
	return n
}

// lookup returns the repository of the request, answering 404 or its
// failure itself when it returns nil.
func (g *fakeGitHub) lookup(w http.ResponseWriter, r *http.Request) *ghRepo {
	g.mu.Lock()
	defer g.mu.Unlock()
	repo := g.repos[r.PathValue("o")+"/"+r.PathValue("r")]
	if repo == nil {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return nil
	}
	if f := repo.fail; f != nil {
		for k, v := range f.header {
			w.Header().Set(k, v)
		}
		http.Error(w, f.body, f.code)
		return nil
	}
	return repo
}

func (g *fakeGitHub) repo(w http.ResponseWriter, r *http.Request) {
	if repo := g.lookup(w, r); repo != nil {
		json.NewEncoder(w).Encode(map[string]string{"default_branch": repo.defaultBranch, "full_name": r.PathValue("o") + "/" + r.PathValue("r")})
	}
}

func (g *fakeGitHub) commit(w http.ResponseWriter, r *http.Request) {
	repo := g.lookup(w, r)
	if repo == nil {
		return
	}
	g.mu.Lock()
	sha, ok := repo.refs[r.PathValue("ref")]
	g.mu.Unlock()
	if !ok {
		http.Error(w, `{"message":"No commit found for SHA: `+r.PathValue("ref")+`"}`, http.StatusUnprocessableEntity)
		return
	}
	etag := `"` + sha + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"sha": sha})
}

func (g *fakeGitHub) tag(w http.ResponseWriter, r *http.Request) {
	repo := g.lookup(w, r)
	if repo == nil {
		return
	}
	ref := r.PathValue("ref")
	g.mu.Lock()
	isTag, sha := repo.tags[ref], repo.refs[ref]
	g.mu.Unlock()
	if !isTag {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"ref": "refs/tags/" + ref, "object": map[string]string{"sha": sha, "type": "commit"}})
}

func (g *fakeGitHub) tarballRedirect(w http.ResponseWriter, r *http.Request) {
	if g.lookup(w, r) == nil {
		return
	}
	http.Redirect(w, r, "/_codeload/"+r.PathValue("o")+"/"+r.PathValue("r")+"/legacy.tar.gz/"+r.PathValue("sha"), http.StatusFound)
}

func (g *fakeGitHub) codeload(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	repo := g.repos[r.PathValue("o")+"/"+r.PathValue("r")]
	var body []byte
	if repo != nil {
		body = repo.tarballs[r.PathValue("sha")]
	}
	g.mu.Unlock()
	if body == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Write(body)
}

// ghTarball builds a GitHub-style tarball: a pax global header with the
// commit id, the top folder, then files (and symlinks: path → target)
// below top, parents before children, in sorted order.
func ghTarball(t *testing.T, top, sha string, files, symlinks map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	write := func(h *tar.Header, body string) {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	write(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": sha}, Format: tar.FormatPAX}, "")
	write(&tar.Header{Typeflag: tar.TypeDir, Name: top + "/", Mode: 0o755}, "")
	dirs := map[string]bool{}
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
		for p := range symlinks {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range paths {
		for d := filepath.Dir(filepath.FromSlash(p)); d != "."; d = filepath.Dir(d) {
			dirs[filepath.ToSlash(d)] = true
		}
	}
	for _, d := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		write(&tar.Header{Typeflag: tar.TypeDir, Name: top + "/" + d + "/", Mode: 0o755}, "")
	}
	for _, p := range paths {
		if target, ok := symlinks[p]; ok {
			write(&tar.Header{Typeflag: tar.TypeSymlink, Name: top + "/" + p, Linkname: target, Mode: 0o777}, "")
			continue
		}
		write(&tar.Header{Typeflag: tar.TypeReg, Name: top + "/" + p, Mode: 0o644, Size: int64(len(files[p]))}, files[p])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ghStack is an in-process server whose remote sources are GitHub
// repositories of a fake, with everything (HOME, cache) under base.
type ghStack struct {
	*stack
	s        *server
	logs     *syncBuffer
	base     string
	cache    string
	stopOnce sync.Once
}

// stop stops the server (once) and checks that the token never reached
// the log.
func (g *ghStack) stop(t *testing.T) {
	t.Helper()
	g.stopOnce.Do(func() {
		g.stack.stop(t)
		if strings.Contains(g.logs.String(), ghToken) {
			t.Errorf("the token appears in the log:\n%s", g.logs.String())
		}
	})
}

// startGH serves sources from gh with env on top of the defaults (owner
// acme allowlisted, the test token, polling off). The client speaks the
// 2025-11-25 era and records notifications.
func startGH(t *testing.T, gh *fakeGitHub, env map[string]string, sources ...string) *ghStack {
	t.Helper()
	base := t.TempDir()
	e := map[string]string{
		"HOME":                    filepath.Join(base, "home"),
		"SKILLJACK_CACHE_DIR":     filepath.Join(base, "cache"),
		"GITHUB_ALLOWED_ORGS":     "acme",
		"GITHUB_API_URL":          gh.srv.URL,
		"GITHUB_TOKEN":            ghToken,
		"GITHUB_POLL_INTERVAL_MS": "0",
	}
	for k, v := range env {
		e[k] = v
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := startStackEnv(t, &actors.PipelineOptions{Bundled: actors.Bundled(), HTTPClient: gh.srv.Client(), Logger: log}, e, sources...)
	g := &ghStack{stack: st, logs: logs, base: base, cache: e["SKILLJACK_CACHE_DIR"]}
	t.Cleanup(func() { g.stop(t) })
	g.s = st.connectServer(t, legacyVersion, newNotes(), logs)
	return g
}

// next waits for the next source.synced or source.failed of a GitHub
// source.
func (g *ghStack) next(t *testing.T) remoteEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-g.remote:
			if ev.Err != nil {
				t.Fatalf("decoding %s: %v", ev.Topic, ev.Err)
			}
			if (ev.Synced != nil && ev.Synced.Source.Kind == events.SourceGitHub) || (ev.Failed != nil && ev.Failed.Source.Kind == events.SourceGitHub) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no GitHub source.synced or source.failed within 10 s; log:\n%s", g.logs.String())
		}
	}
}

// synced waits for the next GitHub event and requires a source.synced of
// revision sha.
func (g *ghStack) synced(t *testing.T, sha string) *events.SourceSynced {
	t.Helper()
	ev := g.next(t)
	if ev.Synced == nil {
		t.Fatalf("got source.failed %+v, want source.synced of %s; log:\n%s", ev.Failed, sha, g.logs.String())
	}
	if ev.Synced.Revision != sha || !ev.Synced.Rescan {
		t.Fatalf("source.synced revision %s rescan %v, want %s rescan true", ev.Synced.Revision, ev.Synced.Rescan, sha)
	}
	return ev.Synced
}

// failed waits for the next GitHub event and requires a source.failed.
func (g *ghStack) failed(t *testing.T) *events.SourceFailed {
	t.Helper()
	ev := g.next(t)
	if ev.Failed == nil {
		t.Fatalf("got source.synced %+v, want source.failed", ev.Synced)
	}
	return ev.Failed
}

// read returns the bytes uri serves, or an error.
func (g *ghStack) read(uri string) ([]byte, error) {
	b, _, err := g.s.readBytes(uri)
	return b, err
}

// served waits until uri serves want exactly.
func (g *ghStack) served(t *testing.T, uri, want string) {
	t.Helper()
	waitFor(t, uri+" serving the expected bytes", func() bool {
		b, err := g.read(uri)
		return err == nil && string(b) == want
	}, g.logs)
}

// gone waits until uri is neither listed nor readable.
func (g *ghStack) gone(t *testing.T, uri string) {
	t.Helper()
	waitFor(t, uri+" gone", func() bool {
		_, err := g.read(uri)
		return err != nil && g.s.entry(uri) == nil
	}, g.logs)
}

// logLine waits for a log line at WARN or ERROR holding every needle and
// returns it.
func (g *ghStack) logLine(t *testing.T, needles ...string) string {
	t.Helper()
	var line string
	waitFor(t, fmt.Sprintf("a WARN/ERROR log line with %q", needles), func() bool {
		ls := stderrLines(g.logs.String(), skipLevels, needles...)
		if len(ls) > 0 {
			line = ls[len(ls)-1]
		}
		return line != ""
	}, g.logs)
	return line
}

// TestGitHubSync is the main acceptance run of issue 6: first sync, a
// no-change check (304, no download), a new commit that changes one skill
// (its content updated, notifications/resources/updated sent to the
// subscriber) and removes another (gone), and the token on every API and
// download request but in no log line.
func TestGitHubSync(t *testing.T) {
	gh := newFakeGitHub(t)
	alpha1 := skillBody("alpha", "First skill.")
	beta := skillBody("beta", "Second skill.")
	sha1 := gh.push("acme", "skills", "main", false, map[string]string{
		"README.md":               "# acme skills\n",
		"alpha/SKILL.md":          alpha1,
		"alpha/templates/mail.md": "Dear {name},\n",
		"beta/SKILL.md":           beta,
	})
	st := startGH(t, gh, nil, "github.com/acme/skills")
	const alphaURI = "skill://acme-skills/alpha/SKILL.md"
	const betaURI = "skill://acme-skills/beta/SKILL.md"

	// First sync: default branch resolved, tarball downloaded and served.
	st.synced(t, sha1)
	st.served(t, alphaURI, alpha1)
	st.served(t, betaURI, beta)
	st.served(t, "skill://acme-skills/alpha/templates/mail.md", "Dear {name},\n")
	if n := gh.count("/_codeload/", ""); n != 1 {
		t.Errorf("tarball downloads after the first sync = %d, want 1", n)
	}
	meta, err := os.ReadFile(filepath.Join(st.cache, "acme", ".skills.sync.json"))
	if err != nil || !strings.Contains(string(meta), sha1) {
		t.Errorf("sync metadata = %s, %v; want it to name %s", meta, err, sha1)
	}

	n := newNotes()
	cs, _ := st.connectNotes(t, n)
	t.Cleanup(func() { cs.Close() })
	if err := cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: alphaURI}); err != nil {
		t.Fatal(err)
	}

	// No change: a conditional request answered 304, no download.
	etag := `"` + sha1 + `"`
	st.syncNow(t)
	waitFor(t, "a commits request with If-None-Match", func() bool { return gh.count("/repos/acme/skills/commits/", etag) == 1 }, st.logs)
	// The default branch is asked once: a poll costs one request.
	repoCalls := 0
	for _, r := range gh.requests() {
		if r.Path == "/repos/acme/skills" {
			repoCalls++
		}
	}
	if repoCalls != 1 {
		t.Errorf("GET /repos/acme/skills made %d times, want 1 (the default branch is kept)", repoCalls)
	}

	// A new commit: alpha changed, beta removed. The next event is its
	// sync (the 304 check published nothing).
	alpha2 := skillBody("alpha", "First skill, revised.")
	sha2 := gh.push("acme", "skills", "main", false, map[string]string{"alpha/SKILL.md": alpha2})
	st.syncNow(t)
	st.synced(t, sha2)
	select {
	case uri := <-n.updated:
		if uri != alphaURI {
			t.Errorf("resources/updated for %s, want %s", uri, alphaURI)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no notifications/resources/updated for %s; log:\n%s", alphaURI, st.logs.String())
	}
	st.served(t, alphaURI, alpha2)
	st.gone(t, betaURI)
	st.gone(t, "skill://acme-skills/alpha/templates/mail.md")
	if n := gh.count("/_codeload/", ""); n != 2 {
		t.Errorf("tarball downloads = %d, want 2 (none for the 304 check)", n)
	}

	// The token went, as a bearer token, with every API and download
	// request.
	for _, r := range gh.requests() {
		if r.Authorization != "Bearer "+ghToken {
			t.Errorf("request %s: Authorization %q, want the bearer token", r.Path, r.Authorization)
		}
	}
	if gh.count("/repos/acme/skills/tarball/", "") != 2 || gh.count("/repos/acme/skills", "") == 0 {
		t.Errorf("requests = %+v, want two tarball redirects", gh.requests())
	}
	// (The token is checked absent from the log at cleanup.)
}

// TestGitHubSubpathAndPinnedTag: a /tree/<tag>/<path> source serves only
// the skills below the subpath, and a tag is pinned: fetched once, never
// checked again (issue 6, reference §4 "pinned"), while a branch source
// beside it is checked on every sync request.
func TestGitHubSubpathAndPinnedTag(t *testing.T) {
	gh := newFakeGitHub(t)
	team := skillBody("deploy", "Deploys.")
	gh.push("acme", "mono", "v1.0.0", true, map[string]string{
		"skills/team/deploy/SKILL.md": team,
		"skills/other/SKILL.md":       skillBody("other", "Outside the subpath."),
		"outside/SKILL.md":            skillBody("outside", "Not served."),
	})
	gh.push("acme", "live", "main", false, map[string]string{"live/SKILL.md": skillBody("live", "Live.")})
	st := startGH(t, gh, nil, "https://github.com/acme/mono/tree/v1.0.0/skills/team", "github.com/acme/live")
	for range 2 {
		if ev := st.next(t); ev.Synced == nil {
			t.Fatalf("first sync failed: %+v", ev.Failed)
		}
	}
	st.served(t, "skill://acme-mono/deploy/SKILL.md", team)
	if e := st.s.entry("skill://acme-mono/other/SKILL.md"); e != nil {
		t.Errorf("a skill outside the subpath is listed: %+v", e)
	}
	for _, e := range st.s.listAll() {
		if strings.Contains(e.URI, "outside") {
			t.Errorf("a skill outside the subpath is listed: %s", e.URI)
		}
	}
	if _, err := os.Stat(filepath.Join(st.cache, "acme", "mono", "outside", "SKILL.md")); err != nil {
		t.Errorf("the whole repository is cached under <cache>/acme/mono: %v", err)
	}
	monoCommits := gh.count("/repos/acme/mono/commits/", "")
	if monoCommits != 1 || gh.count("/repos/acme/mono/git/ref/tags/v1.0.0", "") != 1 {
		t.Fatalf("first sync of the tag: %+v, want one tag lookup and one commits request", gh.requests())
	}

	for i := range 2 {
		before := gh.count("/repos/acme/live/commits/", "")
		st.syncNow(t)
		waitFor(t, "a check of the branch source", func() bool { return gh.count("/repos/acme/live/commits/", "") > before }, st.logs)
		if got := gh.count("/repos/acme/mono/", ""); got != 3 {
			t.Errorf("SyncNow #%d: %d requests for the pinned tag repository, want still 3 (tag, commit, tarball)", i+1, got)
		}
	}
}

// TestGitHubFailuresKeepLastGoodCopy: a 404, a hostile tarball (BR-22's
// evil-skill.tar.gz: traversal, then links; and a tarball with a symlink
// inside a skill) and a 403 rate limit each fail the check with one clear
// log line naming the repository and a source.failed, while the last good
// copy stays served byte for byte and nothing is written outside the cache
// (issue 6, BR-22 last paragraph).
func TestGitHubFailuresKeepLastGoodCopy(t *testing.T) {
	gh := newFakeGitHub(t)
	good := skillBody("alpha", "The good copy.")
	sha1 := gh.push("acme", "skills", "main", false, map[string]string{"alpha/SKILL.md": good, "alpha/data.txt": "v1\n"})
	st := startGH(t, gh, nil, "github.com/acme/skills")
	st.synced(t, sha1)
	const uri = "skill://acme-skills/alpha/SKILL.md"
	st.served(t, uri, good)
	clone := filepath.Join(st.cache, "acme", "skills")
	stillGood := func(step string) {
		t.Helper()
		b, err := st.read(uri)
		if err != nil || string(b) != good {
			t.Errorf("%s: %s = %q, %v; want the last good copy", step, uri, b, err)
		}
		if b, err := st.read("skill://acme-skills/alpha/data.txt"); err != nil || string(b) != "v1\n" {
			t.Errorf("%s: data.txt = %q, %v; want the last good copy", step, b, err)
		}
		if b, err := os.ReadFile(filepath.Join(clone, "alpha", "SKILL.md")); err != nil || string(b) != good {
			t.Errorf("%s: cached SKILL.md = %q, %v", step, b, err)
		}
		ents, _ := os.ReadDir(filepath.Join(st.cache, "acme"))
		for _, e := range ents {
			if e.Name() != "skills" && e.Name() != ".skills.sync.json" && e.Name() != ".skilljack-cache" {
				t.Errorf("%s: leftover %s in the cache", step, e.Name())
			}
		}
	}

	t.Run("404", func(t *testing.T) {
		gh.failWith("acme", "skills", &ghFail{code: http.StatusNotFound, body: `{"message":"Not Found"}`})
		st.syncNow(t)
		f := st.failed(t)
		if !strings.Contains(f.Error, "not found") || !strings.Contains(f.Error, "GITHUB_TOKEN") {
			t.Errorf("source.failed error = %q, want the clear 404 message", f.Error)
		}
		st.logLine(t, "acme/skills", "not found")
		stillGood("after a 404")
		gh.failWith("acme", "skills", nil)
	})

	hostile := []struct {
		name    string
		tarball func(sha string) []byte
		entry   string
	}{
		{name: "BR-22 traversal and links", entry: "evil-skill/../../escaped.md", tarball: func(string) []byte {
			b, err := os.ReadFile(filepath.Join(caseDir(t, "BR-22"), "evil-skill.tar.gz"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{name: "symlink inside a skill", entry: "alpha/link", tarball: func(sha string) []byte {
			return ghTarball(t, "acme-skills-"+sha[:7], sha, map[string]string{"alpha/SKILL.md": skillBody("alpha", "Evil.")},
				map[string]string{"alpha/link": "/etc/passwd"})
		}},
	}
	for i, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			sha := strings.Repeat(strconv.Itoa(i+1), 40)
			gh.pushTarball("acme", "skills", "main", false, sha, h.tarball(sha))
			st.syncNow(t)
			f := st.failed(t)
			if !strings.Contains(f.Error, h.entry) {
				t.Errorf("source.failed error = %q, want it to name the entry %q", f.Error, h.entry)
			}
			st.logLine(t, "acme/skills", h.entry)
			stillGood("after a hostile tarball")
			filepath.WalkDir(st.base, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if d.Type()&fs.ModeSymlink != 0 || d.Name() == "escaped.md" || d.Name() == "passwd" {
					t.Errorf("written from the hostile tarball: %s", p)
				}
				return nil
			})
			for _, p := range []string{filepath.Join(st.cache, "..", "escaped.md"), filepath.Join(st.base, "..", "escaped.md")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists", p)
				}
			}
		})
	}

	t.Run("403 rate limit", func(t *testing.T) {
		reset := time.Now().Add(time.Hour).Truncate(time.Second)
		gh.failWith("acme", "skills", &ghFail{code: http.StatusForbidden, body: `{"message":"API rate limit exceeded"}`,
			header: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10)}})
		st.syncNow(t)
		f := st.failed(t)
		if !f.RetryAt.Equal(reset) {
			t.Errorf("source.failed RetryAt = %v, want the reset time %v", f.RetryAt, reset)
		}
		st.logLine(t, "acme/skills", "rate limited until")
		stillGood("after a rate limit")
		// Until the reset, a sync request sends nothing.
		before := gh.count("/repos/", "")
		st.syncNow(t)
		waitFor(t, "the ignored-request log line", func() bool {
			return strings.Contains(st.logs.String(), "GitHub sync request ignored: rate limited")
		}, st.logs)
		if got := gh.count("/repos/", ""); got != before {
			t.Errorf("API requests during the rate limit: %d, want %d", got, before)
		}
	})
}

// TestGitHubAllowlistMiss: a repository whose owner is not allowlisted is
// not fetched at all, with one line saying which variable to set (issue 6
// "default-deny", reference §4 "Blocked").
func TestGitHubAllowlistMiss(t *testing.T) {
	gh := newFakeGitHub(t)
	gh.push("acme", "skills", "main", false, map[string]string{"alpha/SKILL.md": skillBody("alpha", "A.")})
	st := startGH(t, gh, map[string]string{"GITHUB_ALLOWED_ORGS": "other-org", "GITHUB_ALLOWED_USERS": "someone"}, "github.com/acme/skills")
	line := st.logLine(t, "Blocked", "github.com/acme/skills", "GITHUB_ALLOWED_ORGS", "GITHUB_ALLOWED_USERS")
	if !strings.Contains(line, "level=WARN") {
		t.Errorf("blocked line %q, want level WARN", line)
	}
	// Issue 11 item 4 reverses what this checked (no poller without an
	// allowlisted source): the poller exists from the start, idle, so that
	// a later configuration allowlisting the owner is synced. Idle means
	// no request (checked below).
	// The pipeline exports no actor any more: a sync request reaches the
	// poller, which stays idle (no request, checked below).
	st.syncNow(t)
	for _, e := range st.s.listAll() {
		if strings.HasPrefix(e.URI, "skill://acme-skills/") {
			t.Errorf("blocked repository served: %s", e.URI)
		}
	}
	if reqs := gh.requests(); len(reqs) != 0 {
		t.Errorf("requests to GitHub for a blocked repository: %+v", reqs)
	}
}

// TestGitHubRestartServesCacheAndDownloadsNothing: a second server on the
// same cache serves the cached copy and, the commit being unchanged,
// downloads nothing (the stored ETag gives a 304) (issue 6 "startup never
// waits for GitHub").
func TestGitHubRestartServesCacheAndDownloadsNothing(t *testing.T) {
	gh := newFakeGitHub(t)
	body := skillBody("alpha", "Cached.")
	sha := gh.push("acme", "skills", "main", false, map[string]string{"alpha/SKILL.md": body})
	env := map[string]string{"SKILLJACK_CACHE_DIR": filepath.Join(t.TempDir(), "cache")}
	first := startGH(t, gh, env, "github.com/acme/skills")
	first.synced(t, sha)
	first.stop(t)

	// GitHub fails the second start's first check: the cache is served
	// anyway.
	gh.failWith("acme", "skills", &ghFail{code: http.StatusNotFound, body: `{"message":"Not Found"}`})
	downloads := gh.count("/_codeload/", "")
	second := startGH(t, gh, env, "github.com/acme/skills")
	second.served(t, "skill://acme-skills/alpha/SKILL.md", body)
	second.failed(t)

	gh.failWith("acme", "skills", nil)
	second.syncNow(t)
	waitFor(t, "a conditional commits request", func() bool {
		return gh.count("/repos/acme/skills/commits/", `"`+sha+`"`) > 0
	}, second.logs)
	second.stop(t)
	if got := gh.count("/_codeload/", ""); got != downloads {
		t.Errorf("tarball downloads after the restart = %d, want %d", got, downloads)
	}
	select {
	case ev := <-second.remote:
		if ev.Synced != nil && ev.Synced.Source.Kind == events.SourceGitHub {
			t.Errorf("source.synced after an unchanged commit: %+v", ev.Synced)
		}
	default:
	}
}

// TestGitHubCacheChangedOnDisk: a clone folder changed by someone else (a
// file edited, a skill deleted) is noticed at the next check even though
// the commit is unchanged (304): the commit's tarball is downloaded again
// and the repository's own bytes are served.
func TestGitHubCacheChangedOnDisk(t *testing.T) {
	gh := newFakeGitHub(t)
	alpha := skillBody("alpha", "First skill.")
	beta := skillBody("beta", "Second skill.")
	sha := gh.push("acme", "skills", "main", false, map[string]string{"alpha/SKILL.md": alpha, "beta/SKILL.md": beta})
	st := startGH(t, gh, nil, "github.com/acme/skills")
	st.synced(t, sha)
	st.served(t, "skill://acme-skills/alpha/SKILL.md", alpha)
	clone := filepath.Join(st.cache, "acme", "skills")
	if err := os.WriteFile(filepath.Join(clone, "alpha", "SKILL.md"), []byte(skillBody("alpha", "Tampered.")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(clone, "beta")); err != nil {
		t.Fatal(err)
	}
	st.syncNow(t)
	st.synced(t, sha)
	if n := gh.count("/_codeload/", ""); n != 2 {
		t.Errorf("tarball downloads = %d, want 2 (the changed clone downloaded again)", n)
	}
	st.logLine(t, "cached copy of acme/skills changed on disk")
	st.served(t, "skill://acme-skills/alpha/SKILL.md", alpha)
	st.served(t, "skill://acme-skills/beta/SKILL.md", beta)
	// Intact again: the next check is a 304 and downloads nothing.
	st.syncNow(t)
	// (The repair's own commits request was unconditional: nothing trusted
	// was cached.)
	waitFor(t, "a conditional commits request", func() bool { return gh.count("/repos/acme/skills/commits/", `"`+sha+`"`) == 1 }, st.logs)
	time.Sleep(200 * time.Millisecond)
	if n := gh.count("/_codeload/", ""); n != 2 {
		t.Errorf("tarball downloads after the repair = %d, want still 2", n)
	}
}
