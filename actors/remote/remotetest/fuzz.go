package remotetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors/remote"
)

// fuzzPositions are the entries a fuzzed cache tree may hold, parents
// first: the well-known cache (top "wk") and the GitHub cache (top "gh"),
// every folder the fetchers manage and their crash leftovers.
func fuzzPositions() []string {
	return []string{
		"wk", "wk/pub", "wk/pub/skills", "wk/pub/skills/a", "wk/pub/skills/b", "wk/pub/skills/c", "wk/pub/skills/a/sub",
		"wk/pub/.staging-a~1", "wk/pub/.trash-b~2", "wk/pub/.staging", "wk/pub/index.json.tmp1",
		"gh", "gh/acme", "gh/acme/skills", "gh/acme/skills/x", "gh/acme/.staging-skills~1", "gh/acme/.trash-skills~2",
		"gh/acme/.download-skills~3.tar.gz", "gh/acme/.skills.sync.json.tmp4",
	}
}

// Kinds of fuzzed entries.
const (
	fzAbsent   = iota
	fzOurs     // a folder holding the marker and a file
	fzForeign  // a folder holding files, no marker
	fzLink     // a link to the canary outside the caches
	fzFile     // a regular file
	fzEmpty    // an empty folder
	fzLinkUp   // a relative link to the parent folder
	fzLinkSelf // a relative link to ".", a loop
	fzKinds
)

