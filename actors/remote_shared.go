package actors

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// staleAge is how old a leftover staging folder, download or trash folder
// of a remote fetcher must be before it is removed: another skilljack
// process sharing the cache may be using a younger one.
const staleAge = time.Hour

// newerConfig decodes a sources.configured message, acking it once
// ([events.Handle]), and reports whether it is newer than the configuration
// of sequence number seq. A message that cannot be decoded is logged and
// reported as not newer.
func newerConfig(log *slog.Logger, msg *message.Message, seq uint64) (events.SourcesConfigured, bool) {
	var ev events.SourcesConfigured
	err := events.Handle(log, msg, func(m *message.Message) error {
		var err error
		ev, err = events.Decode[events.SourcesConfigured](m)
		return err
	})
	return ev, err == nil && ev.Seq > seq
}

// treeStamp summarises the folder dir of fsys as it is on disk: SHA-256
// over every entry's '/'-separated path, type, size and modification time
// (ns), in walk order, links not followed, the [cacheMarker] at its top
// left out (adding it to a folder cached before it existed changes
// nothing). It also returns the bytes of the regular files. Cheap (no file
// is read); it changes when anything below dir is written, added, removed
// or renamed, so the remote fetchers can tell their cached copy from one
// changed by someone else. Errors: dir missing or unreadable.
func treeStamp(fsys fs.FS, dir string) (stamp string, size int64, err error) {
	h := sha256.New()
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "."
		if p != dir {
			rel = strings.TrimPrefix(p, dir+"/")
		}
		if rel == cacheMarker {
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
