package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestGetBasic(t *testing.T) {
	body := []byte("---\nname: demo\n---\nhello\n")
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/markdown")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.Write(body)
	})
	o := fast(s)
	o.UserAgent = "test-agent/1"
	var headerCalls []string
	o.Header = func(u *url.URL) http.Header {
		headerCalls = append(headerCalls, u.String())
		return http.Header{"X-Extra": {"yes"}}
	}
	c := New(o)
	resp, err := c.Get(context.Background(), s.URL+"/a/SKILL.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Body, body) || resp.Size != int64(len(body)) || resp.Code != 200 || resp.NotModified {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Digest != Digest(body) {
		t.Errorf("digest %s, want %s", resp.Digest, Digest(body))
	}
	if resp.ContentType != "text/markdown" || resp.Validators.ETag != `"v1"` || resp.Validators.LastModified != "Mon, 02 Jan 2006 15:04:05 GMT" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.URL.String() != s.URL+"/a/SKILL.md" {
		t.Errorf("URL = %s", resp.URL)
	}
	r := s.rec.all()[0]
	if r.Header.Get("User-Agent") != "test-agent/1" || r.Header.Get("X-Extra") != "yes" {
		t.Errorf("request headers %v", r.Header)
	}
	if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
		t.Errorf("unconditional request sent validators: %v", r.Header)
	}
	if len(headerCalls) != 1 {
		t.Errorf("Header called %d times", len(headerCalls))
	}
}

func TestDefaultUserAgentAndEmptyBody(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {})
	resp, err := New(fast(s)).Get(context.Background(), s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body == nil || len(resp.Body) != 0 || resp.Digest != Digest(nil) {
		t.Errorf("resp = %+v", resp)
	}
	if ua := s.rec.all()[0].Header.Get("User-Agent"); ua != "skilljack-mcp" {
		t.Errorf("User-Agent %q", ua)
	}
}

func TestCallerClientNotMutated(t *testing.T) {
	hc := &http.Client{Timeout: time.Second}
	New(&Options{HTTPClient: hc})
	if hc.CheckRedirect != nil {
		t.Fatal("caller's client was mutated")
	}
}

func TestSchemeRule(t *testing.T) {
	plain := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	ctx := context.Background()

	_, err := New(fast(plain)).Get(ctx, plain.URL+"/x", nil)
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "disallowed scheme http") || !strings.Contains(err.Error(), plain.URL+"/x") {
		t.Fatalf("err = %v", err)
	}
	if plain.rec.n() != 0 {
		t.Fatal("refused URL got a request")
	}

	o := fast(plain)
	o.AllowHTTP = true
	if _, err := New(o).Get(ctx, plain.URL+"/x", nil); err != nil {
		t.Fatalf("AllowHTTP: %v", err)
	}

	for _, raw := range []string{"ftp://example.com/x", "file:///etc/passwd", "/relative/only", "https:///nohost"} {
		_, err := New(o).Get(ctx, raw, nil)
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("%s: err = %v", raw, err)
		}
	}
}

func TestAllowFirstURL(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	o := fast(s)
	o.Allow = AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", []string{"https://other.test"})
	_, err := New(o).Get(context.Background(), s.URL+"/index.json", nil)
	if !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("err = %v", err)
	}
	want := "origin " + s.URL + " is not in WELL_KNOWN_ALLOWED_ORIGINS"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), s.URL+"/index.json") {
		t.Errorf("err = %v, want it to contain %q and the URL", err, want)
	}
	if s.rec.n() != 0 {
		t.Error("refused URL got a request")
	}
	o.Allow = AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", []string{s.URL + "/"})
	if _, err := New(o).Get(context.Background(), s.URL+"/index.json", nil); err != nil {
		t.Fatal(err)
	}
	if s.rec.n() != 1 {
		t.Errorf("%d requests", s.rec.n())
	}
}

