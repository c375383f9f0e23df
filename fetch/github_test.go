package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testToken = "ghp_TESTTOKEN0123456789abcdefSECRET"
	testSHA   = "0123456789abcdef0123456789abcdef01234567"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeGitHub is an API server (GitHub Enterprise style, with a /api/v3
// prefix) plus codeload.github.com, github.com and evil.test.
type fakeGitHub struct {
	api, codeload, web, evil *server
	hc                       *http.Client
	apiURL                   string
	tarball                  []byte
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{tarball: bytes.Repeat([]byte("tarball!"), 2000)}
	f.api = newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("X-GitHub-Api-Version") != "2022-11-28" {
			http.Error(w, "missing API headers", http.StatusBadRequest)
			return
		}
		p, ok := strings.CutPrefix(r.URL.Path, "/api/v3")
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(p, "/repos/o/badtoken/") {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		switch p {
		case "/repos/o/r":
			io.WriteString(w, `{"full_name":"o/r","default_branch":"trunk"}`)
		case "/repos/o/r/commits/trunk", "/repos/o/r/commits/feature/x":
			if r.Header.Get("If-None-Match") == `W/"c1"` {
				w.Header().Set("ETag", `W/"c1"`)
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `W/"c1"`)
			io.WriteString(w, `{"sha":"`+strings.ToUpper(testSHA)+`","commit":{"message":"x"}}`)
		case "/repos/o/r/commits/nosha":
			io.WriteString(w, `{"message":"weird"}`)
		case "/repos/o/r/git/ref/tags/v1.0.0":
			io.WriteString(w, `{"ref":"refs/tags/v1.0.0","object":{"sha":"`+testSHA+`"}}`)
		case "/repos/o/r/git/ref/tags/main":
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		case "/repos/o/r/tarball/" + testSHA:
			http.Redirect(w, r, "https://codeload.github.com/o/r/legacy.tar.gz/"+testSHA+"?token=SHORTLIVED", http.StatusFound)
		case "/repos/o/web/tarball/" + testSHA:
			http.Redirect(w, r, "https://github.com/o/web/archive/"+testSHA+".tar.gz", http.StatusFound)
		case "/repos/o/self/tarball/" + testSHA:
			f.serveTarball(w, r)
		case "/repos/o/evil/tarball/" + testSHA:
			http.Redirect(w, r, "https://evil.test/steal", http.StatusFound)
		case "/repos/o/limited/commits/main":
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", "4102444800")
			http.Error(w, `{"message":"API rate limit exceeded"}`, http.StatusForbidden)
		case "/repos/o/echo/commits/main":
			http.Error(w, "you sent "+r.Header.Get("Authorization"), http.StatusBadRequest)
		case "/repos/o/echo5/commits/main":
			http.Error(w, "you sent "+r.Header.Get("Authorization"), http.StatusInternalServerError)
		case "/repos/o/flaky/commits/main":
			http.Error(w, "unavailable", http.StatusBadGateway)
		default:
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		}
	})
	f.codeload = newServer(t, true, f.serveTarball)
	f.web = newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://codeload.github.com/o/web/tar.gz/"+testSHA, http.StatusFound)
	})
	f.evil = newServer(t, true, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "gotcha") })
	f.hc = hostsClient(t, map[string]*server{
		"codeload.github.com:443": f.codeload,
		"github.com:443":          f.web,
		"evil.test:443":           f.evil,
	})
	f.apiURL = f.api.URL + "/api/v3/"
	return f
}

func (f *fakeGitHub) serveTarball(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(f.tarball)))
	w.Write(f.tarball)
}

