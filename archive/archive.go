package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Rejection classes, wrapped by every [*EntryError].
//
// Test for them with [errors.Is]; the concrete error is usually an
// [*EntryError] whose Err wraps the class with detail (for example
// `unsafe path: contains a ".." segment`).
var (
	// ErrUnsafePath: an absolute path (leading "/" or "\", a Windows drive
	// letter), a ".." segment, a backslash, a NUL byte, an empty name, a
	// name that is not [filepath.IsLocal], a duplicate exact path (the
	// second one), a path below a file, a tar regular file whose name ends
	// in "/", or (with StripTopFolder) an entry outside the single
	// top-level folder (WKAS-R21, WKAS-R22, BR-22).
	ErrUnsafePath = errors.New("unsafe path")
	// ErrLink: a tar symbolic or hard link, or a zip entry whose unix mode
	// in the external attributes is a symbolic link. Links are refused
	// outright, even when their target stays inside (WKAS-R22, BR-22).
	ErrLink = errors.New("links are not allowed")
	// ErrSpecialFile: a tar character or block device, FIFO, contiguous
	// file, GNU sparse file or any other unknown type flag; a zip entry whose
	// mode is a device, FIFO or socket.
	ErrSpecialFile = errors.New("special files are not allowed")
	// ErrTooManyEntries: more entries than [Options.MaxEntries].
	ErrTooManyEntries = errors.New("too many entries")
	// ErrTooLarge: more bytes written than [Options.MaxBytes] (WKAS-R22).
	ErrTooLarge = errors.New("unpacked size over the limit")
	// ErrCaseCollision: two paths (files or folders, including the parent
	// folders a file implies) equal after case folding but not exactly
	// equal, such as "A.md" and "a.md"; they would overwrite each other on a
	// case-insensitive file system.
	ErrCaseCollision = errors.New("paths collide after case folding")
	// ErrNoSkillMD: [Options.RequireSkillMD] is set and no regular file
	// named exactly "SKILL.md" is at the (stripped) root (WKAS-R21). It is
	// reported after all entries passed their checks, as an [*EntryError]
	// with an empty Entry.
	ErrNoSkillMD = errors.New("no SKILL.md at the archive root")
	// ErrFormat: an unknown format, or a corrupt gzip, tar or zip stream.
	ErrFormat = errors.New("unknown or corrupt archive format")
)

// Defaults for a zero [Options] field.
const (
	DefaultMaxBytes   int64 = 50 << 20 // 50 MiB
	DefaultMaxEntries       = 10_000
)

// EntryError names the archive entry that failed an extraction and why.
//
// Entry is empty only for [ErrNoSkillMD] (which is about the archive as a
// whole) and for an entry whose name is itself empty (ErrUnsafePath).
type EntryError struct {
	// Entry is the entry's name exactly as in the archive.
	Entry string
	// Err is one of the Err* classes, possibly wrapped with detail. For a
	// corrupt entry body it wraps [ErrFormat]; for a failure of the file
	// system while writing the entry it is that error (an [*fs.PathError]).
	Err error
}

// Error returns, for example,
// `archive entry "../../escaped.md": unsafe path: contains a ".." segment`,
// or `archive: no SKILL.md at the archive root`. The entry name is quoted
// with Go syntax, so control characters are escaped.
func (e *EntryError) Error() string {
	if e.Entry == "" && errors.Is(e.Err, ErrNoSkillMD) {
		return "archive: " + e.Err.Error()
	}
	return fmt.Sprintf("archive entry %q: %v", e.Entry, e.Err)
}

// Unwrap returns Err, so [errors.Is] matches the rejection class.
func (e *EntryError) Unwrap() error { return e.Err }

// Format is an archive format.
type Format string

// The supported formats (WKAS-R20).
const (
	// TarGz is a gzip-compressed tar archive (.tar.gz, .tgz).
	TarGz Format = "tar.gz"
	// Zip is a zip archive (.zip).
	Zip Format = "zip"
)

// Content types that name a format (lower case, without parameters).
var formatByType = map[string]Format{
	"application/gzip":             TarGz,
	"application/x-gzip":           TarGz,
	"application/x-tar+gzip":       TarGz,
	"application/x-gtar":           TarGz,
	"application/x-tgz":            TarGz,
	"application/x-compressed-tar": TarGz,
	"application/zip":              Zip,
	"application/x-zip":            Zip,
	"application/x-zip-compressed": Zip,
}

