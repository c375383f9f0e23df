package hasher

import (
	"path"
	"path/filepath"
	"slices"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// A change confined to skill folders costs what those folders cost (issue
// 12: "CPU proportional to the change, not the corpus"). When every path
// the last invalidate marked sits inside a region of the scan before
// (regions.go), nothing discovery reads outside regions changed: the root
// and container listings, the folders between them and the regions, the
// findings there. A walk of the root would then meet the very regions in
// the very order, with the very diagnostics between them. So the rescan
// replays the walk before instead ([rootMemo.plan]): it walks again only
// the touched regions (and the unreusable ones), at their place in the
// order, and splices what it finds into the skills and diagnostics of the
// scan before, copied in bulk — no listing, map lookup or region visited
// for the untouched ones. Whenever that is not certain it walks the root
// as before: the last walk followed a link or was a whole rescan, the
// root is a skill folder, a marked path (or a listing marked stale) lies
// outside every region or in a container folder (.claude/skills, skills)
// — as does any symbolic link outside skill folders, marked at every
// invalidate —, or a touched region is a container folder itself (a skill
// named "skills": without its SKILL.md it would be a container).

// replay is what a replay walks again: the plan indexes of the regions,
// ascending, and for each, where its walk sits in the walker (spans).
type replay struct {
	redo  []int
	spans []span
}

// span is where the walk of one region sits in a walker: its pieces and
// its diagnostics.
type span struct {
	pieces, diags [2]int
}

// replayable returns what a replay of m's plan walks again after the last
// invalidate, or nil when the walk must not be replayed.
func (m *rootMemo) replayable() *replay {
	if m.plan == nil || m.whole || m.followed || m.regions == nil {
		return nil
	}
	set := map[*region]bool{}
	for _, t := range m.dc.touched {
		if !m.enclose(t, false, set) {
			return nil
		}
	}
	for _, d := range m.dc.relisted {
		if !m.enclose(d, true, set) {
			return nil
		}
	}
	for _, key := range m.unreusable {
		if reg := m.regions[key]; reg != nil {
			set[reg] = true
		}
	}
	for reg := range set {
		if reg.depth == 0 || slices.Contains(skill.Containers(), reg.key) {
			return nil
		}
	}
	rp := &replay{}
	if len(set) > 0 {
		regs := make([]*region, 0, len(set))
		for reg := range set {
			regs = append(regs, reg)
		}
		for i, it := range m.plan {
			if it.reg != nil && slices.Contains(regs, it.reg) {
				rp.redo = append(rp.redo, i)
			}
		}
		if len(rp.redo) != len(set) {
			return nil // not in the plan: the two disagree
		}
	}
	return rp
}

// enclose adds to set the region of m nearest above p (p itself with self
// set) and every region above that one, and reports whether there is one
// with no container folder of the walk ([rootMemo.collapsed], walked
// apart) between it and p, nor at p.
func (m *rootMemo) enclose(p string, self bool, set map[*region]bool) bool {
	if m.collapsed[p] || p == "." && !self {
		return false
	}
	d := p
	if !self {
		d = path.Dir(p)
	}
	for m.regions[d] == nil {
		if d == "." || m.collapsed[d] {
			return false
		}
		d = path.Dir(d)
	}
	for ; ; d = path.Dir(d) {
		if reg := m.regions[d]; reg != nil {
			set[reg] = true
		}
		if d == "." {
			return true
		}
	}
}

// replay is discover for a rescan that replays memo's plan: it walks the
// regions rp names as the walk of their parent folder would, recording
// where each walk sits.
func (w *walker) replay(memo *rootMemo, rp *replay) {
	w.warned = map[string]bool{}
	w.entered = map[string]string{}
	w.collapsed = memo.collapsed
	for _, k := range rp.redo {
		reg := memo.plan[k].reg
		sp := span{pieces: [2]int{len(w.pieces), 0}, diags: [2]int{len(w.diags), 0}}
		w.visit(reg.key, reg.rel, filepath.Join(w.rootReal, filepath.FromSlash(reg.key)), reg.depth, false)
		sp.pieces[1], sp.diags[1] = len(w.pieces), len(w.diags)
		rp.spans = append(rp.spans, sp)
	}
}

// staleFiles returns the files of the regions rp walks again, whose digest
// cache entries are replaced by what the rescan finds.
func (rp *replay) staleFiles(memo *rootMemo) []string {
	var out []string
	for _, k := range rp.redo {
		out = memo.plan[k].reg.appendFiles(out)
	}
	return out
}

// planBuilder makes what a replayed scan publishes — skills, the walker's
// diagnostics (wd) and the manifest ones (md) — and its plan, as segments
// of the plan before.
type planBuilder struct {
	segs   []planSeg
	skills []events.ScannedSkill
	wd, md []events.Diagnostic
	end    int // where in wd the walker's diagnostics of the last region end
}

// planSeg is a run of a new plan: the items [a, z) of the plan before, as
// they were but for their offsets (shifted by ds, dw, dm; the first one's
// pre is pre), or, with walked set, what the walk of the item a made of it.
type planSeg struct {
	a, z       int
	ds, dw, dm int32
	pre        int32
	walked     bool
	items      []planItem
}

// copyPlan appends the items [a, z) of memo's plan (z may be its length:
// the sentinel included) with their skills and diagnostics, as they were.
func (b *planBuilder) copyPlan(memo *rootMemo, a, z int) {
	if a >= z {
		return
	}
	o := memo.plan
	s1, w1, m1 := len(memo.skills), len(memo.wdiags), len(memo.mdiags)
	if z < len(o) {
		s1, w1, m1 = int(o[z].s), int(o[z].pre), int(o[z].m)
	}
	// What was met before the first one since the last region (a walk
	// spliced in) is its too: pre is where that began.
	seg := planSeg{a: a, z: z, pre: int32(b.end),
		ds: int32(len(b.skills)) - o[a].s, dw: int32(len(b.wd)) - o[a].pre, dm: int32(len(b.md)) - o[a].m}
	b.skills = append(b.skills, memo.skills[o[a].s:s1]...)
	b.wd = append(b.wd, memo.wdiags[o[a].pre:w1]...)
	b.md = append(b.md, memo.mdiags[o[a].m:m1]...)
	b.end = w1 + int(seg.dw)
	b.segs = append(b.segs, seg)
}

// walkAgain appends what the walk of memo's plan item k found (the span
// sp of w): the skills and diagnostics of the regions it met, and those it
// met outside them.
func (b *planBuilder) walkAgain(memo *rootMemo, w *walker, m *manifests, k int, sp span) {
	it := memo.plan[k]
	b.wd = append(b.wd, memo.wdiags[it.pre:it.d]...)
	seg, dpos := planSeg{a: k, z: k + 1, walked: true}, sp.diags[0]
	for _, pc := range w.pieces[sp.pieces[0]:sp.pieces[1]] {
		f := pc.f
		b.wd = append(b.wd, w.diags[dpos:f.diags[0]]...)
		item := planItem{s: int32(len(b.skills)), pre: int32(b.end), d: int32(len(b.wd)), m: int32(len(b.md))}
		b.wd = append(b.wd, w.diags[f.diags[0]:f.diags[1]]...)
		b.end, dpos = len(b.wd), f.diags[1]
		m.diags = b.md
		item.reg = w.walkedRegion(f, m, memo, memo.regions, &b.skills)
		b.md = m.diags
		seg.items = append(seg.items, item)
	}
	b.wd = append(b.wd, w.diags[dpos:sp.diags[1]]...)
	b.segs = append(b.segs, seg)
}

// plan returns the new plan: memo's own, changed in place, when every
// region walked again is one region with as much in it as before (an edit
// inside a skill folder), else a new one.
func (b *planBuilder) plan(memo *rootMemo) []planItem {
	o := memo.plan
	same := true
	for _, sg := range b.segs {
		if sg.walked {
			it := o[sg.a]
			same = same && len(sg.items) == 1 && sg.items[0].s == it.s && sg.items[0].pre == it.pre && sg.items[0].d == it.d && sg.items[0].m == it.m
		} else {
			same = same && sg.ds == 0 && sg.dw == 0 && sg.dm == 0 && sg.pre == o[sg.a].pre
		}
	}
	if same {
		for _, sg := range b.segs {
			if sg.walked {
				o[sg.a].reg = sg.items[0].reg
			}
		}
		return o
	}
	plan := make([]planItem, 0, len(o)+len(b.segs))
	for _, sg := range b.segs {
		if sg.walked {
			plan = append(plan, sg.items...)
			continue
		}
		first := len(plan)
		for _, it := range o[sg.a:sg.z] {
			it.s, it.pre, it.d, it.m = it.s+sg.ds, it.pre+sg.dw, it.d+sg.dw, it.m+sg.dm
			plan = append(plan, it)
		}
		plan[first].pre = sg.pre
	}
	return plan
}

// assembleReplay is assemble for a scan that replayed memo's plan
// ([walker.replay]): the skills and diagnostics of the scan before, with
// those of the regions walked again in their place, published as assemble
// publishes them; it records the new plan and regions in memo.
func assembleReplay(out *events.SourceScanned, w *walker, m *manifests, memo *rootMemo, rp *replay) {
	memo.seq++
	memo.unreusable = nil
	b := planBuilder{
		skills: make([]events.ScannedSkill, 0, len(memo.skills)+len(w.skills)),
		wd:     make([]events.Diagnostic, 0, len(memo.wdiags)+len(w.diags)),
		md:     make([]events.Diagnostic, 0, len(memo.mdiags)+4),
	}
	inPlace := true // every region walked again has as many skills as before
	next := 0
	for j, k := range rp.redo {
		b.copyPlan(memo, next, k)
		s0 := len(b.skills)
		b.walkAgain(memo, w, m, k, rp.spans[j])
		inPlace = inPlace && len(b.skills)-s0 == int(memo.plan[k+1].s-memo.plan[k].s)
		next = k + 1
	}
	b.copyPlan(memo, next, len(memo.plan))
	olds := make([]*region, len(rp.redo))
	for i, k := range rp.redo {
		olds[i] = memo.plan[k].reg
	}
	if inPlace {
		// The private copy keeps its layout: only the regions walked again
		// change in it.
		for _, k := range rp.redo {
			s, e := memo.plan[k].s, memo.plan[k+1].s
			stripped(memo.skills[s:e], b.skills[s:e])
		}
		memo.plan, memo.wdiags, memo.mdiags = b.plan(memo), clip(b.wd), clip(b.md)
	} else {
		memo.keepPlan(b.plan(memo), b.skills, b.wd, b.md, memo.collapsed)
	}
	for _, old := range olds {
		if memo.regions[old.key] == old && old.seen != memo.seq {
			delete(memo.regions, old.key)
		}
	}
	out.Skills, out.Diagnostics, m.diags = b.skills, b.wd, b.md
	if len(b.wd) == 0 {
		out.Diagnostics = nil // as a walk that met none leaves it
	}
	memo.followed, memo.whole = false, false
}

// keepPlan records plan in m with what its scan published: skills (copied
// without SKILL.md bytes), the walker's diagnostics wd and the manifest
// ones md, and the container folders collapsed.
func (m *rootMemo) keepPlan(plan []planItem, skills []events.ScannedSkill, wd, md []events.Diagnostic, collapsed map[string]bool) {
	m.plan, m.wdiags, m.mdiags, m.collapsed = plan, clip(wd), clip(md), collapsed
	m.skills = make([]events.ScannedSkill, len(skills))
	stripped(m.skills, skills)
}

// forgetPlan drops m's plan: the next rescan walks the root.
func (m *rootMemo) forgetPlan() {
	m.plan, m.skills, m.wdiags, m.mdiags, m.collapsed = nil, nil, nil, nil, nil
}

// stripped copies src into dst without SKILL.md bytes.
func stripped(dst, src []events.ScannedSkill) {
	copy(dst, src)
	for i := range dst {
		dst[i].SkillMD = nil
	}
}

// clip returns d with its capacity cut to its length, so that nothing
// appended to it reaches what it holds.
func clip(d []events.Diagnostic) []events.Diagnostic { return d[:len(d):len(d)] }
