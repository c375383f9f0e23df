package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of [GitHubOptions].
const (
	// DefaultGitHubAPIURL is the API base when GitHubOptions.APIURL is "".
	DefaultGitHubAPIURL = "https://api.github.com"
	// DefaultTarballMaxBytes caps a tarball when Fetch.MaxBytes is 0:
	// 100 MiB.
	DefaultTarballMaxBytes int64 = 100 << 20
	// DefaultTarballTimeout is the whole-download timeout of a tarball when
	// Fetch.HTTPClient is nil (API calls keep the 30 s of [Options]).
	DefaultTarballTimeout = 5 * time.Minute
)

const (
	codeloadOrigin = "https://codeload.github.com"
	githubOrigin   = "https://github.com"
	redacted       = "[REDACTED]" // also used by Client.scrub
)

// GitHub is a client of the GitHub REST API for one API base URL: which
// commit a ref points at, and that commit's tarball. The token, when set,
// is sent as a bearer token only to the API origin and GitHub's download
// hosts (codeload.github.com, and the API origin itself for GitHub
// Enterprise and tests) — never to https://github.com nor anywhere else; it
// is never logged nor put in an error (any error text that would contain
// it has it replaced by "[REDACTED]"). Safe for concurrent use.
type GitHub struct {
	api   string
	token string
	c     *Client // API calls (JSON), default body cap
	tar   *Client // tarball downloads, tarball cap
}

// GitHubOptions configures [NewGitHub].
type GitHubOptions struct {
	// APIURL is the API base ("https://api.github.com", GITHUB_API_URL),
	// possibly with a path prefix ("https://ghe.example/api/v3"); trailing
	// slashes are trimmed. "" means https://api.github.com.
	APIURL string
	// Token is GITHUB_TOKEN; "" sends no Authorization header.
	Token string
	// Fetch are the options of the underlying [Client]; its Allow and
	// Header are set by NewGitHub (redirects only to the API origin,
	// https://codeload.github.com and https://github.com). MaxBytes caps the
	// tarball (0: 100 MiB); API answers keep the 10 MiB default. A nil
	// HTTPClient means a 30 s timeout for API calls and 5 min for a tarball.
	Fetch Options
}

// NewGitHub returns a GitHub client; opts may be nil.
func NewGitHub(opts *GitHubOptions) *GitHub {
	var o GitHubOptions
	if opts != nil {
		o = *opts
	}
	api := strings.TrimRight(strings.TrimSpace(o.APIURL), "/")
	if api == "" {
		api = DefaultGitHubAPIURL
	}
	apiOrigin := "invalid:" // matches no URL when api does not parse
	if u, err := url.Parse(api); err == nil && u.Host != "" {
		apiOrigin = Origin(u)
	}
	token := o.Token

	fo := o.Fetch
	fo.Allow = func(u *url.URL) error {
		switch Origin(u) {
		case apiOrigin, codeloadOrigin, githubOrigin:
			return nil
		}
		return fmt.Errorf("origin %s is neither the GitHub API origin %s nor a GitHub download host", Origin(u), apiOrigin)
	}
	fo.Header = func(u *url.URL) http.Header {
		h := http.Header{}
		o := Origin(u)
		if o == apiOrigin {
			h.Set("Accept", "application/vnd.github+json")
			h.Set("X-GitHub-Api-Version", "2022-11-28")
		}
		if token != "" && (o == apiOrigin || o == codeloadOrigin) {
			h.Set("Authorization", "Bearer "+token)
		}
		return h
	}
	meta := fo
	meta.MaxBytes = 0
	tar := fo
	if tar.MaxBytes <= 0 {
		tar.MaxBytes = DefaultTarballMaxBytes
	}
	if tar.HTTPClient == nil {
		tar.HTTPClient = &http.Client{Timeout: DefaultTarballTimeout}
	}
	g := &GitHub{api: api, token: token, c: New(&meta), tar: New(&tar)}
	g.c.secret, g.tar.secret = token, token
	return g
}

