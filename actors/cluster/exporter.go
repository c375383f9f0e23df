package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go/jetstream"
	json "github.com/segmentio/encoding/json"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// ErrFenced is returned by [Exporter.Run] when the pointer stream refused
// its publish: another leader has claimed the cluster since this one was
// elected, so this one must stop producing at once.
var ErrFenced = errors.New("cluster: pointer publish refused: another leader has taken over")

// listWithin bounds listing the object store when a leader claims the
// cluster: nats.go's ObjectStore.List has no deadline of its own and
// waits forever for its last entry when its stream was created between
// its two requests (a NATS that lost its storage, re-created by another
// replica). A claim that fails steps the leader down; its campaign takes
// the lease again.
const listWithin = 10 * time.Second

// retryExport is the pause before exporting again a catalog whose export
// failed (NATS unreachable, a file changed while uploading).
const retryExport = time.Second

// Exporter publishes the leader's catalogs to the cluster (issue 16): file
// bytes to the object store, the catalog snapshot's blobs to the snapshot
// bucket, then a fenced [Pointer]. It runs for one term; [Node] creates it on becoming leader.
type Exporter struct {
	// fixed at creation
	in         <-chan *message.Message // the local builder's catalog.changed
	configured <-chan *message.Message // sources.configured
	synced     <-chan *message.Message // source.synced
	res        *resources
	pub        message.Publisher // watermill-nats, onto the pointer stream
	subject    string
	term       uint64
	node       string
	sources    []string // this replica's, carried on its pointers
	bundled    fs.FS
	served     *atomic.Pointer[events.Catalog] // the newest catalog this replica served; nil: none
	listWithin time.Duration                   // bounds listing the stored blobs; 0: [listWithin]
	log        *slog.Logger

	// owned by Run
	known    map[string]bool // digests of the blobs stored (files and snapshot blobs)
	lastSeq  uint64          // the pointer stream's last sequence, as published or claimed
	version  uint64          // the cluster version of the last pointer
	snapshot string          // its snapshot digest
	moved    int64           // bytes stored by the last export published
	current  []*events.Skill // the skills of the cluster's catalog (the last published)
	hold     holding
}

// Run claims the pointer stream for this term, then exports every catalog
// of the inbox — the newest of those queued; one that fails is tried
// again after [retryExport] unless a newer one came — until ctx is done
// (nil). It returns an error wrapping [ErrFenced] when a publish is
// refused, and the claim's error when NATS cannot be reached.
func (e *Exporter) Run(ctx context.Context) error {
	if err := e.claim(ctx); err != nil {
		return err
	}
	var pending, last *events.Catalog
	retry := time.NewTimer(0)
	<-retry.C
	for {
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-e.in:
			if !ok {
				return nil
			}
			if ev, ok := events.Receive[events.CatalogChanged](e.log, msg); ok && ev.Catalog != nil {
				pending, last = ev.Catalog, ev.Catalog
			}
		case msg, ok := <-e.configured:
			if !ok {
				e.configured = nil
				continue
			}
			if ev, ok := events.Receive[events.SourcesConfigured](e.log, msg); ok {
				e.hold.configure(ev)
				pending = last
			}
		case msg, ok := <-e.synced:
			if !ok {
				e.synced = nil
				continue
			}
			if ev, ok := events.Receive[events.SourceSynced](e.log, msg); ok {
				e.hold.sync(ev)
				pending = last // it may hold the sync's scan already
			}
		case <-retry.C:
		}
		// Nothing is exported before the configuration is known: it says
		// which remote sources to hold.
		if pending == nil || len(e.in) > 0 || e.hold.configured == nil {
			continue
		}
		err := e.export(ctx, pending)
		switch {
		case errors.Is(err, ErrFenced):
			return err
		case err != nil && ctx.Err() == nil:
			e.log.Warn("cluster: exporting the catalog failed; retrying", "error", err)
			retry.Reset(retryExport)
		default:
			pending = nil
		}
	}
}

