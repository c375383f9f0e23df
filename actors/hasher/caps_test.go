package hasher_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// sparse creates a file of size bytes that takes no disk space and no time.
func sparse(t *testing.T, p string, size int64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// TestHasherSizeCaps is issue 10 F4: a 256 MiB SKILL.md skips its skill and
// a 2 GiB supporting file is left out of its manifest, each with one
// diagnostic naming the file, its size and the cap, and neither is read
// (the scan hashes only the small files and its heap stays small); the
// caps come from HasherOptions, defaults 4 MiB and 1 MiB.
func TestHasherSizeCaps(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	skilltest.WriteTree(t, root, map[string]string{
		"ok/SKILL.md":   skilltest.SkillMD("ok", "d"),
		"ok/small.md":   "small",
		"huge/small.md": "never hashed: its skill is skipped",
		"edge/SKILL.md": skilltest.SkillMD("edge", "d") + strings.Repeat("x", 300),
		"ok/at-cap.bin": strings.Repeat("y", 1000),
	})
	sparse(t, filepath.Join(root, "huge", "SKILL.md"), 256<<20)
	sparse(t, filepath.Join(root, "ok", "big.bin"), 2<<30)
	sparse(t, filepath.Join(root, "ok", "over.bin"), 1001)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 32<<20 {
		t.Errorf("scan allocated %d MiB; over-cap files must not be read", grew>>20)
	}
	if got, want := manifest(scan), map[string][]string{
		"ok":   {"SKILL.md", "at-cap.bin", "over.bin", "small.md"},
		"edge": {"SKILL.md"},
	}; !equalManifests(got, want) {
		t.Errorf("manifests = %v, want %v", got, want)
	}
	if scan.Hashed != 5 {
		t.Errorf("Hashed = %d, want 5 (the over-cap files never read)", scan.Hashed)
	}
	wantDiag(t, scan.Diagnostics, filepath.Join(root, "huge", "SKILL.md"), events.LevelError, "256.00 MiB", "4.00 MiB", "MAX_SKILL_MD_MB", "skipped")
	wantDiag(t, scan.Diagnostics, filepath.Join(root, "ok", "big.bin"), events.LevelWarn, "2048.00 MiB", "1.00 MiB", "MAX_FILE_SIZE_MB", "left out")

	// Caps from the options: 1000-byte files (a file of exactly the cap is
	// served), 200-byte SKILL.md.
	scan, err = newTestHasher(&hasher.Options{MaxFileSize: 1000, MaxSkillMDSize: 200}).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := manifest(scan), map[string][]string{"ok": {"SKILL.md", "at-cap.bin", "small.md"}}; !equalManifests(got, want) {
		t.Errorf("manifests with small caps = %v, want %v", got, want)
	}
	wantDiag(t, scan.Diagnostics, filepath.Join(root, "edge", "SKILL.md"), events.LevelError, "over the 200 bytes cap", "MAX_SKILL_MD_MB")
	wantDiag(t, scan.Diagnostics, filepath.Join(root, "ok", "over.bin"), events.LevelWarn, "1001 bytes", "over the 1000 bytes cap")
}

func equalManifests(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

// wantDiag checks that exactly one diagnostic is about file, at level, and
// that it holds every word.
func wantDiag(t *testing.T, diags []events.Diagnostic, file, level string, words ...string) {
	t.Helper()
	n := 0
	for _, d := range diags {
		if d.File != file {
			continue
		}
		n++
		if d.Level != level {
			t.Errorf("diagnostic about %s at level %s, want %s: %s", file, d.Level, level, d.Message)
		}
		for _, w := range words {
			if !strings.Contains(d.Message, w) {
				t.Errorf("diagnostic about %s lacks %q: %s", file, w, d.Message)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d diagnostics about %s, want 1: %+v", n, file, diags)
	}
}

// TestHasherRecordsSkillFolder is issue 10 F2: every local skill records
// its real folder and that folder's identity; a skill folder linked in the
// source root records the link's target; a file swapped for a link is
// never hashed.
func TestHasherRecordsSkillFolder(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "lib")
	skilltest.WriteTree(t, root, map[string]string{"plain/SKILL.md": skilltest.SkillMD("plain", "d"), "plain/f.md": "f"})
	skilltest.WriteTree(t, base, map[string]string{"elsewhere/linked/SKILL.md": skilltest.SkillMD("linked", "d"), "secret.txt": "secret"})
	if err := os.Symlink(filepath.Join(base, "elsewhere", "linked"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "plain", "link.md")); err != nil {
		t.Fatal(err)
	}
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	want := map[string]string{"plain": real(filepath.Join(root, "plain")), "linked": real(filepath.Join(base, "elsewhere", "linked"))}
	for _, s := range scan.Skills {
		if s.RealDir != want[s.RelDir] || s.DirID == (events.FolderID{}) {
			t.Errorf("skill %s: RealDir %q, DirID %v; want %q and an identity", s.RelDir, s.RealDir, s.DirID, want[s.RelDir])
		}
		for _, f := range s.Files {
			if f.Digest == skilltest.Digest("secret") {
				t.Errorf("skill %s lists %s with the digest of a file outside", s.RelDir, f.Path)
			}
		}
	}
	if len(scan.Skills) != 2 {
		t.Errorf("skills = %v, want plain and linked", relDirs(scan))
	}
}
