package catalog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	json "github.com/segmentio/encoding/json"

	"github.com/skilljack/skilljack-mcp/actors/remote"
	"github.com/skilljack/skilljack-mcp/events"
)

// The last catalog, persisted (issue 12 "Serve the last catalog at once"):
// with [Options.CacheDir] the builder writes, a moment after it publishes a
// catalog, what it built of every scanned skill of the configuration (the
// memo: folder, manifest, parsed frontmatter, diagnostics) and each
// source's scan diagnostics, to one file per set of sources in the cache
// folder. At the next start, when the configured sources are the same (and
// the configuration is not static, whose skill set must be the one on disk
// at startup), it takes that file as the scans of the sources and its memo
// as what it built of them, and publishes the catalog at once: the facade
// answers initialize from it while the hasher's scans run. Each real scan
// then replaces its stale stand-in as any newer scan does; the memo makes a
// skill whose folder and manifest (digests, sizes, modification times) are
// unchanged cost nothing, no SKILL.md is parsed again, and a catalog that
// shows nothing new publishes nothing; a difference is a new version, and
// the notifier announces it as usual (stale-while-revalidate).
//
// The file is written atomically through an [os.Root] on the cache folder
// (a temporary file renamed over it), checked as every cache folder is
// ([remote.CheckFolder]), and read only as a regular file reached without
// a link ([skill.OpenFile]). It starts with a format line and ends with a
// SHA-256 of what precedes it; a missing, corrupt or foreign file (other
// sources, another format) is ignored and rewritten after the first
// catalog. Processes sharing the folder each write their own last catalog;
// the last writer wins, and whichever file a process loads is only a
// starting point its own scans revalidate.

// persistMagic starts a persisted catalog file; the digit is the format.
const persistMagic = "skilljack-catalog 2\n"

// persistDelay is how long after publishing a catalog the builder writes
// it (but the first, written at once), each newer catalog pushing the
// write back ([store.later]), so that a burst of edits is written once:
// encoding a 10,000-skill catalog costs some 30 ms of CPU, which an edit
// should not pay each time, nor an edit's notification wait for. A restart within it serves the catalog
// before and revalidates it, as after any change made while down.
var persistDelay = 5 * time.Second

// persistMaxDelay bounds how long a catalog waits to be written while newer
// ones keep coming less than persistDelay apart (an editor saving in a
// loop): the one served then is written at least this often.
var persistMaxDelay = 30 * time.Second

// persisted is the content of a persisted catalog file.
type persisted struct {
	// Sources are the configuration's sources, in order: the file is used
	// only when they equal the configured ones.
	Sources []events.Source `json:"sources"`
	// Scans are the stand-in scans, one per source, in Sources order.
	Scans []persistedScan `json:"scans"`
}

// persistedScan is one source's stand-in scan and what was built of it.
type persistedScan struct {
	Diagnostics []events.Diagnostic `json:"diagnostics,omitempty"`
	Skills      []persistedSkill    `json:"skills"`
}

// persistedSkill is one [built]: the scanned skill (without bytes), and,
// when it is served, the parts of its catalog entry that its scan and
// source do not give.
type persistedSkill struct {
	Scanned events.ScannedSkill `json:"scanned"`
	OK      bool                `json:"ok,omitempty"`
	NoFM    bool                `json:"no_fm,omitempty"`
	Diag    *events.Diagnostic  `json:"diag,omitempty"`

	QualifiedName  string          `json:"qualified_name,omitempty"`
	Name           string          `json:"name,omitempty"`
	Description    string          `json:"description,omitempty"`
	SkillPath      string          `json:"skill_path,omitempty"`
	URI            string          `json:"uri,omitempty"`
	Frontmatter    json.RawMessage `json:"frontmatter,omitempty"`
	Listed         bool            `json:"listed,omitempty"`
	ModelInvocable bool            `json:"model_invocable,omitempty"`
	UserInvocable  bool            `json:"user_invocable,omitempty"`
}

// store reads and writes the persisted catalog files of one cache folder.
type store struct {
	dir string
	log *slog.Logger

	mu      sync.Mutex        // guards the fields below
	saveMu  sync.Mutex        // serializes writes, so that the newest is written last
	warned  bool              // a failed write was logged as a warning
	pending func() *persisted // makes the newest catalog not written yet
	urgent  bool              // pending is a first catalog: written even at stop
	timer   *time.Timer
	due     time.Time // when timer fires
	since   time.Time // when the first catalog pending was handed over
	wg      sync.WaitGroup
	// size is the length in bytes of the file last read or written (0:
	// none yet), the size hint of the next encoding.
	size atomic.Int64
}