// BR-24: publisher.test redirects to cdn.publisher.test.
func TestRedirectTwoHosts(t *testing.T) {
	const index = `{"skills":[]}`
	cdn := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v7/agent-skills/index.json" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, index)
	})
	cdnPlain := newServer(t, false, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, index) })
	var location atomic.Value
	location.Store("https://cdn.publisher.test/v7/agent-skills/index.json")
	pub := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, location.Load().(string), http.StatusFound)
	})
	hc := hostsClient(t, map[string]*server{
		"publisher.test:443":     pub,
		"cdn.publisher.test:443": cdn,
		"cdn.publisher.test:80":  cdnPlain,
	})
	first := "https://publisher.test/.well-known/agent-skills/index.json"
	ctx := context.Background()
	both := AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", []string{"https://publisher.test", "https://cdn.publisher.test"})

	t.Run("followed", func(t *testing.T) {
		c := New(&Options{HTTPClient: hc, Allow: both, Backoff: time.Millisecond})
		resp, err := c.Get(ctx, first, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != index {
			t.Fatalf("body %q", resp.Body)
		}
		if got := resp.URL.String(); got != "https://cdn.publisher.test/v7/agent-skills/index.json" {
			t.Fatalf("final URL %s", got)
		}
		rel, _ := url.Parse("demo/SKILL.md")
		if got := resp.URL.ResolveReference(rel).String(); got != "https://cdn.publisher.test/v7/agent-skills/demo/SKILL.md" {
			t.Errorf("resolved %s", got)
		}
		if r := cdn.rec.all(); len(r) != 1 || r[0].Host != "cdn.publisher.test" {
			t.Errorf("cdn requests %+v", r)
		}
	})

	t.Run("origin refused", func(t *testing.T) {
		before := cdn.rec.n()
		c := New(&Options{HTTPClient: hc, Backoff: time.Millisecond,
			Allow: AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", []string{"https://publisher.test"})})
		_, err := c.Get(ctx, first, nil)
		if !errors.Is(err, ErrNotAllowed) {
			t.Fatalf("err = %v", err)
		}
		for _, want := range []string{"https://cdn.publisher.test/v7/agent-skills/index.json", "origin https://cdn.publisher.test is not in WELL_KNOWN_ALLOWED_ORIGINS"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err %q lacks %q", err, want)
			}
		}
		if cdn.rec.n() != before {
			t.Error("refused hop target got a request")
		}
	})

	t.Run("http location refused", func(t *testing.T) {
		location.Store("http://cdn.publisher.test/v7/agent-skills/index.json")
		defer location.Store("https://cdn.publisher.test/v7/agent-skills/index.json")
		c := New(&Options{HTTPClient: hc, Allow: both, Backoff: time.Millisecond})
		_, err := c.Get(ctx, first, nil)
		if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "disallowed scheme http") ||
			!strings.Contains(err.Error(), "http://cdn.publisher.test/v7/agent-skills/index.json") {
			t.Fatalf("err = %v", err)
		}
		if cdnPlain.rec.n() != 0 {
			t.Error("refused http hop got a request")
		}
		// With AllowHTTP (development) and the http origin allowed, it is followed.
		c = New(&Options{HTTPClient: hc, AllowHTTP: true, Backoff: time.Millisecond,
			Allow: AllowOrigins("X", []string{"https://publisher.test", "http://cdn.publisher.test"})})
		resp, err := c.Get(ctx, first, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.URL.String() != "http://cdn.publisher.test/v7/agent-skills/index.json" || cdnPlain.rec.n() != 1 {
			t.Errorf("URL %s, plain requests %d", resp.URL, cdnPlain.rec.n())
		}
	})
}

// BR-24 variant 3: a chain of 5 redirects is followed, the 6th refused.
func TestRedirectChain(t *testing.T) {
	var chain atomic.Int64
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		hop, _ := strconv.Atoi(r.URL.Query().Get("hop"))
		if int64(hop) < chain.Load() {
			w.Header().Set("Location", fmt.Sprintf("?hop=%d", hop+1)) // relative
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, "end")
	})
	c := New(fast(s))
	ctx := context.Background()

	chain.Store(5)
	resp, err := c.Get(ctx, s.URL+"/index.json?hop=0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.URL.String() != s.URL+"/index.json?hop=5" || string(resp.Body) != "end" {
		t.Fatalf("URL %s body %q", resp.URL, resp.Body)
	}
	if s.rec.n() != 6 {
		t.Fatalf("%d requests, want 6", s.rec.n())
	}

	chain.Store(6)
	before := s.rec.n()
	_, err = c.Get(ctx, s.URL+"/index.json?hop=0", nil)
	if !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("err = %v", err)
	}
	reqs := s.rec.all()[before:]
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6 (hops 0..5)", len(reqs))
	}
	for _, r := range reqs {
		if r.Query == "hop=6" {
			t.Fatal("the refused 6th hop got a request")
		}
	}
	if !strings.Contains(err.Error(), "hop=6") {
		t.Errorf("err %v does not name the refused URL", err)
	}
}

