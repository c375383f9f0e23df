// Package archive will hold safe tar.gz and zip extraction into an os.Root
// for remote sources: no links, no traversal, size and entry caps. It is a
// leaf package: it imports nothing else from this module.
//
// It is empty until remote sources land.
package archive
