package github_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/remote/github"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
)

// The remote caches delete only what they created (issue 10 F1): a cache
// folder replaced by a link to a canary standing in for /etc, by a file or
// by a foreign folder is refused with a line naming it, and a sync with
// pruning and a crash-leftover cleanup leaves the canary (and the foreign
// folder) byte for byte as it was.

// old is the mtime of every canary entry and crash leftover: older than
// the fetchers' stale age, so a cleanup reaching them would remove them.
var old = time.Now().Add(-3 * time.Hour)

// makeCanary creates a folder standing in for /etc: files and folders a
// prune could pick (one named like a skill, one holding the cache marker,
// so that following a link would find something that looks like ours),
// every entry aged. It returns the folder.
func makeCanary(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "etc")
	skilltest.WriteTree(t, dir, map[string]string{
		"passwd":               "root:x:0:0:root:/root:/bin/sh\n",
		"hosts":                "127.0.0.1 localhost\n",
		"ssl/certs/ca.pem":     "-----BEGIN CERTIFICATE-----\n",
		"hello/SKILL.md":       skilltest.SkillMD("hello", "Canary."),
		"bye/.skilljack-cache": "marker\n",
		".skilljack-cache":     "marker\n",
		"index.json":           `{"skills":{}}`,
		"acme/skills/README":   "canary\n",
	})
	ageTree(t, dir)
	return dir
}

// ageTree sets every entry below dir (links excepted) to old, deepest
// first so that folders keep the time.
func ageTree(t *testing.T, dir string) {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			paths = append(paths, p)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Chtimes(paths[i], old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot records every entry below dir, links not followed: type,
// permissions, size, mtime and the bytes of each file or the target of
// each link.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		desc := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// variant is what a managed cache folder is replaced with.
type variant string

const (
	asLink    variant = "link to the canary"
	asFile    variant = "file"
	asForeign variant = "foreign folder"
	// asOtherUser is a marked folder of another user: only its owner is
	// wrong. Creating it needs root (chown); elsewhere the case skips.
	asOtherUser variant = "folder of another user"
)

// otherUID owns the asOtherUser folders.
const otherUID = 12345

// replaceWith puts v at p (removing what the fetcher left there) and
// returns the snapshot of a foreign folder (nil for the other variants).
// With aged set, the new entry itself is aged like a crash leftover.
func replaceWith(t *testing.T, p string, v variant, canary string, aged bool) map[string]string {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	var foreign map[string]string
	switch v {
	case asLink:
		if err := os.Symlink(canary, p); err != nil {
			t.Fatal(err)
		}
		if aged {
			if err := github.Lchtimes(p, old); err != nil {
				t.Skipf("cannot age a link here: %v", err)
			}
		}
	case asFile:
		if err := os.WriteFile(p, []byte("not a folder\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if aged {
			os.Chtimes(p, old, old)
		}
	case asForeign:
		skilltest.WriteTree(t, p, map[string]string{"notes.txt": "mine\n", "SKILL.md": skilltest.SkillMD("mine", "Mine."), "sub/data.bin": "data"})
		ageTree(t, p)
		foreign = snapshot(t, p)
	case asOtherUser:
		if os.Getuid() != 0 {
			t.Skip("making a folder of another user needs root")
		}
		skilltest.WriteTree(t, p, map[string]string{".skilljack-cache": "marker\n", "notes.txt": "theirs\n"})
		ageTree(t, p)
		filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
			if err == nil {
				err = os.Lchown(q, otherUID, otherUID)
			}
			return err
		})
		foreign = snapshot(t, p)
	}
	return foreign
}

// cacheCase is one row of the canary tables.
type cacheCase struct {
	pos string // which folder is replaced
	rel string // its path relative to the cache folder
	v   variant
	// leftover: the entry is a crash leftover (created aged, not replaced)
	leftover bool
	// quiet: the entry is not refused, just left alone (no log line)
	quiet bool
}

// cases crosses positions with the three variants; skip names the
// variants a position does not take.
func cases(positions []cacheCase, skip map[string][]variant) []cacheCase {
	var out []cacheCase
	for _, p := range positions {
		for _, v := range []variant{asLink, asFile, asForeign, asOtherUser} {
			skipped := false
			for _, s := range skip[p.pos] {
				skipped = skipped || s == v
			}
			if !skipped {
				c := p
				c.v = v
				out = append(out, c)
			}
		}
	}
	return out
}

// checkCanaries compares the canary and the foreign folder with their
// snapshots and looks for the refused path in the log.
func checkCanaries(t *testing.T, tc cacheCase, canary string, before, foreign map[string]string, p, logs string) {
	t.Helper()
	if diff := cmp.Diff(before, snapshot(t, canary)); diff != "" {
		t.Errorf("the canary changed (-before +after):\n%s\nlog:\n%s", diff, logs)
	}
	if foreign != nil {
		after := snapshot(t, p)
		for rel, want := range foreign {
			if rel == "." {
				continue // an adopted top folder gains entries
			}
			if after[rel] != want {
				t.Errorf("foreign %s = %q, want %q unchanged", rel, after[rel], want)
			}
		}
	}
	if tc.quiet {
		return
	}
	if !strings.Contains(logs, "cache folder "+p+" ") {
		t.Errorf("the log does not name the refused folder %s:\n%s", p, logs)
	}
}

// TestGitHubCacheRefusesWhatIsNotOurs is the GitHub half of issue 10 F1's
// acceptance: after a first sync, the cache folder, the owner folder, the
// clone folder and the staging, trash and download leftovers are in turn
// a link to a canary, a file and a foreign folder; a second sync (a new
// commit, so the clone is swapped and the old one removed) with a
// crash-leftover cleanup leaves the canary and the foreign folder as they
// were and logs the refused folder. (The old code wrote the clone into
// the canary through an owner-folder link, and swapped out and deleted a
// foreign clone folder.)
func TestGitHubCacheRefusesWhatIsNotOurs(t *testing.T) {
	positions := []cacheCase{
		{pos: "cache folder", rel: "."},
		{pos: "owner folder", rel: "acme"},
		{pos: "clone folder", rel: "acme/skills"},
		{pos: "staging leftover", rel: "acme/.staging-skills~1", leftover: true},
		{pos: "trash leftover", rel: "acme/.trash-skills~1", leftover: true},
		{pos: "download leftover", rel: "acme/.download-skills~1.tar.gz", leftover: true},
	}
	// A regular file by a download's name is what a crash leaves: removed.
	for _, tc := range cases(positions, map[string][]variant{"download leftover": {asFile}}) {
		t.Run(tc.pos+"/"+string(tc.v), func(t *testing.T) {
			if tc.pos == "cache folder" && tc.v == asForeign {
				tc.quiet = true // SKILLJACK_CACHE_DIR itself needs no marker
			}
			api := newGHAPI(t)
			api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "A.")})
			cache := filepath.Join(t.TempDir(), "cache")
			r := startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
			r.synced()
			canary := makeCanary(t)
			before := snapshot(t, canary)
			p := filepath.Join(cache, filepath.FromSlash(tc.rel))
			foreign := replaceWith(t, p, tc.v, canary, tc.leftover)

			api.commit(t, "acme/skills", "main", shaB, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "B.")})
			r.syncNow()
			r.next()
			r.stop()
			checkCanaries(t, tc, canary, before, foreign, p, r.logs.String())
		})
	}
}