func TestRelativeLocationAndHeaderPerHop(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a/b/start":
			w.Header().Set("Location", "../c/next")
			w.WriteHeader(http.StatusMovedPermanently)
		case "/a/c/next":
			w.Header().Set("Location", "/abs/final")
			w.WriteHeader(http.StatusSeeOther)
		case "/abs/final":
			io.WriteString(w, "final")
		default:
			http.NotFound(w, r)
		}
	})
	o := fast(s)
	o.Header = func(u *url.URL) http.Header { return http.Header{"X-For": {u.Path}} }
	resp, err := New(o).Get(context.Background(), s.URL+"/a/b/start", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.URL.Path != "/abs/final" || string(resp.Body) != "final" {
		t.Fatalf("URL %s body %q", resp.URL, resp.Body)
	}
	for _, r := range s.rec.all() {
		if r.Header.Get("X-For") != r.Path {
			t.Errorf("request %s had X-For %q", r.Path, r.Header.Get("X-For"))
		}
	}
}

func TestRedirectWithoutLocationIsStatusError(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusFound) })
	_, err := New(fast(s)).Get(context.Background(), s.URL, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 302 || s.rec.n() != 1 {
		t.Fatalf("err = %v, %d requests", err, s.rec.n())
	}
}

func TestConditional304(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` && r.Header.Get("If-Modified-Since") == "Mon, 02 Jan 2006 15:04:05 GMT" {
			w.Header().Set("ETag", `"v2"`) // no Last-Modified in the 304
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "full")
	})
	var progressed bool
	o := fast(s)
	o.Progress = func(int64, int64) { progressed = true }
	c := New(o)
	cond := &Validators{ETag: `"v1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"}
	resp, err := c.Get(context.Background(), s.URL, cond)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.NotModified || resp.Code != 304 || resp.Body != nil || resp.Size != 0 {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Validators != (Validators{ETag: `"v2"`, LastModified: cond.LastModified}) {
		t.Errorf("validators %+v", resp.Validators)
	}
	if progressed {
		t.Error("Progress called on 304")
	}
	var buf bytes.Buffer
	resp, err = c.GetTo(context.Background(), s.URL, cond, &buf)
	if err != nil || !resp.NotModified || buf.Len() != 0 {
		t.Fatalf("GetTo 304: %+v %v %q", resp, err, buf.String())
	}
}

func TestCap(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 1000)
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") != "" {
			for i := 0; i < n; i += 100 {
				w.Write(big[i:min(i+100, n)])
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(big[:n])
	})
	o := fast(s)
	o.MaxBytes = 500
	c := New(o)
	ctx := context.Background()
	for _, q := range []string{"n=501", "n=1000", "n=501&chunked=1", "n=1000&chunked=1"} {
		before := s.rec.n()
		_, err := c.Get(ctx, s.URL+"/?"+q, nil)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "500 bytes") || !strings.Contains(err.Error(), s.URL) {
			t.Errorf("%s: err = %v", q, err)
		}
		if s.rec.n()-before != 1 {
			t.Errorf("%s: ErrTooLarge retried", q)
		}
	}
	for _, q := range []string{"n=500", "n=500&chunked=1"} {
		resp, err := c.Get(ctx, s.URL+"/?"+q, nil)
		if err != nil || resp.Size != 500 {
			t.Errorf("%s: %v", q, err)
		}
	}
	// GetTo: nothing past the cap reaches w.
	var buf bytes.Buffer
	if _, err := c.GetTo(ctx, s.URL+"/?n=1000&chunked=1", nil, &buf); !errors.Is(err, ErrTooLarge) || buf.Len() > 500 {
		t.Errorf("GetTo: %v, %d bytes written", err, buf.Len())
	}
}