// IsFullSHA reports whether ref is a full commit SHA-1: exactly 40 hex
// digits, either case.
func IsFullSHA(ref string) bool {
	if len(ref) != 40 {
		return false
	}
	for _, r := range ref {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// Commit asks GET /repos/{owner}/{repo}/commits/{ref} (ref "" = the
// default branch: GET /repos/{owner}/{repo} for default_branch first,
// unconditionally) with If-None-Match etag (none when ""). It returns the
// commit SHA (40 lowercase hex) and the new ETag; notModified is true on 304
// (sha is then "", newETag the 304's ETag or else etag). Errors: a
// *StatusError (404 with Message "repository owner/repo not found, or
// private and GITHUB_TOKEN is not set/does not grant access"; 401 with
// Message "GITHUB_TOKEN was rejected", or "authentication required and
// GITHUB_TOKEN is not set" without a token; 422 for an unknown ref; 403/429 with
// RetryAt from Retry-After or X-RateLimit-Reset), an error wrapping
// ErrNotAllowed for a redirect off the GitHub hosts, an invalid-answer
// error, or a network error. 5xx and network errors are retried per
// Fetch.Attempts.
func (g *GitHub) Commit(ctx context.Context, owner, repo, ref, etag string) (sha, newETag string, notModified bool, err error) {
	if err := checkRepo(owner, repo); err != nil {
		return "", "", false, err
	}
	if ref == "" {
		ref, err = g.DefaultBranch(ctx, owner, repo)
		if err != nil {
			return "", "", false, err
		}
	}
	if err := checkRef(ref); err != nil {
		return "", "", false, err
	}
	var cond *Validators
	if etag != "" {
		cond = &Validators{ETag: etag}
	}
	resp, err := g.c.Get(ctx, g.repoURL(owner, repo, "commits", ref), cond)
	if err != nil {
		return "", "", false, g.explain(err, owner, repo)
	}
	if resp.NotModified {
		return "", resp.Validators.ETag, true, nil
	}
	var body struct {
		SHA string `json:"sha"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return "", "", false, fmt.Errorf("GitHub commit of %s/%s@%s: invalid answer: %w", owner, repo, ref, err)
	}
	if !IsFullSHA(body.SHA) {
		return "", "", false, fmt.Errorf("GitHub commit of %s/%s@%s: answer has no valid sha", owner, repo, ref)
	}
	return strings.ToLower(body.SHA), resp.Validators.ETag, false, nil
}

// DefaultBranch asks GET /repos/{owner}/{repo} for the repository's
// default_branch (one unconditional request; callers keep the answer so a
// poll costs only the conditional commit request). Errors as [GitHub.Commit].
func (g *GitHub) DefaultBranch(ctx context.Context, owner, repo string) (string, error) {
	resp, err := g.c.Get(ctx, g.repoURL(owner, repo), nil)
	if err != nil {
		return "", g.explain(err, owner, repo)
	}
	var body struct {
		DefaultBranch string `json:"default_branch"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil {
		return "", fmt.Errorf("GitHub repository %s/%s: invalid answer: %w", owner, repo, err)
	}
	if body.DefaultBranch == "" {
		return "", fmt.Errorf("GitHub repository %s/%s: answer has no default_branch", owner, repo)
	}
	return body.DefaultBranch, nil
}

// IsTag reports whether ref names a tag of owner/repo: GET
// /repos/{owner}/{repo}/git/ref/tags/{ref} answers 200 (true) or 404
// (false, nil error — which is also what a private repository without
// access gives). Other answers are errors as for [GitHub.Commit].
func (g *GitHub) IsTag(ctx context.Context, owner, repo, ref string) (bool, error) {
	if err := checkRepo(owner, repo); err != nil {
		return false, err
	}
	if err := checkRef(ref); err != nil {
		return false, err
	}
	resp, err := g.c.Get(ctx, g.repoURL(owner, repo, "git", "ref", "tags", ref), nil)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Code == http.StatusNotFound {
			return false, nil
		}
		return false, g.explain(err, owner, repo)
	}
	var body struct {
		Ref string `json:"ref"`
	}
	if json.Unmarshal(resp.Body, &body) == nil && body.Ref != "" && body.Ref != "refs/tags/"+ref {
		return false, nil
	}
	return true, nil
}

// Tarball streams GET /repos/{owner}/{repo}/tarball/{sha} into w, following
// redirects only to the API origin and GitHub's download hosts
// (codeload.github.com, github.com; the token goes to the API origin and
// codeload only). It returns the bytes written. The body is capped at
// Fetch.MaxBytes (0: 100 MiB; past it an error wrapping ErrTooLarge). A
// retry after bytes reached w happens only when w can be started over (see
// [Client.GetTo]); on error the bytes in w are to be discarded. Errors as
// for [GitHub.Commit].
func (g *GitHub) Tarball(ctx context.Context, owner, repo, sha string, w io.Writer) (int64, error) {
	if err := checkRepo(owner, repo); err != nil {
		return 0, err
	}
	if err := checkRef(sha); err != nil {
		return 0, err
	}
	resp, err := g.tar.GetTo(ctx, g.repoURL(owner, repo, "tarball", sha), nil, w)
	if err != nil {
		return 0, g.explain(err, owner, repo)
	}
	return resp.Size, nil
}

// repoURL builds {api}/repos/{owner}/{repo}[/{rest}...], escaping each
// path segment (a ref's "/" stays a separator).
func (g *GitHub) repoURL(owner, repo string, rest ...string) string {
	var b strings.Builder
	b.WriteString(g.api)
	b.WriteString("/repos/")
	b.WriteString(url.PathEscape(owner))
	b.WriteString("/")
	b.WriteString(url.PathEscape(repo))
	for _, r := range rest {
		for _, seg := range strings.Split(r, "/") {
			b.WriteString("/")
			b.WriteString(url.PathEscape(seg))
		}
	}
	return b.String()
}

func checkRepo(owner, repo string) error {
	for _, s := range []string{owner, repo} {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\") {
			return fmt.Errorf("invalid GitHub repository %q/%q", owner, repo)
		}
	}
	return nil
}

func checkRef(ref string) error {
	if ref == "" {
		return errors.New("empty GitHub ref")
	}
	for _, seg := range strings.Split(ref, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("invalid GitHub ref %q", ref)
		}
	}
	return nil
}

// explain gives 404 and 401 answers a clear Message and removes the token
// from any error text.
func (g *GitHub) explain(err error, owner, repo string) error {
	var se *StatusError
	if errors.As(err, &se) {
		switch se.Code {
		case http.StatusNotFound:
			se.Message = fmt.Sprintf("repository %s/%s not found, or private and GITHUB_TOKEN is not set/does not grant access", owner, repo)
		case http.StatusUnauthorized:
			if g.token != "" {
				se.Message = "GITHUB_TOKEN was rejected"
			} else {
				se.Message = "authentication required and GITHUB_TOKEN is not set"
			}
		}
		if g.token != "" {
			se.Message = strings.ReplaceAll(se.Message, g.token, redacted)
			se.URL = strings.ReplaceAll(se.URL, g.token, redacted)
		}
	}
	if g.token != "" && strings.Contains(err.Error(), g.token) {
		return &scrubbedError{err: err, secret: g.token}
	}
	return err
}

// scrubbedError hides a secret in the text of the error it wraps.
type scrubbedError struct {
	err    error
	secret string
}

func (e *scrubbedError) Error() string {
	return strings.ReplaceAll(e.err.Error(), e.secret, redacted)
}

func (e *scrubbedError) Unwrap() error { return e.err }
