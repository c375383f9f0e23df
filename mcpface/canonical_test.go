package mcpface

import (
	"errors"
	"strings"
	"testing"
)

// TestCanonicalURIPlain (issue 12: per-request allocations): a URI
// returned as it is because it is already canonical is exactly what
// recoding it segment by segment gives, errors included, and costs no
// allocation.
func TestCanonicalURIPlain(t *testing.T) {
	for _, u := range []string{
		"skill://gen/s00001-deploy-genome/SKILL.md", "skill://a/b/c.d_e~f*g'h(i)!j", "skill://a", "skill://",
		"skill://a//b", "skill://a/./b", "skill://a/../b", "skill://a/b/", "skill://a/.hidden/..x",
		"skill://a/b%20c", "skill://a/%41", "skill://a/é", "skill://a/b c", "skill://a/%2F", "skill://a/%zz",
	} {
		rest := strings.TrimPrefix(u, "skill://")
		got, err := canonicalURI(u)
		want, wantErr := recodeURI(rest)
		if got != want || !errors.Is(err, wantErr) && (err != nil || wantErr != nil) {
			t.Errorf("canonicalURI(%q) = %q, %v; recoded %q, %v", u, got, err, want, wantErr)
		}
	}
	u := "skill://gen/s00001-deploy-genome/references/guide.md"
	if n := testing.AllocsPerRun(100, func() { _, _ = canonicalURI(u) }); n != 0 {
		t.Errorf("canonicalURI of a canonical URI allocates %v times", n)
	}
}
