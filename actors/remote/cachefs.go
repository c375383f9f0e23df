// Package remote is the cache plumbing both remote fetchers
// (actors/remote/wellknown and actors/remote/github) share: cache folders
// opened through an [os.Root] and claimed by a [Marker], folder swaps
// ([SwapFolder]), atomic writes ([WriteFileAtomic], [WriteJSONAtomic]),
// tree stamps ([TreeStamp]) and the removal of crash leftovers
// ([RemoveLeftovers]). It holds no actor and imports no actor package.
package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// The remote caches touch the disk only through an [os.Root] opened on a
// cache folder (no name can leave it), and only folders that are theirs
// (issue 10 F1). A folder is theirs when it holds [Marker], written
// right after the folder was created, or when it predates the marker and
// holds the fetcher's own index or metadata (the marker is then added), or
// when it is empty (nothing to lose). Every folder a fetcher manages is
// checked with Lstat first: a symbolic link, a file where a folder belongs
// or a folder of another user is refused with an error naming it, and
// nothing is repaired by deleting.

// Marker is the file that makes a cache folder skilljack-mcp's. It is
// hidden, so the hasher never serves it, and [TreeStamp] ignores it at the
// top of the folder it stamps.
const Marker = ".skilljack-cache"

// cacheMarkerText is the marker's content, for a person who finds one.
const cacheMarkerText = "This folder was created by skilljack-mcp as a cache: skilljack-mcp may replace or delete what it holds.\n"

// ErrRefused is wrapped by every refusal of a cache folder (a link, a
// file, another user's folder, a folder skilljack-mcp did not create).
var ErrRefused = errors.New("cache folder refused")

// NotOurs is how a refusal of a folder without the marker ends.
const NotOurs = "exists and was not created by skilljack-mcp; move it or choose another SKILLJACK_CACHE_DIR"

// Refusal is a refused cache folder. It matches [ErrRefused].
type Refusal struct {
	// Path is the refused folder, as shown to the user.
	Path string
	// Reason says why, as the end of a sentence naming Path ([NotOurs]).
	Reason string
}

// Error reads "cache folder <Path> <Reason>".
func (e *Refusal) Error() string { return "cache folder " + e.Path + " " + e.Reason }

// Is reports whether target is [ErrRefused].
func (e *Refusal) Is(target error) bool { return target == ErrRefused }

// Refuse returns the refusal of the folder path for reason.
func Refuse(path, reason string) *Refusal { return &Refusal{Path: path, Reason: reason} }

// CheckFolder refuses fi, the Lstat of the cache folder path, unless
// it is a real folder of this user.
func CheckFolder(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return Refuse(path, "is a symbolic link; cache folders are never followed through links: replace it with a folder or choose another SKILLJACK_CACHE_DIR")
	case !fi.IsDir():
		return Refuse(path, "is not a folder; move it or choose another SKILLJACK_CACHE_DIR")
	}
	if uid, foreign := foreignOwner(fi); foreign {
		return Refuse(path, "is owned by another user (uid "+strconv.Itoa(uid)+"); choose another SKILLJACK_CACHE_DIR")
	}
	return nil
}

// OpenCacheDir opens dir, a top cache folder, as a Root, creating it (and
// its parents) with the marker when it is missing. dir is refused when it
// is a link, a file or another user's folder, or when it was replaced
// while being opened. An existing dir needs no marker: nothing directly in
// it is ever removed, only in folders that are the fetchers' own.
func OpenCacheDir(dir string) (*os.Root, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		// Missing, or its parent is not a folder: createCacheDir checks
		// the parent and names it when it is refused.
		if err := createCacheDir(dir); err != nil {
			return nil, err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("checking cache folder %s: %w", dir, err)
	}
	if err := CheckFolder(dir, fi); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening cache folder %s: %w", dir, err)
	}
	if rfi, err := root.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		root.Close()
		return nil, Refuse(dir, "was replaced while it was being opened")
	}
	return root, nil
}

// createCacheDir creates dir, whose parent may be missing, and marks it.
// The parent (SKILLJACK_CACHE_DIR for the well-known folder) must pass
// [CheckFolder] like every cache folder, and dir is made through a Root
// on it, so a parent that is a symbolic link, a file or another user's
// folder is refused before anything is written (issue 10 F1).
func createCacheDir(dir string) error {
	parent := filepath.Dir(dir)
	fi, err := os.Lstat(parent)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return fmt.Errorf("creating cache folder %s: %w", parent, err)
		}
		fi, err = os.Lstat(parent)
	}
	if err != nil {
		return fmt.Errorf("checking cache folder %s: %w", parent, err)
	}
	if err := CheckFolder(parent, fi); err != nil {
		return err
	}
	top, err := os.OpenRoot(parent)
	if err != nil {
		return fmt.Errorf("opening cache folder %s: %w", parent, err)
	}
	defer top.Close()
	if rfi, err := top.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		return Refuse(parent, "was replaced while it was being opened")
	}
	name := filepath.Base(dir)
	if err := top.Mkdir(name, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // another process was first; the caller checks it
		}
		return fmt.Errorf("creating cache folder %s: %w", dir, err)
	}
	return markFolder(top, name)
}

