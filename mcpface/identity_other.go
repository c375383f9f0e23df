//go:build !linux

package mcpface

import "io/fs"

// identityOf reports false: outside Linux readFile hashes every read.
func identityOf(fs.FileInfo) (fileIdentity, bool) { return fileIdentity{}, false }
