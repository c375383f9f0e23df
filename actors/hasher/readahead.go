package hasher

import (
	"context"
	"io/fs"
	"path"
	"runtime"
	"sync"

	"github.com/skilljack/skilljack-mcp/actors/skill"
)

// readAhead lists the folders of a walk through a fresh [dirCache] ahead of
// the walk, on the cores the walk leaves idle (issue 12: a first start
// walks 27,000 folders at 10,000 skills, one system call after the other,
// before its first initialize is answered). It reads what discovery would
// read of each folder — its listing and, inside a skill folder, the lstat
// of every file and of the folder itself — and hands each result to the
// dirCache when the walk asks for it, so that the walk itself and the rules
// of discovery stay as they are: a folder is read once, by a worker or by
// the walk, whichever claims it first; the walk waits for a folder a worker
// is reading. It reads nothing the walk would not (it descends as
// [skill.Descend] says and no deeper than discovery and the manifests go,
// never through a symbolic link), and everything it reads is read after
// the scan's start, as the walk's own reads are (see racySlack).
type readAhead struct {
	c      *dirCache
	gen    uint64 // the dirCache's generation it reads for
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	cond   *sync.Cond
	dirs   map[string]*aheadDir // by slash path relative to the root
	jobs   []aheadJob
	active int
}

// aheadDir is one folder claimed by a read-ahead worker (or, with walk
// set, by the walk). done is closed once ents and err hold its listing and,
// when self is set, selfInfo and selfErr its lstat.
type aheadDir struct {
	done     chan struct{}
	walk     bool
	ents     []fs.DirEntry
	err      error
	self     bool
	selfInfo fs.FileInfo
	selfErr  error
}

// aheadJob is a folder to read, depth folders below the root.
type aheadJob struct {
	name  string
	depth int
}

// aheadDepth bounds how deep below the root the read-ahead goes: a skill
// folder as deep as discovery looks, and its manifest as deep as it goes.
const aheadDepth = maxDiscoveryDepth + maxManifestDepth

// startReadAhead starts reading c ahead of a walk, with one worker fewer
// than there are cores (one at least): the walk is the other. Stop it
// ([readAhead.stop]) once the walk is done.
func startReadAhead(ctx context.Context, c *dirCache) *readAhead {
	a := &readAhead{c: c, gen: c.gen, dirs: map[string]*aheadDir{}}
	a.ctx, a.cancel = context.WithCancel(ctx)
	a.cond = sync.NewCond(&a.mu)
	// The root first, before the walk can claim it: its listing is what
	// the workers share out.
	a.tree(".", 0, false)
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		a.wg.Go(a.work)
	}
	c.ahead = a
	return a
}

// stop ends the read-ahead and detaches it from its dirCache; what was
// read and not asked for is dropped.
func (a *readAhead) stop() {
	a.cancel()
	a.mu.Lock()
	a.cond.Broadcast()
	a.mu.Unlock()
	a.wg.Wait()
	a.c.ahead = nil
}

// work reads the queued folders until there are none left and no other
// worker could queue more, or the read-ahead is stopped.
func (a *readAhead) work() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		for len(a.jobs) == 0 && a.active > 0 && a.ctx.Err() == nil {
			a.cond.Wait()
		}
		if len(a.jobs) == 0 || a.ctx.Err() != nil {
			a.cond.Broadcast()
			return
		}
		// From the back: the walk goes from the front, so that the two
		// meet once, in the middle, rather than wait for each other at
		// every folder.
		j := a.jobs[len(a.jobs)-1]
		a.jobs = a.jobs[:len(a.jobs)-1]
		a.active++
		a.mu.Unlock()
		a.tree(j.name, j.depth, false)
		a.mu.Lock()
		a.active--
		a.cond.Broadcast()
	}
}

// claim returns the aheadDir of name and whether the caller claimed it
// now (it is then the one to read it); walk says who claims.
func (a *readAhead) claim(name string, walk bool) (*aheadDir, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d := a.dirs[name]; d != nil {
		return d, false
	}
	d := &aheadDir{done: make(chan struct{}), walk: walk}
	if walk {
		close(d.done) // the walk reads it itself: no one waits for it
	}
	a.dirs[name] = d
	return d, true
}

// tree reads the folder name, depth folders below the root, unless it is
// claimed already, then the folders below it: a skill folder's subfolders
// at once (the walk lists them right after it), any other folder's as
// queued jobs, so that the workers share the skill folders of a collection.
func (a *readAhead) tree(name string, depth int, inSkill bool) {
	if a.ctx.Err() != nil {
		return
	}
	d, mine := a.claim(name, false)
	if !mine {
		return
	}
	ents, err := a.c.read(name)
	if err == nil && !inSkill && skill.FindMD(ents) != nil {
		inSkill = true
	}
	if err == nil && inSkill {
		// What the walk asks of a skill folder: its identity (an lstat
		// of the folder) and the lstat of every file it lists.
		d.self = true
		d.selfInfo, d.selfErr = a.c.lstat(name)
		for _, e := range ents {
			if ce, ok := e.(*cachedEntry); ok && ce.typ.IsRegular() && !skill.Excluded(ce.name) {
				ce.stat()
			}
		}
	}
	d.ents, d.err = ents, err
	close(d.done)
	if err != nil || depth >= aheadDepth {
		return
	}
	var queued []aheadJob
	for _, e := range ents {
		if !e.IsDir() || !skill.Descend(e.Name(), inSkill) {
			continue
		}
		child := path.Join(name, e.Name())
		if inSkill {
			a.tree(child, depth+1, true)
		} else {
			queued = append(queued, aheadJob{name: child, depth: depth + 1})
		}
	}
	if len(queued) > 0 {
		a.mu.Lock()
		a.jobs = append(a.jobs, queued...)
		a.cond.Broadcast()
		a.mu.Unlock()
	}
}

// take returns the listing of name a worker read, waiting for a worker
// still reading it, and reports whether there was one; otherwise it claims
// name for the walk, which reads it itself. gen is the dirCache's current
// generation: a read-ahead of another one has nothing to give.
func (a *readAhead) take(name string, gen uint64) ([]fs.DirEntry, bool) {
	if a == nil || gen != a.gen {
		return nil, false
	}
	d, mine := a.claim(name, true)
	if mine || d.walk {
		return nil, false
	}
	<-d.done
	return d.ents, d.err == nil
}

// lstat returns the lstat of the folder name a worker made, and whether
// there is one, as take does its listing.
func (a *readAhead) lstat(name string, gen uint64) (fi fs.FileInfo, ok bool, err error) {
	if a == nil || gen != a.gen {
		return nil, false, nil
	}
	a.mu.Lock()
	d := a.dirs[name]
	a.mu.Unlock()
	if d == nil || d.walk {
		return nil, false, nil
	}
	<-d.done
	return d.selfInfo, d.self, d.selfErr
}