func (f *fakeGitHub) client(token string, logs io.Writer) *GitHub {
	o := &GitHubOptions{APIURL: f.apiURL, Token: token, Fetch: Options{HTTPClient: f.hc, Backoff: time.Millisecond}}
	if logs != nil {
		o.Fetch.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return NewGitHub(o)
}

func TestNewGitHubDefaults(t *testing.T) {
	g := NewGitHub(nil)
	if g.api != "https://api.github.com" || g.tar.opts.MaxBytes != 100<<20 || g.c.opts.MaxBytes != 10<<20 {
		t.Errorf("api %s, caps %d %d", g.api, g.tar.opts.MaxBytes, g.c.opts.MaxBytes)
	}
	g = NewGitHub(&GitHubOptions{APIURL: "https://ghe.example/api/v3//", Fetch: Options{MaxBytes: 5}})
	if g.api != "https://ghe.example/api/v3" || g.tar.opts.MaxBytes != 5 {
		t.Errorf("api %s, cap %d", g.api, g.tar.opts.MaxBytes)
	}
	if got := g.repoURL("o", "r", "commits", "feature/a b"); got != "https://ghe.example/api/v3/repos/o/r/commits/feature/a%20b" {
		t.Errorf("repoURL %s", got)
	}
}

func TestIsFullSHA(t *testing.T) {
	for s, want := range map[string]bool{
		testSHA:                  true,
		strings.ToUpper(testSHA): true,
		testSHA[:39]:             false,
		testSHA + "0":            false,
		"main":                   false,
		strings.Repeat("g", 40):  false,
		"":                       false,
	} {
		if IsFullSHA(s) != want {
			t.Errorf("IsFullSHA(%q) != %v", s, want)
		}
	}
}

func TestGitHubCommit(t *testing.T) {
	f := newFakeGitHub(t)
	g := f.client(testToken, nil)
	ctx := context.Background()

	sha, etag, nm, err := g.Commit(ctx, "o", "r", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if sha != testSHA || etag != `W/"c1"` || nm {
		t.Fatalf("sha %s etag %s nm %v", sha, etag, nm)
	}
	reqs := f.api.rec.all()
	if len(reqs) != 2 || reqs[0].Path != "/api/v3/repos/o/r" || reqs[1].Path != "/api/v3/repos/o/r/commits/trunk" {
		t.Fatalf("requests %+v", reqs)
	}
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("%s: Authorization %q", r.Path, r.Header.Get("Authorization"))
		}
		if r.Header.Get("If-None-Match") != "" {
			t.Errorf("%s: unexpected If-None-Match", r.Path)
		}
	}

	sha, etag, nm, err = g.Commit(ctx, "o", "r", "feature/x", `W/"c1"`)
	if err != nil || !nm || sha != "" || etag != `W/"c1"` {
		t.Fatalf("304: sha %q etag %q nm %v err %v", sha, etag, nm, err)
	}
	last := f.api.rec.all()[2]
	if last.Path != "/api/v3/repos/o/r/commits/feature/x" || last.Header.Get("If-None-Match") != `W/"c1"` {
		t.Errorf("conditional request %+v", last)
	}

	if _, _, _, err := g.Commit(ctx, "o", "r", "nosha", ""); err == nil {
		t.Error("answer without sha accepted")
	}
	if _, _, _, err := g.Commit(ctx, "o", "r", "../x", ""); err == nil {
		t.Error("ref with .. accepted")
	}
	if _, _, _, err := g.Commit(ctx, "", "r", "main", ""); err == nil {
		t.Error("empty owner accepted")
	}
}

func TestGitHubNoTokenNoAuthorization(t *testing.T) {
	f := newFakeGitHub(t)
	g := f.client("", nil)
	if _, _, _, err := g.Commit(context.Background(), "o", "r", "trunk", ""); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := g.Tarball(context.Background(), "o", "r", testSHA, &buf); err != nil {
		t.Fatal(err)
	}
	for _, r := range append(f.api.rec.all(), f.codeload.rec.all()...) {
		if _, ok := r.Header["Authorization"]; ok {
			t.Errorf("%s%s: Authorization sent without a token", r.Host, r.Path)
		}
	}
}

func TestGitHubErrors(t *testing.T) {
	f := newFakeGitHub(t)
	g := f.client(testToken, nil)
	ctx := context.Background()
	var se *StatusError

	_, _, _, err := g.Commit(ctx, "o", "missing", "main", "")
	if !errors.As(err, &se) || se.Code != 404 || se.Message != "repository o/missing not found, or private and GITHUB_TOKEN is not set/does not grant access" {
		t.Errorf("404: %v", err)
	}
	_, _, _, err = g.Commit(ctx, "o", "badtoken", "main", "")
	if !errors.As(err, &se) || se.Code != 401 || se.Message != "GITHUB_TOKEN was rejected" {
		t.Errorf("401: %v", err)
	}
	before := f.api.rec.n()
	_, _, _, err = g.Commit(ctx, "o", "limited", "main", "")
	if !errors.As(err, &se) || se.Code != 403 || se.RetryAt.Unix() != 4102444800 || !strings.Contains(se.Message, "rate limit") {
		t.Errorf("403: %v", err)
	}
	if f.api.rec.n()-before != 1 {
		t.Error("403 retried")
	}
	before = f.api.rec.n()
	_, _, _, err = g.Commit(ctx, "o", "flaky", "main", "")
	if !errors.As(err, &se) || se.Code != 502 || f.api.rec.n()-before != 3 {
		t.Errorf("502: %v, %d requests", err, f.api.rec.n()-before)
	}
}

func TestGitHubIsTag(t *testing.T) {
	f := newFakeGitHub(t)
	g := f.client(testToken, nil)
	ctx := context.Background()
	if ok, err := g.IsTag(ctx, "o", "r", "v1.0.0"); err != nil || !ok {
		t.Errorf("v1.0.0: %v %v", ok, err)
	}
	if ok, err := g.IsTag(ctx, "o", "r", "main"); err != nil || ok {
		t.Errorf("main: %v %v", ok, err)
	}
	var se *StatusError
	if _, err := g.IsTag(ctx, "o", "badtoken", "x"); !errors.As(err, &se) || se.Code != 401 {
		t.Errorf("401: %v", err)
	}
	reqs := f.api.rec.all()
	if reqs[0].Path != "/api/v3/repos/o/r/git/ref/tags/v1.0.0" || reqs[0].Header.Get("Authorization") != "Bearer "+testToken {
		t.Errorf("request %+v", reqs[0])
	}
}