// buildFuzzTree lays out the cache tree that data describes below base:
// one byte per position picks its kind; a position whose parent is not a
// real folder stays absent. Byte len(fuzzPositions()) decides whether the
// publisher has a cache index recording skills a, b and c, and the next
// whether everything is aged past the stale age.
func buildFuzzTree(t *testing.T, base, canary string, data []byte) (withIndex, aged bool) {
	t.Helper()
	at := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	positions := fuzzPositions()
	for i, rel := range positions {
		p := filepath.Join(base, filepath.FromSlash(rel))
		if fi, err := os.Lstat(filepath.Dir(p)); err != nil || !fi.IsDir() {
			continue
		}
		var err error
		switch at(i) % fzKinds {
		case fzOurs:
			err = writeFuzzFiles(p, map[string]string{remote.Marker: "marker\n", "ours.txt": "ours"})
		case fzForeign:
			err = writeFuzzFiles(p, map[string]string{"mine.txt": "mine", "SKILL.md": "---\nname: mine\n---\n"})
		case fzLink:
			err = os.Symlink(canary, p)
		case fzFile:
			err = os.WriteFile(p, []byte("a file"), 0o644)
		case fzEmpty:
			err = os.Mkdir(p, 0o755)
		case fzLinkUp:
			err = os.Symlink("..", p)
		case fzLinkSelf:
			err = os.Symlink(".", p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	withIndex = at(len(positions))%2 == 1
	if fi, err := os.Lstat(filepath.Join(base, "wk", "pub")); withIndex && err == nil && fi.IsDir() {
		idx := `{"skills":{"a":{"type":"skill-md","stamp":"bogus"},"b":{"type":"skill-md"},"c":{"type":"skill-md","stamp":"bogus"}}}`
		if err := os.WriteFile(filepath.Join(base, "wk", "pub", "index.json"), []byte(idx), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	aged = at(len(positions)+1)%4 != 0
	if aged {
		ageFuzzTree(t, base)
	}
	return withIndex, aged
}

func writeFuzzFiles(dir string, files map[string]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ageFuzzTree sets every entry below dir to three hours ago, links
// included where the platform allows, deepest first.
func ageFuzzTree(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-Age)
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- {
		if fi, err := os.Lstat(paths[i]); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			lchtimes(paths[i], old)
			continue
		}
		if err := os.Chtimes(paths[i], old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// fuzzEntry is one entry of a snapshot.
type fuzzEntry struct {
	mode fs.FileMode
	body string // file bytes or link target
}

// fuzzSnapshot records every entry below dir, links not followed.
func fuzzSnapshot(t *testing.T, dir string) map[string]fuzzEntry {
	t.Helper()
	out := map[string]fuzzEntry{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		e := fuzzEntry{mode: fi.Mode()}
		switch {
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			e.body = fmt.Sprintf("%s @%d", b, fi.ModTime().UnixNano())
		case fi.Mode()&fs.ModeSymlink != 0:
			e.body, _ = os.Readlink(p)
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = e
		return nil
	})
	return out
}

// FuzzCachePrune builds random cache trees (links to a canary outside,
// links up and to themselves, files, foreign, empty and marked folders in
// every position the fetchers manage), runs a fetcher's cache paths on
// the tree below base (checks, stale cleanup, swap, prune) and asserts
// that nothing outside the caches changed and that nothing inside them
// was removed or changed unless it was the fetchers' own: below a folder
// holding the marker, an empty folder, or a crash-leftover file by the
// fetchers' names (issue 10 F1). It adds the seed corpus to f, which runs
// in plain go test, and calls f.Fuzz; run must not fail or skip t.
func FuzzCachePrune(f *testing.F, run func(base string)) {
	n := len(fuzzPositions()) + 2
	for _, k := range []byte{fzOurs, fzForeign, fzLink, fzFile, fzEmpty, fzLinkUp, fzLinkSelf} {
		seed := make([]byte, n)
		for i := range seed {
			seed[i] = k
		}
		seed[n-2], seed[n-1] = 1, 1
		f.Add(seed)
		// The caches and the publisher/owner folders ours, one kind below.
		mixed := append([]byte(nil), seed...)
		mixed[0], mixed[1], mixed[11], mixed[12] = fzOurs, fzOurs, fzOurs, fzOurs
		f.Add(mixed)
		// Ours down to skills/ and the clone, one kind for the rest.
		deep := append([]byte(nil), mixed...)
		deep[2], deep[13] = fzOurs, fzOurs
		f.Add(deep)
	}
	f.Add([]byte{fzAbsent, fzAbsent, fzAbsent})
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp := t.TempDir()
		canary := filepath.Join(tmp, "etc")
		if err := writeFuzzFiles(canary, map[string]string{"passwd": "root:x:0:0\n", remote.Marker: "marker\n", "index.json": "{}"}); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(tmp, "caches")
		if err := os.Mkdir(base, 0o755); err != nil {
			t.Fatal(err)
		}
		buildFuzzTree(t, base, canary, data)
		ageFuzzTree(t, canary)
		canaryBefore := fuzzSnapshot(t, canary)
		before := fuzzSnapshot(t, base)

		run(base)

		if after := fuzzSnapshot(t, canary); fmt.Sprint(after) != fmt.Sprint(canaryBefore) {
			t.Fatalf("the canary changed:\nbefore %v\nafter  %v", canaryBefore, after)
		}
		after := fuzzSnapshot(t, base)
		for rel, e := range before {
			got, kept := after[rel]
			if kept && (e.mode.IsDir() || got == e) {
				continue
			}
			if !fuzzOurs(before, rel) {
				t.Errorf("%s (%v) was removed or changed, but it is not the fetchers': after %v, kept %v", rel, e.mode, got, kept)
			}
		}
	})
}

// fuzzOurs reports whether the entry rel of the snapshot before was the
// fetchers' to remove: it or a folder above it (below the top caches)
// held the marker, it was an empty folder, or it is a regular file by a
// crash leftover's name.
func fuzzOurs(before map[string]fuzzEntry, rel string) bool {
	e := before[rel]
	if e.mode.IsDir() {
		empty := true
		for other := range before {
			empty = empty && !strings.HasPrefix(other, rel+"/")
		}
		if empty {
			return true
		}
	}
	base := filepath.Base(rel)
	if e.mode.IsRegular() && (strings.HasPrefix(base, ".download-skills~") || strings.Contains(base, ".json.tmp")) {
		return true
	}
	for d := rel; strings.Contains(d, "/"); d = filepath.ToSlash(filepath.Dir(d)) {
		if m, ok := before[d+"/"+remote.Marker]; ok && m.mode.IsRegular() && before[d].mode.IsDir() {
			return true
		}
	}
	return false
}