func TestTruncatedBody(t *testing.T) {
	full := bytes.Repeat([]byte("0123456789"), 100)
	var failures atomic.Int64
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if failures.Add(-1) >= 0 {
			truncated(t, w, full, 300)
			return
		}
		w.Write(full)
	})
	c := New(fast(s))
	ctx := context.Background()

	failures.Store(1)
	resp, err := c.Get(ctx, s.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Body, full) || resp.Digest != Digest(full) || s.rec.n() != 2 {
		t.Fatalf("size %d, %d requests", resp.Size, s.rec.n())
	}

	failures.Store(100)
	before := s.rec.n()
	_, err = c.Get(ctx, s.URL, nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), s.URL) {
		t.Fatalf("err = %v", err)
	}
	if s.rec.n()-before != 3 {
		t.Errorf("%d attempts, want 3", s.rec.n()-before)
	}
}

func TestRetry5xx(t *testing.T) {
	var fails atomic.Int64
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if fails.Add(-1) >= 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "ok")
	})
	c := New(fast(s))
	fails.Store(2)
	resp, err := c.Get(context.Background(), s.URL, nil)
	if err != nil || string(resp.Body) != "ok" || s.rec.n() != 3 {
		t.Fatalf("err %v, %d requests", err, s.rec.n())
	}
	fails.Store(100)
	_, err = c.Get(context.Background(), s.URL, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 500 || se.Message != "boom" || s.rec.n() != 6 {
		t.Fatalf("err %v, %d requests", err, s.rec.n())
	}
}

func TestBackoffDoubles(t *testing.T) {
	var times []time.Time
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		times = append(times, time.Now())
		w.WriteHeader(http.StatusBadGateway)
	})
	o := fast(s)
	o.Backoff = 40 * time.Millisecond
	o.Attempts = 3
	if _, err := New(o).Get(context.Background(), s.URL, nil); err == nil {
		t.Fatal("no error")
	}
	if len(times) != 3 {
		t.Fatalf("%d requests", len(times))
	}
	if d1, d2 := times[1].Sub(times[0]), times[2].Sub(times[1]); d1 < 40*time.Millisecond || d2 < 80*time.Millisecond {
		t.Errorf("waits %v, %v", d1, d2)
	}
}

func Test4xxNotRetried(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "  no such skill  ", http.StatusNotFound)
	})
	_, err := New(fast(s)).Get(context.Background(), s.URL+"/y", nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("err = %v", err)
	}
	if want := "GET " + s.URL + "/y: 404 Not Found: no such skill"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if s.rec.n() != 1 {
		t.Errorf("%d requests, want 1", s.rec.n())
	}
}

func TestStatusErrorMessageCapped(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write(bytes.Repeat([]byte("é"), 500)) // 1000 bytes
	})
	_, err := New(fast(s)).Get(context.Background(), s.URL, nil)
	var se *StatusError
	if !errors.As(err, &se) || len(se.Message) > 200 || len(se.Message) < 198 {
		t.Fatalf("message %d bytes: %v", len(se.Message), err)
	}
	if (&StatusError{URL: "https://x/y", Code: 418}).Error() != "GET https://x/y: 418 I'm a teapot" {
		t.Error((&StatusError{URL: "https://x/y", Code: 418}).Error())
	}
}

func TestTimeoutRetried(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	hc := s.Client()
	hc.Timeout = 100 * time.Millisecond
	o := fast(s)
	o.HTTPClient = hc
	o.Attempts = 2
	start := time.Now()
	_, err := New(o).Get(context.Background(), s.URL, nil)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v", err)
	}
	if s.rec.n() != 2 {
		t.Errorf("%d requests, want 2", s.rec.n())
	}
	if time.Since(start) > 2*time.Second {
		t.Error("too slow")
	}
}

