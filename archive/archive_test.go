package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var formats = []Format{TarGz, Zip}

func build(tb testing.TB, fm Format, ents ...ent) []byte {
	tb.Helper()
	if fm == Zip {
		return buildZip(tb, ents...)
	}
	return buildTarGz(tb, ents...)
}

func TestRejections(t *testing.T) {
	skill := f("SKILL.md", "---\nname: x\n---\n")
	tests := []struct {
		name    string
		only    Format // "" for both formats
		ents    []ent
		opts    Options
		entry   string // expected EntryError.Entry
		class   error
		errText string // optional substring of the message
	}{
		// BR-22 one-entry variants.
		{name: "traversal", ents: []ent{f("../../escaped.md", "x")}, entry: "../../escaped.md", class: ErrUnsafePath,
			errText: `archive entry "../../escaped.md": unsafe path: contains a ".." segment`},
		{name: "absolute path", ents: []ent{f("/absolute.md", "x")}, entry: "/absolute.md", class: ErrUnsafePath, errText: "absolute path"},
		{name: "symlink outside", ents: []ent{sym("link", "/etc/passwd")}, entry: "link", class: ErrLink},
		{name: "tar hard link outside", only: TarGz, ents: []ent{{name: "hard", kind: 'h', link: "../../../../etc/shadow"}}, entry: "hard", class: ErrLink},
		// Links are refused even when they stay inside.
		{name: "symlink inside", ents: []ent{skill, sym("link.md", "SKILL.md")}, entry: "link.md", class: ErrLink},
		{name: "tar hard link inside", only: TarGz, ents: []ent{skill, {name: "hard.md", kind: 'h', link: "SKILL.md"}}, entry: "hard.md", class: ErrLink},
		// Other unsafe names.
		{name: "traversal after wrapper", ents: []ent{f("evil-skill/SKILL.md", "x"), f("evil-skill/../../escaped.md", "x")},
			entry: "evil-skill/../../escaped.md", class: ErrUnsafePath},
		{name: "dotdot that stays inside", ents: []ent{f("a/../b.md", "x")}, entry: "a/../b.md", class: ErrUnsafePath},
		{name: "dotdot folder", ents: []ent{dir("../")}, entry: "../", class: ErrUnsafePath},
		{name: "backslash absolute", ents: []ent{f(`\abs.md`, "x")}, entry: `\abs.md`, class: ErrUnsafePath},
		{name: "backslash traversal", ents: []ent{f(`..\..\escaped.md`, "x")}, entry: `..\..\escaped.md`, class: ErrUnsafePath},
		{name: "backslash", ents: []ent{f(`a\b.md`, "x")}, entry: `a\b.md`, class: ErrUnsafePath},
		{name: "drive letter", ents: []ent{f("C:/x.md", "x")}, entry: "C:/x.md", class: ErrUnsafePath},
		{name: "drive relative", ents: []ent{f("c:x.md", "x")}, entry: "c:x.md", class: ErrUnsafePath},
		{name: "empty name", ents: []ent{f("", "x")}, entry: "", class: ErrUnsafePath, errText: "empty name"},
		// tar.Writer cannot encode a NUL in a name.
		{name: "NUL byte", only: Zip, ents: []ent{f("a\x00b.md", "x")}, entry: "a\x00b.md", class: ErrUnsafePath},
		{name: "duplicate", ents: []ent{f("a.md", "1"), f("a.md", "2")}, entry: "a.md", class: ErrUnsafePath, errText: "duplicate"},
		{name: "duplicate via dot", ents: []ent{f("a.md", "1"), f("./a.md", "2")}, entry: "./a.md", class: ErrUnsafePath},
		{name: "duplicate folder", ents: []ent{dir("d/"), dir("d/")}, entry: "d/", class: ErrUnsafePath},
		{name: "file over folder", ents: []ent{f("d/x.md", "1"), f("d", "2")}, entry: "d", class: ErrUnsafePath},
		{name: "folder through file", ents: []ent{f("d", "1"), f("d/x.md", "2")}, entry: "d/x.md", class: ErrUnsafePath},
		// Special files.
		{name: "char device", ents: []ent{{name: "dev", kind: 'c'}}, entry: "dev", class: ErrSpecialFile},
		{name: "block device", ents: []ent{{name: "blk", kind: 'b'}}, entry: "blk", class: ErrSpecialFile},
		{name: "fifo", ents: []ent{{name: "fifo", kind: 'p'}}, entry: "fifo", class: ErrSpecialFile},
		{name: "zip socket", only: Zip, ents: []ent{{name: "sock", kind: 'o'}}, entry: "sock", class: ErrSpecialFile},
		{name: "tar contiguous file", only: TarGz, ents: []ent{{name: "cont", kind: '7'}}, entry: "cont", class: ErrSpecialFile},
		{name: "tar unknown type", only: TarGz, ents: []ent{{name: "unknown", kind: 'Z'}}, entry: "unknown", class: ErrSpecialFile},
		// Limits.
		{name: "too many entries", ents: []ent{f("1", ""), dir("d/"), f("d/3", "")}, opts: Options{MaxEntries: 2}, entry: "d/3", class: ErrTooManyEntries},
		{name: "too large one file", ents: []ent{f("big", "12345678901")}, opts: Options{MaxBytes: 10}, entry: "big", class: ErrTooLarge},
		{name: "too large in sum", ents: []ent{f("a", "123456"), f("b", "12345")}, opts: Options{MaxBytes: 10}, entry: "b", class: ErrTooLarge},
		// Case folding.
		{name: "case collision files", ents: []ent{f("A.md", "1"), f("a.md", "2")}, entry: "a.md", class: ErrCaseCollision},
		{name: "case collision folders", ents: []ent{f("Dir/x.md", "1"), f("dir/y.md", "2")}, entry: "dir/y.md", class: ErrCaseCollision},
		{name: "case collision file and folder", ents: []ent{dir("docs/"), f("DOCS", "2")}, entry: "DOCS", class: ErrCaseCollision},
		// StripTopFolder.
		{name: "strip: second top folder", ents: []ent{dir("top/"), f("top/SKILL.md", "x"), f("other/x.md", "x")},
			opts: Options{StripTopFolder: true}, entry: "other/x.md", class: ErrUnsafePath, errText: "outside the top folder"},
		{name: "strip: file beside top folder", ents: []ent{f("top/SKILL.md", "x"), f("top", "x")},
			opts: Options{StripTopFolder: true}, entry: "top", class: ErrUnsafePath},
		{name: "strip: traversal checked on original name", ents: []ent{f("top/SKILL.md", "x"), f("top/../top/x.md", "x")},
			opts: Options{StripTopFolder: true}, entry: "top/../top/x.md", class: ErrUnsafePath},
		// The first hostile entry wins, and before the SKILL.md check.
		{name: "first hostile entry wins", ents: []ent{f("x/SKILL.md", "x"), f("../../escaped.md", "x"), f("/absolute.md", "x"), sym("x/link", "/etc/passwd")},
			opts: Options{RequireSkillMD: true}, entry: "../../escaped.md", class: ErrUnsafePath},
	}
	for _, tt := range tests {
		for _, fm := range formats {
			if tt.only != "" && tt.only != fm {
				continue
			}
			t.Run(string(fm)+"/"+tt.name, func(t *testing.T) {
				tmp, _, root := stage(t)
				data := build(t, fm, tt.ents...)
				_, err := Extract(fm, data, root, &tt.opts)
				var ee *EntryError
				if !errors.As(err, &ee) {
					t.Fatalf("err = %v (%T), want *EntryError", err, err)
				}
				if ee.Entry != tt.entry {
					t.Errorf("Entry = %q, want %q", ee.Entry, tt.entry)
				}
				if !errors.Is(err, tt.class) {
					t.Errorf("err = %v, want class %v", err, tt.class)
				}
				if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("err = %q, want it to contain %q", err, tt.errText)
				}
				total := checkContained(t, tmp)
				max := tt.opts.MaxBytes
				if max == 0 {
					max = DefaultMaxBytes
				}
				if total > max {
					t.Errorf("%d bytes on disk, over MaxBytes %d", total, max)
				}
			})
		}
	}
}