// fileName names the file of a set of sources.
func (st *store) fileName(sources []events.Source) string {
	b, _ := json.Marshal(sources)
	sum := sha256.Sum256(b)
	return "catalog-" + hex.EncodeToString(sum[:12]) + ".bin"
}

// load returns the persisted catalog of sources, or nil (logged: debug
// for a missing file, a warning for an unreadable, corrupt or foreign one).
func (st *store) load(sources []events.Source) *persisted {
	name := st.fileName(sources)
	data, err := remote.ReadPrivateFile(st.dir, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			st.log.Debug("no persisted catalog yet; the first catalog waits for the scans", "file", name)
		} else {
			st.log.Warn("persisted catalog unreadable; the first catalog waits for the scans and the file is rewritten", "dir", st.dir, "file", name, "error", err)
		}
		return nil
	}
	st.size.Store(int64(len(data)))
	p, err := decodePersisted(data)
	if err == nil && !slices.Equal(p.Sources, sources) {
		err = errors.New("written for other sources")
	}
	if err == nil && len(p.Scans) != len(sources) {
		err = errors.New("one scan per source expected")
	}
	if err != nil {
		st.log.Warn("persisted catalog corrupt; the first catalog waits for the scans and the file is rewritten", "dir", st.dir, "file", name, "error", err)
		return nil
	}
	return p
}

// decodePersisted checks the format line and the checksum of data and
// decodes what is between them ([encodePersisted]). Strings are cut from
// data itself, so a field costs no allocation of its own; data must not be
// modified afterwards.
func decodePersisted(data []byte) (*persisted, error) {
	if len(data) < len(persistMagic)+sha256.Size || !bytes.HasPrefix(data, []byte(persistMagic)) {
		return nil, errors.New("not a persisted catalog of this format")
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errors.New("checksum mismatch")
	}
	// The strings share data's bytes, which nothing writes after the read:
	// no second copy of a 10 MB file on the way to the first initialize.
	rest := body[len(persistMagic):]
	d := &decoder{s: unsafe.String(unsafe.SliceData(rest), len(rest)), interned: map[string]string{}}
	var p persisted
	if err := json.Unmarshal([]byte(d.str()), &p.Sources); err != nil {
		return nil, fmt.Errorf("sources: %w", err)
	}
	n := d.count()
	p.Scans = make([]persistedScan, 0, n)
	for range n {
		var ps persistedScan
		ps.Diagnostics = d.diags()
		k := d.count()
		ps.Skills = make([]persistedSkill, k)
		for i := range ps.Skills {
			d.skill(&ps.Skills[i])
		}
		p.Scans = append(p.Scans, ps)
	}
	if d.bad || len(d.s) != 0 {
		return nil, errors.New("malformed")
	}
	return &p, nil
}

// encodePersisted is the file content of p: the format line, the sources
// (JSON), each scan's diagnostics and skills in a compact binary form
// (varints, length-prefixed strings) and a SHA-256 of everything before
// it. hint is the length of a file written or read before (0: none): the
// buffer starts an eighth larger than that, so that a catalog of about
// the same size is encoded without growing it (issue 12: at 10,000 skills
// the 12 MB file grown by doubling from 1 MiB lifted the peak RSS of a warm
// start whose revalidation found a change by some 40 MiB).
func encodePersisted(p *persisted, hint int) ([]byte, error) {
	srcs, err := json.Marshal(p.Sources)
	if err != nil {
		return nil, err
	}
	e := &encoder{buf: make([]byte, 0, max(1<<20, hint+hint/8+sha256.Size))}
	e.buf = append(e.buf, persistMagic...)
	e.str(string(srcs))
	e.uint(uint64(len(p.Scans)))
	for _, ps := range p.Scans {
		e.diags(ps.Diagnostics)
		e.uint(uint64(len(ps.Skills)))
		for i := range ps.Skills {
			e.skill(&ps.Skills[i])
		}
	}
	sum := sha256.Sum256(e.buf)
	return append(e.buf, sum[:]...), nil
}