// claim reads the last pointer and re-publishes it under this term, so
// that a deposed leader's next publish is refused, and learns the version
// and snapshot to continue from and the blobs stored.
func (e *Exporter) claim(ctx context.Context) error {
	if err := e.listBlobs(ctx); err != nil {
		return err
	}
	p, seq, err := lastPointer(ctx, e.res.pointer, e.subject)
	if err != nil {
		return err
	}
	e.lastSeq, e.version, e.snapshot = seq, p.Version, p.Snapshot
	switch cur := e.servedCatalog(); {
	case seq == 0 && cur != nil:
		e.log.Warn("cluster: the pointer stream is empty although this replica served a cluster catalog: NATS lost its storage; continuing above that version",
			"stream", e.subject, "served_version", cur.Version)
	case seq == 0:
		// A new cluster — or a mistyped --cluster-name, which starts a
		// cluster of its own.
		e.log.Warn("cluster: no catalog was published under this cluster name before; starting it (if other replicas already serve, check --cluster-name)",
			"stream", e.subject)
	}
	if p.Snapshot != "" {
		cat, _, err := loadSnapshot(ctx, e.res, p.Snapshot, p.Version, nil)
		if err != nil {
			return fmt.Errorf("loading the cluster's catalog: %w", err)
		}
		e.current = cat.Skills
	}
	if cur := e.servedCatalog(); cur != nil && cur.Version > p.Version {
		// The stream lost its history: never number below what was served,
		// and hold the remote sources' skills as this replica serves them
		// (the lost snapshot's), not as none.
		e.version, e.snapshot, e.current = cur.Version, "", cur.Skills
	}
	if err := e.publish(ctx, Pointer{Version: e.version, Snapshot: e.snapshot, Term: e.term, Node: e.node, Sources: e.sources}); err != nil {
		return fmt.Errorf("claiming the pointer stream: %w", err)
	}
	e.log.Debug("cluster: claimed", "version", e.version)
	return nil
}

// servedCatalog is the newest catalog this replica served; nil if none.
func (e *Exporter) servedCatalog() *events.Catalog {
	if e.served == nil {
		return nil
	}
	return e.served.Load()
}

// listBlobs fills known with the digests stored: the object store's
// names and the snapshot bucket's keys.
func (e *Exporter) listBlobs(ctx context.Context) error {
	e.known = map[string]bool{}
	within := e.listWithin
	if within <= 0 {
		within = listWithin
	}
	lctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	infos, err := e.res.blobs.List(lctx)
	if err != nil && !errors.Is(err, jetstream.ErrNoObjectsFound) {
		return fmt.Errorf("listing the object store: %w", err)
	}
	for _, info := range infos {
		e.known[info.Name] = true
	}
	keys, err := e.res.snapshots.ListKeys(lctx)
	if err != nil {
		return fmt.Errorf("listing the snapshot bucket: %w", err)
	}
	for k := range keys.Keys() {
		e.known["sha256:"+k] = true
	}
	return nil
}

// export uploads what the cluster lacks of cat and publishes its pointer,
// unless its snapshot is the current one. A pending catalog (digests still
// being computed, issue 12) is never exported: replicas serve only
// catalogs whose every digest is known; the complete one follows.
func (e *Exporter) export(ctx context.Context, cat *events.Catalog) error {
	if cat.Pending {
		e.log.Debug("cluster: pending catalog not exported; the complete one follows", "local_version", cat.Version)
		return nil
	}
	pc := portable(cat)
	skills, held := e.hold.merge(cat, pc.Skills, e.current)
	pc = events.NewCatalog(0, pc.Static, skills, pc.Diagnostics)
	var blobs []blob
	if err := e.fileBlobs(cat, &blobs); err != nil {
		return err
	}
	queued := map[string]bool{}
	snap, err := events.WriteCatalogSnapshot(pc, func(d string) bool { return e.known[d] || queued[d] }, func(d string, data []byte) error {
		queued[d] = true
		blobs = append(blobs, blob{d, data, false})
		return nil
	})
	if err != nil {
		return err
	}
	root, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	digest := digestOf(root)
	if digest == e.snapshot {
		e.log.Debug("cluster: catalog unchanged; nothing published", "local_version", cat.Version)
		return nil
	}
	if !e.known[digest] {
		blobs = append(blobs, blob{digest, root, false})
	}
	// Every blob is stored before the pointer naming them is published.
	moved, err := e.putAll(ctx, blobs)
	if err != nil {
		return err
	}
	p := Pointer{Version: e.version + 1, Snapshot: digest, Term: e.term, Node: e.node, Sources: e.sources}
	if err := e.publish(ctx, p); err != nil {
		return err
	}
	e.version, e.snapshot, e.moved, e.current = p.Version, digest, moved, pc.Skills
	e.log.Info("cluster: published catalog", "version", p.Version, "skills", len(pc.Skills), "local_version", cat.Version,
		"blobs_stored", len(blobs), "bytes_stored", moved, "held_sources", held)
	return nil
}

// blob is a blob to store: its digest and bytes.
type blob struct {
	digest string
	data   []byte
	file   bool // a file's bytes (the object store), else a snapshot blob
}