// A zip symlink is recognised from the unix mode bits in the external
// attributes even when the creator system is not unix.
func TestZipSymlinkRawAttrs(t *testing.T) {
	for _, creator := range []uint16{3 << 8, 10 << 8, 0} { // unix, NTFS, MS-DOS
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		h := &zip.FileHeader{Name: "link", CreatorVersion: creator | 20, ExternalAttrs: 0o120777 << 16}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("/etc/passwd"))
		zw.Close()
		tmp, _, root := stage(t)
		_, err = Extract(Zip, buf.Bytes(), root, nil)
		if !errors.Is(err, ErrLink) {
			t.Errorf("creator %#x: err = %v, want ErrLink", creator, err)
		}
		checkContained(t, tmp)
	}
}

func TestBR22(t *testing.T) {
	tests := []struct {
		file  string
		fm    Format
		opts  Options
		entry string
	}{
		{"evil-skill.zip", Zip, Options{}, "../../escaped.md"},
		{"evil-skill.zip", Zip, Options{RequireSkillMD: true}, "../../escaped.md"},
		{"evil-skill.tar.gz", TarGz, Options{}, "evil-skill/../../escaped.md"},
		{"evil-skill.tar.gz", TarGz, Options{RequireSkillMD: true}, "evil-skill/../../escaped.md"},
		// The tar.gz as a stand-in for a GitHub tarball.
		{"evil-skill.tar.gz", TarGz, Options{StripTopFolder: true, RequireSkillMD: true}, "evil-skill/../../escaped.md"},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		fm, err := DetectFormat("application/octet-stream", "/.well-known/agent-skills/"+tt.file)
		if err != nil || fm != tt.fm {
			t.Fatalf("DetectFormat(%s) = %q, %v", tt.file, fm, err)
		}
		tmp, _, root := stage(t)
		_, err = Extract(fm, data, root, &tt.opts)
		var ee *EntryError
		if !errors.As(err, &ee) || ee.Entry != tt.entry || !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s %+v: err = %v, want unsafe path naming %q", tt.file, tt.opts, err, tt.entry)
		}
		checkContained(t, tmp)
	}
}

