package actors

import (
	"embed"
	"io/fs"
)

// bundledFiles holds the skills shipped inside the binary.
//
//go:embed bundled
var bundledFiles embed.FS

// Bundled returns the read-only file system of the skills embedded in the
// binary; its root holds one folder per skill (skilljack-docs/). Pass it as
// [hasher.Options.Bundled]. It is safe for concurrent use.
func Bundled() fs.FS {
	sub, err := fs.Sub(bundledFiles, "bundled")
	if err != nil {
		panic("actors.Bundled: " + err.Error()) // the directory is embedded at build time
	}
	return sub
}
