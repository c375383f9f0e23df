//go:build !linux && !darwin

package hasher

import "io/fs"

// fileIdent reports that fi carries no inode and change time on this
// platform: the persistent digest cache is not used here (its entries
// could not be keyed by file identity).
func fileIdent(fs.FileInfo) (ino, dev uint64, ctime int64, ok bool) {
	return 0, 0, 0, false
}
