package skill

import (
	"io/fs"

	"github.com/skilljack/skilljack-mcp/events"
)

// IdentifyInfo is [Identify] from an Lstat of the folder already made
// (by a scan that remembers what it read, so that a rescan of a
// 10,000-skill tree does not stat every unchanged folder again): fi must be
// the Lstat of the real path dir. It returns an error wrapping
// [ErrFolderChanged] when fi is not a folder.
func IdentifyInfo(fi fs.FileInfo, dir string) (events.FolderID, error) {
	if !fi.IsDir() {
		return events.FolderID{}, changed(dir)
	}
	return folderID(fi), nil
}
