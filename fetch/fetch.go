package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Typed errors. Callers test them with errors.Is / errors.As.
var (
	// ErrNotAllowed: a URL (first request or redirect hop) was refused by the
	// allowlist or the scheme rules before any request was sent to it. The
	// wrapping error names the URL and the reason ("origin https://x is not
	// in WELL_KNOWN_ALLOWED_ORIGINS", "disallowed scheme http"), and also
	// wraps the error returned by Options.Allow. Never retried.
	ErrNotAllowed = errors.New("URL not allowed")
	// ErrTooLarge: a body went past Options.MaxBytes; reading stopped there
	// (or never started, when Content-Length already said so). The wrapping
	// error names the URL and the cap in bytes. Never retried.
	ErrTooLarge = errors.New("body too large")
	// ErrDigestMismatch: bytes did not hash to the expected digest.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrTooManyRedirects: more than Options.MaxRedirects hops. The hop
	// past the cap is refused before its request is sent (BR-24). Never
	// retried.
	ErrTooManyRedirects = errors.New("too many redirects")
)

// Defaults of [Options].
const (
	// DefaultMaxBytes is the body cap when Options.MaxBytes is 0: 10 MiB.
	DefaultMaxBytes int64 = 10 << 20
	// DefaultMaxRedirects is the hop cap when Options.MaxRedirects is 0.
	DefaultMaxRedirects = 5
	// DefaultAttempts is the number of tries when Options.Attempts is 0.
	DefaultAttempts = 3
	// DefaultBackoff is the first retry wait when Options.Backoff is 0.
	DefaultBackoff = time.Second
	// DefaultUserAgent is sent when Options.UserAgent is "".
	DefaultUserAgent = "skilljack-mcp"
	// DefaultTimeout is the whole-request timeout (headers and body) of the
	// http.Client used when Options.HTTPClient is nil.
	DefaultTimeout = 30 * time.Second
)

const (
	maxMessage = 200      // bytes of an error body kept in StatusError.Message
	maxDrain   = 64 << 10 // bytes of a redirect/error body read before closing
)

// StatusError is an answer other than 2xx or 304 (after redirects), or a
// 3xx without a usable Location. 5xx answers are retried (the last one is
// returned); 4xx are not.
type StatusError struct {
	// URL is the URL that answered (the last hop), with the values of
	// credential-like query parameters (token, signature…) redacted.
	URL string
	// Code is the HTTP status code.
	Code int
	// RetryAt is when the server said to try again (Retry-After in seconds
	// or as an HTTP date, on any status; or X-RateLimit-Reset in Unix
	// seconds on a 403 or 429 when X-RateLimit-Remaining is "0" or there is
	// no Retry-After; the later of the two when both apply); zero when it
	// said nothing.
	RetryAt time.Time
	// Message is at most 200 bytes of the body, trimmed, for the log line.
	// [GitHub] replaces it with an explanation on 401 and 404.
	Message string
}