// DisplayPath is the path of name in root, for messages.
func DisplayPath(root *os.Root, name string) string {
	return filepath.Join(root.Name(), filepath.FromSlash(name))
}

// ClaimFolder makes name, a folder in root, one the fetcher may write,
// swap and prune in: it is created (with the marker) when missing; an
// existing one must pass [CheckFolder] and hold the marker, or be
// legacy (legacy may be nil) or empty, and then gets the marker. It
// reports whether the folder existed. Errors: a [Refusal] naming the
// folder, or the I/O error.
func ClaimFolder(root *os.Root, name string, legacy func() bool) (existed bool, err error) {
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		err = root.Mkdir(name, 0o755)
		if err == nil {
			return false, markFolder(root, name)
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("creating cache folder %s: %w", DisplayPath(root, name), err)
		}
		fi, err = root.Lstat(name) // another process was first
	}
	if err != nil {
		return false, fmt.Errorf("checking cache folder %s: %w", DisplayPath(root, name), err)
	}
	if err := CheckFolder(DisplayPath(root, name), fi); err != nil {
		return true, err
	}
	if hasMarker(root, name) {
		return true, nil
	}
	if (legacy != nil && legacy()) || EmptyFolder(root, name) {
		return true, markFolder(root, name)
	}
	// Another worker or process may have created and marked the folder
	// between the checks above (it was empty, then held the marker): the
	// marker decides, so look once more before refusing.
	if hasMarker(root, name) {
		return true, nil
	}
	return true, Refuse(DisplayPath(root, name), NotOurs)
}

// hasMarker reports whether the folder name in root holds the marker as a
// regular file.
func hasMarker(root *os.Root, name string) bool {
	fi, err := root.Lstat(filepath.Join(name, Marker))
	return err == nil && fi.Mode().IsRegular()
}

// OwnedFolder reports whether name in root is a real folder of this user
// that holds the marker: the only kind of folder the fetchers remove.
func OwnedFolder(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && CheckFolder(name, fi) == nil && hasMarker(root, name)
}

// EmptyFolder reports whether the folder name in root has no entries.
func EmptyFolder(root *os.Root, name string) bool {
	d, err := root.Open(name)
	if err != nil {
		return false
	}
	defer d.Close()
	_, err = d.ReadDir(1)
	return errors.Is(err, io.EOF)
}

// markFolder writes the marker into the folder name of root (a marker
// already there is kept; anything else by that name is an error). The
// folder keeps its modification time, so the [TreeStamp] of a folder
// cached before the marker existed still matches.
func markFolder(root *os.Root, name string) error {
	if hasMarker(root, name) {
		return nil
	}
	if fi, err := root.Lstat(name); err == nil {
		defer root.Chtimes(name, fi.ModTime(), fi.ModTime())
	}
	p := filepath.Join(name, Marker)
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.WriteString(cacheMarkerText)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if errors.Is(err, fs.ErrExist) && hasMarker(root, name) {
		return nil // marked by a concurrent worker or process
	}
	if err != nil {
		return fmt.Errorf("marking cache folder %s: %w", DisplayPath(root, name), err)
	}
	return nil
}

// MakeTempFolder creates a new folder prefix+"~"+random in root, marked
// as the fetcher's, and returns its name.
func MakeTempFolder(root *os.Root, prefix string) (string, error) {
	for range 10 {
		name := prefix + "~" + strconv.FormatUint(rand.Uint64(), 10)
		err := root.Mkdir(name, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating %s: %w", DisplayPath(root, name), err)
		}
		return name, markFolder(root, name)
	}
	return "", fmt.Errorf("creating %s~*: every name taken", DisplayPath(root, prefix))
}

// RemoveOwned removes the folder name of root with everything in it if it
// is the fetcher's ([OwnedFolder]); a link, a file or a folder without the
// marker is left alone and reported as a [Refusal].
func RemoveOwned(root *os.Root, name string) error {
	if !OwnedFolder(root, name) {
		return Refuse(DisplayPath(root, name), "is not a folder created by skilljack-mcp; it is left alone")
	}
	if err := root.RemoveAll(name); err != nil {
		return fmt.Errorf("removing %s: %w", DisplayPath(root, name), err)
	}
	return nil
}