// Content types that say nothing about the format, so the URL decides.
// application/x-tar is here because servers label a .tar.gz that way
// (with Content-Encoding: gzip); a plain tar is not supported.
var genericTypes = map[string]bool{
	"":                           true,
	"application/octet-stream":   true,
	"binary/octet-stream":        true,
	"application/binary":         true,
	"application/x-binary":       true,
	"application/unknown":        true,
	"application/download":       true,
	"application/force-download": true,
	"application/x-download":     true,
	"application/x-tar":          true,
}

// DetectFormat picks the format from a response Content-Type
// (application/gzip, application/x-gzip, application/x-tar+gzip →
// TarGz; application/zip → Zip), falling back to the URL path's extension
// (.tar.gz, .tgz, .zip; query and fragment ignored) when the type is
// missing or generic (WKAS-R16). Error wraps ErrFormat.
//
// Matching ignores case and media-type parameters. Also recognised:
// application/x-gtar, application/x-tgz, application/x-compressed-tar
// (TarGz) and application/x-zip, application/x-zip-compressed (Zip).
// Generic types are the empty one, application/octet-stream,
// binary/octet-stream, the download/binary/unknown variants, and
// application/x-tar. urlPath may be a path or a whole URL. Any other
// content type is an error even when the extension is known.
func DetectFormat(contentType, urlPath string) (Format, error) {
	mt := strings.ToLower(strings.TrimSpace(contentType))
	if mt != "" {
		if parsed, _, err := mime.ParseMediaType(mt); err == nil {
			mt = parsed
		} else if i := strings.IndexByte(mt, ';'); i >= 0 {
			mt = strings.TrimSpace(mt[:i])
		}
	}
	if f, ok := formatByType[mt]; ok {
		return f, nil
	}
	if !genericTypes[mt] {
		return "", fmt.Errorf("archive: %w: content type %q", ErrFormat, contentType)
	}
	p := urlPath
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = strings.ToLower(p)
	switch {
	case strings.HasSuffix(p, ".tar.gz"), strings.HasSuffix(p, ".tgz"):
		return TarGz, nil
	case strings.HasSuffix(p, ".zip"):
		return Zip, nil
	}
	return "", fmt.Errorf("archive: %w: content type %q and URL %q name no supported format", ErrFormat, contentType, urlPath)
}

// Options limits one extraction. The zero value gets the defaults.
// A nil *Options is the zero value. Extraction does not modify it.
type Options struct {
	// MaxBytes caps the bytes written in all; 0 means 50 MiB.
	// Negative values also mean the default. Counted on the bytes actually
	// copied, never on header sizes; at most MaxBytes bytes are ever
	// written, and an archive with exactly MaxBytes passes.
	MaxBytes int64
	// MaxEntries caps the entries (files and folders); 0 means 10,000.
	// Negative values also mean the default. Every entry counts, including
	// the skipped ones (the top folder, a "./" entry, tar pax global
	// headers), so entry MaxEntries+1 fails with ErrTooManyEntries.
	MaxEntries int
	// StripTopFolder requires every entry to sit in one top-level folder
	// (a GitHub tarball's "owner-repo-sha/") and removes it; an entry
	// outside it is ErrUnsafePath. Tar pax global headers are skipped.
	// (They are skipped without this option too.) The top folder is the
	// first segment of the first entry; the folder's own entry is skipped,
	// and a regular file at the top level is ErrUnsafePath. Name checks
	// run on the original, unstripped name, which is also what an
	// [*EntryError] reports.
	StripTopFolder bool
	// RequireSkillMD fails the extraction with ErrNoSkillMD unless a
	// regular file "SKILL.md" is at the root (after stripping) (WKAS-R21).
	// The check runs after every entry passed its own checks, so a hostile
	// entry is reported in preference (BR-22). The name must match exactly
	// ("skill.md" does not count).
	RequireSkillMD bool
}

func (o *Options) limits() (maxBytes int64, maxEntries int, strip, requireSkill bool) {
	maxBytes, maxEntries = DefaultMaxBytes, DefaultMaxEntries
	if o == nil {
		return
	}
	if o.MaxBytes > 0 {
		maxBytes = o.MaxBytes
	}
	if o.MaxEntries > 0 {
		maxEntries = o.MaxEntries
	}
	return maxBytes, maxEntries, o.StripTopFolder, o.RequireSkillMD
}

