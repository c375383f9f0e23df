package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ent describes one entry of a test archive.
type ent struct {
	name string
	body string
	// kind: 'f' file (default), 'x' executable file, 'd' folder, 's' symlink,
	// 'h' hard link, 'c' char device, 'b' block device, 'p' FIFO,
	// 'o' socket (zip), 'g' pax global header, or any other byte as a raw
	// tar type flag.
	kind byte
	link string
}

var oldTime = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

func f(name, body string) ent     { return ent{name: name, body: body, kind: 'f'} }
func dir(name string) ent         { return ent{name: name, kind: 'd'} }
func sym(name, target string) ent { return ent{name: name, kind: 's', link: target} }

// buildTarGz builds a .tar.gz archive from ents.
func buildTarGz(tb testing.TB, ents ...ent) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		h := &tar.Header{Name: e.name, Mode: 0o644, ModTime: oldTime, Linkname: e.link, Format: tar.FormatPAX}
		switch e.kind {
		case 0, 'f':
			h.Typeflag = tar.TypeReg
		case 'x':
			h.Typeflag, h.Mode = tar.TypeReg, 0o755
		case 'd':
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case 's':
			h.Typeflag = tar.TypeSymlink
		case 'h':
			h.Typeflag = tar.TypeLink
		case 'c':
			h.Typeflag = tar.TypeChar
		case 'b':
			h.Typeflag = tar.TypeBlock
		case 'p':
			h.Typeflag = tar.TypeFifo
		case 'g':
			h = &tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: e.name,
				PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}}
		default:
			h.Typeflag = e.kind
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			tb.Fatalf("tar header %q: %v", e.name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// buildZip builds a .zip archive from ents.
func buildZip(tb testing.TB, ents ...ent) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		if e.kind == 'g' {
			continue // no zip counterpart of a pax global header
		}
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: oldTime}
		body := e.body
		switch e.kind {
		case 0, 'f':
			h.SetMode(0o644)
		case 'x':
			h.SetMode(0o755)
		case 'd':
			h.SetMode(fs.ModeDir | 0o755)
			h.Method = zip.Store
		case 's':
			h.SetMode(fs.ModeSymlink | 0o777)
			body = e.link
		case 'c':
			h.SetMode(fs.ModeDevice | fs.ModeCharDevice | 0o644)
		case 'b':
			h.SetMode(fs.ModeDevice | 0o644)
		case 'p':
			h.SetMode(fs.ModeNamedPipe | 0o644)
		case 'o':
			h.SetMode(fs.ModeSocket | 0o644)
		default:
			tb.Fatalf("zip: unsupported kind %q", e.kind)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			tb.Fatalf("zip header %q: %v", e.name, err)
		}
		if e.kind != 'd' {
			if _, err := w.Write([]byte(body)); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// stage makes tmp/a/b/stage and opens it as a root. Anything escaping the
// stage lands in tmp (up to two levels of ".."), which checkContained
// inspects.
func stage(tb testing.TB) (tmp, stageDir string, root *os.Root) {
	tb.Helper()
	tmp = tb.TempDir()
	stageDir = filepath.Join(tmp, "a", "b", "stage")
	if err := os.MkdirAll(stageDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	root, err := os.OpenRoot(stageDir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { root.Close() })
	return tmp, stageDir, root
}

// checkContained asserts that under tmp there is nothing but a/b/stage
// and its contents, that everything is a regular file or a folder (no
// links, devices, FIFOs), and returns the bytes in regular files.
func checkContained(tb testing.TB, tmp string) int64 {
	tb.Helper()
	var total int64
	allowed := map[string]bool{".": true, "a": true, filepath.Join("a", "b"): true}
	stageRel := filepath.Join("a", "b", "stage")
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		if !allowed[rel] && rel != stageRel && !strings.HasPrefix(rel, stageRel+string(filepath.Separator)) {
			tb.Errorf("written outside the stage: %s", rel)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode().IsRegular():
			total += fi.Size()
		case fi.IsDir():
		default:
			tb.Errorf("not a regular file or folder: %s (%v)", rel, fi.Mode())
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range []string{"/absolute.md", "/escaped.md"} {
		if _, err := os.Lstat(p); err == nil {
			tb.Errorf("%s exists", p)
		}
	}
	return total
}
