package remote

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/skilljack/skilljack-mcp/actors/skill"
)

// OpenPrivateDir opens the cache folder dir (the digest cache's, the
// persisted catalog's) as an [os.Root], creating it 0700 when create is set
// and it is missing. A link, a file or another user's folder is refused
// ([CheckFolder]: the error wraps [ErrRefused]), and so is a folder
// replaced between the check and the open.
func OpenPrivateDir(dir string, create bool) (*os.Root, error) {
	fi, err := os.Lstat(dir)
	if create && errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckFolder(dir, fi); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if rfi, err := root.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		root.Close()
		return nil, Refuse(dir, "was replaced while it was being opened")
	}
	return root, nil
}

// ReadPrivateFile returns the bytes of the regular file name in the cache
// folder dir, opened through [OpenPrivateDir] and never through a link
// ([skill.OpenFile]).
func ReadPrivateFile(dir, name string) ([]byte, error) {
	root, err := OpenPrivateDir(dir, false)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, fi, err := skill.OpenFile(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}