func TestContextCancelStopsBackoff(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	o := fast(s)
	o.Backoff = 10 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := New(o).Get(ctx, s.URL, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 2*time.Second || s.rec.n() != 1 {
		t.Errorf("took %v, %d requests", time.Since(start), s.rec.n())
	}
}

func TestCanceledContextNotRetried(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(fast(s)).Get(ctx, s.URL, nil)
	if !errors.Is(err, context.Canceled) || s.rec.n() != 0 {
		t.Fatalf("err = %v, %d requests", err, s.rec.n())
	}
}

func TestGetToFileRetry(t *testing.T) {
	full := bytes.Repeat([]byte("abcdefghij"), 5000)
	var fails atomic.Int64
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if fails.Add(-1) >= 0 {
			truncated(t, w, full, 20000)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		w.Write(full)
	})
	f, err := os.CreateTemp(t.TempDir(), "dl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fails.Store(1)
	var last, total int64
	o := fast(s)
	o.Progress = func(read, tot int64) { last, total = read, tot }
	resp, err := New(o).GetTo(context.Background(), s.URL, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Body != nil || resp.Size != int64(len(full)) || resp.Digest != Digest(full) || s.rec.n() != 2 {
		t.Fatalf("resp %+v, %d requests", resp, s.rec.n())
	}
	if last != int64(len(full)) || total != int64(len(full)) {
		t.Errorf("progress %d/%d", last, total)
	}
	got, _ := os.ReadFile(f.Name())
	if !bytes.Equal(got, full) {
		t.Fatalf("file has %d bytes, want %d", len(got), len(full))
	}

	// A writer that cannot start over is not retried once bytes reached it.
	fails.Store(1)
	before := s.rec.n()
	var sink bytes.Buffer
	_, err = New(fast(s)).GetTo(context.Background(), s.URL, nil, struct{ io.Writer }{&sink})
	if !errors.Is(err, io.ErrUnexpectedEOF) || s.rec.n()-before != 1 {
		t.Fatalf("err %v, %d requests", err, s.rec.n()-before)
	}
}

func TestGetToNonResettableRetriesBeforeBody(t *testing.T) {
	var fails atomic.Int64
	fails.Store(1)
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if fails.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "body")
	})
	var sink bytes.Buffer
	resp, err := New(fast(s)).GetTo(context.Background(), s.URL, nil, struct{ io.Writer }{&sink})
	if err != nil || sink.String() != "body" || resp.Size != 4 || s.rec.n() != 2 {
		t.Fatalf("err %v, sink %q, %d requests", err, sink.String(), s.rec.n())
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestGetToWriteErrorNotRetried(t *testing.T) {
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "body") })
	_, err := New(fast(s)).GetTo(context.Background(), s.URL, nil, failWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") || s.rec.n() != 1 {
		t.Fatalf("err %v, %d requests", err, s.rec.n())
	}
}

func TestRetryAt(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	date := now.Add(time.Hour).Format(http.TimeFormat)
	reset := now.Add(30 * time.Minute).Unix()
	tests := []struct {
		name string
		code int
		h    map[string]string
		want time.Time
	}{
		{"nothing", 503, nil, time.Time{}},
		{"seconds", 503, map[string]string{"Retry-After": "120"}, now.Add(2 * time.Minute)},
		{"date", 429, map[string]string{"Retry-After": date}, now.Add(time.Hour)},
		{"garbage", 503, map[string]string{"Retry-After": "soon"}, time.Time{}},
		{"reset on 403 remaining 0", 403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}, time.Unix(reset, 0)},
		{"reset on 429 without retry-after", 429, map[string]string{"X-RateLimit-Reset": strconv.FormatInt(reset, 10)}, time.Unix(reset, 0)},
		{"reset ignored on 404", 404, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}, time.Time{}},
		{"retry-after wins when remaining not 0", 403, map[string]string{"Retry-After": "60", "X-RateLimit-Remaining": "10", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}, now.Add(time.Minute)},
		{"later of both when remaining 0", 403, map[string]string{"Retry-After": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)}, time.Unix(reset, 0)},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := retryAt(tt.code, h, now); !got.Equal(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestStatusErrorRetryAtEndToEnd(t *testing.T) {
	reset := time.Now().Add(time.Hour).Unix()
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/secs":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/reset":
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
			w.WriteHeader(http.StatusForbidden)
		}
	})
	c := New(fast(s))
	var se *StatusError
	_, err := c.Get(context.Background(), s.URL+"/secs", nil)
	if !errors.As(err, &se) || time.Until(se.RetryAt) < 25*time.Second || time.Until(se.RetryAt) > 31*time.Second {
		t.Errorf("secs: %v %v", err, se.RetryAt)
	}
	_, err = c.Get(context.Background(), s.URL+"/reset", nil)
	if !errors.As(err, &se) || se.RetryAt.Unix() != reset {
		t.Errorf("reset: %v %v", err, se.RetryAt)
	}
	if s.rec.n() != 2 {
		t.Errorf("%d requests: 4xx retried", s.rec.n())
	}
}