// TestGitHubCacheDirHoldsCheckouts: SKILLJACK_CACHE_DIR pointing at a
// source tree (~/src) whose acme/skills is the user's own checkout: the
// tree is untouched and the source refused with the message of issue 10
// F1, naming the clone folder; with acme/ holding other projects only, the
// owner folder is named.
func TestGitHubCacheDirHoldsCheckouts(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		named string
	}{
		{"checkout at the clone folder", map[string]string{"acme/skills/.git/HEAD": "ref: refs/heads/main\n", "acme/skills/README.md": "mine\n",
			"acme/skills/s/SKILL.md": skilltest.SkillMD("s", "Mine."), "acme/other/go.mod": "module x\n"}, "acme/skills"},
		{"other projects in the owner folder", map[string]string{"acme/other/.git/HEAD": "ref: refs/heads/main\n", "acme/notes.txt": "mine\n"}, "acme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "src")
			skilltest.WriteTree(t, src, tc.files)
			ageTree(t, src)
			before := snapshot(t, src)
			api := newGHAPI(t)
			api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "A.")})
			r := startPoller(t, api, config.GitHub{CacheDir: src}, "github.com/acme/skills")
			f := r.failed()
			r.stop()
			want := "cache folder " + filepath.Join(src, filepath.FromSlash(tc.named)) + " exists and was not created by skilljack-mcp; move it or choose another SKILLJACK_CACHE_DIR"
			if f.Error != want {
				t.Errorf("source.failed error = %q, want %q", f.Error, want)
			}
			if diff := cmp.Diff(before, snapshot(t, src)); diff != "" {
				t.Errorf("the source tree changed (-before +after):\n%s", diff)
			}
			if n := api.count("/repos/acme/skills/tarball/"); n != 0 {
				t.Errorf("%d tarball downloads for a refused cache, want 0", n)
			}
		})
	}
}

// removeMarkers turns a cache into one written before the marker existed
// (issue 10 F1): every marker goes, each folder keeping its mtime.
func removeMarkers(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != ".skilljack-cache" {
			return err
		}
		fi, err := os.Stat(filepath.Dir(p))
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return os.Chtimes(filepath.Dir(p), fi.ModTime(), fi.ModTime())
	})
}

// TestCachesOfEarlierVersionsAreAdopted: caches written before the marker
// existed (cache index / sync metadata, no marker) keep working: the next
// sync updates and prunes them and marks them (issue 10 F1).
func TestCachesOfEarlierVersionsAreAdopted(t *testing.T) {
	t.Run("github", func(t *testing.T) {
		api := newGHAPI(t)
		api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "A.")})
		cache := filepath.Join(t.TempDir(), "cache")
		r := startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
		r.synced()
		r.stop()
		removeMarkers(t, cache)
		api.commit(t, "acme/skills", "main", shaB, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "B.")})
		r = startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
		if ev := r.synced(); ev.Revision != shaB {
			t.Errorf("revision %s, want %s", ev.Revision, shaB)
		}
		r.stop()
		if b, err := os.ReadFile(filepath.Join(cache, "acme", "skills", "s", "SKILL.md")); err != nil || string(b) != skilltest.SkillMD("s", "B.") {
			t.Errorf("SKILL.md = %q, %v; want B", b, err)
		}
		if strings.Contains(r.logs.String(), "level=WARN") || strings.Contains(r.logs.String(), "level=ERROR") {
			t.Errorf("warnings for a cache of an earlier version:\n%s", r.logs.String())
		}
	})
}