// Error returns "GET <url>: <code> <status text>[: <message>]".
func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString("GET ")
	b.WriteString(e.URL)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(e.Code))
	if t := http.StatusText(e.Code); t != "" {
		b.WriteString(" ")
		b.WriteString(t)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Options configures a [Client]. The zero value is usable.
type Options struct {
	// HTTPClient sends the requests. nil means a client with a 30 s
	// timeout. Its CheckRedirect is never consulted: the Client follows
	// redirects itself, on a shallow copy (the given client is not
	// modified). Its Timeout, when set, bounds each request: every hop,
	// the last one including the reading of its body. A timeout is retried.
	HTTPClient *http.Client
	// Allow is called for every URL before a request is sent to it; a
	// non-nil error refuses it (wrapped with ErrNotAllowed). nil allows
	// every origin (the scheme rule still applies). It may be called
	// concurrently.
	Allow func(u *url.URL) error
	// AllowHTTP permits http:// URLs; otherwise only https:// is fetched.
	// No other scheme is ever fetched.
	AllowHTTP bool
	// MaxBytes caps every body, in bytes; 0 means 10 MiB.
	MaxBytes int64
	// MaxRedirects caps the hops; 0 means 5. A chain of exactly MaxRedirects
	// redirects is followed.
	MaxRedirects int
	// Attempts is how many times one fetch is tried on 5xx or a network
	// error (including a body cut short and a timeout, but not the
	// cancellation or deadline of the caller's context); 0 means 3. 4xx
	// answers, refusals, ErrTooLarge and ErrTooManyRedirects are not
	// retried.
	Attempts int
	// Backoff is the wait before the second attempt, doubled for each
	// further one; 0 means 1 s. The wait ends early when the context is
	// done.
	Backoff time.Duration
	// UserAgent is sent with every request; "" means "skilljack-mcp".
	UserAgent string
	// Header returns extra headers for a request to u (an Authorization
	// header for the GitHub API and download hosts only); nil adds none.
	// It is called again for every redirect hop with that hop's URL. It may
	// be called concurrently.
	Header func(u *url.URL) http.Header
	// Progress, if not nil, is called while a body is read with the bytes
	// so far and the total (-1 when unknown): once per chunk read from the
	// network (typically up to 32 KiB), from the goroutine calling Get or
	// GetTo. On a retry the count starts again at 0. It is not called for
	// 304, redirect or error bodies. The caller rate-limits its output.
	Progress func(read, total int64)
	// Logger receives debug lines (one per hop and retry); nil discards.
	// Lines carry URLs (credential-like query values redacted), never
	// request headers.
	Logger *slog.Logger
}

// Validators are the cache validators of one resource, stored beside the
// cache and sent back as If-None-Match / If-Modified-Since.
type Validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

// Response is a successful fetch.
type Response struct {
	// URL is the final URL, after redirects: the base for relative
	// references in the body (WKAS-R15, BR-24).
	URL *url.URL
	// Code is the final status: 200 (or another 2xx) or 304.
	Code int
	// NotModified is true on 304; Body is then nil.
	NotModified bool
	// Body is the whole body (at most MaxBytes) when fetched with
	// [Client.Get]; nil with [Client.GetTo].
	Body []byte
	// Size is the number of body bytes read (0 on 304).
	Size int64
	// Digest is "sha256:<hex>" of the body bytes ("" on 304).
	Digest string
	// ContentType is the Content-Type header of the final answer.
	ContentType string
	// Validators are the final answer's ETag and Last-Modified; on 304,
	// each falls back to the one sent when the answer has none.
	Validators Validators
	// Header is the final answer's header.
	Header http.Header
}

// Client fetches URLs under the rules of its [Options] (WKAS-R25:
// redirects followed, cache validators sent). It is safe for concurrent
// use.
type Client struct {
	opts Options
	// secret, when not "", is replaced by "[REDACTED]" in StatusError
	// messages and log lines (set by NewGitHub to the token).
	secret string
}

// scrub hides c.secret in s.
func (c *Client) scrub(s string) string {
	if c.secret == "" {
		return s
	}
	return strings.ReplaceAll(s, c.secret, "[REDACTED]")
}

// New returns a client; opts may be nil. Zero fields take their defaults.
func New(opts *Options) *Client {
	var o Options
	if opts != nil {
		o = *opts
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	cp := *hc
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.HTTPClient = &cp
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{opts: o}
}

// Get fetches rawURL into memory. cond, if not nil, makes the request
// conditional. Errors: wrapping ErrNotAllowed, ErrTooLarge,
// ErrTooManyRedirects, a *StatusError, or a network/context error (a body
// cut short before its Content-Length wraps io.ErrUnexpectedEOF); each
// names the URL.
func (c *Client) Get(ctx context.Context, rawURL string, cond *Validators) (*Response, error) {
	var buf bytes.Buffer
	resp, err := c.do(ctx, rawURL, cond, &buf, true)
	if err != nil {
		return nil, err
	}
	if !resp.NotModified {
		resp.Body = buf.Bytes()
		if resp.Body == nil {
			resp.Body = []byte{}
		}
	}
	return resp, nil
}

// GetTo fetches rawURL and streams the body into w (a retry starts w over
// only if w is an io.Seeker and a truncater — Truncate(int64) error, like
// *os.File — by Seek(0, io.SeekStart) and Truncate(0); otherwise a failure
// after bytes reached w is not retried). Nothing is written on 304. Same
// errors as Get; a write error of w is returned as is and not retried.
// Response.Body is nil.
func (c *Client) GetTo(ctx context.Context, rawURL string, cond *Validators, w io.Writer) (*Response, error) {
	_, canReset := w.(resetter)
	return c.do(ctx, rawURL, cond, w, canReset)
}

// resetter is what GetTo needs to start w over on a retry.
type resetter interface {
	io.Seeker
	Truncate(size int64) error
}

// reset starts w over for a retry (Get's buffer, or a resetter).
func reset(w io.Writer) error {
	switch v := w.(type) {
	case *bytes.Buffer:
		v.Reset()
		return nil
	case resetter:
		if _, err := v.Seek(0, io.SeekStart); err != nil {
			return err
		}
		return v.Truncate(0)
	}
	return errors.New("writer cannot be reset")
}

// countingWriter counts bytes that reached w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	if err != nil {
		return n, &writeError{err}
	}
	return n, nil
}

