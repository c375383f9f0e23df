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
	"sync"
	"time"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// Errors of [readFile]; callers map them to wire errors.
var (
	errChanged  = errors.New("changed on disk since it was hashed; retry after the catalog refreshes")
	errTooLarge = errors.New("file too large")
	errNotFile  = errors.New("not a regular file")
)

// fileMIME returns the MIME type f is served as: the one the hasher
// decided from the bytes it hashed. A record without one (made before the
// hasher recorded it) gets the type its extension gives, else
// application/octet-stream; nothing is read to tell (issue 11 item 6).
func fileMIME(f *events.File) string {
	if f.MIME != "" {
		return f.MIME
	}
	if m := skill.MIMEByExt(f.Path); m != "" {
		return m
	}
	return "application/octet-stream"
}

// servedAsText reports whether data, the bytes of f, are served as text:
// the hasher's text flag, or for a record without a MIME type (see
// [fileMIME]) a text type and valid UTF-8.
func servedAsText(f *events.File, data []byte) bool {
	if f.MIME == "" {
		return skill.IsTextMIME(fileMIME(f)) && utf8.Valid(data)
	}
	return f.Text
}

// skillMD returns the bytes of the SKILL.md of sk as the catalog carries
// them: the hasher read and hashed them together, so they are by
// construction the bytes sk.Files[0] describes, and serving them reads
// nothing from disk (issue 11 item 6). A catalog whose skill holds no such
// bytes (one made by hand, or recorded before they were carried) gives an
// error.
func skillMD(sk *events.Skill) ([]byte, error) {
	if len(sk.Files) == 0 || sk.SkillMD == nil || int64(len(sk.SkillMD)) != sk.Files[0].Size {
		return nil, fmt.Errorf("the catalog holds no SKILL.md bytes for %s", sk.QualifiedName)
	}
	return sk.SkillMD, nil
}

// skillMDChanged reports whether the SKILL.md of sk is no longer the file
// that was hashed, judged as the hasher's digest cache judges it: by size
// and modification time, looked up through the skill opener (no link
// followed) without reading the file, or by its skill folder having been
// swapped. A bundled skill never changes; a missing or unreadable file
// counts as unchanged (the rescan will tell).
func skillMDChanged(sk *events.Skill) bool {
	if sk.Source.Kind == events.SourceBundled || len(sk.Files) == 0 {
		return false
	}
	dir := sk.RealDir
	if dir == "" {
		dir = sk.Dir
	}
	root, err := skill.OpenDir(dir, sk.DirID)
	if err != nil {
		return errors.Is(err, skill.ErrFolderChanged)
	}
	defer root.Close()
	md := &sk.Files[0]
	fi, err := root.Lstat(md.OnDisk())
	return err == nil && (fi.Size() != md.Size || !fi.ModTime().Equal(md.ModTime))
}

// openFile opens the manifest file f of sk: from bundled for a bundled
// skill, else through an [os.Root] on the skill folder as it was scanned
// (its real path, refused when it is no longer the folder the scan
// identified: errChanged), never through a symbolic link at any component
// below it and only when the file opened is the regular file checked
// (errNotFile otherwise), issue 10 F2.
func openFile(sk *events.Skill, f *events.File, bundled fs.FS) (fs.File, error) {
	rel := f.OnDisk()
	if sk.Source.Kind == events.SourceBundled {
		if bundled == nil {
			return nil, fmt.Errorf("opening bundled %s: no bundled file system", rel)
		}
		file, err := bundled.Open(path.Join(sk.Dir, rel))
		if err != nil {
			return nil, err
		}
		return file, nil
	}
	dir := sk.RealDir
	if dir == "" {
		dir = sk.Dir
	}
	// Errors name the skill and the file inside it, never a server path:
	// they reach clients, also over HTTP (issue 13 item 11).
	root, err := skill.OpenDir(dir, sk.DirID)
	if errors.Is(err, skill.ErrFolderChanged) {
		return nil, fmt.Errorf("the folder of skill %s changed since it was scanned: %w", sk.QualifiedName, errChanged)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the folder of skill %s: %w", sk.QualifiedName, withoutPath(err))
	}
	defer root.Close()
	file, _, err := skill.OpenFile(root, rel)
	if errors.Is(err, skill.ErrNotRegular) {
		return nil, fmt.Errorf("opening %s of skill %s: %w", rel, sk.QualifiedName, errNotFile)
	}
	if err != nil {
		return nil, err
	}
	return file, nil
}

