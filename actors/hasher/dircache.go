package hasher

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// dirCache is a file system that remembers what discovery read from a local
// source root: folder listings (with each entry's Info), Stat, Lstat and
// resolved symbolic links, keyed by slash path relative to the root. An
// incremental rescan first marks what a change may have touched
// ([dirCache.invalidate]) and then runs the very same discovery code as a
// full scan over it, so the rules of discovery cannot drift between the two;
// folders no change touched are answered from memory, without a system call.
// File contents are never cached: Open goes to disk.
//
// Invalidation is lazy, so that its cost follows the change, not the tree:
// every remembered answer carries the generation it was read in, each
// invalidate starts a new generation and records the paths it marks with
// it, and an answer read before a mark that concerns it is read again when
// asked for.
//
// A dirCache is not safe for concurrent use, except Open, read and lstat
// (which a [readAhead] uses to read folders ahead of a first walk, handing
// each result to ReadDir and Lstat). The hasher uses one per root, and
// scans of one root never overlap.
type dirCache struct {
	fsys fs.FS
	root string // absolute source root, as configured

	// gen is the current generation, advanced by each invalidate.
	gen    uint64
	dirs   map[string]dirResult
	stats  map[string]statResult
	lstats map[string]statResult
	reals  map[string]realResult
	// links holds the paths of the symbolic links seen. They are re-read on
	// every rescan: what they show depends on their target, which may sit
	// outside the root or under another path than the one reported.
	links map[string]bool
	// gone maps each path a change touched to the generation of its last
	// touch: what was read of it or below it before is stale. above does
	// the same for the folders above a touched path: what was read of the
	// folder itself (its stat, its resolved path) is stale, not what is
	// below it; relist for the folders whose listing is stale: the parent
	// of a touched path, and a folder further up whose listing lacks the
	// folder on the way (created with it and not reported).
	gone, above, relist map[string]uint64
	// touched lists the paths the last invalidate marked gone, relisted
	// the folders whose listing it marked stale.
	touched, relisted []string
	// ahead, while set, reads folders ahead of the walk (readahead.go).
	ahead *readAhead
}

// maxTouched bounds how many marks a dirCache records before a rescan
// starts over with an empty one (a full read of the root), so that the
// marks of a long session of edits (kept until the next whole rescan, the
// reconcile tick) stay a small map: a lookup costs the same whatever its
// size, a mark some 50 bytes. A `git checkout` of a few thousand files
// stays incremental.
const maxTouched = 1 << 15

type dirResult struct {
	ents []fs.DirEntry
	gen  uint64
}

type statResult struct {
	info fs.FileInfo
	err  error
	gen  uint64
}

type realResult struct {
	real string
	err  error
	gen  uint64
}

var (
	_ fs.ReadDirFS  = (*dirCache)(nil)
	_ fs.StatFS     = (*dirCache)(nil)
	_ fs.ReadLinkFS = (*dirCache)(nil)
)

func newDirCache(root string) *dirCache {
	return &dirCache{
		fsys:   os.DirFS(root),
		root:   root,
		gen:    1,
		dirs:   map[string]dirResult{},
		stats:  map[string]statResult{},
		lstats: map[string]statResult{},
		reals:  map[string]realResult{},
		links:  map[string]bool{},
		gone:   map[string]uint64{},
		above:  map[string]uint64{},
		relist: map[string]uint64{},
	}
}

// valid reports whether what was read of key in generation gen still
// holds: no change since touched key or a folder above it, nor (for a
// folder's stat) a path below it, nor (for a folder's listing, when
// listing is set) one of its entries.
func (c *dirCache) valid(key string, gen uint64, listing bool) bool {
	if gen == c.gen {
		return true
	}
	marks := c.above
	if listing {
		marks = c.relist
	}
	if g, ok := marks[key]; ok && g > gen {
		return false
	}
	for k := key; ; k = path.Dir(k) {
		if g, ok := c.gone[k]; ok && g > gen {
			return false
		}
		if k == "." {
			return true
		}
	}
}

// changed reports whether the last invalidate touched key, a folder above
// it or a path below it: what the scan before it read there may not hold.
func (c *dirCache) changed(key string) bool { return !c.valid(key, c.gen-1, false) }

// Open opens the file on disk; it is safe for concurrent use.
func (c *dirCache) Open(name string) (fs.File, error) { return c.fsys.Open(name) }

