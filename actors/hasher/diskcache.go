package hasher

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"
	"unsafe"

	"github.com/skilljack/skilljack-mcp/actors/remote"
)

// The persistent digest cache (issue 12 "No hashing on the way to
// initialize"): one file per source root in Options.CacheDir, named after a
// hash of the root's cache key, holding the digest, MIME type and text flag
// of every supporting file the last scan of that root described, each keyed
// by the file's identity: its path in the root, size, modification time,
// inode, device and change time. A restart with nothing changed then costs
// a stat walk: a file, SKILL.md included, is read again only when some
// part of its key differs (issue 12: the catalog builder keeps what it
// built of a SKILL.md, so its bytes are not needed again).
//
// An entry is written only when it is durable: the file's change time is
// older than the scan's start by more than [racySlack] (a later write
// always changes the key, even on a file system with coarse timestamps, as
// Git's "racily clean" rule), and the file opened for hashing was the very
// file the listing saw. The change time cannot be set by a user, so a file
// changed with its size and modification time restored still misses.
//
// The file is written atomically (a temporary file renamed over it, both
// through an [os.Root] on the folder, so never through a link) and read
// only as a regular file reached without a link ([skill.OpenFile]). It is
// safe to delete: a missing file means a first start, a corrupt one (its
// trailing SHA-256 does not match) is ignored with a warning, and either
// is rebuilt by the scan. Processes sharing the folder each write the
// entries of their own last scan; the last writer wins, and since every
// entry is keyed by file identity, any entry is true for its key whoever
// wrote it.

// racySlack is how much older than a scan's start a file's change time
// must be for its digest to be persisted: more than the coarsest timestamp
// granularity of common file systems (FAT: 2 s), and more than Linux's
// coarse clock tick. Tests lower it.
var racySlack = 2 * time.Second

// diskMagic starts a digest cache file; the digit is the format version.
const diskMagic = "skilljack-digests 1\n"

// diskCache reads and writes the persistent digest cache files in dir.
type diskCache struct {
	dir string
	log *slog.Logger

	refusedOnce sync.Once
}

// refused reports whether err is the refusal of the cache folder, logging
// the first one as a warning: digests are then kept in memory only.
func (d *diskCache) refused(err error) bool {
	if !errors.Is(err, remote.ErrRefused) {
		return false
	}
	d.refusedOnce.Do(func() {
		d.log.Warn("digest cache folder refused; digests are kept in memory only", "dir", d.dir, "error", err)
	})
	return true
}

// fileName names the cache file of rootKey.
func (d *diskCache) fileName(rootKey string) string {
	sum := sha256.Sum256([]byte(rootKey))
	return "digests-" + hex.EncodeToString(sum[:12]) + ".bin"
}

// load returns the entries persisted for rootKey, or nil (logged: a debug
// line for a missing file, a warning for an unreadable or corrupt one).
func (d *diskCache) load(rootKey string) map[string]cacheEntry {
	name := d.fileName(rootKey)
	data, err := remote.ReadPrivateFile(d.dir, name)
	if err != nil {
		if d.refused(err) {
			return nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			d.log.Debug("no digest cache yet; every file is hashed", "root", rootKey, "file", name)
		} else {
			d.log.Warn("digest cache unreadable; every file is hashed and the cache rebuilt", "root", rootKey, "file", name, "error", err)
		}
		return nil
	}
	m, err := decodeEntries(data, rootKey)
	if err != nil {
		d.log.Warn("digest cache corrupt; every file is hashed and the cache rebuilt", "root", rootKey, "file", name, "error", err)
		return nil
	}
	return m
}

// save replaces the cache file of rootKey with the durable entries of m.
func (d *diskCache) save(rootKey string, m map[string]cacheEntry) error {
	data := encodeEntries(m, rootKey)
	root, err := remote.OpenPrivateDir(d.dir, true)
	if d.refused(err) {
		return nil // warned once; the in-memory cache goes on
	}
	if err != nil {
		return err
	}
	defer root.Close()
	return remote.WriteFileAtomicMode(root, d.fileName(rootKey), data, 0o600)
}

