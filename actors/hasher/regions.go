package hasher

import (
	"path"
	"slices"
	"strings"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// Skill folders a change did not touch are not walked again (issue 12:
// "CPU proportional to the change, not the corpus"). A scan by the
// hasher's Run remembers, for every outermost skill folder it found (one
// not inside another skill: a region, holding its nested skills), what it
// made of it: the scanned skills, the walker's diagnostics found inside
// it and the manifest diagnostics of its files. The next incremental
// rescan walks the folders outside skills as before (from the [dirCache])
// and, for a region no change touched ([dirCache.changed]), takes what
// the scan before made of it — the very same [events.ScannedSkill] values,
// manifests shared — instead of walking, listing and looking up its
// files. The result is what a full scan gives: discovery goes through the
// folders in the same order, and a region's findings depend on nothing
// outside it, with two exceptions handled by not reusing: a symbolic link
// followed into the tree (a folder reached twice is reported where it is
// met the second time: a walk that follows a link reuses nothing), and a
// region whose scan met a read error or a folder that changed while it was
// scanned (read again until it reads cleanly). When every change sits
// inside regions, even the folders outside skills are not walked: the
// walk before is replayed (replay.go).

// region is what a scan made of one outermost skill folder.
type region struct {
	key   string // its folder, a path in the root's file system
	rel   string // the RelDir of its outermost skill
	depth int    // folders below the source root
	// skills are its scanned skills in walk order (outermost first), with
	// no SKILL.md bytes (issue 12: none are kept).
	skills []events.ScannedSkill
	// wdiags are the walker's diagnostics found inside it, mdiags those
	// about its files (over a cap), in order.
	wdiags, mdiags []events.Diagnostic
	// reusable is unset when its scan met a read error or a change: it is
	// scanned again next time.
	reusable bool
	seen     uint64 // the rootMemo.seq of the last scan that met it
}

// rootMemo is what the scans of one local root by the hasher's Run keep
// for the next one; a rescan takes it out while it runs.
type rootMemo struct {
	dc *dirCache
	// regions are the last scan's, by folder (a path in the root's file
	// system); nil when it kept none.
	regions map[string]*region
	// unreusable lists the regions that are not reusable.
	unreusable []string
	// followed is set when the last walk followed a symbolic link: the
	// next walk reuses nothing.
	followed bool
	// whole is set when regions are those of a scan before a whole
	// rescan: it walks every folder and reuses a region's values only
	// where it finds them equal.
	whole bool
	seq   uint64 // counts the scans that kept their regions here

	// plan is the last walk as the regions it met, in walk order, with
	// where their findings sit in what that scan published, for a rescan
	// to replay (replay.go); nil when it cannot be replayed (a link
	// followed, the root a skill folder). skills are that scan's skills
	// without SKILL.md bytes (a copy of its own: the published ones may
	// carry bytes), wdiags its walker's diagnostics, mdiags its manifest
	// diagnostics; collapsed are the container folders its walk skipped.
	plan      []planItem
	skills    []events.ScannedSkill
	wdiags    []events.Diagnostic
	mdiags    []events.Diagnostic
	collapsed map[string]bool
}

// forget drops the regions and plan of m: the next scan walks every
// folder.
func (m *rootMemo) forget() {
	m.regions, m.unreusable = nil, nil
	m.forgetPlan()
}

// planItem is one region of a [rootMemo.plan], or the closing sentinel
// (reg nil). Its skills are skills[s:next.s], its manifest diagnostics
// mdiags[m:next.m], and in wdiags the walker's diagnostics met outside
// every region since the region before are [pre:d], its own [d:next.pre];
// for the sentinel [pre:d] are those met after the last region, and the
// ends of the three slices close it.
type planItem struct {
	reg          *region
	s, pre, d, m int32
}

// piece is one region of a walk, in walk order: one reused from the scan
// before (reg set), or one walked now (f set).
type piece struct {
	reg   *region
	f     *walked
	diags [2]int // a reused region's walker diagnostics in w.diags
}

// walked is a region walked by this scan: its skills are w.skills[skills[0]:
// skills[1]] and its walker diagnostics w.diags[diags[0]:diags[1]].
type walked struct {
	dir    string
	rel    string
	depth  int
	skills [2]int
	diags  [2]int
	ok     bool // its outermost SKILL.md was recorded
}

// openRegion starts the region of the outermost skill folder dir; the
// returned function ends it once its folder is walked.
func (w *walker) openRegion(dir, rel string, depth int) func(ok bool) {
	f := &walked{dir: dir, rel: rel, depth: depth, skills: [2]int{len(w.skills), 0}, diags: [2]int{len(w.diags), 0}}
	w.pieces = append(w.pieces, piece{f: f})
	return func(ok bool) {
		f.skills[1], f.diags[1], f.ok = len(w.skills), len(w.diags), ok
	}
}

// reuse takes the region of the scan before at the folder name in dir
// (rel and depth those of the folder as the walk finds it, outside any
// skill) instead of walking it, and reports whether it did: only when it
// is reusable, sits where it sat, would be walked, and no change touched
// it. It allocates nothing when there is no such region.
func (w *walker) reuse(dir, rel, name string, depth int) bool {
	if w.prev == nil || depth > maxDiscoveryDepth {
		return false
	}
	w.key = w.key[:0]
	if dir != "." {
		w.key = append(append(w.key, dir...), '/')
	}
	w.key = append(w.key, name...)
	reg := w.prev[string(w.key)]
	if reg == nil || !reg.reusable || reg.depth != depth || !relIs(reg.rel, rel, name) ||
		w.collapsed[reg.key] || !skill.Descend(name, false) || w.changed(reg.key) {
		return false
	}
	w.pieces = append(w.pieces, piece{reg: reg, diags: [2]int{len(w.diags), len(w.diags) + len(reg.wdiags)}})
	w.diags = append(w.diags, reg.wdiags...)
	w.reused++
	w.reusedSkills += len(reg.skills)
	return true
}

// relIs reports whether full is rel/name (name when rel is empty).
func relIs(full, rel, name string) bool {
	if rel == "" {
		return full == name
	}
	return len(full) == len(rel)+1+len(name) && full[:len(rel)] == rel && full[len(rel)] == '/' && full[len(rel)+1:] == name
}

// assemble puts the skills of the walk w into out in walk order — those
// of the regions it reused as they were, the others from m — with the
// walker's diagnostics; m collects the manifest diagnostics. With memo
// set it records this scan's regions there for the next one (in place:
// the regions of the scan before that this one did not meet are dropped),
// and its plan ([rootMemo.plan]).
func assemble(out *events.SourceScanned, w *walker, m *manifests, memo *rootMemo) {
	out.Diagnostics = w.diags
	out.Skills = make([]events.ScannedSkill, 0, len(w.skills)+w.reusedSkills)
	var regions map[string]*region
	var plan []planItem
	if memo != nil {
		memo.seq++
		if regions = memo.regions; regions == nil {
			regions = make(map[string]*region, len(w.pieces))
		}
		memo.unreusable = nil
		if !w.followed {
			plan = make([]planItem, 0, len(w.pieces)+1)
		}
	}
	end := 0 // where the walker's diagnostics of the last region end
	for _, pc := range w.pieces {
		s0, m0 := len(out.Skills), len(m.diags)
		reg, d := pc.reg, pc.diags
		if reg != nil {
			out.Skills = append(out.Skills, reg.skills...)
			m.diags = append(m.diags, reg.mdiags...)
			reg.seen = memo.seq
		} else {
			reg, d = w.walkedRegion(pc.f, m, memo, regions, &out.Skills), pc.f.diags
		}
		if plan != nil {
			plan = append(plan, planItem{reg: reg, s: int32(s0), pre: int32(end), d: int32(d[0]), m: int32(m0)})
			if reg.depth == 0 {
				plan = nil // the root is a skill folder: nothing to replay
			}
		}
		end = d[1]
	}
	if memo == nil {
		return
	}
	if len(regions) != len(w.pieces) {
		for key, reg := range regions {
			if reg.seen != memo.seq {
				delete(regions, key)
			}
		}
	}
	memo.regions, memo.followed, memo.whole = regions, w.followed, false
	memo.forgetPlan()
	if plan != nil {
		plan = append(plan, planItem{s: int32(len(out.Skills)), pre: int32(end), d: int32(len(w.diags)), m: int32(len(m.diags))})
		memo.keepPlan(plan, out.Skills, w.diags, m.diags, w.collapsed)
	}
}

// walkedRegion appends the skills of the region f walked by this scan to
// out (those of m that are not skipped) and, with memo set, returns the
// region it makes, recorded in regions: the region of the scan before at
// its folder when it is found as it was, so that its skills are published
// as the very values.
func (w *walker) walkedRegion(f *walked, m *manifests, memo *rootMemo, regions map[string]*region, out *[]events.ScannedSkill) *region {
	s0, d0, failed := len(*out), len(m.diags), false
	for _, sk := range w.skills[f.skills[0]:f.skills[1]] {
		if ss, ok := m.skill(sk); ok {
			*out = append(*out, ss)
		}
		failed = failed || m.anyFailed(sk)
	}
	if memo == nil {
		return nil
	}
	reg := w.newRegion(f, (*out)[s0:], m.diags[d0:], failed)
	if old := regions[reg.key]; old != nil && old.same(reg) {
		// Walked again (a whole rescan, a touched folder) and found as it
		// was: published as the very values, so that nothing downstream
		// sees a change.
		reg = old
		copy((*out)[s0:], old.skills)
	}
	reg.seen = memo.seq
	regions[reg.key] = reg
	if !reg.reusable {
		memo.unreusable = append(memo.unreusable, reg.key)
	}
	return reg
}

// newRegion makes the region of the walked piece f: out are the skills
// the scan made of it (carrying SKILL.md bytes, which the region drops),
// mdiags its manifest diagnostics; failed is set when one of its files
// could not be read.
func (w *walker) newRegion(f *walked, out []events.ScannedSkill, mdiags []events.Diagnostic, failed bool) *region {
	reg := &region{key: f.dir, rel: f.rel, depth: f.depth, reusable: f.ok && !failed,
		skills: make([]events.ScannedSkill, len(out)),
		wdiags: clipped(w.diags[f.diags[0]:f.diags[1]]),
		mdiags: clipped(mdiags)}
	for i, ss := range out {
		ss.SkillMD = nil
		reg.skills[i] = ss
	}
	for _, d := range reg.wdiags {
		if d.Rule == events.RuleUnreadable || d.Rule == events.RuleChangedInScan {
			reg.reusable = false
		}
	}
	return reg
}

// appendFiles appends the paths (in the root's file system) of the files
// the region describes: those of its skills' manifests.
func (reg *region) appendFiles(out []string) []string {
	for _, ss := range reg.skills {
		skDir := path.Join(reg.key, strings.TrimPrefix(ss.RelDir, reg.rel))
		for _, f := range ss.Files {
			out = append(out, path.Join(skDir, f.OnDisk()))
		}
	}
	return out
}

// staleFiles returns the files of the regions of the scan before that
// this rescan walks again (touched by the last invalidate, or not
// reusable): their digest cache entries are replaced by what it finds. A
// change inside regions costs a look at the folders above each touched
// path; one outside every region (a skill folder added or removed, a
// container changed) a look at every region.
func (m *rootMemo) staleFiles() []string {
	stale := make(map[string]bool, len(m.dc.touched)+len(m.unreusable))
	for _, t := range m.dc.touched {
		d := t
		for m.regions[d] == nil && d != "." {
			d = path.Dir(d)
		}
		if m.regions[d] == nil {
			stale = nil // outside every region
			break
		}
		stale[d] = true
	}
	var out []string
	if stale == nil {
		for key, reg := range m.regions {
			if !reg.reusable || m.dc.changed(key) {
				out = reg.appendFiles(out)
			}
		}
		return out
	}
	for _, key := range m.unreusable {
		stale[key] = true
	}
	for key := range stale {
		if reg := m.regions[key]; reg != nil {
			out = reg.appendFiles(out)
		}
	}
	return out
}

// same reports whether reg describes what o does: the same skills (but
// for SKILL.md bytes, which a region never holds) and diagnostics.
func (reg *region) same(o *region) bool {
	return reg.key == o.key && reg.rel == o.rel && reg.depth == o.depth && reg.reusable == o.reusable &&
		slices.EqualFunc(reg.skills, o.skills, sameSkill) && slices.Equal(reg.wdiags, o.wdiags) && slices.Equal(reg.mdiags, o.mdiags)
}

// sameSkill reports whether two scanned skills are equal but for their
// SKILL.md bytes.
func sameSkill(a, b events.ScannedSkill) bool {
	return a.Dir == b.Dir && a.RelDir == b.RelDir && a.RealDir == b.RealDir && a.DirID == b.DirID &&
		slices.EqualFunc(a.Files, b.Files, func(x, y events.File) bool {
			return x.Path == y.Path && x.DiskName == y.DiskName && x.Digest == y.Digest && x.Size == y.Size &&
				x.ModTime.Equal(y.ModTime) && x.MIME == y.MIME && x.Text == y.Text
		})
}

// clipped returns a copy of d, or nil when it is empty.
func clipped(d []events.Diagnostic) []events.Diagnostic {
	if len(d) == 0 {
		return nil
	}
	return append([]events.Diagnostic(nil), d...)
}