// Result describes a finished extraction.
//
// On failure the functions return what was written up to the failure,
// including a partly written last file (the caller removes the staging
// folder anyway).
type Result struct {
	// Files are the regular files written, '/'-separated, in archive order.
	// Paths are relative to the root, after stripping the top folder.
	Files []string
	// Bytes is the total written.
	Bytes int64
}

// Extract extracts data (the whole archive, already digest-verified) of
// format f into root. Errors: an *EntryError wrapping one of the classes,
// or an error wrapping ErrFormat for a corrupt archive.
//
// The root should be an empty staging folder; files are created
// exclusively, so an existing file in the way is an error (an
// *EntryError wrapping [fs.ErrExist]). Every file and folder is created
// through root, so nothing can land outside it. Files get permission 0644,
// or 0755 when the entry has any execute bit; folders 0755 (both before
// the process umask). Modification times are not taken from the archive.
// No links, devices or other special files are ever created.
//
// Extract may be called concurrently, but not with the same root as
// another extraction in flight.
func Extract(f Format, data []byte, root *os.Root, opts *Options) (Result, error) {
	switch f {
	case TarGz:
		return ExtractTarGz(bytes.NewReader(data), root, opts)
	case Zip:
		return ExtractZip(bytes.NewReader(data), int64(len(data)), root, opts)
	}
	return Result{}, fmt.Errorf("archive: %w: unsupported format %q", ErrFormat, string(f))
}

// ExtractTarGz extracts a gzip-compressed tar stream into root.
//
// Rules and errors as for [Extract]. Regular files and folders are
// extracted; pax global headers are skipped; pax and GNU long names are
// honoured; symbolic and hard links are ErrLink; every other type flag is
// ErrSpecialFile. After the tar end marker the rest of the gzip stream is
// read (up to 1 MiB) to verify its checksum.
func ExtractTarGz(r io.Reader, root *os.Root, opts *Options) (Result, error) {
	x := newExtractor(root, opts)
	zr, err := gzip.NewReader(r)
	if err != nil {
		return x.res, fmt.Errorf("archive: %w: gzip: %w", ErrFormat, err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !(hdr != nil && errors.Is(err, tar.ErrInsecurePath)) {
			return x.res, fmt.Errorf("archive: %w: tar: %w", ErrFormat, err)
		}
		if err := x.tarEntry(hdr, tr); err != nil {
			return x.res, err
		}
	}
	// Verify the gzip trailer: the tar reader stops at the end marker.
	n, err := io.Copy(io.Discard, io.LimitReader(zr, 1<<20+1))
	switch {
	case err != nil && !errors.Is(err, gzip.ErrHeader):
		// ErrHeader here is non-gzip trailing garbage, which gzip(1) also
		// ignores; a bad checksum or truncation is corruption.
		return x.res, fmt.Errorf("archive: %w: gzip: %w", ErrFormat, err)
	case n > 1<<20:
		return x.res, fmt.Errorf("archive: %w: more than 1 MiB of data after the tar end marker", ErrFormat)
	}
	return x.finish()
}

// ExtractZip extracts a zip archive of size bytes read through r into root.
//
// Rules and errors as for [Extract]. Entries are taken in central
// directory order. A name ending in "/" (or a folder mode) is a folder; a
// symbolic-link mode (unix 0120000 in the external attributes, whatever the
// creator system) is ErrLink; a device, FIFO or socket mode is
// ErrSpecialFile. Declared sizes are not trusted: a body longer or shorter
// than declared, a bad CRC-32 or an unsupported compression method is an
// *EntryError wrapping ErrFormat.
func ExtractZip(r io.ReaderAt, size int64, root *os.Root, opts *Options) (Result, error) {
	x := newExtractor(root, opts)
	zr, err := zip.NewReader(r, size)
	if err != nil && !(zr != nil && errors.Is(err, zip.ErrInsecurePath)) {
		return x.res, fmt.Errorf("archive: %w: zip: %w", ErrFormat, err)
	}
	for _, f := range zr.File {
		if err := x.zipEntry(f); err != nil {
			return x.res, err
		}
	}
	return x.finish()
}

// Unix file type bits, as stored in the high 16 bits of a zip entry's
// external attributes.
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
)

