//go:build linux

package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// These tests pin what the inotify backend adds to the watcher's tests
// (watch_test.go): watches are released in the kernel when a registration
// stops, when their folder is deleted and when the watcher closes, and a
// folder shared by two registrations keeps its watch for the other one.

func newTestFSWatcher(t *testing.T) *fsWatcher {
	t.Helper()
	w := newFSWatcher()
	if w.err != nil {
		t.Fatal(w.err)
	}
	t.Cleanup(w.close)
	return w
}

func newTestReg() *registration {
	return &registration{ch: make(chan fsEvent, watchBuffer)}
}

// kernelWatches counts the watches the kernel holds for w's instance.
func kernelWatches(t *testing.T, w *fsWatcher) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", w.fd))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "inotify wd:")
}

func mkdirs(t *testing.T, root string, n int) {
	t.Helper()
	for i := range n {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprint(i), "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// waitEvent waits for an event on reg naming p with op o.
func waitEvent(t *testing.T, reg *registration, p string, o op) {
	t.Helper()
	timeout := time.After(watchTimeout)
	for {
		select {
		case ev := <-reg.ch:
			if ev.path == p && ev.op&o != 0 {
				return
			}
		case <-timeout:
			t.Fatalf("no event %v on %s within %v", o, p, watchTimeout)
		}
	}
}

// watchTimeout bounds every wait for an event.
const watchTimeout = 10 * time.Second

func TestFSWatcherStopReleasesWatches(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newTestFSWatcher(t)
	root := t.TempDir()
	mkdirs(t, root, 50)
	if err := os.MkdirAll(filepath.Join(root, ".git", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	reg := newTestReg()
	if err := w.watch(reg, root, true, opAll); err != nil {
		t.Fatal(err)
	}
	// root, 50 folders with a sub each; .git is not descended into.
	if got, want := kernelWatches(t, w), 101; got != want {
		t.Fatalf("kernel holds %d watches, want %d", got, want)
	}
	// Nor is a node_modules created later, unlike any other new folder.
	if err := os.MkdirAll(filepath.Join(root, "node_modules", "m"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := filepath.Join(root, "9", "new")
	if err := os.Mkdir(n, 0o755); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, reg, n, opCreate)
	if got, want := kernelWatches(t, w), 102; got != want {
		t.Fatalf("kernel holds %d watches after two new folders, want %d", got, want)
	}
	w.stop(reg)
	if got := kernelWatches(t, w); got != 0 {
		t.Errorf("kernel holds %d watches after stop, want 0", got)
	}
	if len(w.wds) != 0 || len(w.regs) != 0 {
		t.Errorf("after stop: %d watches, %d registrations kept, want none", len(w.wds), len(w.regs))
	}
	w.close()
}

func TestFSWatcherSharedFolder(t *testing.T) {
	w := newTestFSWatcher(t)
	root := t.TempDir()
	mkdirs(t, root, 3)
	a, b := newTestReg(), newTestReg()
	if err := w.watch(a, root, true, opAll); err != nil {
		t.Fatal(err)
	}
	if err := w.watch(b, filepath.Join(root, "1"), false, opCreate); err != nil {
		t.Fatal(err)
	}
	w.stop(a)
	if got := kernelWatches(t, w); got != 1 {
		t.Errorf("kernel holds %d watches after stopping the recursive watch, want 1 (the shared folder)", got)
	}
	f := filepath.Join(root, "1", "new")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, b, f, opCreate)
	if len(a.ch) != 0 {
		t.Errorf("stopped registration got %d events", len(a.ch))
	}
}

func TestFSWatcherFolderDeletedAndMoved(t *testing.T) {
	w := newTestFSWatcher(t)
	root := t.TempDir()
	mkdirs(t, root, 3)
	reg := newTestReg()
	if err := w.watch(reg, root, true, opAll); err != nil {
		t.Fatal(err)
	}
	// A folder moved within the tree is reported under its new name.
	moved := filepath.Join(root, "moved")
	if err := os.Rename(filepath.Join(root, "1"), moved); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, reg, moved, opCreate)
	f := filepath.Join(moved, "sub", "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, reg, f, opCreate)
	// A folder created below the root is watched before it is reported.
	n := filepath.Join(root, "new", "deep")
	if err := os.MkdirAll(n, 0o755); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, reg, filepath.Join(root, "new"), opCreate)
	f = filepath.Join(n, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, reg, f, opCreate)
	// A deleted folder's watches go with it.
	before := kernelWatches(t, w)
	if err := os.RemoveAll(filepath.Join(root, "0")); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, reg, filepath.Join(root, "0"), opRemove)
	deadline := time.Now().Add(watchTimeout)
	for {
		w.mu.Lock()
		kept := len(w.wds)
		w.mu.Unlock()
		if kept == before-2 && kernelWatches(t, w) == before-2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d watches kept, kernel holds %d, want %d after deleting a folder and its sub", kept, kernelWatches(t, w), before-2)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
