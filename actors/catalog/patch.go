package catalog

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skilljack/skilljack-mcp/events"
)

// The incremental path of the builder (issue 12: "catalogs built
// incrementally ..., diffs computed from what changed, never by comparing
// whole catalogs"). The hasher publishes a rescan whose untouched skills
// are the very values of its scan before (their manifests shared), so the
// skills an edit changed are found by comparing pointers. When every
// changed skill keeps what decides who is served and in which order — its
// folder, qualified name, name, URI and SKILL.md path, served before and
// after — the new catalog is the last one with those skills replaced: no
// claim maps, no new memo, nothing parsed but the changed SKILL.md files.
// Anything else (a skill added, removed, renamed, skipped or a duplicate,
// other diagnostics of a scan, static mode, a new configuration or
// override set) takes the full build, which gives the same catalog.

// maxPatch is the most changed skills the incremental path takes; more go
// through the full build.
const maxPatch = 256

// patched is one skill the incremental path replaces.
type patched struct {
	src    string // its source's ID
	dir    string
	old    *built
	nb     *built
	index  int // its index in the scan
	served int // its index in the last catalog's skills
}

// patch returns the catalog of current built from the last one, and ok,
// when the incremental path applies; cat is nil when nothing changed (no
// new version). It commits what it built to the memo only when it applies.
func (b *Builder) patch(current map[string]events.SourceScanned) (cat *events.Catalog, ok bool) {
	prev := b.prev
	if prev == nil || b.cfg.Static || prev.Static || prev.ConfigSeq != b.cfg.Seq || prev.OverridesSeq != b.overrides.Seq {
		return nil, false
	}
	var changes []patched
	carried := false // an unchanged skill carries SKILL.md bytes
	for _, src := range b.cfg.Sources {
		scan := current[src.ID]
		sm := b.memo.sources[src.ID]
		if sm == nil || sm.src != src || sm.unread || len(scan.Skills) != len(sm.last) || !slices.Equal(scan.Diagnostics, sm.lastDiags) {
			return nil, false
		}
		for i := range scan.Skills {
			ss, was := &scan.Skills[i], &sm.last[i]
			if ss.Dir != was.Dir {
				return nil, false
			}
			// The same manifest array, at once; else compared file by
			// file: the first rescans after a start may make new arrays
			// of unchanged files, which must not make every skill look
			// changed (the first edit then took the full build).
			if sameScanned(ss, was) {
				carried = carried || ss.SkillMD != nil
				continue
			}
			o := sm.byDir[ss.Dir]
			if o == nil || len(changes) == maxPatch || !sameScanned(&o.ss, was) || holdsNoFM(sm, ss.Dir) {
				return nil, false
			}
			nb := b.memo.builtFor(src, ss, sm)
			served, ok := keepsPlace(prev, src, o, nb)
			if !ok {
				return nil, false
			}
			changes = append(changes, patched{src: src.ID, dir: ss.Dir, old: o, nb: nb, index: i, served: served})
		}
	}
	skills, diags, same, ok := b.apply(prev, changes)
	if !ok {
		return nil, false
	}
	b.commit(current, changes)
	if carried {
		b.dropBytes(current)
	} else {
		b.dropChangedBytes(current, changes)
	}
	b.logDiagnostics(diags)
	if same {
		return nil, true
	}
	cat = events.PatchCatalog(prev, prev.Version+1, false, skills, diags)
	cat.ConfigSeq, cat.OverridesSeq = b.cfg.Seq, b.overrides.Seq
	b.prev = cat
	return cat, true
}

// commit records in the memo what the incremental path built. A source
// memo is replaced, never changed: a persisted catalog being written on
// another goroutine reads the one it was given (persist.go). Its map is
// copied, which costs a copy of its table, not a rehash.
func (b *Builder) commit(current map[string]events.SourceScanned, changes []patched) {
	b.memo.rebuilt = 0
	for _, src := range b.cfg.Sources {
		old := b.memo.sources[src.ID]
		sm := &sourceMemo{src: old.src, byDir: old.byDir, unread: old.unread, noFM: old.noFM,
			last: current[src.ID].Skills, lastDiags: current[src.ID].Diagnostics}
		cloned := false
		for _, c := range changes {
			if c.src != src.ID || c.nb == c.old {
				continue
			}
			if !cloned {
				sm.byDir, cloned = maps.Clone(old.byDir), true
			}
			sm.byDir[c.dir] = c.nb
			b.memo.rebuilt++
		}
		b.memo.sources[src.ID] = sm
	}
}

