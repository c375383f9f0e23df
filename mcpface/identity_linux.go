package mcpface

import (
	"io/fs"
	"syscall"
	"time"
)

// identityOf returns the identity of the file fi describes (device, inode,
// size, modification and change time), and false when fi carries no
// system data.
func identityOf(fi fs.FileInfo) (fileIdentity, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileIdentity{}, false
	}
	return fileIdentity{
		dev:   uint64(st.Dev),
		ino:   uint64(st.Ino),
		size:  fi.Size(),
		mtime: fi.ModTime().UnixNano(),
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)).UnixNano(),
	}, true
}