// encoder appends the fields of a persisted catalog to buf.
type encoder struct{ buf []byte }

func (e *encoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.buf = append(e.buf, s...) }

// flags packs bools, the first in the lowest bit.
func (e *encoder) flags(bs ...bool) {
	var v uint64
	for i, b := range bs {
		if b {
			v |= 1 << i
		}
	}
	e.uint(v)
}

func (e *encoder) diag(d *events.Diagnostic) {
	e.str(d.File)
	e.str(d.Level)
	e.flags(d.Unserved)
	e.str(d.Rule)
	e.str(d.Message)
	e.str(d.Version)
}

func (e *encoder) diags(ds []events.Diagnostic) {
	e.uint(uint64(len(ds)))
	for i := range ds {
		e.diag(&ds[i])
	}
}

func (e *encoder) skill(ps *persistedSkill) {
	ss := &ps.Scanned
	e.str(ss.Dir)
	e.str(ss.RelDir)
	e.str(ss.RealDir)
	e.uint(ss.DirID.Dev)
	e.uint(ss.DirID.Ino)
	e.uint(uint64(len(ss.Files)))
	for _, f := range ss.Files {
		e.str(f.Path)
		e.str(f.DiskName)
		e.str(f.Digest)
		e.int(f.Size)
		e.int(f.ModTime.UnixNano())
		e.flags(f.ModTime.IsZero(), f.Text)
		e.str(f.MIME)
	}
	e.flags(ps.OK, ps.NoFM, ps.Diag != nil, ps.Listed, ps.ModelInvocable, ps.UserInvocable)
	if ps.Diag != nil {
		e.diag(ps.Diag)
	}
	if ps.OK {
		e.str(ps.QualifiedName)
		e.str(ps.Name)
		e.str(ps.Description)
		e.str(ps.SkillPath)
		e.str(ps.URI)
		e.uint(uint64(len(ps.Frontmatter)))
		e.buf = append(e.buf, ps.Frontmatter...)
	}
}

// decoder reads what an [encoder] wrote; bad is set on the first malformed
// field, after which every read returns zero.
type decoder struct {
	s        string
	bad      bool
	interned map[string]string // MIME types and levels, few and repeated
	chunk    []events.File     // what is left of the last chunk of manifest entries
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint([]byte(d.s[:min(len(d.s), binary.MaxVarintLen64)]))
	if n <= 0 {
		d.bad, d.s = true, ""
		return 0
	}
	d.s = d.s[n:]
	return v
}

