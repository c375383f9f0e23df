//go:build unix

package remote

import (
	"io/fs"
	"os"
	"syscall"
)

// foreignOwner reports the owner of fi and whether it is another user than
// the one running the server.
func foreignOwner(fi fs.FileInfo) (uid int, foreign bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), int(st.Uid) != os.Getuid()
}
