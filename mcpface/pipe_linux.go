package mcpface

import (
	"os"
	"syscall"
)

// The fcntl commands on a pipe's capacity (linux/fcntl.h: F_LINUX_SPECIFIC_BASE
// 1024 + 7 and + 8, the same on every architecture); package syscall does
// not name them, and golang.org/x/sys/unix is actors/watch's alone.
const (
	fSetPipeSz = 1031
	fGetPipeSz = 1032
)

// pipeFcntl runs fcntl(fd, cmd, arg) and returns its result.
func pipeFcntl(fd uintptr, cmd, arg int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), uintptr(arg))
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// pipeBytes is the capacity asked for a stdout pipe: Linux's default
// /proc/sys/fs/pipe-max-size, the most an unprivileged process may set.
// A skills/list page of 100 entries is 50–300 KB; in the default 64 KiB
// pipe one page takes the reader several wake-ups, each a hand-over
// between the two processes (tens of microseconds on a virtual machine).
const pipeBytes = 1 << 20

// growPipe raises the capacity of out to pipeBytes (or the most the system
// allows below it) when out is a pipe, so that a response is written in one
// go and the client wakes once per response. It returns the capacity, 0
// when out is no pipe or nothing could be changed; it never fails the
// connection.
func growPipe(out any) int {
	f, ok := out.(*os.File)
	if !ok {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return 0
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	got := 0
	_ = rc.Control(func(fd uintptr) {
		if n, err := pipeFcntl(fd, fGetPipeSz, 0); err == nil && n >= pipeBytes {
			return // already as large: never shrink
		}
		for size := pipeBytes; size >= 128<<10 && got == 0; size /= 2 {
			if n, err := pipeFcntl(fd, fSetPipeSz, size); err == nil {
				got = n
			}
		}
	})
	return got
}
