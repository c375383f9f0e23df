package remotetest

import (
	"syscall"
	"time"
	"unsafe"
)

// AT_FDCWD (-100) and AT_SYMLINK_NOFOLLOW, which package syscall does not
// export on every Linux architecture.
const (
	atFDCWD           = ^uintptr(99)
	atSymlinkNoFollow = 0x100
)

// lchtimes sets the modification time of name itself, not of what a link
// points at (os.Chtimes follows links), so a test can age a link.
func lchtimes(name string, mtime time.Time) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	ts := [2]syscall.Timespec{syscall.NsecToTimespec(mtime.UnixNano()), syscall.NsecToTimespec(mtime.UnixNano())}
	_, _, errno := syscall.Syscall6(syscall.SYS_UTIMENSAT, atFDCWD, uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&ts[0])), atSymlinkNoFollow, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
