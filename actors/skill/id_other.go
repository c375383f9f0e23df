//go:build !unix

package skill

import (
	"io/fs"
	"os"

	"github.com/skilljack/skilljack-mcp/events"
)

// openFlags opens a file for reading.
const openFlags = os.O_RDONLY

// folderID returns the zero FolderID: this platform's FileInfo carries no
// inode numbers, so [OpenDir] relies on os.SameFile against its own Lstat.
func folderID(fs.FileInfo) events.FolderID { return events.FolderID{} }