// writeError marks a failure of the caller's writer: never retried.
type writeError struct{ err error }

func (e *writeError) Error() string { return "writing body: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// fatalError marks an error that must not be retried.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func (c *Client) do(ctx context.Context, rawURL string, cond *Validators, w io.Writer, canReset bool) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("GET %q: %w", rawURL, err)
	}
	cw := &countingWriter{w: w}
	wait := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, u, cond, cw)
		if err == nil {
			return resp, nil
		}
		if attempt >= c.opts.Attempts || !c.retryable(ctx, err) {
			return nil, unfatal(err)
		}
		if cw.n > 0 {
			if !canReset {
				return nil, err
			}
			if rerr := reset(w); rerr != nil {
				return nil, fmt.Errorf("%w (cannot start the body over for a retry: %v)", err, rerr)
			}
			cw.n = 0
		}
		c.opts.Logger.Debug("fetch retry", "url", redact(u), "attempt", attempt+1, "of", c.opts.Attempts, "wait", wait, "err", c.scrub(err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("GET %s: %w (while waiting to retry after: %v)", redact(u), ctx.Err(), err)
		case <-t.C:
		}
		wait *= 2
	}
}

// unfatal removes the fatalError marker before an error is returned.
func unfatal(err error) error {
	if f, ok := err.(*fatalError); ok {
		return f.err
	}
	return err
}

// retryable reports whether err (of one attempt) may be retried: 5xx and
// network errors, not the caller's context, refusals, caps, 4xx, writer
// failures, certificate errors or unknown hosts.
func (c *Client) retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var f *fatalError
	var we *writeError
	if errors.As(err, &f) || errors.As(err, &we) {
		return false
	}
	if errors.Is(err, ErrNotAllowed) || errors.Is(err, ErrTooLarge) || errors.Is(err, ErrTooManyRedirects) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500
	}
	var cve *tls.CertificateVerificationError
	if errors.As(err, &cve) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return false
	}
	return true
}

// check applies the scheme rule and Allow to u before a request is sent.
func (c *Client) check(u *url.URL, from *url.URL) error {
	var reason error
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !c.opts.AllowHTTP {
			reason = errors.New("disallowed scheme http")
		}
	default:
		reason = fmt.Errorf("disallowed scheme %q", u.Scheme)
	}
	if reason == nil && u.Host == "" {
		reason = errors.New("missing host")
	}
	if reason == nil && c.opts.Allow != nil {
		reason = c.opts.Allow(u)
	}
	if reason == nil {
		return nil
	}
	if from != nil {
		return fmt.Errorf("%w: %s (redirect from %s): %w", ErrNotAllowed, redact(u), redact(from), reason)
	}
	return fmt.Errorf("%w: %s: %w", ErrNotAllowed, redact(u), reason)
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, maxDrain)
	_ = body.Close()
}

