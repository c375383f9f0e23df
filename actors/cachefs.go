package actors

import (
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
// (issue 10 F1). A folder is theirs when it holds [cacheMarker], written
// right after the folder was created, or when it predates the marker and
// holds the fetcher's own index or metadata (the marker is then added), or
// when it is empty (nothing to lose). Every folder a fetcher manages is
// checked with Lstat first: a symbolic link, a file where a folder belongs
// or a folder of another user is refused with an error naming it, and
// nothing is repaired by deleting.

// cacheMarker is the file that makes a cache folder skilljack-mcp's. It is
// hidden, so the hasher never serves it, and [treeStamp] ignores it at the
// top of the folder it stamps.
const cacheMarker = ".skilljack-cache"

// cacheMarkerText is the marker's content, for a person who finds one.
const cacheMarkerText = "This folder was created by skilljack-mcp as a cache: skilljack-mcp may replace or delete what it holds.\n"

// errCacheRefused is wrapped by every refusal of a cache folder (a link, a
// file, another user's folder, a folder skilljack-mcp did not create).
var errCacheRefused = errors.New("cache folder refused")

// notOursReason is how a refusal of a folder without the marker ends.
const notOursReason = "exists and was not created by skilljack-mcp; move it or choose another SKILLJACK_CACHE_DIR"

// cacheRefusal is a refused cache folder: Path and why. It matches
// errCacheRefused.
type cacheRefusal struct{ path, reason string }

func (e *cacheRefusal) Error() string          { return "cache folder " + e.path + " " + e.reason }
func (e *cacheRefusal) Is(target error) bool   { return target == errCacheRefused }
func refuse(path, reason string) *cacheRefusal { return &cacheRefusal{path, reason} }

// checkFolderInfo refuses fi, the Lstat of the cache folder path, unless
// it is a real folder of this user.
func checkFolderInfo(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(path, "is a symbolic link; cache folders are never followed through links: replace it with a folder or choose another SKILLJACK_CACHE_DIR")
	case !fi.IsDir():
		return refuse(path, "is not a folder; move it or choose another SKILLJACK_CACHE_DIR")
	}
	if uid, foreign := foreignOwner(fi); foreign {
		return refuse(path, "is owned by another user (uid "+strconv.Itoa(uid)+"); choose another SKILLJACK_CACHE_DIR")
	}
	return nil
}

// openCacheDir opens dir, a top cache folder, as a Root, creating it (and
// its parents) with the marker when it is missing. dir is refused when it
// is a link, a file or another user's folder, or when it was replaced
// while being opened. An existing dir needs no marker: nothing directly in
// it is ever removed, only in folders that are the fetchers' own.
func openCacheDir(dir string) (*os.Root, error) {
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
	if err := checkFolderInfo(dir, fi); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening cache folder %s: %w", dir, err)
	}
	if rfi, err := root.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		root.Close()
		return nil, refuse(dir, "was replaced while it was being opened")
	}
	return root, nil
}

// createCacheDir creates dir, whose parent may be missing, and marks it.
// The parent (SKILLJACK_CACHE_DIR for the well-known folder) must pass
// [checkFolderInfo] like every cache folder, and dir is made through a Root
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
	if err := checkFolderInfo(parent, fi); err != nil {
		return err
	}
	top, err := os.OpenRoot(parent)
	if err != nil {
		return fmt.Errorf("opening cache folder %s: %w", parent, err)
	}
	defer top.Close()
	if rfi, err := top.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		return refuse(parent, "was replaced while it was being opened")
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

// displayPath is the path of name in root, for messages.
func displayPath(root *os.Root, name string) string {
	return filepath.Join(root.Name(), filepath.FromSlash(name))
}

// claimFolder makes name, a folder in root, one the fetcher may write,
// swap and prune in: it is created (with the marker) when missing; an
// existing one must pass [checkFolderInfo] and hold the marker, or be
// legacy (legacy may be nil) or empty, and then gets the marker. It
// reports whether the folder existed. Errors: a [cacheRefusal] naming the
// folder, or the I/O error.
func claimFolder(root *os.Root, name string, legacy func() bool) (existed bool, err error) {
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		err = root.Mkdir(name, 0o755)
		if err == nil {
			return false, markFolder(root, name)
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("creating cache folder %s: %w", displayPath(root, name), err)
		}
		fi, err = root.Lstat(name) // another process was first
	}
	if err != nil {
		return false, fmt.Errorf("checking cache folder %s: %w", displayPath(root, name), err)
	}
	if err := checkFolderInfo(displayPath(root, name), fi); err != nil {
		return true, err
	}
	if hasMarker(root, name) {
		return true, nil
	}
	if (legacy != nil && legacy()) || emptyFolder(root, name) {
		return true, markFolder(root, name)
	}
	// Another worker or process may have created and marked the folder
	// between the checks above (it was empty, then held the marker): the
	// marker decides, so look once more before refusing.
	if hasMarker(root, name) {
		return true, nil
	}
	return true, refuse(displayPath(root, name), notOursReason)
}

// hasMarker reports whether the folder name in root holds the marker as a
// regular file.
func hasMarker(root *os.Root, name string) bool {
	fi, err := root.Lstat(filepath.Join(name, cacheMarker))
	return err == nil && fi.Mode().IsRegular()
}

// ownedFolder reports whether name in root is a real folder of this user
// that holds the marker: the only kind of folder the fetchers remove.
func ownedFolder(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && checkFolderInfo(name, fi) == nil && hasMarker(root, name)
}