func TestEntryErrorMessage(t *testing.T) {
	_, _, root := stage(t)
	_, err := Extract(Zip, buildZip(t, f("../../escaped.md", "x")), root, nil)
	want := `archive entry "../../escaped.md": unsafe path: contains a ".." segment`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestExtractGood(t *testing.T) {
	ents := []ent{
		f("SKILL.md", "---\nname: good\n---\n"),
		dir("scripts/"),
		{name: "scripts/run.sh", body: "#!/bin/sh\necho hi\n", kind: 'x'},
		f("references/deep/nested/notes.md", "notes"),
		f("empty.txt", ""),
		dir("assets/"), // an empty folder
		dir("references/deep/"),
	}
	wantFiles := []string{"SKILL.md", "scripts/run.sh", "references/deep/nested/notes.md", "empty.txt"}
	for _, fm := range formats {
		t.Run(string(fm), func(t *testing.T) {
			tmp, stageDir, root := stage(t)
			start := time.Now().Add(-time.Minute)
			res, err := Extract(fm, build(t, fm, ents...), root, &Options{RequireSkillMD: true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Files, wantFiles) {
				t.Errorf("Files = %q, want %q", res.Files, wantFiles)
			}
			var wantBytes int64
			for _, e := range ents {
				wantBytes += int64(len(e.body))
			}
			if res.Bytes != wantBytes {
				t.Errorf("Bytes = %d, want %d", res.Bytes, wantBytes)
			}
			if got := checkContained(t, tmp); got != wantBytes {
				t.Errorf("%d bytes on disk, want %d", got, wantBytes)
			}
			for _, e := range ents {
				p := filepath.Join(stageDir, filepath.FromSlash(e.name))
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.ModTime().Before(start) {
					t.Errorf("%s: mtime %v taken from the archive", e.name, fi.ModTime())
				}
				if e.kind == 'd' {
					if !fi.IsDir() || fi.Mode().Perm()&0o700 != 0o700 {
						t.Errorf("%s: mode %v, want a 0755 folder", e.name, fi.Mode())
					}
					continue
				}
				got, _ := os.ReadFile(p)
				if string(got) != e.body {
					t.Errorf("%s = %q, want %q", e.name, got, e.body)
				}
				perm := fi.Mode().Perm()
				if perm&0o600 != 0o600 || perm&0o022 != 0 {
					t.Errorf("%s: mode %v, want 0644 or 0755", e.name, perm)
				}
				if exec := perm&0o100 != 0; exec != (e.kind == 'x') {
					t.Errorf("%s: mode %v, exec bit %v", e.name, perm, exec)
				}
			}
		})
	}
}

func TestFolderEntryAndImpliedFolder(t *testing.T) {
	for _, fm := range formats {
		for _, ents := range [][]ent{
			{f("a/b.md", "x"), dir("a/")},
			{dir("a/"), f("a/b.md", "x")},
			{dir("./"), f("./a/b.md", "x"), dir("./a/")},
		} {
			_, _, root := stage(t)
			if _, err := Extract(fm, build(t, fm, ents...), root, nil); err != nil {
				t.Errorf("%s %v: %v", fm, ents, err)
			}
		}
	}
}

func TestStripTopFolder(t *testing.T) {
	top := "owner-repo-0123456/"
	tests := []struct {
		fm   Format
		ents []ent
	}{
		{TarGz, []ent{{name: "pax_global_header", kind: 'g'}, dir(top), f(top+"SKILL.md", "s"), dir(top + "scripts/"), {name: top + "scripts/run.sh", body: "r", kind: 'x'}}},
		{TarGz, []ent{f(top+"SKILL.md", "s"), {name: top + "scripts/run.sh", body: "r", kind: 'x'}}}, // no folder entries
		{Zip, []ent{dir(top), f(top+"SKILL.md", "s"), dir(top + "scripts/"), {name: top + "scripts/run.sh", body: "r", kind: 'x'}}},
	}
	for i, tt := range tests {
		tmp, stageDir, root := stage(t)
		res, err := Extract(tt.fm, build(t, tt.fm, tt.ents...), root, &Options{StripTopFolder: true, RequireSkillMD: true})
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if want := []string{"SKILL.md", "scripts/run.sh"}; !slices.Equal(res.Files, want) {
			t.Errorf("%d: Files = %q, want %q", i, res.Files, want)
		}
		entries, _ := os.ReadDir(stageDir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{"SKILL.md", "scripts"}; !slices.Equal(names, want) {
			t.Errorf("%d: stage holds %q, want %q", i, names, want)
		}
		checkContained(t, tmp)
	}
	// Without StripTopFolder the global header is skipped too.
	_, stageDir, root := stage(t)
	if _, err := Extract(TarGz, build(t, TarGz, tests[0].ents...), root, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(stageDir, top, "SKILL.md")); err != nil {
		t.Error(err)
	}
}

func TestRequireSkillMD(t *testing.T) {
	tests := []struct {
		name string
		ents []ent
		ok   bool
	}{
		{"at root", []ent{f("SKILL.md", "x")}, true},
		{"at root after others", []ent{f("a/b.md", "x"), f("SKILL.md", "x")}, true},
		{"missing", []ent{f("README.md", "x")}, false},
		{"empty archive", nil, false},
		{"wrong case", []ent{f("skill.md", "x")}, false},
		{"in a wrapper folder", []ent{f("evil-skill/SKILL.md", "x")}, false},
		{"a folder", []ent{dir("SKILL.md/"), f("SKILL.md/x", "x")}, false},
	}
	for _, tt := range tests {
		for _, fm := range formats {
			_, _, root := stage(t)
			_, err := Extract(fm, build(t, fm, tt.ents...), root, &Options{RequireSkillMD: true})
			if tt.ok {
				if err != nil {
					t.Errorf("%s/%s: %v", fm, tt.name, err)
				}
				continue
			}
			var ee *EntryError
			if !errors.As(err, &ee) || ee.Entry != "" || !errors.Is(err, ErrNoSkillMD) {
				t.Errorf("%s/%s: err = %v, want *EntryError{\"\", ErrNoSkillMD}", fm, tt.name, err)
			} else if got, want := err.Error(), "archive: no SKILL.md at the archive root"; got != want {
				t.Errorf("message %q, want %q", got, want)
			}
			// Without the option it is fine.
			_, _, root = stage(t)
			if _, err := Extract(fm, build(t, fm, tt.ents...), root, nil); err != nil {
				t.Errorf("%s/%s without RequireSkillMD: %v", fm, tt.name, err)
			}
		}
	}
}

func TestMaxBytes(t *testing.T) {
	for _, fm := range formats {
		ents := []ent{f("a", "123456"), f("b", "1234"), f("c", "")}
		tmp, _, root := stage(t)
		res, err := Extract(fm, build(t, fm, ents...), root, &Options{MaxBytes: 10})
		if err != nil || res.Bytes != 10 {
			t.Errorf("%s at the limit: %+v, %v", fm, res, err)
		}
		checkContained(t, tmp)

		ents = []ent{f("a", "123456"), f("b", "12345"), f("c", "")}
		tmp, _, root = stage(t)
		_, err = Extract(fm, build(t, fm, ents...), root, &Options{MaxBytes: 10})
		var ee *EntryError
		if !errors.As(err, &ee) || ee.Entry != "b" || !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s over the limit: %v", fm, err)
		}
		if n := checkContained(t, tmp); n > 10 {
			t.Errorf("%s: %d bytes written, over the limit", fm, n)
		}
	}
}

// A zip entry whose header declares fewer uncompressed bytes than its data
// holds: archive/zip refuses to read past the declared size, so this is a
// corrupt archive (ErrFormat), and never more than MaxBytes is written.
func TestZipLyingSize(t *testing.T) {
	big := bytes.Repeat([]byte("A"), 100_000)
	for _, declared := range []uint64{5, 1 << 40} {
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, flate.BestCompression)
		fw.Write(big)
		fw.Close()
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		h := &zip.FileHeader{Name: "bomb", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(big),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: declared}
		h.SetMode(0o644)
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
		zw.Close()

		for _, max := range []int64{10, 1 << 20} {
			tmp, _, root := stage(t)
			_, err := Extract(Zip, buf.Bytes(), root, &Options{MaxBytes: max})
			var ee *EntryError
			if !errors.As(err, &ee) || ee.Entry != "bomb" {
				t.Errorf("declared %d, max %d: err = %v", declared, max, err)
			}
			if max == 10 && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrFormat) {
				t.Errorf("declared %d, max %d: err = %v, want ErrTooLarge or ErrFormat", declared, max, err)
			}
			if max > 10 && !errors.Is(err, ErrFormat) {
				t.Errorf("declared %d, max %d: err = %v, want ErrFormat", declared, max, err)
			}
			if n := checkContained(t, tmp); n > max {
				t.Errorf("%d bytes written, over %d", n, max)
			}
		}
	}
}