// ReadDir returns the listing of name, read once. A failed read is not
// remembered. What it keeps of each entry is compact ([cachedEntry]): at
// 10,000 skills the entries and stats os.DirFS gives took some 25 MB for
// as long as the hasher ran.
func (c *dirCache) ReadDir(name string) ([]fs.DirEntry, error) {
	if r, ok := c.dirs[name]; ok && c.valid(name, r.gen, true) {
		return r.ents, nil
	}
	out, ok := c.ahead.take(name, c.gen)
	if !ok {
		var err error
		if out, err = c.read(name); err != nil {
			return nil, err
		}
	}
	for _, e := range out {
		if e.Type()&fs.ModeSymlink != 0 {
			c.links[path.Join(name, e.Name())] = true
		}
	}
	c.dirs[name] = dirResult{out, c.gen}
	return out, nil
}

// read reads the listing of name from disk, as compact entries; it is safe
// for concurrent use (it touches none of c's maps).
func (c *dirCache) read(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(c.fsys, name)
	if err != nil {
		return nil, err
	}
	// The folder's path on disk, as os.DirFS opens it ("root/." for the
	// root): the parent of every entry's lstat, shared by them all.
	dir := c.root + string(os.PathSeparator) + filepath.FromSlash(name)
	if os.IsPathSeparator(c.root[len(c.root)-1]) {
		dir = c.root + filepath.FromSlash(name)
	}
	slab := make([]cachedEntry, len(ents))
	out := make([]fs.DirEntry, len(ents))
	for i, e := range ents {
		slab[i] = cachedEntry{dir: dir, name: e.Name(), typ: e.Type()}
		out[i] = &slab[i]
	}
	return out, nil
}

// Stat returns the (remembered) fs.Stat of name.
func (c *dirCache) Stat(name string) (fs.FileInfo, error) {
	if r, ok := c.stats[name]; ok && c.valid(name, r.gen, false) {
		return r.info, r.err
	}
	fi, err := fs.Stat(c.fsys, name)
	fi = compact(fi, "")
	c.stats[name] = statResult{fi, err, c.gen}
	return fi, err
}

// Lstat returns the (remembered) fs.Lstat of name.
func (c *dirCache) Lstat(name string) (fs.FileInfo, error) {
	if r, ok := c.lstats[name]; ok && c.valid(name, r.gen, false) {
		return r.info, r.err
	}
	fi, ok, err := c.ahead.lstat(name, c.gen)
	if !ok {
		fi, err = c.lstat(name)
	}
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		c.links[name] = true
	}
	c.lstats[name] = statResult{fi, err, c.gen}
	return fi, err
}

// lstat is the compact fs.Lstat of name; it is safe for concurrent use.
func (c *dirCache) lstat(name string) (fs.FileInfo, error) {
	fi, err := fs.Lstat(c.fsys, name)
	return compact(fi, ""), err
}

// ReadLink reads the link name; it is not remembered (discovery does not
// use it).
func (c *dirCache) ReadLink(name string) (string, error) { return fs.ReadLink(c.fsys, name) }

// resolver wraps resolve (a fs path to its real path) with the cache.
func (c *dirCache) resolver(resolve func(string) (string, error)) func(string) (string, error) {
	return func(p string) (string, error) {
		if r, ok := c.reals[p]; ok && c.valid(p, r.gen, false) {
			return r.real, r.err
		}
		real, err := resolve(p)
		c.reals[p] = realResult{real, err, c.gen}
		return real, err
	}
}

