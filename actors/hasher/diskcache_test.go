package hasher_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// cacheTree writes n skills of three files each below root and waits past
// the file system's timestamp tick, so that their digests may be persisted
// with racySlack 0.
func cacheTree(t *testing.T, root string, n int) {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		files[name+"/SKILL.md"] = skilltest.SkillMD(name, "d")
		files[name+"/refs/a.md"] = "alpha " + name
		files[name+"/b.txt"] = "bravo " + name
	}
	skilltest.WriteTree(t, root, files)
	time.Sleep(50 * time.Millisecond)
}

// cachedHasher returns a hasher with the persistent digest cache in dir,
// logging into log when it is not nil.
func cachedHasher(dir string, log *bytes.Buffer) *hasher.Hasher {
	o := &hasher.Options{CacheDir: dir}
	if log != nil {
		o.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return newTestHasher(o)
}

// scanOK scans src with h and checks that every digest it lists is the
// digest of the file's bytes on disk now.
func scanOK(t *testing.T, h *hasher.Hasher, src events.Source) events.SourceScanned {
	t.Helper()
	scan, err := h.Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scan.Skills {
		for _, f := range s.Files {
			data, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(f.OnDisk())))
			if err != nil {
				t.Fatal(err)
			}
			if f.Digest != skilltest.Digest(string(data)) || f.Size != int64(len(data)) {
				t.Errorf("%s/%s: digest %s size %d, want those of its bytes %q", s.RelDir, f.Path, f.Digest, f.Size, data)
			}
		}
	}
	return scan
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "digests-*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDigestCacheRestart is issue 12: a restart over a warm persistent
// digest cache reads no file, not even a SKILL.md (the catalog builder
// keeps what it built of them), and describes every file as the first
// start did.
func TestDigestCacheRestart(t *testing.T) {
	hasher.SetRacySlack(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "lib"), filepath.Join(base, "cache")
	cacheTree(t, root, 5)
	src := localSource(root)
	first := scanOK(t, cachedHasher(cache, nil), src)
	if first.Hashed != 15 {
		t.Fatalf("first start hashed %d files, want 15", first.Hashed)
	}
	if n := len(cacheFiles(t, cache)); n != 1 {
		t.Fatalf("%d cache files, want 1", n)
	}
	again := scanOK(t, cachedHasher(cache, nil), src)
	if again.Hashed != 0 {
		t.Errorf("restart hashed %d files, want 0", again.Hashed)
	}
	if diff := cmp.Diff(first.Skills, again.Skills, ignoreScanMeta); diff != "" {
		t.Errorf("restart scanned differently (-first +again):\n%s", diff)
	}
}

// TestDigestCacheRacy checks that a file changed within racySlack of a
// scan is not persisted: its key might not change with the next write.
func TestDigestCacheRacy(t *testing.T) {
	base := t.TempDir()
	root, cache := filepath.Join(base, "lib"), filepath.Join(base, "cache")
	cacheTree(t, root, 2)
	src := localSource(root)
	scanOK(t, cachedHasher(cache, nil), src) // racySlack 2 s: the files are too new
	if again := scanOK(t, cachedHasher(cache, nil), src); again.Hashed != 6 {
		t.Errorf("restart hashed %d files, want 6: none was old enough to persist", again.Hashed)
	}
}

// TestDigestCacheChangedBehindItsBack is issue 12: a file rewritten with
// its size and modification time restored (so that a (path, size, mtime)
// key would match) is hashed again, at a restart and at a rescan (the
// reconcile tick) of the same hasher, by its change time.
func TestDigestCacheChangedBehindItsBack(t *testing.T) {
	hasher.SetRacySlack(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "lib"), filepath.Join(base, "cache")
	cacheTree(t, root, 3)
	src := localSource(root)
	h := cachedHasher(cache, nil)
	scanOK(t, h, src)
	p := filepath.Join(root, "s1", "refs", "a.md")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("ALPHA s1"), 0o644); err != nil { // same size
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, err := os.Stat(p); err != nil || fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("size and mtime not restored: %v %v", fi2, err)
	}
	if got := scanOK(t, cachedHasher(cache, nil), src); got.Hashed != 1 {
		t.Errorf("restart hashed %d files, want 1 (the changed file)", got.Hashed)
	}
	if got := scanOK(t, h, src); got.Hashed != 1 {
		t.Errorf("rescan hashed %d files, want 1 (the changed file)", got.Hashed)
	}
}