func TestGitHubTarball(t *testing.T) {
	f := newFakeGitHub(t)
	g := f.client(testToken, nil)
	ctx := context.Background()

	t.Run("codeload", func(t *testing.T) {
		file, err := os.CreateTemp(t.TempDir(), "tgz")
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		n, err := g.Tarball(ctx, "o", "r", testSHA, file)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(file.Name())
		if n != int64(len(f.tarball)) || !bytes.Equal(got, f.tarball) {
			t.Fatalf("n %d, file %d bytes", n, len(got))
		}
		api := f.api.rec.all()
		if a := api[len(api)-1]; a.Path != "/api/v3/repos/o/r/tarball/"+testSHA || a.Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("API request %+v", a)
		}
		cl := f.codeload.rec.all()
		if len(cl) != 1 || cl[0].Host != "codeload.github.com" || cl[0].Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("codeload requests %+v", cl)
		}
	})

	t.Run("via github.com", func(t *testing.T) {
		var buf bytes.Buffer
		n, err := g.Tarball(ctx, "o", "web", testSHA, &buf)
		if err != nil || n != int64(len(f.tarball)) {
			t.Fatalf("n %d err %v", n, err)
		}
		web := f.web.rec.all()
		if len(web) != 1 || web[0].Host != "github.com" {
			t.Fatalf("github.com requests %+v", web)
		}
		if _, ok := web[0].Header["Authorization"]; ok {
			t.Error("token sent to github.com")
		}
		cl := f.codeload.rec.all()
		if last := cl[len(cl)-1]; last.Path != "/o/web/tar.gz/"+testSHA || last.Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("codeload request %+v", last)
		}
	})

	t.Run("API origin serves it", func(t *testing.T) {
		var buf bytes.Buffer
		if n, err := g.Tarball(ctx, "o", "self", testSHA, &buf); err != nil || n != int64(len(f.tarball)) {
			t.Fatalf("n %d err %v", n, err)
		}
	})

	t.Run("cap", func(t *testing.T) {
		small := NewGitHub(&GitHubOptions{APIURL: f.apiURL, Token: testToken, Fetch: Options{HTTPClient: f.hc, MaxBytes: 100, Backoff: time.Millisecond}})
		var buf bytes.Buffer
		if _, err := small.Tarball(ctx, "o", "r", testSHA, &buf); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("redirect off the GitHub hosts", func(t *testing.T) {
		var buf bytes.Buffer
		_, err := g.Tarball(ctx, "o", "evil", testSHA, &buf)
		if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "https://evil.test/steal") {
			t.Fatalf("err = %v", err)
		}
		if f.evil.rec.n() != 0 {
			t.Error("evil.test got a request")
		}
	})
}

// The token appears in no error and no log line, whatever goes wrong.
func TestGitHubTokenNeverLeaks(t *testing.T) {
	f := newFakeGitHub(t)
	var logs syncBuffer
	g := f.client(testToken, &logs)
	ctx := context.Background()
	var errs []error
	_, _, _, err := g.Commit(ctx, "o", "missing", "main", "") // 404
	errs = append(errs, err)
	_, _, _, err = g.Commit(ctx, "o", "limited", "main", "") // 403 rate limit
	errs = append(errs, err)
	_, _, _, err = g.Commit(ctx, "o", "badtoken", "main", "") // 401
	errs = append(errs, err)
	_, _, _, err = g.Commit(ctx, "o", "echo", "main", "") // body echoes the header
	errs = append(errs, err)
	_, _, _, err = g.Commit(ctx, "o", "flaky", "main", "") // 502, retried (logged)
	errs = append(errs, err)
	_, _, _, err = g.Commit(ctx, "o", "echo5", "main", "") // 500 echoing it, retried (logged)
	errs = append(errs, err)
	_, err = g.Tarball(ctx, "o", "evil", testSHA, io.Discard) // redirect off-list
	errs = append(errs, err)
	_, err = g.Tarball(ctx, "o", "r", testSHA, io.Discard) // success through redirect
	if err != nil {
		t.Fatal(err)
	}

	// Network error: the API server is gone.
	dead := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {})
	deadURL := dead.URL
	dead.Close()
	gd := NewGitHub(&GitHubOptions{APIURL: deadURL, Token: testToken, Fetch: Options{
		HTTPClient: f.hc, Backoff: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}})
	_, _, _, err = gd.Commit(ctx, "o", "r", "main", "")
	errs = append(errs, err)

	for i, err := range errs {
		if err == nil {
			t.Errorf("case %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), testToken) {
			t.Errorf("case %d: token in error %q", i, err)
		}
	}
	if strings.Contains(errs[3].Error(), "[REDACTED]") == false {
		t.Errorf("echoed token not redacted: %v", errs[3])
	}
	out := logs.String()
	if !strings.Contains(out, "fetch retry") || !strings.Contains(out, "fetch redirect") {
		t.Errorf("expected debug lines, got:\n%s", out)
	}
	if strings.Contains(out, testToken) {
		t.Errorf("token in logs:\n%s", out)
	}
	if strings.Contains(out, "SHORTLIVED") {
		t.Errorf("codeload query token in logs:\n%s", out)
	}
}
