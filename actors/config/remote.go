package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/skilljack/skilljack-mcp/events"
)

// Defaults of the remote sources (reference §2.2).
const (
	// DefaultPollInterval is how often a remote source is checked when
	// GITHUB_POLL_INTERVAL_MS / WELL_KNOWN_POLL_INTERVAL_MS are unset: 5 min.
	DefaultPollInterval = 300_000 * time.Millisecond
	// MinPollInterval is the shortest poll interval Resolve accepts (a
	// smaller non-zero value is raised to it with a warning): 10 s, so that
	// a value meant as seconds cannot hammer a publisher or spend a GitHub
	// rate limit.
	MinPollInterval = 10 * time.Second
	// DefaultMaxArtifactBytes caps a publisher's index and each artifact
	// (WELL_KNOWN_MAX_ARTIFACT_MB, default 10 MiB).
	DefaultMaxArtifactBytes = 10 << 20
	// DefaultMaxUnpackedBytes caps one unpacked publisher archive
	// (WELL_KNOWN_MAX_UNPACKED_MB, default 50 MiB).
	DefaultMaxUnpackedBytes = 50 << 20
	// DefaultWellKnownMaxSkills caps the skills served from one publisher
	// (WELL_KNOWN_MAX_SKILLS): the first 1,000 of its index. Ten times the
	// largest catalogue seen in practice, small enough that a hostile index
	// of 20,000 entries cannot keep a sync busy for long.
	DefaultWellKnownMaxSkills = 1000
	// DefaultWellKnownMaxCacheBytes caps the bytes cached for one publisher
	// (WELL_KNOWN_MAX_CACHE_MB, default 256 MiB): about five maximal
	// unpacked archives, far above any real catalogue.
	DefaultWellKnownMaxCacheBytes = 256 << 20
	// DefaultGitHubMaxTarballBytes caps one GitHub tarball download
	// (GITHUB_MAX_TARBALL_MB, default 100 MiB).
	DefaultGitHubMaxTarballBytes = 100 << 20
	// DefaultGitHubMaxUnpackedBytes caps one unpacked GitHub tarball
	// (GITHUB_MAX_UNPACKED_MB, default 500 MiB).
	DefaultGitHubMaxUnpackedBytes = 500 << 20
	// DefaultGitHubAPIURL is GITHUB_API_URL's default.
	DefaultGitHubAPIURL = "https://api.github.com"
)

// WellKnown is the configuration of the /.well-known/agent-skills/
// publisher sources (reference §2.2, §5).
type WellKnown struct {
	// AllowedOrigins are the allowlisted origins ("https://host[:port]"),
	// from WELL_KNOWN_ALLOWED_ORIGINS when non-empty, else the config
	// file's wellKnownAllowedOrigins. Empty denies every publisher.
	AllowedOrigins []string
	// AllowHTTP permits http:// publishers (WELL_KNOWN_ALLOW_HTTP=1|true|yes;
	// development only).
	AllowHTTP bool
	// PollInterval is WELL_KNOWN_POLL_INTERVAL_MS; 0 disables polling.
	PollInterval time.Duration
	// MaxArtifactBytes caps the index and each artifact, in bytes.
	MaxArtifactBytes int64
	// MaxUnpackedBytes caps the bytes written by one archive, in bytes.
	MaxUnpackedBytes int64
	// MaxSkills caps the skills served from one publisher: the first
	// MaxSkills usable entries of its index (WELL_KNOWN_MAX_SKILLS). If
	// zero, defaults to [DefaultWellKnownMaxSkills].
	MaxSkills int
	// MaxCacheBytes caps the bytes cached for one publisher, in bytes
	// (WELL_KNOWN_MAX_CACHE_MB). If zero, defaults to
	// [DefaultWellKnownMaxCacheBytes].
	MaxCacheBytes int64
	// CacheDir holds one folder per publisher: $SKILLJACK_CACHE_DIR/well-known
	// or ~/.skilljack/well-known-cache.
	CacheDir string
}

