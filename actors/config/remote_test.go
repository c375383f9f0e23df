package config_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

// TestParseGitHubURL covers every source form of reference §4 (issue 6,
// "URL parsing table test"): with or without scheme or www., .git stripped,
// @ref after the last @, subpaths, browser /tree/ and /blob/ URLs, and the
// refusals.
func TestParseGitHubURL(t *testing.T) {
	type spec = config.GitHubSpec
	tests := []struct {
		name    string
		in      string
		want    spec
		wantErr string // substring of the error; "" means success
	}{
		{name: "bare", in: "github.com/acme/skills", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "https", in: "https://github.com/acme/skills", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "http", in: "http://github.com/acme/skills", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "www", in: "www.github.com/acme/skills", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "https www", in: "https://www.github.com/acme/skills", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "mixed case host keeps owner case", in: "HTTPS://GitHub.com/Acme/Skills", want: spec{Owner: "Acme", Repo: "Skills"}},
		{name: "surrounding spaces", in: "  github.com/acme/skills  ", want: spec{Owner: "acme", Repo: "skills"}},
		{name: ".git suffix", in: "https://github.com/acme/skills.git", want: spec{Owner: "acme", Repo: "skills"}},
		{name: ".git suffix with ref", in: "github.com/acme/skills.git@v1", want: spec{Owner: "acme", Repo: "skills", Ref: "v1"}},
		{name: "ssh form", in: "git@github.com:acme/skills.git", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "ref", in: "github.com/acme/skills@main", want: spec{Owner: "acme", Repo: "skills", Ref: "main"}},
		{name: "ref with slash", in: "github.com/acme/skills@feature/new-skill", want: spec{Owner: "acme", Repo: "skills", Ref: "feature/new-skill"}},
		{name: "tag ref", in: "github.com/acme/skills@v1.2.0", want: spec{Owner: "acme", Repo: "skills", Ref: "v1.2.0"}},
		{name: "sha ref", in: "github.com/acme/skills@0123456789abcdef0123456789abcdef01234567", want: spec{Owner: "acme", Repo: "skills", Ref: "0123456789abcdef0123456789abcdef01234567"}},
		{name: "subpath", in: "github.com/acme/skills/skills", want: spec{Owner: "acme", Repo: "skills", Subpath: "skills"}},
		{name: "nested subpath", in: "github.com/acme/skills/teams/billing/skills", want: spec{Owner: "acme", Repo: "skills", Subpath: "teams/billing/skills"}},
		{name: "subpath and ref", in: "https://github.com/acme/skills/teams/billing@v2", want: spec{Owner: "acme", Repo: "skills", Ref: "v2", Subpath: "teams/billing"}},
		{name: "ref after the last @: the first @ stays in the repo name", in: "github.com/acme/skills@x@y", wantErr: "bad owner or repository name"},
		{name: "last @ in subpath form", in: "github.com/acme/skills/a@b/c@rel", want: spec{Owner: "acme", Repo: "skills", Ref: "rel", Subpath: "a@b/c"}},
		{name: "tree ref", in: "https://github.com/acme/skills/tree/main", want: spec{Owner: "acme", Repo: "skills", Ref: "main"}},
		{name: "tree ref and path", in: "https://github.com/acme/skills/tree/dev/skills/pdf", want: spec{Owner: "acme", Repo: "skills", Ref: "dev", Subpath: "skills/pdf"}},
		{name: "blob names a file: its folder is the subpath", in: "https://github.com/acme/skills/blob/main/skills/pdf/SKILL.md", want: spec{Owner: "acme", Repo: "skills", Ref: "main", Subpath: "skills/pdf"}},
		{name: "blob of a root file", in: "https://github.com/acme/skills/blob/main/README.md", want: spec{Owner: "acme", Repo: "skills", Ref: "main"}},
		{name: "@ref beats the tree ref", in: "https://github.com/acme/skills/tree/main/skills@v3", want: spec{Owner: "acme", Repo: "skills", Ref: "v3", Subpath: "skills"}},
		{name: "trailing slash", in: "https://github.com/acme/skills/", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "trailing slash after subpath", in: "https://github.com/acme/skills/tree/main/skills/", want: spec{Owner: "acme", Repo: "skills", Ref: "main", Subpath: "skills"}},
		{name: "double slashes collapse", in: "https://github.com//acme//skills//sub", want: spec{Owner: "acme", Repo: "skills", Subpath: "sub"}},
		{name: "query and fragment dropped", in: "https://github.com/acme/skills/tree/main/skills?tab=readme#top", want: spec{Owner: "acme", Repo: "skills", Ref: "main", Subpath: "skills"}},
		{name: "@ in the query is not a ref", in: "https://github.com/acme/skills?x=@y", want: spec{Owner: "acme", Repo: "skills"}},
		{name: "dots and dashes in names", in: "github.com/my-org/skills.v2_x", want: spec{Owner: "my-org", Repo: "skills.v2_x"}},

		{name: "no github.com", in: "https://gitlab.com/acme/skills", wantErr: "expected github.com/owner/repo"},
		{name: "look-alike host", in: "https://github.com.evil.test/acme/skills", wantErr: "expected github.com/owner/repo"},
		{name: "other github host", in: "gist.github.com/acme/skills", wantErr: "expected github.com/owner/repo"},
		{name: "prefixed host", in: "notgithub.com/acme/skills", wantErr: "expected github.com/owner/repo"},
		{name: "user info refused", in: "https://user:tok@github.com/acme/skills", wantErr: "GITHUB_TOKEN"},
		{name: "owner with a leading hyphen", in: "github.com/-acme/skills", wantErr: "bad owner or repository name"},
		{name: "ref with .. segments", in: "github.com/acme/skills@../../x", wantErr: "bad ref"},
		{name: "ref with an empty segment", in: "github.com/acme/skills@a//b", wantErr: "bad ref"},
		{name: "tree ref ..", in: "https://github.com/acme/skills/tree/..", wantErr: "bad ref"},
		{name: "only an owner", in: "github.com/only-owner", wantErr: "expected github.com/owner/repo"},
		{name: "only an owner with ref", in: "github.com/only-owner@main", wantErr: "expected github.com/owner/repo"},
		{name: "nothing after the host", in: "https://github.com/", wantErr: "expected github.com/owner/repo"},
		{name: "empty owner", in: "github.com//skills", wantErr: "expected github.com/owner/repo"},
		{name: "bad owner characters", in: "github.com/ac me/skills", wantErr: "bad owner or repository name"},
		{name: "bad repo characters", in: "github.com/acme/sk!lls", wantErr: "bad owner or repository name"},
		{name: "repo only .git", in: "github.com/acme/.git", wantErr: "bad owner or repository name"},
		{name: "dot-dot repo", in: "github.com/acme/..", wantErr: "bad owner or repository name"},
		{name: "dot-dot in subpath", in: "github.com/acme/skills/a/../../etc", wantErr: `".." is not allowed`},
		{name: "dot in subpath", in: "github.com/acme/skills/./a", wantErr: `"." is not allowed`},
		{name: "dot-dot in tree path", in: "https://github.com/acme/skills/tree/main/../x", wantErr: `".." is not allowed`},
		{name: "bad ref characters", in: "github.com/acme/skills@ma:in", wantErr: "bad ref"},
		{name: "ref with a space", in: "github.com/acme/skills@my branch", wantErr: "bad ref"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.ParseGitHubURL(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseGitHubURL(%q) = %+v, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseGitHubURL(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseGitHubURL(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestGitHubSpecKeyPrefix: Key de-duplicates case-insensitively (reference
// §4 "de-duplicated by owner/repo"); Prefix keeps the case as written.
func TestGitHubSpecKeyPrefix(t *testing.T) {
	s := config.GitHubSpec{Owner: "Acme", Repo: "Skills", Ref: "main", Subpath: "x"}
	if got, want := s.Key(), "acme/skills"; got != want {
		t.Errorf("Key() = %q, want %q", got, want)
	}
	if got, want := s.Prefix(), "Acme-Skills"; got != want {
		t.Errorf("Prefix() = %q, want %q", got, want)
	}
}

// TestParseWellKnownURL covers the publisher URL normalisation of reference
// §5 (WKAS-R01, WKAS-R32): index.json and trailing slashes stripped, the
// /.well-known/agent-skills (or legacy /.well-known/skills) part cut off and
// the path before it kept, default ports dropped, https only unless
// allowHTTP; Key and Prefix from the host (with port) and path.
func TestParseWellKnownURL(t *testing.T) {
	// Publishers whose slugs fold together never share a cache folder.
	keys := map[string]string{}
	for _, u := range []string{"https://h.test/a/b", "https://h.test/a-b", "https://h.test/Team", "https://h.test/team", "https://h.test", "http://h.test"} {
		sp, err := config.ParseWellKnownURL(u, true)
		if err != nil {
			t.Fatal(err)
		}
		if other, dup := keys[sp.Key]; dup {
			t.Errorf("%s and %s share the cache key %s", u, other, sp.Key)
		}
		keys[sp.Key] = u
	}

	type spec = config.WellKnownSpec
	// A key ending in "#" gets the hash suffix of the exact origin and path.
	root := func(origin, prefix, key, pfx string) spec {
		if k, ok := strings.CutSuffix(key, "#"); ok {
			sum := sha256.Sum256([]byte(origin + prefix))
			key = k + "-" + hex.EncodeToString(sum[:4])
		}
		return spec{
			Origin: origin, PathPrefix: prefix,
			IndexURL:       origin + prefix + "/.well-known/agent-skills/index.json",
			LegacyIndexURL: origin + prefix + "/.well-known/skills/index.json",
			Key:            key, Prefix: pfx,
		}
	}
	example := root("https://example.com", "", "example.com", "example.com")
	docs := root("https://example.com", "/docs", "example.com_docs#", "example.com/docs")
	tests := []struct {
		name      string
		in        string
		allowHTTP bool
		want      spec
		wantErr   string
	}{
		{name: "origin", in: "https://example.com", want: example},
		{name: "trailing slash", in: "https://example.com/", want: example},
		{name: "well-known folder", in: "https://example.com/.well-known/agent-skills", want: example},
		{name: "well-known folder slash", in: "https://example.com/.well-known/agent-skills/", want: example},
		{name: "index.json", in: "https://example.com/.well-known/agent-skills/index.json", want: example},
		{name: "legacy index.json", in: "https://example.com/.well-known/skills/index.json", want: example},
		{name: "legacy folder", in: "https://example.com/.well-known/skills/", want: example},
		{name: "bare .well-known", in: "https://example.com/.well-known/", want: example},
		{name: "a skill below the index", in: "https://example.com/.well-known/agent-skills/pdf/SKILL.md", want: example},
		{name: "bare index.json", in: "https://example.com/index.json", want: example},
		{name: "upper-case host", in: "https://EXAMPLE.com", want: example},
		{name: "default port dropped", in: "https://example.com:443/", want: example},
		{name: "query and fragment dropped", in: "https://example.com/?a=1#b", want: example},
		{name: "path prefix", in: "https://example.com/docs", want: docs},
		{name: "path prefix slashes", in: "https://example.com/docs///", want: docs},
		{name: "path prefix with index", in: "https://example.com/docs/.well-known/agent-skills/index.json", want: docs},
		{name: "path prefix with legacy index", in: "https://example.com/docs/.well-known/skills/index.json", want: docs},
		{name: "nested path prefix", in: "https://example.com/a/b/", want: root("https://example.com", "/a/b", "example.com_a-b#", "example.com/a-b")},
		{name: "port kept", in: "https://localhost:8443", want: root("https://localhost:8443", "", "localhost-8443", "localhost-8443")},
		{name: "http allowed", in: "http://example.com/docs", allowHTTP: true, want: func() spec {
			s := root("http://example.com", "/docs", "example.com_docs#", "example.com/docs")
			return s
		}()},
		{name: "http default port dropped", in: "http://example.com:80", allowHTTP: true, want: root("http://example.com", "", "example.com#", "example.com")},
		{name: "port 80 on https kept", in: "https://example.com:80", want: root("https://example.com:80", "", "example.com-80", "example.com-80")},

		{name: "http refused", in: "http://example.com", wantErr: "WELL_KNOWN_ALLOW_HTTP=1"},
		{name: "ftp refused", in: "ftp://example.com", allowHTTP: true, wantErr: "unsupported scheme"},
		{name: "file refused", in: "file:///etc/passwd", allowHTTP: true, wantErr: "unsupported scheme"},
		{name: "no scheme", in: "example.com", wantErr: "unsupported scheme"},
		{name: "no host", in: "https:///docs", wantErr: "has no host"},
		{name: "user info", in: "https://user:pw@example.com", wantErr: "user info"},
		{name: "not a URL", in: "https://exa mple.com:x", wantErr: "invalid publisher URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.ParseWellKnownURL(tc.in, tc.allowHTTP)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseWellKnownURL(%q, %v) = %+v, %v; want an error containing %q", tc.in, tc.allowHTTP, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseWellKnownURL(%q, %v): %v", tc.in, tc.allowHTTP, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseWellKnownURL(%q, %v) mismatch (-want +got):\n%s", tc.in, tc.allowHTTP, diff)
			}
		})
	}
}
