// Package skilltest provides the skill trees tests put on disk: SKILL.md
// text ([SkillMD]), trees of files ([WriteTree]) and file digests as the
// catalog records them ([Digest]). It is imported only by tests, like
// net/http/httptest, and imports nothing of this module.
package skilltest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// WriteTree writes files (slash paths relative to root → content) below
// root, creating folders as needed; it fails t at the first error.
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Digest is the digest of the bytes s as events.File records it:
// "sha256:" and the hex SHA-256.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SkillMD is a SKILL.md with frontmatter name and description and a short
// body.
func SkillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# Body\n"
}