// GitHub is the configuration of the GitHub sources (reference §2.2,
// §4).
type GitHub struct {
	// AllowedOwners are the allowlisted owners, lower case: the union of
	// GITHUB_ALLOWED_ORGS and GITHUB_ALLOWED_USERS, each from the
	// environment when non-empty, else from the config file's
	// githubAllowedOrgs / githubAllowedUsers. Empty denies every repository.
	AllowedOwners []string
	// Token is GITHUB_TOKEN; it is never logged.
	Token string
	// APIURL is GITHUB_API_URL, default https://api.github.com.
	APIURL string
	// PollInterval is GITHUB_POLL_INTERVAL_MS; 0 disables polling.
	PollInterval time.Duration
	// MaxTarballBytes caps one tarball download, in bytes.
	MaxTarballBytes int64
	// MaxUnpackedBytes caps the bytes written by one tarball, in bytes.
	MaxUnpackedBytes int64
	// CacheDir holds <owner>/<repo> folders: $SKILLJACK_CACHE_DIR, or
	// ~/.skilljack/github-cache.
	CacheDir string
}

// String hides the token, so a GitHub can never log it.
func (c GitHub) String() string {
	tok := "unset"
	if c.Token != "" {
		tok = "set"
	}
	return fmt.Sprintf("GitHubConfig{owners=%v token=%s api=%s poll=%s cache=%s}", c.AllowedOwners, tok, c.APIURL, c.PollInterval, c.CacheDir)
}

// WellKnownSpec is a publisher source normalised as the reference's
// parseWellKnownUrl does (reference §5).
type WellKnownSpec struct {
	// Origin is "scheme://host[:port]", lower case.
	Origin string
	// PathPrefix is the URL path before /.well-known ("" or "/docs").
	PathPrefix string
	// IndexURL is Origin + PathPrefix + "/.well-known/agent-skills/index.json"
	// (WKAS-R01).
	IndexURL string
	// LegacyIndexURL is Origin + PathPrefix + "/.well-known/skills/index.json",
	// the v0.1 layout tried when the publisher has no v0.2 index (WKAS-R32).
	LegacyIndexURL string
	// Key names the publisher's cache folder: slug(host incl. port), plus
	// "_" + slug(PathPrefix) when there is one, plus "-" and 8 hex digits of
	// SHA-256(Origin + PathPrefix) unless the source is a plain https origin
	// (slugs fold case and punctuation; the hash keeps folders apart).
	Key string
	// Prefix is the skill path prefix: slug(host), plus "/" + slug(PathPrefix).
	Prefix string
}

// ForEvent returns s as it travels in [events.Source.Publisher].
func (s WellKnownSpec) ForEvent() events.Publisher {
	return events.Publisher{Origin: s.Origin, PathPrefix: s.PathPrefix, IndexURL: s.IndexURL, LegacyIndexURL: s.LegacyIndexURL, Key: s.Key}
}