func (x *extractor) zipEntry(f *zip.File) error {
	name := f.Name
	if err := x.count(name); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return &EntryError{Entry: name, Err: err}
	}
	mode := f.Mode()
	unixType := (f.ExternalAttrs >> 16) & sIFMT
	switch {
	case mode&fs.ModeSymlink != 0 || unixType == sIFLNK:
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: symbolic link", ErrLink)}
	case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0,
		unixType == sIFCHR, unixType == sIFBLK, unixType == sIFIFO, unixType == sIFSOCK:
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: mode %v", ErrSpecialFile, mode)}
	}
	if strings.HasSuffix(name, "/") || mode.IsDir() || unixType == sIFDIR {
		return x.dir(name)
	}
	exec := mode&0o111 != 0
	return x.file(name, exec, func() (io.ReadCloser, error) { return f.Open() })
}

func (x *extractor) tarEntry(hdr *tar.Header, tr *tar.Reader) error {
	name := hdr.Name
	if err := x.count(name); err != nil {
		return err
	}
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil // e.g. GitHub's commit id comment; carries no file
	}
	if err := checkName(name); err != nil {
		return &EntryError{Entry: name, Err: err}
	}
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: symbolic link to %q", ErrLink, hdr.Linkname)}
	case tar.TypeLink:
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: hard link to %q", ErrLink, hdr.Linkname)}
	case tar.TypeDir:
		return x.dir(name)
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is still seen in old archives
		if strings.HasSuffix(name, "/") {
			return &EntryError{Entry: name, Err: fmt.Errorf("%w: regular file name ends in '/'", ErrUnsafePath)}
		}
		exec := hdr.Mode&0o111 != 0
		return x.file(name, exec, func() (io.ReadCloser, error) { return io.NopCloser(tr), nil })
	}
	return &EntryError{Entry: name, Err: fmt.Errorf("%w: tar type flag %q", ErrSpecialFile, hdr.Typeflag)}
}

// checkName returns a detail error wrapping ErrUnsafePath, or nil. It runs
// on the name exactly as in the archive.
func checkName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrUnsafePath, why) }
	switch {
	case name == "":
		return bad("empty name")
	case strings.IndexByte(name, 0) >= 0:
		return bad("contains a NUL byte")
	case name[0] == '/' || name[0] == '\\':
		return bad("absolute path")
	case len(name) >= 2 && name[1] == ':' && isASCIILetter(name[0]):
		return bad("absolute path (drive letter)")
	case strings.IndexByte(name, '\\') >= 0:
		return bad("contains a backslash")
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return bad(`contains a ".." segment`)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return bad("not a local path")
	}
	return nil
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// Kinds of known paths.
const (
	kindFile    = 1 + iota
	kindDir     // a folder entry
	kindImplied // a parent folder implied by a deeper entry
)

// extractor holds the state of one extraction.
type extractor struct {
	root         *os.Root
	maxBytes     int64
	maxEntries   int
	strip        bool
	requireSkill bool

	entries int
	top     string            // the top folder, once known (strip)
	known   map[string]int    // exact path → kind
	folded  map[string]string // folded path → exact path
	made    map[string]bool   // folders created on disk
	skillMD bool
	res     Result
}

func newExtractor(root *os.Root, opts *Options) *extractor {
	x := &extractor{
		root:   root,
		known:  map[string]int{},
		folded: map[string]string{},
		made:   map[string]bool{},
	}
	x.maxBytes, x.maxEntries, x.strip, x.requireSkill = opts.limits()
	return x
}

func (x *extractor) count(name string) error {
	x.entries++
	if x.entries > x.maxEntries {
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: more than %d", ErrTooManyEntries, x.maxEntries)}
	}
	return nil
}

func (x *extractor) finish() (Result, error) {
	if x.requireSkill && !x.skillMD {
		return x.res, &EntryError{Err: ErrNoSkillMD}
	}
	return x.res, nil
}

