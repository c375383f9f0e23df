package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// StaleAge is how old a leftover staging folder, download or trash folder
// of a remote fetcher must be before it is removed: another skilljack
// process sharing the cache may be using a younger one.
const StaleAge = time.Hour

// TreeStamp summarises the folder dir of fsys as it is on disk: SHA-256
// over every entry's '/'-separated path, type, size and modification time
// (ns), in walk order, links not followed, the [Marker] at its top
// left out (adding it to a folder cached before it existed changes
// nothing). It also returns the bytes of the regular files. Cheap (no file
// is read); it changes when anything below dir is written, added, removed
// or renamed, so the remote fetchers can tell their cached copy from one
// changed by someone else. Errors: dir missing or unreadable.
func TreeStamp(fsys fs.FS, dir string) (stamp string, size int64, err error) {
	h := sha256.New()
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "."
		if p != dir {
			rel = strings.TrimPrefix(p, dir+"/")
		}
		if rel == Marker {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			size += fi.Size()
		}
		fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\n", rel, fi.Mode().Type(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}