// SwapFolder replaces the folder dst of root by the folder staging: dst is
// renamed to trash, staging to dst, and trash removed. The caller has
// checked that dst, when it exists, is the fetcher's; what was renamed to
// trash is checked again (it may have been replaced since) and, when it is
// not the fetcher's, put back and refused. If the second rename fails the
// old dst is put back. A concurrent scan of dst may find it missing for
// the instant between the renames; the SourceSynced that follows rescans
// it. Both remote fetchers swap through it (a repository, a publisher's
// skill).
func SwapFolder(root *os.Root, staging, dst, trash string) error {
	hadOld := true
	if err := root.Rename(dst, trash); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("moving %s aside: %w", DisplayPath(root, dst), err)
		}
		hadOld = false
	}
	if hadOld && !OwnedFolder(root, trash) {
		if err := root.Rename(trash, dst); err != nil {
			return fmt.Errorf("putting back %s: %w", DisplayPath(root, dst), err)
		}
		return Refuse(DisplayPath(root, dst), NotOurs)
	}
	if err := root.Rename(staging, dst); err != nil {
		if hadOld {
			root.Rename(trash, dst)
		}
		return fmt.Errorf("moving %s into place: %w", DisplayPath(root, dst), err)
	}
	if hadOld {
		root.RemoveAll(trash)
	}
	return nil
}

// WriteFileAtomic writes b to name in root through a temporary file in
// the same folder and a rename, so a reader sees the old or the new
// content, never a part. The rename replaces a link by that name; it
// never writes through one.
func WriteFileAtomic(root *os.Root, name string, b []byte) error {
	return WriteFileAtomicMode(root, name, b, 0o644)
}

// WriteFileAtomicMode is [WriteFileAtomic] creating the file with perm
// (0600 for the private caches: the digest cache, the persisted catalog).
func WriteFileAtomicMode(root *os.Root, name string, b []byte, perm os.FileMode) error {
	tmp := name + ".tmp" + strconv.FormatUint(rand.Uint64(), 36)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("writing %s: %w", DisplayPath(root, name), err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("writing %s: %w", DisplayPath(root, name), err)
	}
	return nil
}

// OpenSubRoot opens the folder name of root, already checked by the
// caller, as a Root of its own, refusing it when it was replaced by
// something else in between.
func OpenSubRoot(root *os.Root, name string) (*os.Root, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("checking cache folder %s: %w", DisplayPath(root, name), err)
	}
	if err := CheckFolder(DisplayPath(root, name), fi); err != nil {
		return nil, err
	}
	sub, err := root.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("opening cache folder %s: %w", DisplayPath(root, name), err)
	}
	if sfi, err := sub.Stat("."); err != nil || !os.SameFile(fi, sfi) {
		sub.Close()
		return nil, Refuse(DisplayPath(root, name), "was replaced while it was being opened")
	}
	return sub, nil
}

// RegularFile reports whether name in root is a regular file (not a link).
func RegularFile(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

// EntryNames lists the names in the folder dir of root, sorted; an
// unreadable folder lists nothing.
func EntryNames(root *os.Root, dir string) []string {
	d, err := root.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	slices.Sort(names)
	return names
}

// LeftoverKind is what a crash leftover of a fetcher is.
type LeftoverKind int

// The kinds of [LeftoverKind].
const (
	// NotLeftover is any other entry: never touched.
	NotLeftover LeftoverKind = iota
	// LeftoverFolder is a staging or trash folder: removed when marked.
	LeftoverFolder
	// LeftoverFile is a download or temporary file: removed when regular.
	LeftoverFile
)

// RemoveLeftovers removes the crash leftovers in root older than
// [StaleAge], as kind classifies each name: a folder only when it is the
// fetcher's ([OwnedFolder]), a file only when it is a regular file of this
// user. Anything else by such a name (a link, another user's entry, a
// folder without the marker) is left alone and reported through refused.
func RemoveLeftovers(root *os.Root, kind func(name string) LeftoverKind, refused func(error)) {
	for _, name := range EntryNames(root, ".") {
		k := kind(name)
		if k == NotLeftover {
			continue
		}
		fi, err := root.Lstat(name)
		if err != nil || time.Since(fi.ModTime()) <= StaleAge {
			continue
		}
		_, foreign := foreignOwner(fi)
		switch {
		case k == LeftoverFile && fi.Mode().IsRegular() && !foreign:
			if err := root.Remove(name); err != nil {
				refused(fmt.Errorf("removing crash leftover %s: %w", DisplayPath(root, name), err))
			}
		case k == LeftoverFolder:
			if err := RemoveOwned(root, name); err != nil {
				refused(err)
			}
		default:
			refused(Refuse(DisplayPath(root, name), "is not a file created by skilljack-mcp; it is left alone"))
		}
	}
}

// ReadJSON reads the cache file name of root; a missing or broken one
// gives the zero value (the next sync rewrites it).
func ReadJSON[T any](root *os.Root, name string) T {
	var v T
	if b, err := root.ReadFile(name); err == nil {
		if json.Unmarshal(b, &v) != nil {
			var zero T
			return zero
		}
	}
	return v
}

// WriteJSONAtomic writes v as indented JSON to name in root through a
// temporary file and a rename, so a reader never sees half a file.
func WriteJSONAtomic(root *os.Root, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", DisplayPath(root, name), err)
	}
	return WriteFileAtomic(root, name, append(b, '\n'))
}

// MiB formats n bytes in MiB with one decimal, for log lines.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
