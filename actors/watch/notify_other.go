//go:build !linux

package watch

import (
	"sync"

	"github.com/rjeczalik/notify"
)

// fsWatcher is the file system watcher of one [Watcher.Run] outside Linux:
// github.com/rjeczalik/notify, whose backends there (FSEvents,
// ReadDirectoryChangesW, kqueue) do not share the O(n²) stop of its inotify
// backend (see inotify_linux.go). notify's watch tree is process-global;
// each registration gets a notify channel of its own, forwarded to the
// registration's channel by one goroutine.
type fsWatcher struct {
	wg   sync.WaitGroup // forwarding goroutines
	mu   sync.Mutex
	regs map[*registration]*notifyReg
}

type notifyReg struct {
	ch     chan notify.EventInfo
	done   chan struct{} // closed by stop: ends forward
	exited chan struct{} // closed by forward as it returns
}

func newFSWatcher() *fsWatcher {
	return &fsWatcher{regs: map[*registration]*notifyReg{}}
}

// watch watches path for reg, with recursive every folder below it too.
func (w *fsWatcher) watch(reg *registration, path string, recursive bool, ops op) error {
	w.mu.Lock()
	nr := w.regs[reg]
	if nr == nil {
		nr = &notifyReg{ch: make(chan notify.EventInfo, watchBuffer), done: make(chan struct{}), exited: make(chan struct{})}
		w.regs[reg] = nr
		w.wg.Go(func() { forward(nr, reg) })
	}
	w.mu.Unlock()
	if recursive {
		path += "/..."
	}
	var es notify.Event
	for o, e := range map[op]notify.Event{opCreate: notify.Create, opRemove: notify.Remove, opWrite: notify.Write, opRename: notify.Rename} {
		if ops&o != 0 {
			es |= e
		}
	}
	return notify.Watch(path, nr.ch, es)
}

// forward moves notify's events to reg's channel until stopped.
func forward(nr *notifyReg, reg *registration) {
	defer close(nr.exited)
	for {
		select {
		case <-nr.done:
			return
		case ei := <-nr.ch:
			var o op
			switch e := ei.Event(); {
			case e&notify.Create != 0:
				o = opCreate
			case e&notify.Remove != 0:
				o = opRemove
			case e&notify.Write != 0:
				o = opWrite
			case e&notify.Rename != 0:
				o = opRename
			}
			send(reg, fsEvent{path: ei.Path(), op: o})
		}
	}
}

// stop ends every watch of reg: nothing is sent on its channel after stop
// returns.
func (w *fsWatcher) stop(reg *registration) {
	w.mu.Lock()
	nr := w.regs[reg]
	delete(w.regs, reg)
	w.mu.Unlock()
	if nr == nil {
		return
	}
	notify.Stop(nr.ch)
	close(nr.done)
	<-nr.exited
}

// close stops every registration and waits for the forwarding goroutines.
func (w *fsWatcher) close() {
	w.mu.Lock()
	regs := make([]*registration, 0, len(w.regs))
	for reg := range w.regs {
		regs = append(regs, reg)
	}
	w.mu.Unlock()
	for _, reg := range regs {
		w.stop(reg)
	}
	w.wg.Wait()
}