func TestMaxEntries(t *testing.T) {
	for _, fm := range formats {
		ents := []ent{dir("d/"), f("d/1", "1"), f("d/2", "2")}
		_, _, root := stage(t)
		if _, err := Extract(fm, build(t, fm, ents...), root, &Options{MaxEntries: 3}); err != nil {
			t.Errorf("%s: exactly MaxEntries: %v", fm, err)
		}
		_, _, root = stage(t)
		_, err := Extract(fm, build(t, fm, ents...), root, &Options{MaxEntries: 2})
		var ee *EntryError
		if !errors.As(err, &ee) || ee.Entry != "d/2" || !errors.Is(err, ErrTooManyEntries) {
			t.Errorf("%s: over MaxEntries: %v", fm, err)
		}
	}
	// The default is 10,000, and skipped entries (pax global headers) count.
	ents := make([]ent, 10_001)
	for i := range ents {
		ents[i] = ent{name: "pax_global_header", kind: 'g'}
	}
	_, _, root := stage(t)
	_, err := Extract(TarGz, build(t, TarGz, ents...), root, nil)
	if !errors.Is(err, ErrTooManyEntries) {
		t.Errorf("10,001 entries: %v", err)
	}
	_, _, root = stage(t)
	if _, err := Extract(TarGz, build(t, TarGz, ents[1:]...), root, nil); err != nil {
		t.Errorf("10,000 entries: %v", err)
	}
}