// encodeEntries writes the durable entries of m: the magic, rootKey, the
// count, each entry (path, size, mtime, ctime, inode, device, digest,
// MIME type, text flag) and a SHA-256 of everything before it.
func encodeEntries(m map[string]cacheEntry, rootKey string) []byte {
	n := 0
	for _, e := range m {
		if e.durable && e.content == nil {
			n++
		}
	}
	buf := make([]byte, 0, len(diskMagic)+len(rootKey)+16+n*160)
	buf = append(buf, diskMagic...)
	buf = appendString(buf, rootKey)
	buf = binary.AppendUvarint(buf, uint64(n))
	for p, e := range m {
		if !e.durable || e.content != nil {
			continue
		}
		buf = appendString(buf, p)
		buf = binary.AppendVarint(buf, e.size)
		buf = binary.AppendVarint(buf, e.modTime.UnixNano())
		buf = binary.AppendVarint(buf, e.ctime)
		buf = binary.AppendUvarint(buf, e.ino)
		buf = binary.AppendUvarint(buf, e.dev)
		buf = appendString(buf, e.digest)
		buf = appendString(buf, e.mime)
		t := byte(0)
		if e.text {
			t = 1
		}
		buf = append(buf, t)
	}
	sum := sha256.Sum256(buf)
	return append(buf, sum[:]...)
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

var errCorrupt = errors.New("malformed digest cache file")

// decodeEntries reads what encodeEntries wrote for rootKey. Strings are
// cut from data itself, so an entry costs no allocation of its own and the
// file is not copied (6 MB at 10,000 skills); data must not be modified
// afterwards.
func decodeEntries(data []byte, rootKey string) (map[string]cacheEntry, error) {
	if len(data) < len(diskMagic)+sha256.Size || !bytes.HasPrefix(data, []byte(diskMagic)) {
		return nil, errCorrupt
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	rest := body[len(diskMagic):]
	d := decoder{s: unsafe.String(unsafe.SliceData(rest), len(rest))}
	if key := d.str(); key != rootKey {
		return nil, fmt.Errorf("%w: written for %q", errCorrupt, key)
	}
	n := d.uvarint()
	if d.bad || n > uint64(len(d.s)) {
		return nil, errCorrupt
	}
	m := make(map[string]cacheEntry, n)
	mimes := map[string]string{}
	for range n {
		p := d.str()
		e := cacheEntry{size: d.varint(), id: true, durable: true}
		e.modTime = time.Unix(0, d.varint())
		e.ctime = d.varint()
		e.ino = d.uvarint()
		e.dev = d.uvarint()
		e.digest = d.str()
		mime := d.str()
		if v, ok := mimes[mime]; ok {
			mime = v
		} else {
			mime = string([]byte(mime)) // not pinning the file's bytes
			mimes[mime] = mime
		}
		e.mime = mime
		e.text = d.byte() == 1
		if d.bad {
			return nil, errCorrupt
		}
		m[p] = e
	}
	if len(d.s) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes", errCorrupt)
	}
	return m, nil
}

// decoder reads the fields of a cache file; bad is set on the first
// malformed one, after which every read returns zero.
type decoder struct {
	s   string
	bad bool
}

func (d *decoder) uvarint() uint64 {
	var v uint64
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if i >= len(d.s) {
			break
		}
		b := d.s[i]
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			d.s = d.s[i+1:]
			return v
		}
	}
	d.bad = true
	d.s = ""
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.s)) {
		d.bad = true
		d.s = ""
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

func (d *decoder) byte() byte {
	if len(d.s) == 0 {
		d.bad = true
		return 0
	}
	b := d.s[0]
	d.s = d.s[1:]
	return b
}