// once is one attempt: the hops and the body.
func (c *Client) once(ctx context.Context, first *url.URL, cond *Validators, cw *countingWriter) (*Response, error) {
	cur := first
	var from *url.URL
	for hops := 0; ; hops++ {
		if err := c.check(cur, from); err != nil {
			return nil, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cur.String(), nil)
		if err != nil {
			return nil, &fatalError{fmt.Errorf("GET %s: %w", redact(cur), err)}
		}
		if c.opts.Header != nil {
			for k, vs := range c.opts.Header(cur) {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
		}
		req.Header.Set("User-Agent", c.opts.UserAgent)
		if cond != nil {
			if cond.ETag != "" {
				req.Header.Set("If-None-Match", cond.ETag)
			}
			if cond.LastModified != "" {
				req.Header.Set("If-Modified-Since", cond.LastModified)
			}
		}
		c.opts.Logger.Debug("fetch", "url", redact(cur), "hop", hops)
		resp, err := c.opts.HTTPClient.Do(req)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				ue.URL = redact(cur)
			}
			return nil, err
		}
		if isRedirect(resp.StatusCode) && resp.Header.Get("Location") != "" {
			loc := resp.Header.Get("Location")
			drain(resp.Body)
			next, err := cur.Parse(loc)
			if err != nil {
				return nil, &fatalError{fmt.Errorf("GET %s: %d redirect with a bad Location %q: %w", redact(cur), resp.StatusCode, loc, err)}
			}
			if hops >= c.opts.MaxRedirects {
				return nil, fmt.Errorf("GET %s: %w: refused hop %d to %s (at most %d)", redact(first), ErrTooManyRedirects, hops+1, redact(next), c.opts.MaxRedirects)
			}
			c.opts.Logger.Debug("fetch redirect", "from", redact(cur), "to", redact(next), "code", resp.StatusCode)
			from, cur = cur, next
			continue
		}
		return c.finish(cur, resp, cond, cw)
	}
}

// finish handles the final answer of one attempt.
func (c *Client) finish(u *url.URL, resp *http.Response, cond *Validators, cw *countingWriter) (*Response, error) {
	code := resp.StatusCode
	out := &Response{
		URL:         u,
		Code:        code,
		ContentType: resp.Header.Get("Content-Type"),
		Validators: Validators{
			ETag:         resp.Header.Get("ETag"),
			LastModified: resp.Header.Get("Last-Modified"),
		},
		Header: resp.Header,
	}
	if code == http.StatusNotModified {
		drain(resp.Body)
		out.NotModified = true
		if cond != nil {
			if out.Validators.ETag == "" {
				out.Validators.ETag = cond.ETag
			}
			if out.Validators.LastModified == "" {
				out.Validators.LastModified = cond.LastModified
			}
		}
		return out, nil
	}
	if code < 200 || code > 299 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxMessage))
		drain(resp.Body)
		return nil, &StatusError{
			URL:     redact(u),
			Code:    code,
			RetryAt: retryAt(code, resp.Header, time.Now()),
			Message: c.scrub(strings.TrimSpace(strings.ToValidUTF8(string(msg), ""))),
		}
	}
	defer resp.Body.Close()
	max := c.opts.MaxBytes
	total := resp.ContentLength
	if total > max {
		return nil, fmt.Errorf("GET %s: %w: Content-Length %d bytes exceeds the cap of %d bytes", redact(u), ErrTooLarge, total, max)
	}
	if b, ok := cw.w.(*bytes.Buffer); ok && total > 0 {
		b.Grow(int(total))
	}
	h := sha256.New()
	n, err := c.copyBody(cw, h, resp.Body, max, total)
	if err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return nil, fmt.Errorf("GET %s: %w", redact(u), err)
		}
		return nil, fmt.Errorf("GET %s: reading body: %w", redact(u), err)
	}
	if n > max {
		return nil, fmt.Errorf("GET %s: %w: more than the cap of %d bytes", redact(u), ErrTooLarge, max)
	}
	out.Size = n
	out.Digest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// copyBody reads at most max+1 bytes of r into w and h, calling Progress