func TestExistingFileInRoot(t *testing.T) {
	_, stageDir, root := stage(t)
	os.WriteFile(filepath.Join(stageDir, "SKILL.md"), []byte("old"), 0o644)
	_, err := Extract(TarGz, build(t, TarGz, f("SKILL.md", "new")), root, nil)
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Entry != "SKILL.md" || !errors.Is(err, fs.ErrExist) {
		t.Errorf("err = %v, want *EntryError wrapping fs.ErrExist", err)
	}
}

func TestCorrupt(t *testing.T) {
	good := build(t, TarGz, f("SKILL.md", strings.Repeat("data ", 1000)))
	goodZip := build(t, Zip, f("SKILL.md", strings.Repeat("data ", 1000)))
	var gzGarbage bytes.Buffer
	zw := gzip.NewWriter(&gzGarbage)
	zw.Write(bytes.Repeat([]byte("not a tar "), 100))
	zw.Close()
	badCRC := slices.Clone(good)
	badCRC[len(badCRC)-8] ^= 0xff // gzip trailer CRC-32

	// A stored zip entry with one flipped body byte fails its CRC-32.
	var zbuf bytes.Buffer
	zwr := zip.NewWriter(&zbuf)
	w, _ := zwr.CreateHeader(&zip.FileHeader{Name: "SKILL.md", Method: zip.Store})
	w.Write([]byte("hello, world"))
	zwr.Close()
	zipBadCRC := slices.Clone(zbuf.Bytes())
	i := bytes.Index(zipBadCRC, []byte("hello, world"))
	zipBadCRC[i] = 'j'

	tests := []struct {
		name string
		fm   Format
		data []byte
	}{
		{"not gzip", TarGz, []byte("hello")},
		{"empty tar.gz", TarGz, nil},
		{"gzip of garbage", TarGz, gzGarbage.Bytes()},
		{"truncated tar.gz", TarGz, good[:len(good)/2]},
		{"tar.gz without trailer", TarGz, good[:len(good)-4]},
		{"tar.gz bad gzip CRC", TarGz, badCRC},
		{"not zip", Zip, []byte("hello")},
		{"empty zip", Zip, nil},
		{"truncated zip", Zip, goodZip[:len(goodZip)-10]},
		{"zip bad CRC", Zip, zipBadCRC},
		{"unknown format", Format("rar"), good},
	}
	for _, tt := range tests {
		tmp, _, root := stage(t)
		_, err := Extract(tt.fm, tt.data, root, nil)
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", tt.name, err)
		}
		checkContained(t, tmp)
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		ct, url string
		want    Format // "" for an error
	}{
		{"application/gzip", "/x/skill", TarGz},
		{"application/x-gzip", "/x/skill.zip", TarGz}, // the type wins
		{"application/x-tar+gzip", "", TarGz},
		{"Application/GZIP; charset=binary", "", TarGz},
		{"application/zip", "/x/skill.tar.gz", Zip},
		{"application/x-zip-compressed", "", Zip},
		{"", "/x/skill.tar.gz", TarGz},
		{"", "/x/skill.tgz", TarGz},
		{"", "/x/SKILL.ZIP", Zip},
		{"application/octet-stream", "/x/skill.zip", Zip},
		{"application/octet-stream", "/x/skill.tar.gz?token=abc.zip", TarGz},
		{"application/octet-stream", "https://cdn.example.com/x/skill.zip?v=1#frag.tgz", Zip},
		{"binary/octet-stream", "/x/skill.tgz", TarGz},
		{"application/x-tar", "/x/skill.tar.gz", TarGz},
		{"application/octet-stream", "/x/skill.tar", ""},
		{"application/octet-stream", "/x/skill?f=skill.zip", ""},
		{"", "", ""},
		{"text/html", "/x/skill.zip", ""},
		{"application/x-bzip2", "/x/skill.tar.bz2", ""},
	}
	for _, tt := range tests {
		got, err := DetectFormat(tt.ct, tt.url)
		if tt.want == "" {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("DetectFormat(%q, %q) = %q, %v; want ErrFormat", tt.ct, tt.url, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("DetectFormat(%q, %q) = %q, %v; want %q", tt.ct, tt.url, got, err, tt.want)
		}
	}
}

func TestNilOptionsDefaults(t *testing.T) {
	var o *Options
	maxBytes, maxEntries, strip, req := o.limits()
	if maxBytes != 50<<20 || maxEntries != 10_000 || strip || req {
		t.Errorf("nil limits = %d %d %v %v", maxBytes, maxEntries, strip, req)
	}
	maxBytes, maxEntries, _, _ = (&Options{MaxBytes: -1, MaxEntries: -1}).limits()
	if maxBytes != DefaultMaxBytes || maxEntries != DefaultMaxEntries {
		t.Errorf("negative limits = %d %d", maxBytes, maxEntries)
	}
}
