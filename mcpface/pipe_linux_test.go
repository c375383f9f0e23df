package mcpface

import (
	"os"
	"testing"
)

// pipeSize returns the capacity of the pipe f is an end of.
func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	n, err := pipeFcntl(f.Fd(), fGetPipeSz, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A stdout pipe is grown so that a skills/list page is written in one go;
// anything else is left alone.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before := pipeSize(t, w)
	got := growPipe(w)
	if got <= before || pipeSize(t, w) != got {
		t.Fatalf("growPipe = %d, capacity %d → %d; want it raised", got, before, pipeSize(t, w))
	}
	if got2 := growPipe(w); got >= pipeBytes && got2 != 0 || pipeSize(t, w) != got {
		t.Errorf("second growPipe = %d, capacity %d; want 0 and %d unchanged", got2, pipeSize(t, w), got)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := growPipe(f); n != 0 {
		t.Errorf("growPipe(regular file) = %d, want 0", n)
	}
	if n := growPipe(struct{}{}); n != 0 {
		t.Errorf("growPipe(non-file) = %d, want 0", n)
	}
}
