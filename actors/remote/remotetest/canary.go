// Package remotetest provides what the cache tests of both remote fetchers
// (actors/remote/wellknown and actors/remote/github) share: a canary
// folder standing in for /etc ([MakeCanary]), snapshots of trees
// ([Snapshot]), cache folders replaced by a link, a file or a foreign
// folder ([ReplaceWith], [Cases], [CheckCanaries]), aged trees
// ([AgeTree]), caches of earlier versions ([RemoveMarkers]) and the
// random cache trees of [FuzzCachePrune]. Each fetcher's test keeps its
// positions table and the driver of its fetcher. It is imported only by
// tests, like net/http/httptest.
//
// The remote caches delete only what they created (issue 10 F1): a cache
// folder replaced by a link to a canary, by a file or by a foreign folder
// is refused with a line naming it, and a sync with pruning and a
// crash-leftover cleanup leaves the canary (and the foreign folder) byte
// for byte as it was.
package remotetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Age is how old [AgeTree] makes every canary entry and crash leftover:
// older than the fetchers' stale age, so a cleanup reaching them would
// remove them.
const Age = 3 * time.Hour

// MakeCanary creates a folder standing in for /etc: files and folders a
// prune could pick (one named like a skill, one holding the cache marker,
// so that following a link would find something that looks like ours),
// every entry aged. It returns the folder, below t.TempDir().
func MakeCanary(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "etc")
	writeFiles(t, dir, map[string]string{
		"passwd":               "root:x:0:0:root:/root:/bin/sh\n",
		"hosts":                "127.0.0.1 localhost\n",
		"ssl/certs/ca.pem":     "-----BEGIN CERTIFICATE-----\n",
		"hello/SKILL.md":       "---\nname: hello\ndescription: Canary.\n---\n",
		"bye/.skilljack-cache": "marker\n",
		".skilljack-cache":     "marker\n",
		"index.json":           `{"skills":{}}`,
		"acme/skills/README":   "canary\n",
	})
	AgeTree(t, dir)
	return dir
}

// AgeTree sets every entry below dir (links excepted) back by [Age],
// deepest first so that folders keep the time.
func AgeTree(t testing.TB, dir string) {
	t.Helper()
	old := time.Now().Add(-Age)
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

// Snapshot records every entry below dir, links not followed: type,
// permissions, size, mtime and the bytes of each file or the target of
// each link, by path relative to dir ("." for dir itself).
func Snapshot(t testing.TB, dir string) map[string]string {
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

// Variant is what a managed cache folder is replaced with.
type Variant string

// The variants [ReplaceWith] puts in place of a cache folder.
const (
	AsLink    Variant = "link to the canary"
	AsFile    Variant = "file"
	AsForeign Variant = "foreign folder"
	// AsOtherUser is a marked folder of another user: only its owner is
	// wrong. Creating it needs root (chown); elsewhere the case skips.
	AsOtherUser Variant = "folder of another user"
)

// OtherUID owns the [AsOtherUser] folders.
const OtherUID = 12345

// ReplaceWith puts v at p (removing what the fetcher left there) and
// returns the snapshot of a foreign folder (nil for the other variants).
// With aged set, the new entry itself is aged like a crash leftover. It
// skips t where v cannot be made: an aged link where links keep no time
// of their own, [AsOtherUser] when not root.
func ReplaceWith(t testing.TB, p string, v Variant, canary string, aged bool) map[string]string {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-Age)
	var foreign map[string]string
	switch v {
	case AsLink:
		if err := os.Symlink(canary, p); err != nil {
			t.Fatal(err)
		}
		if aged {
			if err := lchtimes(p, old); err != nil {
				t.Skipf("cannot age a link here: %v", err)
			}
		}
	case AsFile:
		if err := os.WriteFile(p, []byte("not a folder\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if aged {
			os.Chtimes(p, old, old)
		}
	case AsForeign:
		writeFiles(t, p, map[string]string{"notes.txt": "mine\n", "SKILL.md": "---\nname: mine\ndescription: Mine.\n---\n", "sub/data.bin": "data"})
		AgeTree(t, p)
		foreign = Snapshot(t, p)
	case AsOtherUser:
		if os.Getuid() != 0 {
			t.Skip("making a folder of another user needs root")
		}
		writeFiles(t, p, map[string]string{".skilljack-cache": "marker\n", "notes.txt": "theirs\n"})
		AgeTree(t, p)
		filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
			if err == nil {
				err = os.Lchown(q, OtherUID, OtherUID)
			}
			return err
		})
		foreign = Snapshot(t, p)
	}
	return foreign
}

// Case is one row of the canary tables.
type Case struct {
	Pos string // which folder is replaced
	Rel string // its path relative to the cache folder
	V   Variant
	// Leftover: the entry is a crash leftover (created aged, not replaced)
	Leftover bool
	// Quiet: the entry is not refused, just left alone (no log line)
	Quiet bool
}

// Cases crosses positions with every variant; skip names, by position,
// the variants a position does not take.
func Cases(positions []Case, skip map[string][]Variant) []Case {
	var out []Case
	for _, p := range positions {
		for _, v := range []Variant{AsLink, AsFile, AsForeign, AsOtherUser} {
			skipped := false
			for _, s := range skip[p.Pos] {
				skipped = skipped || s == v
			}
			if !skipped {
				c := p
				c.V = v
				out = append(out, c)
			}
		}
	}
	return out
}

// CheckCanaries compares the canary and the foreign folder at p with
// their snapshots before and foreign (nil: none) and, unless tc is quiet,
// looks for the refused path p in logs.
func CheckCanaries(t testing.TB, tc Case, canary string, before, foreign map[string]string, p, logs string) {
	t.Helper()
	if diff := cmp.Diff(before, Snapshot(t, canary)); diff != "" {
		t.Errorf("the canary changed (-before +after):\n%s\nlog:\n%s", diff, logs)
	}
	if foreign != nil {
		after := Snapshot(t, p)
		for rel, want := range foreign {
			if rel == "." {
				continue // an adopted top folder gains entries
			}
			if after[rel] != want {
				t.Errorf("foreign %s = %q, want %q unchanged", rel, after[rel], want)
			}
		}
	}
	if tc.Quiet {
		return
	}
	if !strings.Contains(logs, "cache folder "+p+" ") {
		t.Errorf("the log does not name the refused folder %s:\n%s", p, logs)
	}
}

// RemoveMarkers turns a cache into one written before the marker existed
// (issue 10 F1): every marker below dir goes, each folder keeping its
// mtime.
func RemoveMarkers(t testing.TB, dir string) {
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

// writeFiles writes files (slash paths relative to root → content) below
// root, creating folders; a canary or a foreign folder is plain files, so
// this package needs no skill helpers.
func writeFiles(t testing.TB, root string, files map[string]string) {
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
