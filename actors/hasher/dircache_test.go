package hasher

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/skill"
)

// TestDirCacheCompactInfo checks that what the folder cache remembers of a
// stat (compact, issue 12) reads as the system's own: entry names and
// types, Info and Lstat (size, mode, modification time, the identity
// fileIdent gives), and the folder identity a skill folder gets.
func TestDirCacheCompactInfo(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a/SKILL.md": "---\nname: a\n---\n", "a/refs/x.md": "xx"} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("refs", filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	c := newDirCache(root)
	same := func(what string, got fs.FileInfo, want fs.FileInfo) {
		t.Helper()
		if got.Name() != want.Name() || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("%s: remembered %s %d %v %v, system %s %d %v %v", what, got.Name(), got.Size(), got.Mode(), got.ModTime(),
				want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
		gi, gd, gc, gok := fileIdent(got)
		wi, wd, wc, wok := fileIdent(want)
		if gi != wi || gd != wd || gc != wc || gok != wok {
			t.Errorf("%s: identity %d %d %d %v, system %d %d %d %v", what, gi, gd, gc, gok, wi, wd, wc, wok)
		}
	}
	ents, err := c.ReadDir("a")
	if err != nil {
		t.Fatal(err)
	}
	sys, err := os.ReadDir(filepath.Join(root, "a"))
	if err != nil || len(sys) != len(ents) {
		t.Fatalf("listing: %d entries, system %d (%v)", len(ents), len(sys), err)
	}
	for i, e := range ents {
		if e.Name() != sys[i].Name() || e.Type() != sys[i].Type() || e.IsDir() != sys[i].IsDir() {
			t.Errorf("entry %d: %s %v, system %s %v", i, e.Name(), e.Type(), sys[i].Name(), sys[i].Type())
		}
		got, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.Lstat(filepath.Join(root, "a", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		same("Info of "+e.Name(), got, want)
	}
	for _, name := range []string{"a", "a/link", "a/refs/x.md"} {
		got, err := c.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		same("Lstat of "+name, got, want)
	}
	got, err := c.Stat("a/link")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.Stat(filepath.Join(root, "a", "link"))
	if err != nil {
		t.Fatal(err)
	}
	same("Stat of a/link", got, want)
	w := &walker{fsys: c, rootReal: root}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		w.rootReal = r
	}
	id, err := w.identify("a", filepath.Join(w.rootReal, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if wantID, err := skill.Identify(filepath.Join(root, "a")); err != nil || id != wantID {
		t.Errorf("folder identity %v, skill.Identify %v (%v)", id, wantID, err)
	}
	if _, missing := c.ReadDir("nope"); missing == nil {
		t.Error("a missing folder listed")
	}
}
