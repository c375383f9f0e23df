//go:build darwin

package hasher

import (
	"io/fs"
	"syscall"
)

// fileIdent returns the inode, device and change time (ns) of fi, and
// whether fi carries them.
func fileIdent(fi fs.FileInfo) (ino, dev uint64, ctime int64, ok bool) {
	if id, ok := fi.Sys().(*fileID); ok { // a remembered stat ([statInfo])
		return id.ino, id.dev, id.ctime, true
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return st.Ino, uint64(st.Dev), st.Ctimespec.Nano(), true
}
