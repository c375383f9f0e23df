//go:build linux

package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/skilljack/skilljack-mcp/actors/skill"
)

// fsWatcher is the file system watcher of one [Watcher.Run] on Linux: one
// inotify instance, its watches and the goroutine that reads it.
//
// It replaces rjeczalik/notify on Linux, whose inotify backend finds the
// watch of a path by scanning every watch of the process (notify v0.9.3
// inotify.Unwatch), so that stopping a recursive watch of n folders costs
// O(n²): 6–7 s of CPU for a 10,000-skill root (26,668 folders), at every
// exit and every root removal (BenchmarkWatchStop, BenchmarkWatchRemoveRoot).
// Here each registration knows its watches, stopping one costs one
// inotify_rm_watch per folder, and closing the instance at exit drops all of
// them at once in the kernel.
//
// It keeps notify's semantics, which the watcher was built on: a recursive
// watch follows folders created or moved in below it, event paths have
// symbolic links resolved, and sends never block (an event that does not fit
// in a registration's channel is dropped; the drain notices the full
// channel). In addition, a queue overflow of the kernel is passed on as an
// overflow event, which makes the watcher rescan.
type fsWatcher struct {
	file *os.File // the inotify instance; nil if it could not be created
	err  error    // why file is nil
	fd   int
	wg   sync.WaitGroup // the read goroutine

	mu   sync.Mutex
	wds  map[int32]*dirWatch
	regs map[*registration]map[*dirWatch]struct{}
}

// dirWatch is one inotify watch: a folder and what each registration wants
// of it.
type dirWatch struct {
	wd   int32
	path string // symbolic links resolved
	mask uint32 // as installed
	subs map[*registration]sub
}

// sub is what one registration watches of a folder.
type sub struct {
	ops       op
	recursive bool // follow folders created in it
}

// inotifyBuffer holds at least one event with the longest name; 64 of them
// keep the read syscalls few during bursts.
const inotifyBuffer = 64 * (unix.SizeofInotifyEvent + unix.NAME_MAX + 1)

func newFSWatcher() *fsWatcher {
	w := &fsWatcher{wds: map[int32]*dirWatch{}, regs: map[*registration]map[*dirWatch]struct{}{}}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		w.err = os.NewSyscallError("inotify_init1", err)
		return w
	}
	// A non-blocking descriptor goes to the runtime poller: Read waits
	// without holding a thread, and Close ends a waiting Read.
	w.fd, w.file = fd, os.NewFile(uintptr(fd), "inotify")
	w.wg.Go(w.read)
	return w
}

// close drops every watch and waits for the read goroutine: nothing is sent
// on any registration's channel after it returns.
func (w *fsWatcher) close() {
	if w.file != nil {
		w.file.Close()
	}
	w.wg.Wait()
}

// watch watches path (symbolic links resolved) for reg: with recursive,
// every folder below it too, now and as they are created.
func (w *fsWatcher) watch(reg *registration, path string, recursive bool, ops op) error {
	if w.file == nil {
		return w.err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := sub{ops: ops, recursive: recursive}
	if !recursive {
		return w.add(reg, real, s)
	}
	return w.addTree(reg, real, s, true)
}

// addTree watches dir and every folder below it but those never served
// (.git, node_modules), whose events the watcher drops anyway. With strict,
// like notify's recursive watch, it fails when a folder cannot be read or
// watched; otherwise it skips that folder.
func (w *fsWatcher) addTree(reg *registration, dir string, s sub, strict bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if strict {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && skill.Noisy(d.Name()) {
			return filepath.SkipDir
		}
		if err := w.add(reg, p, s); err != nil {
			if strict {
				return err
			}
			return filepath.SkipDir
		}
		return nil
	})
}

