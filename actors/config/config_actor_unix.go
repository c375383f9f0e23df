//go:build unix

package config

import (
	"io/fs"
	"syscall"
)

// fileInode returns the device and inode numbers of fi, for the config
// actor's file stamp.
func fileInode(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