// invalidate starts a new generation in which everything a change of the
// absolute paths may have touched is read again, and returns those paths
// relative to the root ("." for the root itself); paths outside the root
// are ignored. For each path it marks the path itself, everything below it
// (a folder stands for its contents), the listing of its folder and the
// stat of every folder above it up to the root, and the listing of any of
// those that does not list the folder on the way (one created with it, as
// when only a new file is reported); it does the same for every symbolic
// link seen, whatever changed. The next scan reads those again; the rest
// is answered from memory. Its cost is that of the paths marked, not of
// what the cache holds. It reports false when the cache recorded so many
// marks that it should be replaced by an empty one.
func (c *dirCache) invalidate(paths []string) (map[string]bool, bool) {
	rels := map[string]bool{}
	rootReal := "" // resolved once a path is not below the root as configured
	for _, p := range paths {
		if rel, ok := relTo(c.root, p); ok {
			rels[rel] = true
			continue
		}
		if rootReal == "" {
			rootReal = c.root
			if r, err := filepath.EvalSymlinks(c.root); err == nil {
				rootReal = r
			}
		}
		if rel, ok := relTo(rootReal, p); ok {
			rels[rel] = true
		}
	}
	// Which listings lack the folder on the way is decided on what the
	// cache holds before this generation's marks.
	lacks := func(dir, name string) bool {
		r, ok := c.dirs[dir]
		if !ok || !c.valid(dir, r.gen, true) {
			return false // not listed: read anyway when asked for
		}
		i, found := slices.BinarySearchFunc(r.ents, name, func(e fs.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
		return !found || !r.ents[i].IsDir()
	}
	var relist []string
	for p := range rels {
		if p == "." {
			continue
		}
		relist = append(relist, path.Dir(p))
		for child, d := path.Dir(p), path.Dir(path.Dir(p)); child != "."; child, d = d, path.Dir(d) {
			if lacks(d, path.Base(child)) {
				relist = append(relist, d)
			}
		}
	}
	for p := range c.links {
		if p != "." {
			relist = append(relist, path.Dir(p))
		}
	}
	c.gen++
	c.touched = c.touched[:0]
	mark := func(p string) {
		c.gone[p] = c.gen
		c.touched = append(c.touched, p)
		for d := p; d != "."; {
			d = path.Dir(d)
			if c.above[d] == c.gen {
				break
			}
			c.above[d] = c.gen
		}
	}
	for p := range rels {
		mark(p)
	}
	for p := range c.links {
		mark(p)
	}
	for _, d := range relist {
		c.relist[d] = c.gen
	}
	c.relisted = relist
	if len(c.links) > 0 {
		c.links = map[string]bool{}
	}
	return rels, len(c.gone)+len(c.above)+len(c.relist) <= maxTouched
}

// relTo returns the slash path of the absolute path p relative to root, and
// whether p is root or below it.
func relTo(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if strings.HasPrefix(rel, "../") || rel == ".." {
		return "", false
	}
	return rel, true
}

// cachedEntry is one remembered entry of a folder listing: its name and
// type, and its Info (an lstat, as os.DirFS's entries make it) once asked
// for, kept compact ([statInfo]). The entries of one listing share one
// allocation and the folder's path.
type cachedEntry struct {
	dir  string // the folder's path on disk
	name string
	typ  fs.FileMode
	done bool
	info fs.FileInfo
	err  error
}

func (e *cachedEntry) Name() string               { return e.name }
func (e *cachedEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *cachedEntry) Type() fs.FileMode          { return e.typ }
func (e *cachedEntry) String() string             { return fs.FormatDirEntry(e) }
func (e *cachedEntry) Info() (fs.FileInfo, error) { e.stat(); return e.info, e.err }

func (e *cachedEntry) stat() {
	if e.done {
		return
	}
	e.done = true
	fi, err := os.Lstat(e.dir + "/" + e.name) // as os's own entries do
	if err != nil {
		e.err = err
		return
	}
	e.info = compact(fi, e.name)
}

// statInfo is a compact [fs.FileInfo]: what discovery and the digest cache
// read of a stat (name, size, mode, modification time and the identity
// [fileIdent] gives), some 100 bytes where an os one holds the whole
// system stat buffer and, through its name, the full path it was made
// from. Its Sys is a *fileID.
type statInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	id    fileID
}

// fileID is what [fileIdent] gives of a file: its inode and device
// numbers and change time (ns).
type fileID struct {
	ino, dev uint64
	ctime    int64
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.size }
func (i *statInfo) Mode() fs.FileMode  { return i.mode }
func (i *statInfo) ModTime() time.Time { return i.mtime }
func (i *statInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *statInfo) Sys() any           { return &i.id }

// compact returns fi as a [statInfo] named name (fi's own name when
// empty), or fi itself when it is nil or carries no identity on this
// platform (kept whole there: nothing else of it may be left out).
func compact(fi fs.FileInfo, name string) fs.FileInfo {
	if fi == nil {
		return nil
	}
	ino, dev, ctime, ok := fileIdent(fi)
	if !ok {
		return fi
	}
	if name == "" {
		name = strings.Clone(fi.Name()) // not a piece of the path stat'ed
	}
	return &statInfo{name: name, size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime(), id: fileID{ino: ino, dev: dev, ctime: ctime}}
}
