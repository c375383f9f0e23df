//go:build unix

package skill

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/skilljack/skilljack-mcp/events"
)

// openFlags opens a file without blocking on a FIFO.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

// folderID returns the device and inode numbers of fi.
func folderID(fi fs.FileInfo) events.FolderID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return events.FolderID{}
	}
	return events.FolderID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}
