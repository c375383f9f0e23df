package mcpface

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// sniffSize is how many leading bytes decide text/plain against
// application/octet-stream for an unknown extension, as in the reference.
const sniffSize = 8192

// Errors of [readFile]; callers map them to wire errors.
var (
	errChanged  = errors.New("changed on disk since it was hashed; retry after the catalog refreshes")
	errTooLarge = errors.New("file too large")
	errNotFile  = errors.New("not a regular file")
)

// mimeTypes maps a lower-case extension to its MIME type.
var mimeTypes = map[string]string{
	"md":       "text/markdown",
	"markdown": "text/markdown",
	"txt":      "text/plain",
	"py":       "text/x-python",
	"js":       "text/javascript",
	"mjs":      "text/javascript",
	"cjs":      "text/javascript",
	"ts":       "text/typescript",
	"json":     "application/json",
	"yaml":     "text/yaml",
	"yml":      "text/yaml",
	"html":     "text/html",
	"htm":      "text/html",
	"css":      "text/css",
	"csv":      "text/csv",
	"xml":      "application/xml",
	"sh":       "text/x-shellscript",
	"png":      "image/png",
	"jpg":      "image/jpeg",
	"jpeg":     "image/jpeg",
	"gif":      "image/gif",
	"webp":     "image/webp",
	"svg":      "image/svg+xml",
	"pdf":      "application/pdf",
	"ttf":      "font/ttf",
	"otf":      "font/otf",
	"woff":     "font/woff",
	"woff2":    "font/woff2",
	"zip":      "application/zip",
	"gz":       "application/gzip",
	"tgz":      "application/gzip",
	"bin":      "application/octet-stream",
}

// isTextMIME reports whether content of type m is served as text when its
// bytes are valid UTF-8.
func isTextMIME(m string) bool {
	if strings.HasPrefix(m, "text/") {
		return true
	}
	switch m {
	case "application/json", "application/xml", "image/svg+xml", "application/javascript", "application/yaml":
		return true
	}
	return false
}

// mimeOf returns the MIME type of a supporting file: by extension, else by
// sniffing its first bytes (valid UTF-8 → text/plain).
func mimeOf(sk *events.Skill, f *events.File, bundled fs.FS) string {
	ext := strings.ToLower(path.Ext(f.Path))
	if m, ok := mimeTypes[strings.TrimPrefix(ext, ".")]; ok {
		return m
	}
	head, err := readHead(sk, f, bundled)
	if err != nil || !utf8Prefix(head, len(head) == sniffSize) {
		return "application/octet-stream"
	}
	return "text/plain"
}

// utf8Prefix reports whether b is valid UTF-8, allowing a rune cut off at the
// end when b was truncated.
func utf8Prefix(b []byte, truncated bool) bool {
	if utf8.Valid(b) {
		return true
	}
	if !truncated {
		return false
	}
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.Valid(b[:len(b)-k]) && !utf8.FullRune(b[len(b)-k:]) {
			return true
		}
	}
	return false
}

func readHead(sk *events.Skill, f *events.File, bundled fs.FS) ([]byte, error) {
	r, closeFn, err := openFile(sk, f, bundled)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	buf := make([]byte, sniffSize)
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// openFile opens the manifest file f of sk: from bundled for a bundled
// skill, else through an [os.Root] on the skill folder as it was scanned
// (its real path, refused when it is no longer the folder the scan
// identified: errChanged), never through a symbolic link at any component
// below it and only when the file opened is the regular file checked
// (errNotFile otherwise), issue 10 F2.
func openFile(sk *events.Skill, f *events.File, bundled fs.FS) (io.Reader, func(), error) {
	rel := f.OnDisk()
	if sk.Source.Kind == events.SourceBundled {
		if bundled == nil {
			return nil, nil, fmt.Errorf("opening bundled %s: no bundled file system", rel)
		}
		file, err := bundled.Open(path.Join(sk.Dir, rel))
		if err != nil {
			return nil, nil, err
		}
		return file, func() { file.Close() }, nil
	}
	dir := sk.RealDir
	if dir == "" {
		dir = sk.Dir
	}
	root, err := skill.OpenDir(dir, sk.DirID)
	if errors.Is(err, skill.ErrFolderChanged) {
		return nil, nil, fmt.Errorf("skill folder %s changed since it was scanned: %w", sk.Dir, errChanged)
	}
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	file, _, err := skill.OpenFile(root, rel)
	if errors.Is(err, skill.ErrNotRegular) {
		return nil, nil, fmt.Errorf("opening %s: %w", filepath.Join(sk.Dir, filepath.FromSlash(rel)), errNotFile)
	}
	if err != nil {
		return nil, nil, err
	}
	return file, func() { file.Close() }, nil
}

// readFile returns the bytes of the manifest file f of sk, which it reads at
// this moment, and only if their SHA-256 equals f.Digest (else an error
// wrapping errChanged). max > 0 caps the manifest size (errTooLarge).
func readFile(sk *events.Skill, f *events.File, bundled fs.FS, max int64) ([]byte, error) {
	if max > 0 && f.Size > max {
		return nil, fmt.Errorf("%w: %s (limit %s)", errTooLarge, megabytes(f.Size), megabytes(max))
	}
	r, closeFn, err := openFile(sk, f, bundled)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	// One byte more than the manifest size is enough to notice growth.
	data, err := io.ReadAll(io.LimitReader(r, f.Size+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f.OnDisk(), err)
	}
	sum := sha256.Sum256(data)
	if "sha256:"+hex.EncodeToString(sum[:]) != f.Digest {
		return nil, fmt.Errorf("%s: %w", f.Path, errChanged)
	}
	return data, nil
}

// megabytes formats n bytes as the reference does: "1.50MB".
func megabytes(n int64) string {
	return fmt.Sprintf("%.2fMB", float64(n)/(1024*1024))
}

// diskPath returns the absolute path of the SKILL.md of a local skill, or ""
// for a bundled one (whose files have no path on disk).
func diskPath(sk *events.Skill) string {
	if sk.Source.Kind == events.SourceBundled || len(sk.Files) == 0 {
		return ""
	}
	return filepath.Join(sk.Dir, filepath.FromSlash(sk.Files[0].OnDisk()))
}