// per chunk. It returns the bytes read; more than max means too large (the
// extra byte is neither written nor hashed).
func (c *Client) copyBody(w io.Writer, h hash.Hash, r io.Reader, max, total int64) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		want := int64(len(buf))
		if rest := max + 1 - n; rest < want {
			want = rest
		}
		k, rerr := r.Read(buf[:want])
		if k > 0 {
			if n+int64(k) > max {
				return n + int64(k), nil
			}
			h.Write(buf[:k])
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
			if c.opts.Progress != nil {
				c.opts.Progress(n, total)
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// retryAt reads Retry-After (any status) and, on 403/429, X-RateLimit-Reset
// when X-RateLimit-Remaining is "0" or Retry-After is absent.
func retryAt(code int, h http.Header, now time.Time) time.Time {
	var at time.Time
	ra := strings.TrimSpace(h.Get("Retry-After"))
	if ra != "" {
		if secs, err := strconv.ParseInt(ra, 10, 64); err == nil {
			if secs >= 0 {
				at = now.Add(time.Duration(secs) * time.Second)
			}
		} else if t, err := http.ParseTime(ra); err == nil {
			at = t
		}
	}
	if code == http.StatusForbidden || code == http.StatusTooManyRequests {
		if h.Get("X-RateLimit-Remaining") == "0" || ra == "" {
			if reset, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil && reset > 0 {
				if t := time.Unix(reset, 0); t.After(at) {
					at = t
				}
			}
		}
	}
	return at
}

// redact returns u as text without a password and with the values of
// credential-like query parameters replaced, for logs and errors.
func redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	v := *u
	if v.User != nil {
		if _, has := v.User.Password(); has {
			v.User = url.UserPassword(v.User.Username(), "REDACTED")
		}
	}
	if v.RawQuery != "" {
		parts := strings.Split(v.RawQuery, "&")
		changed := false
		for i, p := range parts {
			k, _, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			if key, err := url.QueryUnescape(k); err == nil && sensitiveKey(key) {
				parts[i] = k + "=REDACTED"
				changed = true
			}
		}
		if changed {
			v.RawQuery = strings.Join(parts, "&")
		}
	}
	return v.String()
}

func sensitiveKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"token", "secret", "signature", "password", "credential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return k == "sig" || k == "key" || k == "api_key" || k == "apikey"
}

// Digest returns "sha256:" + 64 lowercase hex digits of b (WKAS-R12).
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ValidDigest reports whether s is "sha256:" followed by exactly 64
// lowercase hex digits (WKAS-R12; BR-26 checks it strictly: "SHA256:",
// uppercase hex, another length or no prefix are all invalid).
func ValidDigest(s string) bool {
	const prefix = "sha256:"
	if len(s) != len(prefix)+64 || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, r := range s[len(prefix):] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// VerifyDigest returns nil when b hashes to want, else an error wrapping
// ErrDigestMismatch that gives the expected and actual digests (WKAS-R17,
// BR-26): "digest mismatch: expected sha256:…, got sha256:…". A malformed
// want never matches (it is quoted in the message).
func VerifyDigest(b []byte, want string) error {
	got := Digest(b)
	if got == want {
		return nil
	}
	if ValidDigest(want) {
		return fmt.Errorf("%w: expected %s, got %s", ErrDigestMismatch, want, got)
	}
	return fmt.Errorf("%w: expected %q (malformed), got %s", ErrDigestMismatch, want, got)
}

// AllowOrigins returns an Allow function accepting exactly the given
// origins ("scheme://host[:port]"): scheme and host compared
// case-insensitively, the port significant (a default port — 443 for
// https, 80 for http — may be written or not), no subdomains. A trailing
// "/" is tolerated; entries that do not parse, are not http(s), have no
// host, or carry a path, query or fragment are ignored. name is the setting
// to mention in the refusal: "origin https://evil.test is not in
// WELL_KNOWN_ALLOWED_ORIGINS". The returned function is safe for
// concurrent use.
func AllowOrigins(name string, origins []string) func(u *url.URL) error {
	set := make(map[string]bool, len(origins))
	for _, o := range origins {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		p, err := url.Parse(o)
		if err != nil || p.Host == "" || p.User != nil || p.RawQuery != "" || p.ForceQuery || p.Fragment != "" {
			continue
		}
		if s := strings.ToLower(p.Scheme); s != "https" && s != "http" {
			continue
		}
		if p.Path != "" && p.Path != "/" {
			continue
		}
		set[Origin(p)] = true
	}
	return func(u *url.URL) error {
		o := Origin(u)
		if set[o] {
			return nil
		}
		return fmt.Errorf("origin %s is not in %s", o, name)
	}
}

// Origin returns the lowercase "scheme://host[:port]" of u, without a
// default port (443 for https, 80 for http). An IPv6 host keeps its
// brackets.
func Origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}