func (d *decoder) int() int64 {
	u := d.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// count reads a length, which cannot exceed the bytes left.
func (d *decoder) count() int {
	n := d.uint()
	if n > uint64(len(d.s)) {
		d.bad, d.s = true, ""
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count()
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

func (d *decoder) intern(s string) string {
	if v, ok := d.interned[s]; ok {
		return v
	}
	d.interned[s] = s
	return s
}

func (d *decoder) flag(v uint64, i int) bool { return v&(1<<i) != 0 }

func (d *decoder) diag() events.Diagnostic {
	g := events.Diagnostic{File: d.str(), Level: d.intern(d.str())}
	g.Unserved = d.flag(d.uint(), 0)
	g.Rule, g.Message, g.Version = d.str(), d.str(), d.str()
	return g
}

func (d *decoder) diags() []events.Diagnostic {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]events.Diagnostic, n)
	for i := range out {
		out[i] = d.diag()
	}
	return out
}

// files returns a manifest of n entries, cut from a chunk shared with the
// next manifests (one allocation per 1,024 files rather than one per skill)
// and capped, so that an append never reaches a neighbour.
func (d *decoder) files(n int) []events.File {
	if n == 0 {
		return make([]events.File, 0)
	}
	if n > len(d.chunk) {
		d.chunk = make([]events.File, max(n, 1024))
	}
	f := d.chunk[:n:n]
	d.chunk = d.chunk[n:]
	return f
}

func (d *decoder) skill(ps *persistedSkill) {
	ss := &ps.Scanned
	ss.Dir, ss.RelDir, ss.RealDir = d.str(), d.str(), d.str()
	ss.DirID.Dev, ss.DirID.Ino = d.uint(), d.uint()
	ss.Files = d.files(d.count())
	for i := range ss.Files {
		f := &ss.Files[i]
		f.Path, f.DiskName, f.Digest = d.str(), d.str(), d.str()
		f.Size = d.int()
		mod := d.int()
		fl := d.uint()
		if !d.flag(fl, 0) {
			f.ModTime = time.Unix(0, mod)
		}
		f.Text = d.flag(fl, 1)
		f.MIME = d.intern(d.str())
	}
	fl := d.uint()
	ps.OK, ps.NoFM = d.flag(fl, 0), d.flag(fl, 1)
	ps.Listed, ps.ModelInvocable, ps.UserInvocable = d.flag(fl, 3), d.flag(fl, 4), d.flag(fl, 5)
	if d.flag(fl, 2) {
		g := d.diag()
		ps.Diag = &g
	}
	if ps.OK {
		ps.QualifiedName, ps.Name, ps.Description, ps.SkillPath, ps.URI = d.str(), d.str(), d.str(), d.str(), d.str()
		if fm := d.str(); fm != "" {
			// The bytes of data too (a conversion would copy them: 3 MB
			// at 10,000 skills); nothing writes a frontmatter.
			ps.Frontmatter = json.RawMessage(unsafe.Slice(unsafe.StringData(fm), len(fm)))
		}
	}
}

// save writes p for its sources, atomically.
func (st *store) save(p *persisted) error {
	data, err := encodePersisted(p, int(st.size.Load()))
	if err != nil {
		return err
	}
	st.size.Store(int64(len(data)))
	root, err := remote.OpenPrivateDir(st.dir, true)
	if err != nil {
		return err
	}
	defer root.Close()
	return remote.WriteFileAtomicMode(root, st.fileName(p.Sources), data, 0o600)
}

// later writes what p makes delay from now, unless a newer catalog comes
// first: then that one is written instead, delay after it (the write of a
// burst of edits waits for its end, off the path of every edit's
// notification, issue 12), but no later than persistMaxDelay after the
// first catalog of the burst not written. p runs on another goroutine and
// may return nil (nothing to write). Safe for concurrent use.
func (st *store) later(p func() *persisted, delay time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	st.pending = p
	st.urgent = st.urgent || delay == 0
	if st.timer == nil {
		st.since = now
	}
	at := now.Add(delay)
	if limit := st.since.Add(persistMaxDelay); at.After(limit) {
		at = limit
	}
	if st.timer != nil {
		// A timer that already fired takes the newest catalog itself.
		if !at.Equal(st.due) && st.timer.Stop() {
			st.timer.Reset(max(time.Until(at), 0))
			st.due = at
		}
		return
	}
	st.wg.Add(1)
	st.due = at
	st.timer = time.AfterFunc(max(time.Until(at), 0), func() {
		defer st.wg.Done()
		// saveMu before mu, always: a write under way delays the next
		// timer's (which then takes the newest catalog), never the
		// builder's next publish, which takes mu only.
		st.saveMu.Lock()
		st.mu.Lock()
		mk := st.pending
		st.pending, st.timer, st.urgent = nil, nil, false
		st.mu.Unlock()
		err := error(nil)
		if mk != nil {
			if p := mk(); p != nil {
				err = st.save(p)
			}
		}
		st.saveMu.Unlock()
		st.mu.Lock()
		level := slog.LevelDebug
		if err != nil && !st.warned {
			st.warned, level = true, slog.LevelWarn
		}
		st.mu.Unlock()
		if err != nil {
			st.log.Log(context.Background(), level, "cannot write the persisted catalog; the next start waits for the scans", "dir", st.dir, "error", err)
		}
	})
}

// stop drops a write not started yet, but a first catalog's, which it
// makes at once, and waits for one under way.
func (st *store) stop() {
	st.saveMu.Lock()
	st.mu.Lock()
	if st.timer != nil && st.timer.Stop() {
		mk, urgent := st.pending, st.urgent
		st.timer, st.pending, st.urgent = nil, nil, false
		if urgent {
			if p := mk(); p != nil {
				_ = st.save(p) // best effort: the process is stopping
			}
		}
		st.wg.Done()
	}
	st.mu.Unlock()
	st.saveMu.Unlock()
	st.wg.Wait()
}

// snapshot returns a function making the persisted form of what b built
// for its current configuration and scans. The function only reads values
// the builder never changes after making them (it takes its own copy of
// the maps), so it may run on another goroutine.
func (b *Builder) snapshot() func() *persisted {
	sources := slices.Clone(b.cfg.Sources)
	scans := make(map[string]events.SourceScanned, len(sources))
	memos := make(map[string]*sourceMemo, len(sources))
	for _, src := range sources {
		scans[src.ID], memos[src.ID] = b.scans[src.ID], b.memo.sources[src.ID]
	}
	return func() *persisted { return persistedOf(sources, scans, memos) }
}

// persistedOf is the persisted form of the scans of sources and what the
// memos built of them; nil when a scanned skill was not built.
func persistedOf(sources []events.Source, scans map[string]events.SourceScanned, memos map[string]*sourceMemo) *persisted {
	p := &persisted{Sources: sources, Scans: make([]persistedScan, 0, len(sources))}
	for _, src := range sources {
		scan := scans[src.ID]
		sm := memos[src.ID]
		ps := persistedScan{Diagnostics: scan.Diagnostics, Skills: make([]persistedSkill, 0, len(scan.Skills))}
		for i := range scan.Skills {
			var bt *built
			if sm != nil {
				bt = sm.byDir[scan.Skills[i].Dir]
			}
			if bt == nil || bt.unread || !sameScanned(&bt.ss, &scan.Skills[i]) {
				return nil // not built from this scan, or unread: nothing to persist
			}
			ps.Skills = append(ps.Skills, persistSkill(bt))
		}
		p.Scans = append(p.Scans, ps)
	}
	return p
}

func persistSkill(bt *built) persistedSkill {
	ps := persistedSkill{Scanned: bt.ss, OK: bt.ok, NoFM: bt.noFM, Diag: bt.diag}
	ps.Scanned.SkillMD = nil
	if bt.ok {
		sk := &bt.sk
		ps.QualifiedName, ps.Name, ps.Description, ps.SkillPath, ps.URI = sk.QualifiedName, sk.Name, sk.Description, sk.SkillPath, sk.URI
		ps.Frontmatter, ps.Listed, ps.ModelInvocable, ps.UserInvocable = sk.Frontmatter, sk.Listed, sk.ModelInvocable, sk.UserInvocable
	}
	return ps
}

// restore takes p, loaded for cfg, as the scans of cfg's sources (Seq 0,
// so that every real scan replaces them) and as what the memo built of
// them.
func (b *Builder) restore(cfg events.SourcesConfigured, p *persisted) {
	for i, src := range cfg.Sources {
		ps := p.Scans[i]
		sm := &sourceMemo{src: src, byDir: make(map[string]*built, len(ps.Skills))}
		scan := events.SourceScanned{ConfigSeq: cfg.Seq, Source: src, Diagnostics: ps.Diagnostics,
			Skills: make([]events.ScannedSkill, 0, len(ps.Skills))}
		// One allocation for the source's skills rather than one each
		// (a built is 584 bytes, a 640-byte size class on its own).
		slab := make([]built, len(ps.Skills))
		for j := range ps.Skills {
			bt := &slab[j]
			restoreSkill(bt, src, &ps.Skills[j])
			scan.Skills = append(scan.Skills, bt.ss)
			if _, twice := sm.byDir[bt.ss.Dir]; !twice {
				sm.byDir[bt.ss.Dir] = bt
			}
		}
		b.memo.sources[src.ID] = sm
		if old, ok := b.scans[src.ID]; ok && old.ConfigSeq >= cfg.Seq {
			// A real scan for this configuration came before the
			// configuration itself (the builder's inboxes are read in
			// any order): it is newer than the file, so it stays.
			continue
		}
		b.scans[src.ID] = scan
	}
}

// restoreSkill makes bt what was built of ps, a skill of src.
func restoreSkill(bt *built, src events.Source, ps *persistedSkill) {
	ss := ps.Scanned
	*bt = built{ss: ss, ok: ps.OK, noFM: ps.NoFM, diag: ps.Diag, file: mdFile(src, ss)}
	if ps.OK {
		bt.sk = events.Skill{QualifiedName: ps.QualifiedName, Name: ps.Name, Description: ps.Description,
			SkillPath: ps.SkillPath, URI: ps.URI, Source: src, Dir: ss.Dir, RealDir: ss.RealDir, DirID: ss.DirID,
			Frontmatter: ps.Frontmatter, Listed: ps.Listed, ModelInvocable: ps.ModelInvocable, UserInvocable: ps.UserInvocable,
			Files: ss.Files}
	}
}