// TestDigestCacheDeletedOrCorrupt is issue 12: a deleted cache file, a
// corrupt one, one written for another root and a symbolic link in its
// place each make the next start hash every file, with one log line, and
// are rebuilt; a link is replaced, never written through.
func TestDigestCacheDeletedOrCorrupt(t *testing.T) {
	hasher.SetRacySlack(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "lib"), filepath.Join(base, "cache")
	cacheTree(t, root, 2)
	src := localSource(root)
	scanOK(t, cachedHasher(cache, nil), src)
	file := cacheFiles(t, cache)[0]
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A well-formed file written for another root.
	other := filepath.Join(base, "other")
	cacheTree(t, other, 1)
	otherCache := filepath.Join(base, "other-cache")
	scanOK(t, cachedHasher(otherCache, nil), localSource(other))
	otherRoot, err := os.ReadFile(cacheFiles(t, otherCache)[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func() error
		log   string
	}{
		{"deleted", func() error { return os.Remove(file) }, "no digest cache yet"},
		{"truncated", func() error { return os.WriteFile(file, good[:len(good)/2], 0o600) }, "corrupt"},
		{"flipped", func() error {
			bad := bytes.Clone(good)
			bad[len(bad)/2] ^= 1
			return os.WriteFile(file, bad, 0o600)
		}, "corrupt"},
		{"garbage", func() error { return os.WriteFile(file, []byte("not a cache"), 0o600) }, "corrupt"},
		{"other root", func() error { return os.WriteFile(file, otherRoot, 0o600) }, "written for"},
		{"link", func() error {
			if err := os.Remove(file); err != nil {
				return err
			}
			return os.Symlink(victim, file)
		}, "unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.spoil(); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			if got := scanOK(t, cachedHasher(cache, &log), src); got.Hashed != 6 {
				t.Errorf("start after the cache was %s hashed %d files, want 6", tc.name, got.Hashed)
			}
			if n := strings.Count(log.String(), "\n"); n != 1 || !strings.Contains(log.String(), tc.log) {
				t.Errorf("log = %q; want one line about the digest cache saying %q", log.String(), tc.log)
			}
			if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("cache file after the rebuild: %v, %v; want a regular file", fi, err)
			}
			if got := scanOK(t, cachedHasher(cache, nil), src); got.Hashed != 0 {
				t.Errorf("start after the rebuild hashed %d files, want 0", got.Hashed)
			}
		})
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "keep me" {
		t.Errorf("the link's target = %q, %v; want it untouched", data, err)
	}
}

// TestDigestCacheTwoProcesses is issue 12: hashers sharing one cache
// folder (two processes), scanning a shared root and one of their own each
// while the shared root changes, always list the digests of the bytes on
// disk, and a later start over their cache does too.
func TestDigestCacheTwoProcesses(t *testing.T) {
	hasher.SetRacySlack(t, 0)
	base := t.TempDir()
	cache := filepath.Join(base, "cache")
	shared, own1, own2 := filepath.Join(base, "shared"), filepath.Join(base, "one"), filepath.Join(base, "two")
	for _, r := range []string{shared, own1, own2} {
		cacheTree(t, r, 3)
	}
	hs := []*hasher.Hasher{cachedHasher(cache, nil), cachedHasher(cache, nil)}
	owns := []string{own1, own2}
	for round := range 4 {
		var wg sync.WaitGroup
		for i, h := range hs {
			wg.Go(func() {
				for range 3 {
					scanOK(t, h, localSource(shared))
					scanOK(t, h, localSource(owns[i]))
				}
			})
		}
		wg.Wait()
		// Change the shared root between rounds: one file rewritten (size
		// and mtime kept), one added, one removed.
		p := filepath.Join(shared, "s0", "b.txt")
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "BRAVO%d s0", round)[:fi.Size()], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		skilltest.WriteTree(t, shared, map[string]string{fmt.Sprintf("s1/new%d.md", round): "new"})
		_ = os.Remove(filepath.Join(shared, "s2", "b.txt"))
		time.Sleep(50 * time.Millisecond)
	}
	for _, r := range []string{shared, own1, own2} {
		scanOK(t, cachedHasher(cache, nil), localSource(r))
	}
	if n := len(cacheFiles(t, cache)); n != 3 {
		t.Errorf("%d cache files, want 3 (one per root)", n)
	}
	if tmp, _ := filepath.Glob(filepath.Join(cache, ".*.tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestDigestCacheFolderRefused (issue 10): a digest cache folder that is a
// symbolic link to a folder, a file or another thing than this user's
// folder is refused like the remote caches: nothing is written through
// it, one warning names it, and the hasher scans with its in-memory cache.
func TestDigestCacheFolderRefused(t *testing.T) {
	hasher.SetRacySlack(t, 0)
	base := t.TempDir()
	root := filepath.Join(base, "lib")
	cacheTree(t, root, 2)
	src := localSource(root)
	canary := filepath.Join(base, "canary")
	skilltest.WriteTree(t, canary, map[string]string{"keep.txt": "keep me"})
	for _, tc := range []struct {
		name  string
		place func(cache string) error
		want  string
	}{
		{"link to a folder", func(cache string) error { return os.Symlink(canary, cache) }, "symbolic link"},
		{"file", func(cache string) error { return os.WriteFile(cache, []byte("keep me"), 0o600) }, "not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), ".digests")
			if err := tc.place(cache); err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			h := cachedHasher(cache, &log)
			for range 2 {
				scanOK(t, h, src)
			}
			if got := scanOK(t, h, src); got.Hashed != 0 {
				t.Errorf("a rescan hashed %d files, want 0: the in-memory cache is not used", got.Hashed)
			}
			warns := strings.Count(log.String(), "level=WARN")
			if warns != 1 || !strings.Contains(log.String(), "digest cache folder refused") ||
				!strings.Contains(log.String(), cache) || !strings.Contains(log.String(), tc.want) {
				t.Errorf("log = %q; want one warning naming %s (%s)", log.String(), cache, tc.want)
			}
			entries, err := os.ReadDir(canary)
			if err != nil || len(entries) != 1 {
				t.Errorf("canary folder holds %v, %v; want keep.txt only", entries, err)
			}
			if data, err := os.ReadFile(filepath.Join(canary, "keep.txt")); err != nil || string(data) != "keep me" {
				t.Errorf("canary = %q, %v; want it unchanged", data, err)
			}
		})
	}
}
