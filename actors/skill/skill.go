// Package skill holds the pure rules about skills that several components
// share (DESIGN "one authority per decision"): the SKILL.md frontmatter
// ([ParseFrontmatter]), the naming rules ([SegmentSafe], [NameProblems]),
// skill paths, qualified names and URIs ([Path], [QualifiedName], [URI]),
// the discovery predicates the hasher, the watcher and the MCP facade all
// follow ([FindMD], [HoldsMD], [Containers], [Excluded], [Hidden],
// [Noisy]), content sniffing ([Describe]) and the containment rules every
// reader of a skill folder follows, the hasher and the facade alike.
//
// A skill folder is the folder discovery found, recorded by its
// real path and its identity ([events.FolderID]); a read opens an [os.Root]
// on that path and refuses it when it is no longer that folder
// ([OpenDir]). Below it a file is read only when no component of its path
// is a symbolic link — not even one that stays inside the folder — and the
// file opened is the regular file that was checked ([OpenFile]), so a link
// swapped in between a check and an open is caught by identity, not by a
// second check.
package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/skilljack/skilljack-mcp/events"
)

var (
	// ErrFolderChanged is returned by [Identify] and [OpenDir] for a skill
	// folder that is no longer the folder that was scanned: gone, replaced
	// by a symbolic link or a file, or swapped for another folder.
	ErrFolderChanged = errors.New("skill: skill folder changed since it was scanned")
	// ErrNotRegular is returned by [OpenFile] for a path that goes through
	// a symbolic link, ends in anything but a regular file, or whose file
	// was replaced while it was being opened.
	ErrNotRegular = errors.New("skill: not a regular file reached without symbolic links")
)

// Identify returns the identity of the folder at the real path dir (no
// symbolic link left in its last component). It returns an error wrapping
// [ErrFolderChanged] when dir is a symbolic link or not a folder, and the
// [os.Lstat] error when it cannot be read.
func Identify(dir string) (events.FolderID, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return events.FolderID{}, err
	}
	if !fi.IsDir() {
		return events.FolderID{}, changed(dir)
	}
	return folderID(fi), nil
}

// OpenDir opens an [os.Root] on the skill folder at the real path dir and
// checks that the folder opened is the one id names (a zero id is not
// checked) and that dir itself is not a symbolic link. It returns an error
// wrapping [ErrFolderChanged] otherwise. The caller closes the root; files
// opened through it stay open after that.
func OpenDir(dir string, id events.FolderID) (*os.Root, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, changed(dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	rfi, err := root.Stat(".")
	if err == nil && (!os.SameFile(fi, rfi) || id != (events.FolderID{}) && folderID(rfi) != id) {
		err = changed(dir)
	}
	if err != nil {
		root.Close()
		return nil, err
	}
	return root, nil
}

func changed(dir string) error {
	return fmt.Errorf("%w: %s", ErrFolderChanged, dir)
}

// OpenFile opens for reading the regular file at the slash path rel below
// root. Each folder on the way is checked with Lstat (a symbolic link is
// refused) and then opened as a root of its own whose identity must match,
// and the file opened must be the regular file Lstat saw, or the one at
// its name right after the open (a file replaced meanwhile by another
// regular file); any other mismatch gives an error wrapping
// [ErrNotRegular]. A missing file gives an error
// wrapping [fs.ErrNotExist]. It returns the open file and its FileInfo
// (taken from the open file); the caller closes the file.
func OpenFile(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	if !fs.ValidPath(rel) || rel == "." {
		return nil, nil, fmt.Errorf("opening %s: %w", rel, fs.ErrInvalid)
	}
	segs := strings.Split(rel, "/")
	dir := root
	for _, seg := range segs[:len(segs)-1] {
		next, err := openSubdir(dir, seg, rel)
		if dir != root {
			dir.Close()
		}
		if err != nil {
			return nil, nil, err
		}
		dir = next
	}
	if dir != root {
		defer dir.Close()
	}
	return openLeaf(dir, segs[len(segs)-1], rel)
}

// openSubdir opens the folder name of dir as a root, refusing a link.
func openSubdir(dir *os.Root, name, rel string) (*os.Root, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("opening %s: %s: %w", rel, name, ErrNotRegular)
	}
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	sfi, err := sub.Stat(".")
	if err == nil && !os.SameFile(fi, sfi) && !stillAt(dir, name, sfi) {
		err = fmt.Errorf("opening %s: %s: %w", rel, name, ErrNotRegular)
	}
	if err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// stillAt reports whether the entry name of dir, not followed, is now the
// file opened: a file or folder replaced by another one between the check
// and the open (an editor's atomic save) is the new one, reached without a
// link, while one reached through a link swapped in is not at name.
func stillAt(dir *os.Root, name string, opened fs.FileInfo) bool {
	fi, err := dir.Lstat(name)
	return err == nil && fi.Mode().Type() == opened.Mode().Type() && os.SameFile(fi, opened)
}

// openLeaf opens the regular file name of dir, refusing a link and a file
// swapped between the check and the open.
func openLeaf(dir *os.Root, name, rel string) (*os.File, fs.FileInfo, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("opening %s: %w", rel, ErrNotRegular)
	}
	// Non-blocking where the platform has it: a FIFO swapped in after the
	// Lstat must not hang the open; the identity check then refuses it.
	f, err := dir.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	ffi, err := f.Stat()
	if err == nil && (!ffi.Mode().IsRegular() || !os.SameFile(fi, ffi) && !stillAt(dir, name, ffi)) {
		err = fmt.Errorf("opening %s: %w", rel, ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, ffi, nil
}

// ErrDigestMismatch is wrapped by [ReadVerified] when the file's bytes are
// not the ones the digest describes: it changed since it was hashed.
var ErrDigestMismatch = errors.New("changed since it was hashed: its bytes no longer match their digest")

// ReadVerified reads the file at the '/'-separated path rel below the
// skill folder dir (real path, identity id: [OpenDir], [OpenFile]) and
// returns its bytes only when they are exactly size bytes whose SHA-256,
// as "sha256:<hex>", is digest; otherwise an error wrapping
// [ErrDigestMismatch] (or the open or read error). It reads at most
// size+1 bytes. Safe for concurrent use. Whoever holds a manifest but not
// the bytes uses it, so that no digest is ever paired with other bytes
// (issue 12: a catalog holds no SKILL.md bytes).
func ReadVerified(dir string, id events.FolderID, rel string, size int64, digest string) ([]byte, error) {
	root, err := OpenDir(dir, id)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, fi, err := OpenFile(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() != size {
		return nil, fmt.Errorf("%s: %w (size %d, hashed %d)", rel, ErrDigestMismatch, fi.Size(), size)
	}
	buf := make([]byte, size+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading %s: %w", rel, err)
	}
	if int64(n) != size || !DigestIs(buf[:n], digest) {
		return nil, fmt.Errorf("%s: %w", rel, ErrDigestMismatch)
	}
	return buf[:n], nil
}

// DigestIs reports whether digest is "sha256:" followed by the lowercase
// hex SHA-256 of data (SEP2640-R40).
func DigestIs(data []byte, digest string) bool {
	sum := sha256.Sum256(data)
	var text [len("sha256:") + 2*sha256.Size]byte
	copy(text[:], "sha256:")
	hex.Encode(text[len("sha256:"):], sum[:])
	return string(text[:]) == digest
}