// putAll stores blobs, [fetchers] at a time, and returns the bytes stored.
func (e *Exporter) putAll(ctx context.Context, blobs []blob) (int64, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchers)
	var moved int64
	for _, b := range blobs {
		moved += int64(len(b.data))
		g.Go(func() error {
			if !b.file {
				return putSnapshotBlob(gctx, e.res, b.digest, b.data)
			}
			if _, err := e.res.blobs.PutBytes(gctx, b.digest, b.data); err != nil {
				return fmt.Errorf("storing %s: %w", b.digest, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	for _, b := range blobs {
		e.known[b.digest] = true
	}
	return moved, nil
}

// fileBlobs adds to blobs the bytes of every file of cat not stored yet,
// read from disk (or the bundled file system) and checked against its
// digest.
func (e *Exporter) fileBlobs(cat *events.Catalog, blobs *[]blob) error {
	seen := map[string]bool{}
	for i := range cat.Skills {
		sk := cat.Skills[i]
		for j := range sk.Files {
			f := &sk.Files[j]
			if e.known[f.Digest] || seen[f.Digest] {
				continue
			}
			data, err := readLocal(sk, f, e.bundled)
			if err != nil {
				return fmt.Errorf("reading %s of skill %s: %w", f.Path, sk.QualifiedName, err)
			}
			seen[f.Digest] = true
			*blobs = append(*blobs, blob{f.Digest, data, true})
		}
	}
	return nil
}

// publish publishes p on the pointer stream through watermill-nats,
// expecting the stream's last sequence to be lastSeq (fencing), then reads
// the sequence it got. A refusal gives an error wrapping [ErrFenced].
func (e *Exporter) publish(ctx context.Context, p Pointer) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	// watermill-nats publishes without a context (JetStream's 5 s
	// timeout): do not start one that cannot succeed.
	if !e.res.js.Conn().IsConnected() {
		return fmt.Errorf("publishing pointer %d: %w", p.Version, ErrUnreachable)
	}
	msg := message.NewMessage(watermill.NewUUID(), data)
	msg.Metadata.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(e.lastSeq, 10))
	if err := e.pub.Publish(e.subject, msg); err != nil {
		if refused(err) {
			return fmt.Errorf("%w (expected sequence %d): %v", ErrFenced, e.lastSeq, err)
		}
		return fmt.Errorf("publishing pointer %d: %w", p.Version, err)
	}
	got, seq, err := lastPointer(ctx, e.res.pointer, e.subject)
	if err != nil {
		return err
	}
	if !got.same(p) {
		return fmt.Errorf("%w: pointer %d of term %d followed ours", ErrFenced, got.Version, got.Term)
	}
	e.lastSeq = seq
	return nil
}

// readLocal returns the bytes of the manifest file f of sk, read through
// the skill opener (no link followed; the folder must be the one scanned)
// or from bundled, only when their digest is f's.
func readLocal(sk *events.Skill, f *events.File, bundled fs.FS) ([]byte, error) {
	var (
		file io.ReadCloser
		err  error
	)
	if sk.Source.Kind == events.SourceBundled {
		if bundled == nil {
			return nil, errors.New("no bundled file system")
		}
		file, err = bundled.Open(path.Join(sk.Dir, f.OnDisk()))
	} else {
		file, err = openOnDisk(sk, f)
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, f.Size+1))
	if err != nil {
		return nil, err
	}
	if got := digestOf(data); got != f.Digest {
		return nil, fmt.Errorf("changed since it was hashed (digest %s, want %s)", got, f.Digest)
	}
	return data, nil
}

// openOnDisk opens f in the folder of the local or cached skill sk.
func openOnDisk(sk *events.Skill, f *events.File) (io.ReadCloser, error) {
	dir := sk.RealDir
	if dir == "" {
		dir = sk.Dir
	}
	root, err := skill.OpenDir(dir, sk.DirID)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	file, _, err := skill.OpenFile(root, f.OnDisk())
	return file, err
}

// portable returns cat without what only holds on this machine: the real
// folder and its identity, modification times, cache paths of remote
// sources and any SKILL.md bytes (every replica reads files by digest).
// Two leaders serving the same content from the same folders thus write
// the same snapshot.
func portable(cat *events.Catalog) *events.Catalog {
	slab := make([]events.Skill, len(cat.Skills))
	skills := make([]*events.Skill, len(cat.Skills))
	for i, cur := range cat.Skills {
		sk := *cur
		sk.RealDir, sk.DirID, sk.SkillMD = "", events.FolderID{}, nil
		if sk.Source.Kind != events.SourceLocal && sk.Source.Kind != events.SourceBundled {
			sk.Dir, sk.Source.Root = "", ""
		}
		files := make([]events.File, len(sk.Files))
		for j, f := range sk.Files {
			f.ModTime = time.Time{}
			files[j] = f
		}
		sk.Files = files
		slab[i] = sk
		skills[i] = &slab[i]
	}
	return events.NewCatalog(0, cat.Static, skills, cat.Diagnostics)
}
