// Package archive extracts .tar.gz and .zip archives into an [os.Root]
// safely (WKAS-R20–R22, BR-22): entries are checked in archive order and
// the first hostile one fails the whole extraction — an absolute path, a
// ".." segment, a name that is not filepath.IsLocal, a symbolic or hard
// link, a device or other special file, more entries than the cap, two
// paths equal after case folding, or more unpacked bytes than the cap
// (counted on bytes actually written, not on headers). The caller extracts
// into an empty staging folder and swaps it in only on success; on failure
// the staging folder is the caller's to remove.
//
// It is a leaf package: it imports nothing else from this module. Only the
// standard library.
package archive