// emptyFolder reports whether the folder name in root has no entries.
func emptyFolder(root *os.Root, name string) bool {
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
// folder keeps its modification time, so the [treeStamp] of a folder
// cached before the marker existed still matches.
func markFolder(root *os.Root, name string) error {
	if hasMarker(root, name) {
		return nil
	}
	if fi, err := root.Lstat(name); err == nil {
		defer root.Chtimes(name, fi.ModTime(), fi.ModTime())
	}
	p := filepath.Join(name, cacheMarker)
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
		return fmt.Errorf("marking cache folder %s: %w", displayPath(root, name), err)
	}
	return nil
}

// makeTempFolder creates a new folder prefix+"~"+random in root, marked
// as the fetcher's, and returns its name.
func makeTempFolder(root *os.Root, prefix string) (string, error) {
	for range 10 {
		name := prefix + "~" + strconv.FormatUint(rand.Uint64(), 10)
		err := root.Mkdir(name, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("creating %s: %w", displayPath(root, name), err)
		}
		return name, markFolder(root, name)
	}
	return "", fmt.Errorf("creating %s~*: every name taken", displayPath(root, prefix))
}

// removeOwned removes the folder name of root with everything in it if it
// is the fetcher's ([ownedFolder]); a link, a file or a folder without the
// marker is left alone and reported as a [cacheRefusal].
func removeOwned(root *os.Root, name string) error {
	if !ownedFolder(root, name) {
		return refuse(displayPath(root, name), "is not a folder created by skilljack-mcp; it is left alone")
	}
	if err := root.RemoveAll(name); err != nil {
		return fmt.Errorf("removing %s: %w", displayPath(root, name), err)
	}
	return nil
}

// swapFolder replaces the folder dst of root by the folder staging: dst is
// renamed to trash, staging to dst, and trash removed. The caller has
// checked that dst, when it exists, is the fetcher's; what was renamed to
// trash is checked again (it may have been replaced since) and, when it is
// not the fetcher's, put back and refused. If the second rename fails the
// old dst is put back. A concurrent scan of dst may find it missing for
// the instant between the renames; the SourceSynced that follows rescans
// it. Both remote fetchers swap through it (a repository, a publisher's
// skill).
func swapFolder(root *os.Root, staging, dst, trash string) error {
	hadOld := true
	if err := root.Rename(dst, trash); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("moving %s aside: %w", displayPath(root, dst), err)
		}
		hadOld = false
	}
	if hadOld && !ownedFolder(root, trash) {
		if err := root.Rename(trash, dst); err != nil {
			return fmt.Errorf("putting back %s: %w", displayPath(root, dst), err)
		}
		return refuse(displayPath(root, dst), notOursReason)
	}
	if err := root.Rename(staging, dst); err != nil {
		if hadOld {
			root.Rename(trash, dst)
		}
		return fmt.Errorf("moving %s into place: %w", displayPath(root, dst), err)
	}
	if hadOld {
		root.RemoveAll(trash)
	}
	return nil
}

// writeFileAtomic writes b to name in root through a temporary file in
// the same folder and a rename, so a reader sees the old or the new
// content, never a part. The rename replaces a link by that name; it
// never writes through one.
func writeFileAtomic(root *os.Root, name string, b []byte) error {
	tmp := name + ".tmp" + strconv.FormatUint(rand.Uint64(), 36)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", displayPath(root, name), err)
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
		return fmt.Errorf("writing %s: %w", displayPath(root, name), err)
	}
	return nil
}

// openSubRoot opens the folder name of root, already checked by the
// caller, as a Root of its own, refusing it when it was replaced by
// something else in between.
func openSubRoot(root *os.Root, name string) (*os.Root, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("checking cache folder %s: %w", displayPath(root, name), err)
	}
	if err := checkFolderInfo(displayPath(root, name), fi); err != nil {
		return nil, err
	}
	sub, err := root.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("opening cache folder %s: %w", displayPath(root, name), err)
	}
	if sfi, err := sub.Stat("."); err != nil || !os.SameFile(fi, sfi) {
		sub.Close()
		return nil, refuse(displayPath(root, name), "was replaced while it was being opened")
	}
	return sub, nil
}

// regularFile reports whether name in root is a regular file (not a link).
func regularFile(root *os.Root, name string) bool {
	fi, err := root.Lstat(name)
	return err == nil && fi.Mode().IsRegular()
}

// entryNames lists the names in the folder dir of root, sorted; an
// unreadable folder lists nothing.
func entryNames(root *os.Root, dir string) []string {
	d, err := root.Open(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	slices.Sort(names)
	return names
}

// leftoverKind is what a crash leftover of a fetcher is.
type leftoverKind int

const (
	notLeftover    leftoverKind = iota
	leftoverFolder              // a staging or trash folder: removed when marked
	leftoverFile                // a download or temporary file: removed when regular
)

// removeLeftovers removes the crash leftovers in root older than
// staleAge, as kind classifies each name: a folder only when it is the
// fetcher's ([ownedFolder]), a file only when it is a regular file of this
// user. Anything else by such a name (a link, another user's entry, a
// folder without the marker) is left alone and reported through refused.
func removeLeftovers(root *os.Root, kind func(name string) leftoverKind, refused func(error)) {
	for _, name := range entryNames(root, ".") {
		k := kind(name)
		if k == notLeftover {
			continue
		}
		fi, err := root.Lstat(name)
		if err != nil || time.Since(fi.ModTime()) <= staleAge {
			continue
		}
		_, foreign := foreignOwner(fi)
		switch {
		case k == leftoverFile && fi.Mode().IsRegular() && !foreign:
			if err := root.Remove(name); err != nil {
				refused(fmt.Errorf("removing crash leftover %s: %w", displayPath(root, name), err))
			}
		case k == leftoverFolder:
			if err := removeOwned(root, name); err != nil {
				refused(err)
			}
		default:
			refused(refuse(displayPath(root, name), "is not a file created by skilljack-mcp; it is left alone"))
		}
	}
}