// target maps a checked archive name to the path to write, or "" for an
// entry to skip (the top folder, "./").
func (x *extractor) target(name string, isDir bool) (string, error) {
	p := path.Clean(name)
	if p == "." {
		if !isDir {
			return "", fmt.Errorf("%w: names the root", ErrUnsafePath)
		}
		return "", nil
	}
	if !x.strip {
		return p, nil
	}
	top, rest, _ := strings.Cut(p, "/")
	if x.top == "" {
		x.top = top
	} else if top != x.top {
		return "", fmt.Errorf("%w: outside the top folder %q", ErrUnsafePath, x.top)
	}
	if rest == "" {
		if !isDir {
			return "", fmt.Errorf("%w: a file beside the top folder", ErrUnsafePath)
		}
		return "", nil
	}
	return rest, nil
}

// register records p (and its parents) as kind, checking duplicates, files
// used as folders and case collisions.
func (x *extractor) register(p string, kind int) error {
	// Parents first, outermost to innermost.
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		q := p[:i]
		switch x.known[q] {
		case kindFile:
			return fmt.Errorf("%w: parent %q is a file", ErrUnsafePath, q)
		case kindDir, kindImplied:
			continue
		}
		if err := x.fold(q); err != nil {
			return err
		}
		x.known[q] = kindImplied
	}
	switch x.known[p] {
	case 0:
	case kindImplied:
		if kind == kindDir {
			x.known[p] = kindDir
			return nil
		}
		return fmt.Errorf("%w: duplicate entry (already a folder)", ErrUnsafePath)
	default:
		return fmt.Errorf("%w: duplicate entry", ErrUnsafePath)
	}
	if err := x.fold(p); err != nil {
		return err
	}
	x.known[p] = kind
	return nil
}

func (x *extractor) fold(p string) error {
	f := strings.ToLower(p)
	if other, ok := x.folded[f]; ok && other != p {
		return fmt.Errorf("%w: %q and %q", ErrCaseCollision, other, p)
	}
	x.folded[f] = p
	return nil
}

func (x *extractor) mkdirAll(p string) error {
	if p == "" || x.made[p] {
		return nil
	}
	if err := x.root.MkdirAll(filepath.FromSlash(p), 0o755); err != nil {
		return err
	}
	for q := p; q != "."; q = path.Dir(q) {
		x.made[q] = true
	}
	return nil
}

func (x *extractor) dir(name string) error {
	p, err := x.target(name, true)
	if err == nil && p != "" {
		err = x.register(p, kindDir)
		if err == nil {
			err = x.mkdirAll(p)
		}
	}
	if err != nil {
		return &EntryError{Entry: name, Err: err}
	}
	return nil
}

func (x *extractor) file(name string, exec bool, open func() (io.ReadCloser, error)) error {
	p, err := x.target(name, false)
	if err != nil {
		return &EntryError{Entry: name, Err: err}
	}
	if err := x.register(p, kindFile); err != nil {
		return &EntryError{Entry: name, Err: err}
	}
	if dir := path.Dir(p); dir != "." {
		if err := x.mkdirAll(dir); err != nil {
			return &EntryError{Entry: name, Err: err}
		}
	}
	rc, err := open()
	if err != nil {
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
	}
	defer rc.Close()
	perm := fs.FileMode(0o644)
	if exec {
		perm = 0o755
	}
	out, err := x.root.OpenFile(filepath.FromSlash(p), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return &EntryError{Entry: name, Err: err}
	}
	remaining := x.maxBytes - x.res.Bytes
	n, copyErr := io.Copy(out, io.LimitReader(rc, remaining))
	x.res.Bytes += n
	closeErr := out.Close()
	x.res.Files = append(x.res.Files, p)
	var w *fs.PathError
	switch {
	case copyErr != nil && errors.As(copyErr, &w):
		return &EntryError{Entry: name, Err: copyErr} // writing failed
	case copyErr != nil:
		return &EntryError{Entry: name, Err: fmt.Errorf("%w: %w", ErrFormat, copyErr)}
	case closeErr != nil:
		return &EntryError{Entry: name, Err: closeErr}
	}
	if n == remaining {
		// Probe for one more byte; never written.
		var b [1]byte
		m, err := io.ReadFull(rc, b[:])
		if m > 0 {
			return &EntryError{Entry: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, x.maxBytes)}
		}
		if err != nil && err != io.EOF {
			return &EntryError{Entry: name, Err: fmt.Errorf("%w: %w", ErrFormat, err)}
		}
	}
	if p == "SKILL.md" {
		x.skillMD = true
	}
	return nil
}