func TestProgress(t *testing.T) {
	full := bytes.Repeat([]byte("p"), 100000)
	s := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(full)))
		w.Write(full)
	})
	var calls []int64
	o := fast(s)
	o.Progress = func(read, total int64) {
		calls = append(calls, read)
		if total != int64(len(full)) {
			t.Errorf("total %d", total)
		}
	}
	if _, err := New(o).Get(context.Background(), s.URL, nil); err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != int64(len(full)) {
		t.Fatalf("calls %v", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] <= calls[i-1] {
			t.Fatalf("not increasing: %v", calls)
		}
	}
}

func TestRedact(t *testing.T) {
	u, _ := url.Parse("https://user:pw@codeload.github.com/o/r/legacy.tar.gz/x?token=SECRET&a=1&X-Amz-Signature=S2")
	got := redact(u)
	if strings.Contains(got, "SECRET") || strings.Contains(got, "S2") || strings.Contains(got, "pw") || !strings.Contains(got, "a=1") {
		t.Errorf("redact = %s", got)
	}
}

func TestDigest(t *testing.T) {
	const abc = "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if Digest([]byte("abc")) != abc {
		t.Fatal(Digest([]byte("abc")))
	}
	hex64 := strings.Repeat("1", 64)
	upper := "E4BE574AAAACE3F8A6116CA56B16B6303597F7BAFBE2C9C34CA149EF3C5755FB"
	valid := map[string]bool{
		abc:                          true,
		"sha256:" + hex64:            true,
		"SHA256:" + hex64:            false,
		"sha256:" + upper:            false,
		"sha256:" + hex64[:63]:       false,
		"sha256:" + hex64 + "1":      false,
		hex64:                        false,
		"":                           false,
		"sha256:" + hex64[:63] + "g": false,
		"sha512:" + hex64:            false,
		" sha256:" + hex64[:63]:      false,
	}
	for s, want := range valid {
		if ValidDigest(s) != want {
			t.Errorf("ValidDigest(%q) = %v", s, !want)
		}
	}
	if err := VerifyDigest([]byte("abc"), abc); err != nil {
		t.Error(err)
	}
	err := VerifyDigest([]byte("abc"), "sha256:"+hex64)
	if !errors.Is(err, ErrDigestMismatch) {
		t.Fatal(err)
	}
	if want := "digest mismatch: expected sha256:" + hex64 + ", got " + abc; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if err := VerifyDigest([]byte("abc"), strings.ToUpper(abc)); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("uppercase digest matched: %v", err)
	}
}

func TestAllowOrigins(t *testing.T) {
	allow := AllowOrigins("WELL_KNOWN_ALLOWED_ORIGINS", []string{
		"https://Example.COM/", "https://port.test:8443", "http://dev.test:80", "https://ignored.test/path", "not a url", " ", "ftp://ftp.test",
	})
	tests := []struct {
		u  string
		ok bool
	}{
		{"https://example.com/.well-known/agent-skills/index.json", true},
		{"HTTPS://EXAMPLE.com/x", true},
		{"https://example.com:443/x", true},
		{"https://example.com:8443/x", false},
		{"https://sub.example.com/x", false},
		{"http://example.com/x", false},
		{"https://port.test:8443/x", true},
		{"https://port.test/x", false},
		{"http://dev.test/x", true},
		{"http://dev.test:8080/x", false},
		{"https://ignored.test/path", false},
		{"ftp://ftp.test/x", false},
		{"https://evil.test/", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.u)
		if err != nil {
			t.Fatal(err)
		}
		if err := allow(u); (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok=%v", tt.u, err, tt.ok)
		}
	}
	u, _ := url.Parse("https://evil.test/x")
	if err := allow(u); err == nil || err.Error() != "origin https://evil.test is not in WELL_KNOWN_ALLOWED_ORIGINS" {
		t.Errorf("refusal %q", err)
	}
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"HTTPS://Example.com:443/a?b#c": "https://example.com",
		"http://example.com:80/":        "http://example.com",
		"http://example.com:443/":       "http://example.com:443",
		"https://example.com:8443":      "https://example.com:8443",
		"https://[::1]:443/x":           "https://[::1]",
		"https://[::1]:8443/x":          "https://[::1]:8443",
	} {
		u, _ := url.Parse(in)
		if got := Origin(u); got != want {
			t.Errorf("Origin(%s) = %s, want %s", in, got, want)
		}
	}
}