// add watches the folder p for reg. Called with mu held.
func (w *fsWatcher) add(reg *registration, p string, s sub) error {
	// IN_MASK_ADD leaves what other registrations asked of the same folder.
	wd, err := unix.InotifyAddWatch(w.fd, p, maskOf(s)|unix.IN_MASK_ADD|unix.IN_ONLYDIR)
	if err != nil {
		return &fs.PathError{Op: "inotify_add_watch", Path: p, Err: err}
	}
	dw := w.wds[int32(wd)]
	if dw == nil {
		dw = &dirWatch{wd: int32(wd), subs: map[*registration]sub{}}
		w.wds[dw.wd] = dw
	}
	// The same folder may come under a new name (moved within a watched
	// tree): the latest name is where it is now.
	dw.path = p
	old := dw.subs[reg]
	dw.subs[reg] = sub{ops: old.ops | s.ops, recursive: old.recursive || s.recursive}
	dw.mask |= maskOf(s)
	set := w.regs[reg]
	if set == nil {
		set = map[*dirWatch]struct{}{}
		w.regs[reg] = set
	}
	set[dw] = struct{}{}
	return nil
}

// stop ends every watch of reg: nothing is sent on its channel after stop
// returns. It costs one inotify_rm_watch per folder only reg watched.
func (w *fsWatcher) stop(reg *registration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for dw := range w.regs[reg] {
		delete(dw.subs, reg)
		if len(dw.subs) == 0 {
			// EINVAL: the kernel dropped the watch already (folder deleted).
			unix.InotifyRmWatch(w.fd, uint32(dw.wd))
			delete(w.wds, dw.wd)
			continue
		}
		var mask uint32
		for _, s := range dw.subs {
			mask |= maskOf(s)
		}
		if mask != dw.mask {
			if _, err := unix.InotifyAddWatch(w.fd, dw.path, mask|unix.IN_ONLYDIR); err == nil {
				dw.mask = mask
			}
		}
	}
	delete(w.regs, reg)
}

// maskOf returns the inotify events s needs: a recursive watch needs
// folders created or moved in, to watch them too.
func maskOf(s sub) uint32 {
	var m uint32
	if s.ops&opCreate != 0 || s.recursive {
		m |= unix.IN_CREATE | unix.IN_MOVED_TO
	}
	if s.ops&opRemove != 0 {
		m |= unix.IN_DELETE | unix.IN_DELETE_SELF
	}
	if s.ops&opWrite != 0 {
		m |= unix.IN_MODIFY
	}
	if s.ops&opRename != 0 {
		m |= unix.IN_MOVED_FROM | unix.IN_MOVE_SELF
	}
	return m
}

// opOf maps an inotify event to the watcher's operation, as notify does.
func opOf(mask uint32) op {
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		return opCreate
	case mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0:
		return opRemove
	case mask&unix.IN_MODIFY != 0:
		return opWrite
	case mask&(unix.IN_MOVED_FROM|unix.IN_MOVE_SELF) != 0:
		return opRename
	}
	return 0
}

// read reads the inotify instance until it is closed.
func (w *fsWatcher) read() {
	buf := make([]byte, inotifyBuffer)
	for {
		n, err := w.file.Read(buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return // closed
		}
		w.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			off += unix.SizeofInotifyEvent
			name := ""
			if ev.Len > 0 {
				end := min(off+int(ev.Len), n)
				name = string(trimNUL(buf[off:end]))
				off = end
			}
			w.handle(ev.Wd, ev.Mask, name)
		}
		w.mu.Unlock()
	}
}

func trimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// handle dispatches one inotify event. Called with mu held.
func (w *fsWatcher) handle(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		for reg := range w.regs {
			send(reg, fsEvent{overflow: true})
		}
		return
	}
	dw := w.wds[wd]
	if dw == nil {
		return // stopped meanwhile
	}
	if mask&unix.IN_IGNORED != 0 {
		// The folder is gone (or its file system unmounted): so is its watch.
		for reg := range dw.subs {
			delete(w.regs[reg], dw)
		}
		delete(w.wds, wd)
		return
	}
	p := dw.path
	if name != "" {
		p = filepath.Join(dw.path, name)
	}
	if mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 && !skill.Noisy(name) {
		// Watch a new folder before reporting it, so that whatever the
		// watcher's walk of it misses is reported.
		for reg, s := range dw.subs {
			if s.recursive {
				w.addTree(reg, p, s, false)
			}
		}
	}
	o := opOf(mask)
	for reg, s := range dw.subs {
		if s.ops&o != 0 {
			send(reg, fsEvent{path: p, op: o})
		}
	}
}