// holdsNoFM reports whether the skill folder dir holds a SKILL.md without
// frontmatter of the source, whose note names a file of the skill holding
// it (its digest, its path).
func holdsNoFM(sm *sourceMemo, dir string) bool {
	for _, d := range sm.noFM {
		if strings.HasPrefix(d, dir+"/") || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// dropChangedBytes is [Builder.dropBytes] for a scan whose only skills
// carrying SKILL.md bytes are the changed ones: the scan kept holds them
// without.
func (b *Builder) dropChangedBytes(current map[string]events.SourceScanned, changes []patched) {
	for id, scan := range current {
		var skills []events.ScannedSkill
		for _, c := range changes {
			if c.src != id || scan.Skills[c.index].SkillMD == nil {
				continue
			}
			if skills == nil {
				skills = slices.Clone(scan.Skills)
			}
			skills[c.index].SkillMD = nil
		}
		if skills != nil {
			scan.Skills = skills
			b.scans[id] = scan
		}
	}
}

// keepsPlace reports whether nb, the new build of the skill o was built
// from, is served where o was in prev (its index there): both valid, o
// served, and the same folder, SKILL.md, qualified name, name and URI, so
// that no other skill's claim, order or diagnostic changes; a
// diagnostic about its SKILL.md may change its content, not its kind.
func keepsPlace(prev *events.Catalog, src events.Source, o, nb *built) (int, bool) {
	if !o.ok || !nb.ok || o.unread || nb.unread || o.noFM || nb.noFM || o.file != nb.file ||
		o.sk.QualifiedName != nb.sk.QualifiedName || o.sk.Name != nb.sk.Name || o.sk.URI != nb.sk.URI ||
		(o.diag == nil) != (nb.diag == nil) {
		return 0, false
	}
	if o.diag != nil && (o.diag.File != nb.diag.File || o.diag.Level != nb.diag.Level || o.diag.Rule != nb.diag.Rule || o.diag.Unserved != nb.diag.Unserved) {
		return 0, false
	}
	i, found := slices.BinarySearchFunc(prev.Skills, o.sk.URI, func(s *events.Skill, uri string) int { return strings.Compare(s.URI, uri) })
	if !found || prev.Skills[i].Dir != o.ss.Dir || prev.Skills[i].Source.ID != src.ID {
		return 0, false // not the one served: a duplicate
	}
	return i, true
}

// apply returns prev's skills and diagnostics with the changes made, and
// whether they show clients nothing new ([sameSkills]); ok is false when
// a changed diagnostic is not found in prev's.
func (b *Builder) apply(prev *events.Catalog, changes []patched) (skills []*events.Skill, diags []events.Diagnostic, same, ok bool) {
	skills, diags, same = prev.Skills, prev.Diagnostics, true
	for _, c := range changes {
		sk := c.nb.sk
		applyOverride(&sk, b.overrides.Overrides)
		if !sameSkills(prev.Skills[c.served:c.served+1], []*events.Skill{&sk}) {
			if same {
				skills = slices.Clone(prev.Skills)
			}
			same = false
			skills[c.served] = &sk
		}
		if c.old.diag == nil || *c.old.diag == *c.nb.diag {
			continue
		}
		i := slices.Index(diags, *c.old.diag)
		if i < 0 {
			return nil, nil, false, false
		}
		if &diags[0] == &prev.Diagnostics[0] {
			diags = slices.Clone(diags)
		}
		diags[i] = *c.nb.diag
		if same {
			skills = slices.Clone(prev.Skills)
		}
		same = false
	}
	return skills, diags, same, true
}
