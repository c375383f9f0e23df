//go:build unix

package skill_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOpenFile is issue 10 F2: a file is read only when no component of
// its path below the skill folder is a symbolic link, even one that stays
// inside the skill, and only when it is a regular file.
func TestOpenFile(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "s")
	write(t, filepath.Join(dir, "ok.md"), "ok")
	write(t, filepath.Join(dir, "sub", "deep.md"), "deep")
	write(t, filepath.Join(dir, ".hidden", "deep.md"), "hidden")
	write(t, filepath.Join(dir, ".env"), "secret")
	write(t, filepath.Join(base, "outside.md"), "outside")
	for _, l := range []struct{ target, link string }{
		{".env", "link-in.md"},
		{filepath.Join(base, "outside.md"), "link-out.md"},
		{".hidden", "linkdir"},
	} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := skill.OpenDir(dir, events.FolderID{})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		rel, want string
		err       error
	}{
		{rel: "ok.md", want: "ok"},
		{rel: "sub/deep.md", want: "deep"},
		{rel: "link-in.md", err: skill.ErrNotRegular},
		{rel: "link-out.md", err: skill.ErrNotRegular},
		{rel: "linkdir/deep.md", err: skill.ErrNotRegular},
		{rel: "sub", err: skill.ErrNotRegular},
		{rel: "fifo", err: skill.ErrNotRegular},
		{rel: "missing.md", err: fs.ErrNotExist},
		{rel: "../outside.md", err: fs.ErrInvalid},
	} {
		f, fi, err := skill.OpenFile(root, tc.rel)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("OpenFile(%s) = %v, want %v", tc.rel, err, tc.err)
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("OpenFile(%s): %v", tc.rel, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != tc.want || fi.Size() != int64(len(tc.want)) {
			t.Errorf("OpenFile(%s) read %q (size %d), want %q", tc.rel, b, fi.Size(), tc.want)
		}
	}
}

// TestOpenDir is issue 10 F2: a skill folder is opened only while it is the
// folder that was identified — not once it is a link (even to itself), nor
// when another folder took its path; renamed away and back, it still is.
func TestOpenDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "s")
	write(t, filepath.Join(dir, "f.md"), "f")
	write(t, filepath.Join(base, "canary", "f.md"), "canary")
	id, err := skill.Identify(dir)
	if err != nil || id == (events.FolderID{}) {
		t.Fatalf("Identify = %v, %v", id, err)
	}
	open := func() error {
		root, err := skill.OpenDir(dir, id)
		if err == nil {
			root.Close()
		}
		return err
	}
	if err := open(); err != nil {
		t.Fatalf("OpenDir of the identified folder: %v", err)
	}
	away := filepath.Join(base, "away")
	if err := os.Rename(dir, away); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "canary"), dir); err != nil {
		t.Fatal(err)
	}
	if err := open(); !errors.Is(err, skill.ErrFolderChanged) {
		t.Errorf("OpenDir of a link to another folder = %v, want ErrFolderChanged", err)
	}
	if _, err := skill.Identify(dir); !errors.Is(err, skill.ErrFolderChanged) {
		t.Errorf("Identify of a link = %v, want ErrFolderChanged", err)
	}
	os.Remove(dir)
	if err := os.Symlink(away, dir); err != nil {
		t.Fatal(err)
	}
	if err := open(); !errors.Is(err, skill.ErrFolderChanged) {
		t.Errorf("OpenDir through a link to the very folder = %v, want ErrFolderChanged", err)
	}
	os.Remove(dir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := open(); !errors.Is(err, skill.ErrFolderChanged) {
		t.Errorf("OpenDir of another folder at the path = %v, want ErrFolderChanged", err)
	}
	os.Remove(dir)
	if err := os.Rename(away, dir); err != nil {
		t.Fatal(err)
	}
	if err := open(); err != nil {
		t.Errorf("OpenDir of the folder renamed back: %v", err)
	}
}