// readFile returns the bytes of the manifest file f of sk, which it reads at
// this moment, and only if their SHA-256 equals f.Digest (else an error
// wrapping errChanged). max > 0 caps the manifest size (errTooLarge).
//
// verified, when not nil, remembers per manifest entry the identity (see
// [identityOf]) of a file whose bytes were found to match: a later read of
// a file that still has that identity after its bytes were read is served
// without hashing them again (issue 12). Any write to the file since gives
// it a new change time, so the bytes read are the ones hashed; an identity
// is only remembered once its change time is [settleTime] old, so that a
// write within the file system's timestamp granularity cannot leave it as
// it was.
func readFile(sk *events.Skill, f *events.File, bundled fs.FS, max int64, verified *sync.Map) ([]byte, error) {
	if max > 0 && f.Size > max {
		return nil, fmt.Errorf("%w: %s (limit %s)", errTooLarge, megabytes(f.Size), megabytes(max))
	}
	file, err := openFile(sk, f, bundled)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	// One byte more than the manifest size is enough to notice growth.
	buf := make([]byte, f.Size+1)
	n, err := io.ReadFull(file, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", f.OnDisk(), err)
	}
	data := buf[:n]
	var id fileIdentity
	var known bool
	if verified != nil && int64(n) == f.Size {
		if fi, err := file.Stat(); err == nil {
			id, known = identityOf(fi)
		}
	}
	if known {
		if v, ok := verified.Load(f); ok && v.(fileIdentity) == id {
			return data, nil
		}
	}
	sum := sha256.Sum256(data)
	if "sha256:"+hex.EncodeToString(sum[:]) != f.Digest {
		return nil, fmt.Errorf("%s: %w", f.Path, errChanged)
	}
	if known && time.Since(time.Unix(0, id.ctime)) >= settleTime {
		verified.Store(f, id)
	}
	return data, nil
}

// settleTime is how old a file's change time must be before readFile
// trusts its identity: far above a file system's timestamp granularity
// (ext4 and XFS stamp with the kernel's coarse clock, a few milliseconds).
const settleTime = 2 * time.Second

// fileIdentity is what readFile compares to tell that a file is the one it
// hashed: the identity the hasher's digest cache uses too (issue 12).
type fileIdentity struct {
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds since the epoch
	ctime    int64
}

// withoutPath returns the cause of a path error, without the path it
// names; other errors are returned as they are.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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

// FileSource gives the bytes of a served file by digest, in place of the
// skill folders on disk ([Options.Files]): in a cluster, the object store
// the leader uploaded every file to (issue 16). It must be safe for
// concurrent use.
type FileSource interface {
	// Bytes returns the size bytes whose digest ("sha256:<hex>", as in
	// [events.File.Digest]) is digest, or an error.
	Bytes(digest string, size int64) ([]byte, error)
}

// readSourced returns the bytes of the manifest file f of sk from src,
// only if their SHA-256 equals f.Digest (a source that returns other bytes
// gives an error wrapping errChanged). max > 0 caps the manifest size
// (errTooLarge).
func readSourced(src FileSource, sk *events.Skill, f *events.File, max int64) ([]byte, error) {
	if max > 0 && f.Size > max {
		return nil, fmt.Errorf("%w: %s (limit %s)", errTooLarge, megabytes(f.Size), megabytes(max))
	}
	data, err := src.Bytes(f.Digest, f.Size)
	if err != nil {
		return nil, fmt.Errorf("reading %s of skill %s: %w", f.Path, sk.QualifiedName, err)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != f.Size || "sha256:"+hex.EncodeToString(sum[:]) != f.Digest {
		return nil, fmt.Errorf("%s of skill %s: the file source returned other bytes: %w", f.Path, sk.QualifiedName, errChanged)
	}
	return data, nil
}
