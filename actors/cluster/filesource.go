package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultFileCacheBytes is the default cap of a [FileSource]'s disk cache:
// the files served by a large organisation's catalog fit (10,000 skills of
// a few files of a few KiB each), and a replica's disk is rarely shorter.
const DefaultFileCacheBytes = 1 << 30

// ErrUnreachable is returned by [FileSource.Bytes] for a file it has not
// cached while NATS cannot be reached.
var ErrUnreachable = errors.New("cluster: NATS is unreachable")

// fetchTimeout bounds one object store read: a request must not hang on
// NATS being away.
const fetchTimeout = 10 * time.Second

// FileSource gives the facade file bytes by digest from the cluster's
// object store (issue 16; it implements mcpface.FileSource), each checked
// against its digest and kept in a disk cache, so a replica serves files
// it does not hold, and keeps serving those it has read while NATS is
// away. Safe for concurrent use.
type FileSource struct {
	// fixed at creation
	nc     *nats.Conn
	js     jetstream.JetStream
	bucket string
	dir    string // the cache folder; "" caches nothing
	max    int64
	log    *slog.Logger

	mu    sync.Mutex
	store jetstream.ObjectStore // opened on first use
	root  *os.Root              // the cache folder, opened on first use
	used  int64                 // bytes in the cache, once counted
	ready bool                  // used counted and root opened
}

// NewFileSource returns the file source of the cluster name over nc,
// caching up to max bytes (0: [DefaultFileCacheBytes]) in the folder dir,
// which it creates (mode 0700) when needed; dir "" caches nothing. It
// neither reads nor writes until the first [FileSource.Bytes].
func NewFileSource(nc *nats.Conn, name, dir string, max int64, log *slog.Logger) (*FileSource, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("opening JetStream: %w", err)
	}
	if max <= 0 {
		max = DefaultFileCacheBytes
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &FileSource{nc: nc, js: js, bucket: namesOf(name).blobs, dir: dir, max: max, log: log}, nil
}

// Bytes returns the size bytes named digest ("sha256:<hex>"): from the
// disk cache when it holds them intact, else from the object store, then
// cached. Bytes whose SHA-256 is not digest are never returned. While NATS
// is unreachable, a file not cached fails at once (an error wrapping
// [ErrUnreachable]) rather than waiting for it.
func (s *FileSource) Bytes(digest string, size int64) ([]byte, error) {
	name, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(name) != 64 || strings.Trim(name, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("not a sha256 digest: %q", digest)
	}
	if data := s.cached(name, digest, size); data != nil {
		return data, nil
	}
	if !s.nc.IsConnected() {
		return nil, fmt.Errorf("%w: %s is not cached here", ErrUnreachable, digest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	obj, err := s.objects(ctx)
	if err != nil {
		return nil, err
	}
	data, err := getBlob(ctx, obj, digest)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("object %s holds %d bytes, want %d", digest, len(data), size)
	}
	s.keep(name, data)
	return data, nil
}

// objects returns the object store, opened once.
func (s *FileSource) objects(ctx context.Context) (jetstream.ObjectStore, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store != nil {
		return s.store, nil
	}
	obj, err := s.js.ObjectStore(ctx, s.bucket)
	if err != nil {
		return nil, fmt.Errorf("opening the object store %s: %w", s.bucket, err)
	}
	s.store = obj
	return obj, nil
}

// cached returns the cached bytes of name when they are intact, else nil.
func (s *FileSource) cached(name, digest string, size int64) []byte {
	root := s.cacheRoot()
	if root == nil {
		return nil
	}
	data, err := root.ReadFile(name)
	if err != nil || int64(len(data)) != size || digestOf(data) != digest {
		return nil
	}
	return data
}

// cacheRoot opens the cache folder and counts what it holds, once; nil
// when there is no cache or it cannot be opened (then nothing is cached).
func (s *FileSource) cacheRoot() *os.Root {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready || s.dir == "" {
		return s.root
	}
	s.ready = true
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		s.log.Warn("cluster: file cache disabled", "dir", s.dir, "error", err)
		return nil
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		s.log.Warn("cluster: file cache disabled", "dir", s.dir, "error", err)
		return nil
	}
	s.root = root
	for _, e := range s.entries() {
		s.used += e.size
	}
	return root
}

// keep writes data to the cache as name, atomically (a temporary file
// renamed into place), evicting the files written longest ago when over
// the cap.
func (s *FileSource) keep(name string, data []byte) {
	root := s.cacheRoot()
	if root == nil || int64(len(data)) > s.max {
		return
	}
	var b [6]byte
	rand.Read(b[:])
	tmp := ".tmp-" + hex.EncodeToString(b[:])
	if err := root.WriteFile(tmp, data, 0o600); err != nil {
		s.log.Debug("cluster: caching a file", "error", err)
		root.Remove(tmp)
		return
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used += int64(len(data))
	if s.used > s.max {
		s.evict(name)
	}
}

// cacheEntry is one cached file.
type cacheEntry struct {
	name  string
	size  int64
	mtime time.Time
}

// entries lists the cached files: the files keep wrote (not temporary
// ones, nor anything else in the folder). s.root is set.
func (s *FileSource) entries() []cacheEntry {
	f, err := s.root.Open(".")
	if err != nil {
		return nil
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var out []cacheEntry
	for _, de := range des {
		// Only what keep writes: 64 hex digits, a regular file.
		if len(de.Name()) != 64 || strings.Trim(de.Name(), "0123456789abcdef") != "" || !de.Type().IsRegular() {
			continue
		}
		if fi, err := de.Info(); err == nil {
			out = append(out, cacheEntry{de.Name(), fi.Size(), fi.ModTime()})
		}
	}
	return out
}

// evict removes the cached files written longest ago, but never keep (the
// one just written), until the cache holds at most 90% of its cap (so
// that each eviction makes room for many files). s.mu is held.
func (s *FileSource) evict(keep string) {
	es := s.entries()
	slices.SortFunc(es, func(a, b cacheEntry) int { return a.mtime.Compare(b.mtime) })
	s.used = 0
	for _, e := range es {
		s.used += e.size
	}
	for _, e := range es {
		if s.used <= s.max/10*9 {
			break
		}
		if e.name == keep {
			continue
		}
		if err := s.root.Remove(e.name); err == nil {
			s.used -= e.size
		}
	}
}

// Close closes the cache folder.
func (s *FileSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.root != nil {
		return s.root.Close()
	}
	return nil
}
