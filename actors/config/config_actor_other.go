//go:build !unix

package config

import "io/fs"

// fileInode is zero where there are no inode numbers: the stamp then rests
// on size, mode and mtime.
func fileInode(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