// ParseWellKnownURL normalises a publisher URL: a trailing /index.json and
// trailing slashes are stripped, /.well-known/agent-skills (or the legacy
// /.well-known/skills) and what follows are cut off and the rest of the path
// kept as the prefix; query and fragment are dropped. Errors: not a URL, a
// scheme other than https (http only with allowHTTP: "insecure scheme …; set
// WELL_KNOWN_ALLOW_HTTP=1 for development"), no host, user info.
func ParseWellKnownURL(raw string, allowHTTP bool) (WellKnownSpec, error) {
	shown := RedactUserInfo(raw) // issue 10: secrets
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var ue *url.Error // quotes raw
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return WellKnownSpec{}, fmt.Errorf("invalid publisher URL %q: %w", shown, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowHTTP {
			return WellKnownSpec{}, fmt.Errorf("insecure scheme in publisher URL %s: only https is fetched; set WELL_KNOWN_ALLOW_HTTP=1 for development", shown)
		}
	default:
		return WellKnownSpec{}, fmt.Errorf("unsupported scheme %q in publisher URL %s", u.Scheme, shown)
	}
	if u.Host == "" || u.Hostname() == "" {
		return WellKnownSpec{}, fmt.Errorf("publisher URL %s has no host", shown)
	}
	if u.User != nil {
		return WellKnownSpec{}, fmt.Errorf("publisher URL %s must not hold user info", shown)
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	p = strings.TrimSuffix(p, "/index.json")
	p = strings.TrimRight(p, "/")
	for _, frag := range []string{"/.well-known/agent-skills", "/.well-known/skills", "/.well-known"} {
		if i := strings.Index(p+"/", frag+"/"); i >= 0 {
			p = p[:i]
			break
		}
	}
	host := strings.ToLower(u.Host)
	scheme := strings.ToLower(u.Scheme)
	if port := u.Port(); (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	origin := scheme + "://" + host
	spec := WellKnownSpec{
		Origin:         origin,
		PathPrefix:     p,
		IndexURL:       origin + p + "/.well-known/agent-skills/index.json",
		LegacyIndexURL: origin + p + "/.well-known/skills/index.json",
	}
	hostSlug := slug(host)
	if hostSlug == "" {
		hostSlug = "publisher"
	}
	spec.Key, spec.Prefix = hostSlug, hostSlug
	if ps := slug(pathUnescape(p)); ps != "" {
		spec.Key += "_" + ps
		spec.Prefix += "/" + ps
	}
	// Slugs fold case and punctuation (/a/b and /a-b, /Team and /team) and
	// drop the scheme: the cache folder of anything but a plain https
	// origin gets a short hash of the exact origin and path, so two
	// publishers never share one.
	if p != "" || scheme != "https" {
		sum := sha256.Sum256([]byte(origin + p))
		spec.Key += "-" + hex.EncodeToString(sum[:4])
	}
	return spec, nil
}

func pathUnescape(p string) string {
	if s, err := url.PathUnescape(p); err == nil {
		return s
	}
	return p
}

var slugRun = regexp.MustCompile(`[^a-z0-9.-]+`)

// slug lowercases s, turns runs of characters outside [a-z0-9.-] into "-"
// and trims dashes (reference §5 cache key).
func slug(s string) string {
	s = slugRun.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.Trim(s, "-")
	// "." and ".." alone would be path segments, not names.
	if strings.Trim(s, ".") == "" {
		return ""
	}
	return s
}

// GitHubSpec is a parsed GitHub source (reference §4).
type GitHubSpec struct {
	// Owner and Repo as written (".git" stripped).
	Owner, Repo string
	// Ref is the branch, tag or commit; "" means the default branch.
	Ref string
	// Subpath is the '/'-separated folder inside the repository that holds
	// the skills; "" for the repository root.
	Subpath string
}

// ForEvent returns s as it travels in [events.Source.GitHub].
func (s GitHubSpec) ForEvent() events.GitHubRepo {
	return events.GitHubRepo{Owner: s.Owner, Repo: s.Repo, Ref: s.Ref, Subpath: s.Subpath}
}

// Key identifies the repository for de-duplication: "owner/repo", lower
// case.
func (s GitHubSpec) Key() string { return strings.ToLower(s.Owner + "/" + s.Repo) }

// Prefix is the source prefix of the repository's skills: "owner-repo".
func (s GitHubSpec) Prefix() string { return s.Owner + "-" + s.Repo }

var ghName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ParseGitHubURL reads github.com/owner/repo[/subpath][@ref], with or
// without a scheme, "www.", a ".git" suffix, or the browser forms
// /tree/<ref>[/path] and /blob/<ref>/<path> (a blob path names a file: its
// folder is the subpath). An "@ref" is taken after the last "@" and wins
// over a /tree/ ref. Errors: fewer than two path segments, owner or repo
// with characters GitHub does not allow, a ".." or "." subpath segment.
func ParseGitHubURL(raw string) (GitHubSpec, error) {
	s := strings.TrimSpace(raw)
	// Errors never quote user info (issue 10: secrets); raw may lack a scheme.
	shown := strings.TrimPrefix(RedactUserInfo("x://"+raw), "x://")
	after, ok := cutGitHubHost(s)
	if !ok {
		return GitHubSpec{}, fmt.Errorf("invalid GitHub URL %q: expected github.com/owner/repo (https://, www. and git@ allowed; user info is not: put a token in GITHUB_TOKEN)", shown)
	}
	s = strings.TrimLeft(after, "/:")
	if q := strings.IndexAny(s, "?#"); q >= 0 {
		s = s[:q]
	}
	var spec GitHubSpec
	if at := strings.LastIndex(s, "@"); at >= 0 {
		spec.Ref = strings.TrimSpace(s[at+1:])
		s = s[:at]
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '/' })
	if len(parts) < 2 {
		return GitHubSpec{}, fmt.Errorf("invalid GitHub URL %q: expected github.com/owner/repo", shown)
	}
	spec.Owner, spec.Repo = parts[0], strings.TrimSuffix(parts[1], ".git")
	if !ghName.MatchString(spec.Owner) || !ghName.MatchString(spec.Repo) || strings.Trim(spec.Repo, ".") == "" ||
		strings.Trim(spec.Owner, ".") == "" || strings.HasPrefix(spec.Owner, "-") {
		return GitHubSpec{}, fmt.Errorf("invalid GitHub URL %q: bad owner or repository name", shown)
	}
	rest := parts[2:]
	if len(rest) >= 2 && (rest[0] == "tree" || rest[0] == "blob") {
		kind := rest[0]
		if spec.Ref == "" {
			spec.Ref = rest[1]
		}
		rest = rest[2:]
		if kind == "blob" && len(rest) > 0 {
			rest = rest[:len(rest)-1]
		}
	}
	for _, seg := range rest {
		if seg == ".." || seg == "." {
			return GitHubSpec{}, fmt.Errorf("invalid GitHub URL %q: %q is not allowed in a subpath", shown, seg)
		}
	}
	spec.Subpath = path.Join(rest...)
	if spec.Ref != "" && !validRef(spec.Ref) {
		return GitHubSpec{}, fmt.Errorf("invalid GitHub URL %q: bad ref %q", shown, spec.Ref)
	}
	return spec, nil
}

// cutGitHubHost returns what follows the github.com host of s, which may
// start with http:// or https://, then www. or git@; ok is false for any
// other host (github.com.evil.test, gist.github.com) and for user info.
func cutGitHubHost(s string) (rest string, ok bool) {
	lower := strings.ToLower(s)
	for _, p := range []string{"https://", "http://"} {
		if strings.HasPrefix(lower, p) {
			s, lower = s[len(p):], lower[len(p):]
			break
		}
	}
	for _, p := range []string{"www.", "git@"} {
		if strings.HasPrefix(lower, p) {
			s, lower = s[len(p):], lower[len(p):]
			break
		}
	}
	if !strings.HasPrefix(lower, "github.com") {
		return "", false
	}
	rest = s[len("github.com"):]
	if rest != "" && rest[0] != '/' && rest[0] != ':' {
		return "", false
	}
	return rest, true
}

// validRef applies git's ref name rules that matter in a URL path: no
// empty, "." or ".." segment, no leading "-", no characters git forbids.
func validRef(ref string) bool {
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t~^:?*[\\") || strings.Contains(ref, "@{") {
		return false
	}
	for seg := range strings.SplitSeq(ref, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasSuffix(seg, ".lock") {
			return false
		}
	}
	return true
}

// RedactUserInfo returns s with the user info of every URL in it
// (scheme://user:password@host) replaced by "REDACTED", so that an error
// or a log line never shows a token pasted into a URL (issue 10:
// secrets). The authority ends at "/", "?", "#", white space, a quote or
// any other character a URL cannot hold unescaped there.
func RedactUserInfo(s string) string {
	if !strings.Contains(s, "://") {
		return s // the common case: nothing to copy
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexFunc(s, func(r rune) bool {
			return strings.ContainsRune("/?#\"'<>\\`{}|^", r) || unicode.IsSpace(r)
		})
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndex(s[:end], "@"); at >= 0 {
			b.WriteString(Redacted)
			s = s[at:]
		}
	}
}

// Redacted replaces a secret in text shown or recorded.
const Redacted = "REDACTED"
