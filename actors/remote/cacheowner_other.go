//go:build !unix

package remote

import "io/fs"

// foreignOwner reports no foreign owner: outside Unix a folder's owner is
// not a uid, and the system's access control decides who may write.
func foreignOwner(fs.FileInfo) (uid int, foreign bool) { return 0, false }
