// Package catalog is the catalog builder actor (DESIGN "catalog builder"):
// it keeps the newest configuration, scans and overrides and publishes each
// new catalog version, and persists the last one so that a restart serves
// it at once (persist.go). [Build] is its core: no I/O but reading a
// SKILL.md whose bytes a scan does not carry.
package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// Agent Skills and SEP-2640 limits; going over any of them is a warning,
// never a reason to drop a skill. Going over a frontmatter limit (the
// description's, compatibility's) also leaves the skill out of skills/list
// (issue 13 item 4); the per-skill file limits do not, as SEP2640-R44 lets
// hosts accept larger skills.
const (
	maxDescriptionLen   = 1024     // ASF-R11
	maxCompatibilityLen = 500      // ASF-R13
	maxSkillFiles       = 512      // SEP2640-R43
	maxSkillBytes       = 16 << 20 // SEP2640-R43: 16 MiB
)

// Build turns one configuration, the newest scan of each of its
// sources (keyed by [events.Source.ID]) and the invocation overrides into
// catalog version version. It does no I/O but read the SKILL.md of a scan
// that does not carry its bytes ([skill.ReadVerified]), and no logging; what is off goes
// into the catalog's Diagnostics (one per SKILL.md, plus one per duplicate,
// plus the scans' own). Sources are taken in cfg order; a source without a
// scan contributes nothing. A SKILL.md without usable frontmatter or without
// a non-empty string description is skipped (BR-07), unless it has no
// frontmatter at all and a served skill holds it among its files: then it
// is only a note (issue 13 item 7); naming problems are
// warnings (BR-08, BR-09, BR-12). A duplicate qualified name or URI goes to
// the first source; within one source, to the skill whose name equals its
// folder name (ASF-R09), then to the first found, so a misnamed sibling
// never hides a correct skill. The arguments are only read; the result
// shares the scans' file slices and must not be modified.
func Build(version uint64, cfg events.SourcesConfigured, scans map[string]events.SourceScanned, overrides map[string]events.Override) *events.Catalog {
	skills, diags := (&memo{}).build(cfg, scans, overrides)
	diags = append(diags, unmatchedOverrides(overrides, skills)...)
	return events.NewCatalog(version, cfg.Static, skills, diags)
}

// built is what [buildSkill] made of one scanned skill: kept by a [memo],
// it is reused while the scanned skill stays the same, so that a new
// catalog version shares every unchanged skill with the one before.
type built struct {
	ss   events.ScannedSkill // what it was built from
	sk   events.Skill        // before overrides
	diag *events.Diagnostic  // the one diagnostic about its SKILL.md, or nil
	ok   bool                // served (not skipped)
	// findings is what diag reports about a served skill's SKILL.md,
	// without the verdict: a duplicate that is not served after all
	// reports them beside its own verdict instead.
	findings string
	// noFM is set when a skipped SKILL.md does not begin with frontmatter
	// at all (issue 13 item 7): a served skill may hold it as a file.
	noFM bool
	file string // its SKILL.md as it is on disk
	// unread is set when the SKILL.md could not be read (the scan did not
	// carry its bytes, and they no longer matched): never reused.
	unread bool
}

// candidate is one scanned skill of a source during a build: what was
// built of it, and the diagnostic if it lost to a duplicate.
type candidate struct {
	b   *built
	dup *events.Diagnostic
}

// memo keeps, per source, what the last build made of each scanned skill
// (by folder), so that the next build parses and validates only the skills
// whose scanned values changed: with one SKILL.md edited in 10,000 skills,
// one. The zero memo keeps nothing from build to build.
type memo struct {
	sources map[string]*sourceMemo // by source ID; nil: nothing is kept
	// rebuilt counts the skills the last build made anew.
	rebuilt int
}

// sourceMemo is what a [memo] keeps of one source.
type sourceMemo struct {
	src   events.Source
	byDir map[string]*built
	// last and lastDiags are the skills and diagnostics of the scan last
	// built, as the hasher published them: the builder's incremental path
	// (patch.go) compares the next scan with them. unread is set when a
	// SKILL.md of it could not be read (the next build reads it again);
	// noFM lists the folders of the SKILL.md files without frontmatter
	// (whose notes depend on the skills holding them).
	last      []events.ScannedSkill
	lastDiags []events.Diagnostic
	unread    bool
	noFM      []string
}

// build is [Build] without the catalog: its skills (unsorted) and
// diagnostics, but for those about unmatched overrides (which static mode's
// renames change: see [Builder.fixSkillSet]). With a keeping memo (sources not nil) it reuses what the
// last build made of every scanned skill that stayed the same, and keeps
// what this one made for the next.
func (m *memo) build(cfg events.SourcesConfigured, scans map[string]events.SourceScanned, overrides map[string]events.Override) ([]*events.Skill, []events.Diagnostic) {
	n := 0
	for _, src := range cfg.Sources {
		n += len(scans[src.ID].Skills)
	}
	st := &buildState{
		skills:    make([]*events.Skill, 0, n),
		slab:      make([]events.Skill, 0, n),
		byName:    make(map[string]string, n),
		byURI:     make(map[string]string, n),
		overrides: overrides,
	}
	var kept map[string]*sourceMemo
	if m.sources != nil {
		kept = make(map[string]*sourceMemo, len(cfg.Sources))
	}
	m.rebuilt = 0
	for _, src := range cfg.Sources {
		scan, ok := scans[src.ID]
		if !ok {
			continue
		}
		var old, next *sourceMemo
		if kept != nil {
			if o := m.sources[src.ID]; o != nil && o.src == src {
				old = o
			}
			next = &sourceMemo{src: src, byDir: make(map[string]*built, len(scan.Skills))}
			kept[src.ID] = next
		}
		st.diags = append(st.diags, scan.Diagnostics...)
		cands, order := m.candidates(src, scan.Skills, old, next)
		if next != nil {
			next.last, next.lastDiags = scan.Skills, scan.Diagnostics
			for _, c := range cands {
				next.unread = next.unread || c.b.unread
				if c.b.noFM {
					next.noFM = append(next.noFM, c.b.ss.Dir)
				}
			}
		}
		claimed := st.claim(order, len(scan.Skills))
		st.sourceDiags(cands, claimed)
	}
	if kept != nil {
		m.sources = kept
	}
	return st.skills, st.diags
}

// buildState is what one [memo.build] accumulates over the sources: the
// skills served, the diagnostics, and the qualified names and URIs taken
// (each by the SKILL.md that took it).
type buildState struct {
	skills []*events.Skill
	// slab holds the skills served, one allocation for all of them.
	slab          []events.Skill
	diags         []events.Diagnostic
	byName, byURI map[string]string
	overrides     map[string]events.Override
}

// candidates returns one candidate per scanned skill of src (reusing what
// old built of a skill that stayed the same, and recording each in next
// when keeping), and the served ones in claiming order: skills whose name
// matches their folder first, then the rest, each group in walk order.
func (m *memo) candidates(src events.Source, scanned []events.ScannedSkill, old, next *sourceMemo) ([]candidate, []*candidate) {
	cands := make([]candidate, len(scanned))
	var preferred, rest []*candidate
	builts := m.builtAll(src, scanned, old)
	for i := range scanned {
		ss := &scanned[i]
		b := builts[i]
		if next != nil {
			if _, twice := next.byDir[ss.Dir]; !twice {
				next.byDir[ss.Dir] = b
			}
		}
		c := &cands[i]
		c.b = b
		if !b.ok {
			continue
		}
		if b.sk.Name == path.Base(ss.RelDir) {
			preferred = append(preferred, c)
		} else {
			rest = append(rest, c)
		}
	}
	return cands, append(preferred, rest...)
}

// parallelMin is how many scanned skills a source must have for
// [memo.builtAll] to build them on several cores.
const parallelMin = 256

// builtAll returns [memo.builtFor] of every scanned skill, in order. A large
// source is built on every core (issue 12: parsing 10,000 frontmatters is
// on the way to a first start's initialize); builtFor shares nothing but
// the count of rebuilt skills, which each worker keeps apart.
func (m *memo) builtAll(src events.Source, scanned []events.ScannedSkill, old *sourceMemo) []*built {
	out := make([]*built, len(scanned))
	workers := runtime.GOMAXPROCS(0)
	if len(scanned) < parallelMin || workers < 2 {
		for i := range scanned {
			out[i] = m.builtFor(src, &scanned[i], old)
		}
		return out
	}
	const chunk = 32
	var next, rebuilt atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var own memo
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= len(scanned) {
					break
				}
				for i := lo; i < min(lo+chunk, len(scanned)); i++ {
					out[i] = own.builtFor(src, &scanned[i], old)
				}
			}
			rebuilt.Add(int64(own.rebuilt))
		})
	}
	wg.Wait()
	m.rebuilt += int(rebuilt.Load())
	return out
}

// builtFor returns what old built of ss when ss stayed the same, else a
// new build of it (counted in m.rebuilt).
func (m *memo) builtFor(src events.Source, ss *events.ScannedSkill, old *sourceMemo) *built {
	if old != nil {
		if o := old.byDir[ss.Dir]; o != nil && !o.unread && sameScanned(&o.ss, ss) {
			return o
		}
		if o := old.byDir[ss.Dir]; o != nil && !o.unread && completes(&o.ss, ss) {
			// The complete scan after a partial one: the same SKILL.md and
			// files, digests known now. What was built of the SKILL.md
			// stands (the files count in it by number and size only).
			nb := *o
			nb.ss = *ss
			nb.ss.SkillMD = nil
			if nb.ok {
				nb.sk.Files = ss.Files
			}
			return &nb
		}
	}
	m.rebuilt++
	full := *ss
	b := &built{ss: *ss, file: mdFile(src, *ss)}
	b.ss.SkillMD = nil // the catalog holds no SKILL.md bytes (issue 12)
	if full.SkillMD == nil && len(full.Files) > 0 {
		data, err := readSkillMD(src, ss)
		if err != nil {
			b.diag = &events.Diagnostic{File: b.file, Level: events.LevelError, Version: ss.Files[0].Digest,
				Message: fmt.Sprintf("skipped %s: cannot read it: %v; it is read again at the next scan", b.file, err)}
			b.unread = true
			return b
		}
		full.SkillMD = data
	}
	b.sk, b.diag, b.findings, b.ok = buildSkill(src, full)
	if !b.ok {
		_, err := skill.ParseFrontmatter(full.SkillMD)
		b.noFM = errors.Is(err, skill.ErrNoFrontmatter)
	}
	return b
}

// readSkillMD reads the SKILL.md of ss, a scan that does not carry its
// bytes (the hasher had its digest cached), through the skill opener
// ([skill.ReadVerified]): only the bytes its manifest entry describes. A
// file changed since it was hashed gives an error; the rescan its change
// brings carries the new bytes.
func readSkillMD(src events.Source, ss *events.ScannedSkill) ([]byte, error) {
	if src.Kind == events.SourceBundled {
		return nil, errors.New("the scan of the bundled source carries no bytes")
	}
	dir := ss.RealDir
	if dir == "" {
		dir = ss.Dir
	}
	md := &ss.Files[0]
	return skill.ReadVerified(dir, ss.DirID, md.OnDisk(), md.Size, md.Digest)
}

// claim serves the candidates in order unless their qualified name or URI
// is taken (then the candidate gets its duplicate diagnostic), applying
// the overrides, and returns the SKILL.md files of this source served.
func (st *buildState) claim(order []*candidate, n int) map[string]bool {
	claimed := make(map[string]bool, n)
	for _, c := range order {
		sk := c.b.sk
		winner, dup := st.byName[sk.QualifiedName]
		if !dup {
			winner, dup = st.byURI[sk.URI]
		}
		if dup {
			why := "the first source wins"
			if claimed[winner] {
				why = "in one source, a skill whose name equals its folder name wins, then the first found"
			}
			// Never shadowed silently: the collision is surfaced (SEP2640-R74).
			c.dup = &events.Diagnostic{File: c.b.file, Level: events.LevelWarn, Unserved: true, Version: c.b.ss.Files[0].Digest, Rule: "SEP2640-R74",
				Message: fmt.Sprintf("%s: duplicate skill %s (%s): the one from %s wins (%s); this one is not served",
					c.b.file, sk.QualifiedName, sk.URI, winner, why)}
			continue
		}
		st.byName[sk.QualifiedName] = c.b.file
		st.byURI[sk.URI] = c.b.file
		claimed[c.b.file] = true
		applyOverride(&sk, st.overrides)
		st.slab = append(st.slab, sk)
		st.skills = append(st.skills, &st.slab[len(st.slab)-1])
	}
	return claimed
}

// sourceDiags appends the diagnostics of one source's candidates, in walk
// order: a SKILL.md without frontmatter that a served skill holds as a
// file is a note instead of a skip (issue 13 item 7).
func (st *buildState) sourceDiags(cands []candidate, claimed map[string]bool) {
	for _, c := range cands {
		if c.b.noFM {
			if n, ok := noteServedAsFile(c.b, cands, claimed); ok {
				st.diags = append(st.diags, n)
				continue
			}
		}
		switch {
		case c.dup != nil && c.b.findings != "":
			// One verdict: a duplicate is not served, so its findings do
			// not say "served" beside it.
			d := *c.dup
			d.Rule += "," + c.b.diag.Rule
			d.Message += "; its SKILL.md also has: " + c.b.findings
			st.diags = append(st.diags, d)
			continue
		case c.b.diag != nil:
			st.diags = append(st.diags, *c.b.diag)
		}
		if c.dup != nil {
			st.diags = append(st.diags, *c.dup)
		}
	}
}

// applyOverride applies the invocation override of sk's qualified name,
// if any, to sk.
func applyOverride(sk *events.Skill, overrides map[string]events.Override) {
	o, ok := overrides[sk.QualifiedName]
	if !ok {
		return
	}
	if o.Assistant != nil {
		sk.ModelInvocable, sk.AssistantOverridden = *o.Assistant, true
	}
	if o.User != nil {
		sk.UserInvocable, sk.UserOverridden = *o.User, true
	}
}

// sameScanned reports whether b would build the same skill as a: the same
// folder (path, identity) and the same manifest. The SKILL.md bytes are
// not compared (nor kept): they are exactly the bytes Files[0]'s digest
// describes.
// Manifests sharing one backing array (a scan passed on by reference) are
// the same without a look at their files.
func sameScanned(a, b *events.ScannedSkill) bool {
	if a.Dir != b.Dir || a.RelDir != b.RelDir || a.RealDir != b.RealDir || a.DirID != b.DirID ||
		len(a.Files) != len(b.Files) {
		return false
	}
	if len(a.Files) == 0 || &a.Files[0] == &b.Files[0] {
		return true
	}
	for i := range a.Files {
		if !sameFile(&a.Files[i], &b.Files[i]) {
			return false
		}
	}
	return true
}

// completes reports whether b is a, a skill of a partial scan, with the
// digests of a's pending files known: the same folder and SKILL.md, and
// the same files by path, size and modification time, each equal or
// pending in a ([events.SourceScanned.Partial], issue 12).
func completes(a, b *events.ScannedSkill) bool {
	if a.Dir != b.Dir || a.RelDir != b.RelDir || a.RealDir != b.RealDir || a.DirID != b.DirID ||
		len(a.Files) != len(b.Files) || len(a.Files) == 0 || !sameFile(&a.Files[0], &b.Files[0]) {
		return false
	}
	for i := 1; i < len(a.Files); i++ {
		x, y := &a.Files[i], &b.Files[i]
		if x.Digest == "" {
			if x.Path != y.Path || x.DiskName != y.DiskName || x.Size != y.Size || !x.ModTime.Equal(y.ModTime) {
				return false
			}
		} else if !sameFile(x, y) {
			return false
		}
	}
	return true
}

// sameFile reports whether two manifest entries are equal.
func sameFile(a, b *events.File) bool {
	return a.Path == b.Path && a.Digest == b.Digest && a.Size == b.Size && a.DiskName == b.DiskName &&
		a.MIME == b.MIME && a.Text == b.Text && a.ModTime.Equal(b.ModTime)
}

// servedAsFile returns the note about file, the SKILL.md without frontmatter
// of folder dir, when parent — the served skill in folder parentDir — holds
// it among its files (SEP2640-R22, issue 13 item 7).
func servedAsFile(file, dir, parentDir string, parent *events.Skill, served bool) (events.Diagnostic, bool) {
	if !served || dir == parentDir {
		return events.Diagnostic{}, false
	}
	rel, err := filepath.Rel(parentDir, file)
	if parent.Source.Kind == events.SourceBundled {
		rel, err = strings.TrimPrefix(file, parentDir+"/"), nil
	}
	rel = filepath.ToSlash(rel)
	if err != nil || !filepath.IsLocal(rel) {
		return events.Diagnostic{}, false
	}
	for _, f := range parent.Files[1:] {
		if f.Path == rel {
			return events.Diagnostic{File: file, Level: events.LevelNote, Rule: "SEP2640-R22", Version: f.Digest,
				Message: fmt.Sprintf("%s has no frontmatter, so it is not a skill of its own; served as the file %s of skill %s", file, rel, parent.QualifiedName)}, true
		}
	}
	return events.Diagnostic{}, false
}

// noteServedAsFile returns the note about b, a SKILL.md without
// frontmatter, when a served skill of the same source (the innermost
// first: cands are in walk order, parents before children) holds it among
// its files.
func noteServedAsFile(b *built, cands []candidate, claimed map[string]bool) (events.Diagnostic, bool) {
	for _, p := range slices.Backward(cands) {
		if n, ok := servedAsFile(b.file, b.ss.Dir, p.b.ss.Dir, &p.b.sk, claimed[p.b.file]); ok {
			return n, true
		}
	}
	return events.Diagnostic{}, false
}

// unmatchedOverrides warns, once per key and in key order, about every
// invocation override whose key is no served skill's qualified name: it
// does nothing, which a user who reordered sources or used a bare name
// would not notice. A key that is the last segment of exactly one
// qualified name gets that name as a suggestion (issue 13 item 9).
func unmatchedOverrides(overrides map[string]events.Override, skills []*events.Skill) []events.Diagnostic {
	var keys []string
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var diags []events.Diagnostic
	for _, k := range keys {
		var suggest []string
		found := false
		for i := range skills {
			q := skills[i].QualifiedName
			if q == k {
				found = true
				break
			}
			if strings.HasSuffix(q, "__"+k) || skills[i].Name == k {
				suggest = append(suggest, q)
			}
		}
		if found {
			continue
		}
		msg := fmt.Sprintf("%s: the override %q names no served skill, so it changes nothing; keys are qualified names such as <source folder>__<skill>", overridesKey, k)
		if len(suggest) == 1 {
			msg += fmt.Sprintf(" (did you mean %q?)", suggest[0])
		} else if len(suggest) > 1 {
			msg += fmt.Sprintf(" (it could be any of %s)", strings.Join(suggest, ", "))
		}
		diags = append(diags, events.Diagnostic{File: overridesKey, Level: events.LevelWarn, Rule: events.RuleOverrideUnused, Message: msg})
	}
	return diags
}

// overridesKey is the config file key of the invocation overrides; it names
// the "file" of their diagnostics.
const overridesKey = "skillInvocationOverrides"

// mdFile names a scanned skill's SKILL.md as it is on disk.
func mdFile(src events.Source, ss events.ScannedSkill) string {
	name := "SKILL.md"
	if len(ss.Files) > 0 {
		name = ss.Files[0].OnDisk()
	}
	if src.Kind == events.SourceBundled {
		return path.Join(ss.Dir, name)
	}
	return filepath.Join(ss.Dir, filepath.FromSlash(name))
}

// buildSkill validates one scanned skill. ok is false when it is skipped;
// d is the one diagnostic about its SKILL.md, or nil; found is what d
// says is off about a served skill, without the verdict.
func buildSkill(src events.Source, ss events.ScannedSkill) (sk events.Skill, d *events.Diagnostic, found string, ok bool) {
	file := mdFile(src, ss)
	var version string
	if len(ss.Files) > 0 {
		version = ss.Files[0].Digest
	}
	fm, desc, reason := readFrontmatter(ss)
	if reason != "" {
		return events.Skill{}, &events.Diagnostic{File: file, Level: events.LevelError, Rule: "ASF-R23", Version: version,
			Message: fmt.Sprintf("skipped %s: %s", file, reason)}, "", false
	}
	var f findings
	f.parsing(fm)
	name, listed := f.name(fm, path.Base(ss.RelDir))
	listed = f.limits(fm, desc, name, ss.Files) && listed
	sk = newSkill(src, ss, fm, name, desc, listed)
	if len(f.texts) > 0 {
		found = strings.Join(f.texts, "; ")
		msg := fmt.Sprintf("%s: %s; served", file, found)
		if !listed {
			// One policy (issue 13 item 4): an entry a strict SEP-2640 client
			// would reject is not offered to it; everything else serves it.
			msg = fmt.Sprintf("%s: %s; served through tools, prompts and resources, but left out of skills/list and skill://index.json, whose strict clients would reject its entry",
				file, strings.Join(f.texts, "; "))
		}
		d = &events.Diagnostic{File: file, Level: events.LevelWarn, Rule: strings.Join(f.rules, ","), Message: msg, Version: version, Unserved: !listed}
	}
	return sk, d, found, true
}

// readFrontmatter parses the frontmatter of ss's SKILL.md and returns it
// with the description, or the reason the skill is skipped (ASF-R11,
// ASF-R23).
func readFrontmatter(ss events.ScannedSkill) (fm *skill.Frontmatter, desc, reason string) {
	if len(ss.Files) == 0 {
		return nil, "", "the manifest is empty"
	}
	fm, err := skill.ParseFrontmatter(ss.SkillMD)
	if err != nil {
		return nil, "", err.Error()
	}
	desc, descIsString, descPresent := fm.Str("description")
	switch {
	case !descPresent:
		return nil, "", "the frontmatter has no description (ASF-R11)"
	case !descIsString:
		return nil, "", "the description is not a string but " + fm.KindOf("description") + " (ASF-R11)"
	case strings.TrimSpace(desc) == "":
		return nil, "", "the description is empty (ASF-R11)"
	}
	return fm, desc, ""
}

// findings collects what is off about a served skill's SKILL.md, and the
// rule IDs it breaks, for its one warning.
type findings struct {
	texts, rules []string
}

func (f *findings) note(rule, format string, args ...any) {
	f.texts = append(f.texts, fmt.Sprintf(format, args...))
	f.rule(rule)
}

func (f *findings) rule(rule string) {
	if rule != "" && !slices.Contains(f.rules, rule) {
		f.rules = append(f.rules, rule)
	}
}

// parsing notes how the frontmatter was read: a line-based fallback
// (BR-01) and keys given more than once (ASF-R27).
func (f *findings) parsing(fm *skill.Frontmatter) {
	if fm.Fallback != "" {
		// Strict YAML loaders reject this frontmatter (ASF-R23).
		f.note("ASF-R23", "strict YAML parsing failed (%s); the line-based key: value reading was used", fm.Fallback)
	}
	if len(fm.DupKeys) > 0 {
		quoted := make([]string, len(fm.DupKeys))
		for i, k := range fm.DupKeys {
			quoted[i] = strconv.Quote(k)
		}
		f.note("ASF-R27", "frontmatter keys given more than once: %s; the last occurrence of each is used", strings.Join(quoted, ", "))
	}
}

// name returns the name the skill is served under — its frontmatter name,
// or its folder name when that one is missing, not a string, empty or not
// a safe URI path segment — and whether it is listed in skills/list (a
// valid name, equal to its folder name or only differing from it), noting
// the naming rules it breaks (ASF-R04..R09).
func (f *findings) name(fm *skill.Frontmatter, folder string) (name string, listed bool) {
	rawName, nameIsString, namePresent := fm.Str("name")
	name = strings.TrimSpace(rawName)
	switch {
	case !namePresent:
		f.note("ASF-R04", "name is missing; the folder name %q is used", folder)
		return folder, false
	case !nameIsString:
		f.note("ASF-R04", "name is not a string but %s; the folder name %q is used", fm.KindOf("name"), folder)
		return folder, false
	case name == "":
		f.note("ASF-R05", "name is empty; the folder name %q is used", folder)
		return folder, false
	case !skill.SegmentSafe(name):
		// The name would add, climb or break URI path segments
		// (skill://src/../../evil, a name inside another skill's path).
		f.note("ASF-R06", "name %q cannot be a URI path segment (it holds / or \\, is . or .., or has control characters); the folder name %q is used", rawName, folder)
		return folder, false
	}
	broken, brokenRules := skill.NameProblems(name)
	if name != folder {
		broken = append(broken, fmt.Sprintf("differs from its folder name %q (ASF-R09)", folder))
		brokenRules = append(brokenRules, "ASF-R09")
	}
	if rawName != name {
		broken = append(broken, "has leading or trailing white space")
	}
	if len(broken) > 0 {
		for _, r := range brokenRules {
			f.rule(r)
		}
		f.texts = append(f.texts, fmt.Sprintf("name %q %s", rawName, strings.Join(broken, "; ")))
	}
	valid := len(brokenRules) == 0 || len(brokenRules) == 1 && brokenRules[0] == "ASF-R09"
	return name, valid && rawName == name
}

// limits notes the length and size limits the skill goes over (ASF-R11,
// ASF-R13, ASF-R14, SEP2640-R43) and reports whether its frontmatter keeps
// within the Agent Skills field rules a strict client checks an entry
// against: a description of at most 1,024 characters, a string
// compatibility of at most 500, string metadata values (issue 13 item 4).
// The per-skill file limits are warnings only.
func (f *findings) limits(fm *skill.Frontmatter, desc, name string, files []events.File) (strict bool) {
	strict = true
	if n := utf8.RuneCountInString(desc); n > maxDescriptionLen {
		f.note("ASF-R11", "description is %d characters long, over the %d limit", n, maxDescriptionLen)
		strict = false
	}
	if c, isStr, present := fm.Str("compatibility"); present {
		if !isStr {
			f.note("ASF-R13", "compatibility is not a string but %s", fm.KindOf("compatibility"))
			strict = false
		} else if n := utf8.RuneCountInString(c); n > maxCompatibilityLen {
			f.note("ASF-R13", "compatibility is %d characters long, over the %d limit", n, maxCompatibilityLen)
			strict = false
		}
	}
	if bad := fm.NonStringMetadata(); len(bad) > 0 {
		f.note("ASF-R14", "metadata values should be strings; not strings: %s", strings.Join(bad, ", "))
		strict = false
	}
	var total int64
	for _, file := range files {
		total += file.Size
	}
	if len(files) > maxSkillFiles || total > maxSkillBytes {
		f.note("SEP2640-R43", "skill %s has %d files (limit %d) and %d bytes (limit %d), over the SEP-2640 per-skill limits",
			name, len(files), maxSkillFiles, total, maxSkillBytes)
	}
	return strict
}

// newSkill assembles the catalog entry of a served skill.
func newSkill(src events.Source, ss events.ScannedSkill, fm *skill.Frontmatter, name, desc string, listed bool) events.Skill {
	skillPath := skill.Path(src.Prefix, ss.RelDir, name)
	sk := events.Skill{
		QualifiedName:  skill.QualifiedName(skillPath),
		Name:           name,
		Description:    strings.TrimSpace(desc),
		SkillPath:      skillPath,
		URI:            skill.URI(skillPath),
		Source:         src,
		Dir:            ss.Dir,
		RealDir:        ss.RealDir,
		DirID:          ss.DirID,
		Frontmatter:    fm.JSON,
		Listed:         listed,
		ModelInvocable: true,
		UserInvocable:  true,
		Files:          ss.Files,
	}
	if v, ok := fm.Boolean("disable-model-invocation"); ok && v {
		sk.ModelInvocable = false
	}
	if v, ok := fm.Boolean("user-invocable"); ok && !v {
		sk.UserInvocable = false
	}
	return sk
}

// Inboxes are the subscriptions a [Builder] reads.
type Inboxes struct {
	// Configured carries sources.configured. Required.
	Configured <-chan *message.Message
	// Scanned carries source.scanned. Required.
	Scanned <-chan *message.Message
	// Overrides carries overrides.changed. Required.
	Overrides <-chan *message.Message
}

// Options configure a [Builder]. A nil *Options means defaults.
type Options struct {
	// Logger receives the builder's log lines. If nil, they are discarded.
	Logger *slog.Logger
	// CacheDir is the folder the last catalog is persisted in (see
	// persist.go): a start whose configured sources are the ones persisted
	// publishes it at once, before any scan, and revalidates it with the
	// scans (issue 12). Created when needed, safe to delete, may be shared
	// by several processes. If empty, nothing is persisted.
	CacheDir string
}

// Builder is the actor that keeps the newest configuration, scans and
// overrides and publishes a new catalog version after each change (DESIGN
// "catalog builder"). Its only I/O is logging.
type Builder struct {
	in  Inboxes
	pub message.Publisher
	log *slog.Logger

	// State owned by Run.
	cfg       events.SourcesConfigured
	scans     map[string]events.SourceScanned
	overrides events.OverridesChanged
	prev      *events.Catalog
	logged    map[diagKey]bool
	// loggedDiags are the diagnostics logDiagnostics last saw.
	loggedDiags []events.Diagnostic
	memo        memo // what the last build made of each scanned skill
	patched     bool // the last build took the incremental path (patch.go)
	// static holds the skill URIs of the first catalog built in static
	// mode, the only ones served while the configuration stays static;
	// staticDirs the same skills by folder, so that a skill whose
	// frontmatter name changes keeps its startup identity.
	static     map[string]bool
	staticDirs map[folderKey]startupName
	// store persists the last catalog; nil without Options.CacheDir.
	// loaded is set once the first configuration looked for one.
	store     *store
	loaded    bool
	persisted bool // a catalog was handed to store
	// unsaved is set when a catalog built from at least one real scan was
	// published and not yet handed to store: it is written once every
	// source has a real scan, also when that last scan changes nothing.
	unsaved bool
}

// folderKey names a skill folder of one source.
type folderKey struct{ source, dir string }

// startupName is what a skill was served as in the first static catalog.
type startupName struct{ qualifiedName, name, skillPath, uri string }

// New returns a catalog builder reading in and publishing through pub;
// opts may be nil. It panics if an inbox or pub is nil.
func New(in Inboxes, pub message.Publisher, opts *Options) *Builder {
	if in.Configured == nil || in.Scanned == nil || in.Overrides == nil || pub == nil {
		panic("catalog.New: nil inbox or publisher")
	}
	log := slog.New(slog.DiscardHandler)
	if opts != nil && opts.Logger != nil {
		log = opts.Logger
	}
	b := &Builder{
		in: in, pub: pub, log: log,
		scans: map[string]events.SourceScanned{}, logged: map[diagKey]bool{},
		memo: memo{sources: map[string]*sourceMemo{}},
	}
	if opts != nil && opts.CacheDir != "" {
		b.store = &store{dir: opts.CacheDir, log: log}
	}
	return b
}

// Run handles messages until ctx is done or every inbox is closed, then
// returns nil. Each message is acked once, never nacked ([events.Receive]),
// before anything is published. It keeps the newest configuration and
// overrides (by Seq) and the newest scan of each source (by ConfigSeq, then
// Seq; older ones dropped). Once the overrides have arrived and every local
// and bundled source of the current configuration has a scan made for it,
// and again after every later event that changes the state, it builds a
// catalog ([Build]); when the catalog differs from the last one
// published, it publishes it with the next version as
// [events.CatalogChanged]; what changed is the notifier's to work out. A
// rebuild that changes nothing (a no-op rescan, a reconcile tick) publishes
// nothing and takes no version. When the configuration is static, the first
// catalog fixes the skill URIs served: later catalogs never add a skill, but
// served skills keep following their files and drop out when their folder
// goes. On [events.Bus] the publish does not wait for
// the consumers (the facade). Each diagnostic is logged once per (file, message, version):
// warnings at Warn, skips at Error, notes at Info.
func (b *Builder) Run(ctx context.Context) error {
	if b.store != nil {
		defer b.store.stop()
	}
	cfgIn, scanIn, ovIn := b.in.Configured, b.in.Scanned, b.in.Overrides
	for cfgIn != nil || scanIn != nil || ovIn != nil {
		var (
			msg     *message.Message
			ok      bool
			changed bool
		)
		select {
		case <-ctx.Done():
			return nil
		case msg, ok = <-cfgIn:
			if !ok {
				cfgIn = nil
				continue
			}
			if ev, ok := events.Receive[events.SourcesConfigured](b.log, msg); ok && ev.Seq > b.cfg.Seq {
				b.cfg, changed = ev, true
				b.loadPersisted()
			}
		case msg, ok = <-scanIn:
			if !ok {
				scanIn = nil
				continue
			}
			if ev, ok := events.Receive[events.SourceScanned](b.log, msg); ok {
				changed = b.takeScan(ev)
			}
		case msg, ok = <-ovIn:
			if !ok {
				ovIn = nil
				continue
			}
			if ev, ok := events.Receive[events.OverridesChanged](b.log, msg); ok && ev.Seq > b.overrides.Seq {
				b.overrides, changed = ev, true
			}
		}
		if changed {
			b.rebuild()
		}
	}
	return nil
}

// takeScan keeps ev when it is the newest scan of its source, and reports
// whether it did. A scan made for an older configuration never replaces one
// made for a newer one, whatever their Seq (scans of two configurations may
// finish in any order).
func (b *Builder) takeScan(ev events.SourceScanned) bool {
	if ev.Partial && b.prev != nil && !b.prev.Pending {
		// A complete catalog is served (a persisted one): a pending one
		// must not follow it; the complete scan of this source does.
		return false
	}
	if old, ok := b.scans[ev.Source.ID]; ok && (ev.ConfigSeq < old.ConfigSeq ||
		ev.ConfigSeq == old.ConfigSeq && ev.Seq <= old.Seq) {
		return false
	}
	b.scans[ev.Source.ID] = ev
	return true
}

// rebuild publishes a new catalog when the configuration and its overrides
// have arrived and every served source has a scan for the current
// configuration. Waiting for the overrides matters: the first catalog fixes
// the stdio server's instructions, so it must not list a skill the user took
// out of the catalog.
func (b *Builder) rebuild() {
	if cat := b.next(); cat != nil {
		b.log.Debug("catalog built", "version", cat.Version, "skills", len(cat.Skills), "diagnostics", len(cat.Diagnostics), "incremental", b.patched)
		if err := events.Publish(b.pub, events.CatalogChanged{Catalog: cat}); err != nil {
			b.log.Error("publishing catalog", "version", cat.Version, "error", err)
		}
		b.unsaved = b.unsaved || b.anyRealScan()
	}
	b.persist()
}

// anyRealScan reports whether a source of the configuration has a scan
// that is not a stand-in from the persisted catalog (Seq 0).
func (b *Builder) anyRealScan() bool {
	for _, src := range b.cfg.Sources {
		if b.scans[src.ID].Seq != 0 {
			return true
		}
	}
	return false
}

// persist has the last catalog published written to the cache folder, when
// one is unsaved and every source has a real scan: the first one at once (a
// process may exit right after its first initialize), later ones
// persistDelay after the last of a burst. A catalog built only from
// stand-in scans is not written (the file holds it already); one built
// while some sources were still stand-ins is written once their real scans
// are in, even if they change nothing (a restart then serves what the
// revalidation found, not the stale file again).
func (b *Builder) persist() {
	if b.store == nil || b.cfg.Static || !b.unsaved {
		return
	}
	for _, src := range b.cfg.Sources {
		// A partial scan's pending digests are never persisted: the
		// complete scan that follows is.
		if scan := b.scans[src.ID]; scan.Seq == 0 || scan.Partial {
			return
		}
	}
	b.unsaved = false
	delay := persistDelay
	if !b.persisted {
		b.persisted, delay = true, 0
	}
	b.store.later(b.snapshot(), delay)
}

// loadPersisted takes the persisted catalog of the first configuration's
// sources, if there is one, as stand-in scans (see persist.go). A static
// configuration takes none: its skill set is the one on disk at startup.
func (b *Builder) loadPersisted() {
	if b.loaded || b.store == nil {
		return
	}
	b.loaded = true
	if b.cfg.Static || b.prev != nil {
		return
	}
	if p := b.store.load(b.cfg.Sources); p != nil {
		b.restore(b.cfg, p)
		b.log.Debug("persisted catalog loaded; revalidated by the scans", "sources", len(p.Sources))
	}
}

// next builds the catalog of the current state and returns it when it is a
// new version to publish (and holds it as the last one), or nil.
func (b *Builder) next() *events.Catalog {
	if b.cfg.Seq == 0 || b.overrides.Seq == 0 || b.overrides.ConfigSeq > b.cfg.Seq {
		return nil // the overrides belong with a configuration still to come
	}
	current := map[string]events.SourceScanned{}
	pending := false
	for _, src := range b.cfg.Sources {
		scan, ok := b.scans[src.ID]
		if !ok || scan.ConfigSeq != b.cfg.Seq || scan.Source.Root != src.Root {
			return nil
		}
		current[src.ID] = scan
		pending = pending || scan.Partial
	}
	if b.prev == nil || b.prev.Pending == pending {
		patched, ok := b.patch(current)
		if b.patched = ok; ok {
			if patched != nil {
				patched.Pending = pending
			}
			return patched
		}
	}
	b.patched = false
	var version uint64 = 1
	if b.prev != nil {
		version = b.prev.Version + 1
	}
	skills, diags := b.memo.build(b.cfg, current, b.overrides.Overrides)
	b.dropBytes(current)
	// The catalog's order (NewCatalog sorts the same way, a no-op now):
	// static mode's warnings come in it, and sameCatalog compares in it.
	slices.SortStableFunc(skills, func(a, b *events.Skill) int { return strings.Compare(a.URI, b.URI) })
	if b.cfg.Static {
		skills, diags = b.fixSkillSet(skills, diags)
	}
	diags = append(diags, unmatchedOverrides(b.overrides.Overrides, skills)...)
	b.logDiagnostics(diags)
	if b.prev != nil && b.prev.Static == b.cfg.Static && b.prev.Pending == pending && sameSkills(b.prev.Skills, skills) && slices.Equal(b.prev.Diagnostics, diags) &&
		b.prev.ConfigSeq == b.cfg.Seq && b.prev.OverridesSeq == b.overrides.Seq {
		return nil // a no-op rescan or reconcile tick: no new version
	}
	// A new configuration or override set takes a version even when it
	// changes no skill: the config tools wait for the catalog built from
	// it (events.Catalog.ConfigSeq).
	cat := events.NewCatalog(version, b.cfg.Static, skills, diags)
	cat.ConfigSeq, cat.OverridesSeq = b.cfg.Seq, b.overrides.Seq
	cat.Scanned = make(map[string]time.Time, len(current))
	for id, scan := range current {
		cat.Scanned[id] = scan.ScannedAt
	}
	cat.Pending = pending
	b.prev = cat
	return cat
}

// dropBytes replaces each scan of current with a copy holding what the
// memo built of it wherever that is the same scanned skill: no SKILL.md
// bytes (a catalog holds no file's bytes, issue 12), and the memo's
// manifest rather than the scan's equal one, so that a rescan that changes
// nothing (a warm start's revalidation of 40,000 files) does not keep a
// second copy of every manifest alive beside the catalog's. A skill the
// memo does not hold (a second one in the same folder) keeps its bytes.
func (b *Builder) dropBytes(current map[string]events.SourceScanned) {
	for id, scan := range current {
		sm := b.memo.sources[id]
		if sm == nil {
			continue
		}
		var skills []events.ScannedSkill // a copy, once something is replaced
		for i := range scan.Skills {
			ss := &scan.Skills[i]
			bt := sm.byDir[ss.Dir]
			if bt == nil || ss.SkillMD == nil && sameFiles(bt.ss.Files, ss.Files) || !sameScanned(&bt.ss, ss) {
				continue
			}
			if skills == nil {
				skills = slices.Clone(scan.Skills)
			}
			skills[i] = bt.ss
		}
		if skills != nil {
			scan.Skills = skills
			b.scans[id] = scan
		}
	}
}

// sameFiles reports whether two manifests are one (the same backing
// array and length).
func sameFiles(a, b []events.File) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// fixSkillSet applies static mode to skills (sorted by URI) and their
// diagnostics: the skills of the first static catalog are the only ones
// ever served, by skill URI and, for a skill whose URI changed, by folder.
// A skill found later is left out with a warning; a served skill keeps
// following its files (manifests, digests, frontmatter), so subscribers
// still hear of edits and reads stay consistent, and it disappears when
// its folder goes or its SKILL.md stops being valid, as nothing could be
// served for it. A skill whose frontmatter name changed (issue 13 item 12)
// keeps the qualified name, skill path and URI it had at startup — the
// names the fixed tools, prompts and instructions carry — with its new
// content, and is left out of skills/list (its frontmatter name no longer
// matches its URI), with a warning that the rename applies at restart.
func (b *Builder) fixSkillSet(skills []*events.Skill, diags []events.Diagnostic) ([]*events.Skill, []events.Diagnostic) {
	if b.static == nil {
		b.static = make(map[string]bool, len(skills))
		b.staticDirs = make(map[folderKey]startupName, len(skills))
		for _, s := range skills {
			b.static[s.URI] = true
			b.staticDirs[folderKey{s.Source.ID, s.Dir}] = startupName{s.QualifiedName, s.Name, s.SkillPath, s.URI}
		}
		return skills, diags
	}
	served := make([]*events.Skill, 0, len(skills))
	var later []*events.Skill
	for _, s := range skills {
		if b.static[s.URI] {
			served = append(served, s)
		} else {
			later = append(later, s)
		}
	}
	renamed := false
	for _, s := range later {
		file := mdFile(s.Source, events.ScannedSkill{Dir: s.Dir, Files: s.Files})
		if id, ok := b.staticDirs[folderKey{s.Source.ID, s.Dir}]; ok && !slices.ContainsFunc(served, func(o *events.Skill) bool { return o.URI == id.uri }) {
			served = append(served, b.asAtStartup(s, id))
			renamed = true
			diags = append(diags, events.Diagnostic{File: file, Level: events.LevelWarn, Unserved: true, Version: s.Files[0].Digest, Rule: events.RuleStaticRenamed,
				Message: fmt.Sprintf("%s: the skill was renamed to %s after startup; the skill set is fixed in static mode (--static), so it is still served as %s with its new content (tools, prompts, %s) and left out of skills/list; restart the server to serve it as %s",
					file, s.QualifiedName, id.qualifiedName, id.uri, s.QualifiedName)})
			continue
		}
		diags = append(diags, events.Diagnostic{File: file, Level: events.LevelWarn, Version: s.Files[0].Digest, Rule: events.RuleStaticAdded,
			Message: fmt.Sprintf("%s: skill %s appeared after startup and is not served: the skill set is fixed in static mode (--static); restart the server to serve it", file, s.QualifiedName)})
	}
	if renamed {
		slices.SortStableFunc(served, func(a, b *events.Skill) int { return strings.Compare(a.URI, b.URI) })
	}
	return served, diags
}

// asAtStartup returns s, a skill whose name changed since the first static
// catalog, under its startup identity id: unlisted, with the invocation
// override of its startup name rather than of its new one.
func (b *Builder) asAtStartup(cur *events.Skill, id startupName) *events.Skill {
	s := *cur
	if sm := b.memo.sources[s.Source.ID]; sm != nil {
		if bt := sm.byDir[s.Dir]; bt != nil && bt.ok && bt.sk.URI == s.URI {
			s = bt.sk // before overrides
		}
	}
	s.QualifiedName, s.Name, s.SkillPath, s.URI = id.qualifiedName, id.name, id.skillPath, id.uri
	s.Listed = false
	applyOverride(&s, b.overrides.Overrides)
	return &s
}

// logDiagnostics logs each diagnostic once per (file, message, version)
// it stays in the diagnostics of consecutive builds. The same diagnostics
// as last time (a build of an unchanged or one-skill edit) cost one
// comparison.
func (b *Builder) logDiagnostics(diags []events.Diagnostic) {
	if b.loggedDiags != nil && slices.Equal(b.loggedDiags, diags) {
		return
	}
	b.loggedDiags = diags
	seen := make(map[diagKey]bool, len(diags))
	for _, d := range diags {
		key := diagKey{d.File, d.Message, d.Version}
		seen[key] = true
		if b.logged[key] {
			continue
		}
		level := slog.LevelWarn
		switch d.Level {
		case events.LevelError:
			level = slog.LevelError
		case events.LevelNote:
			level = slog.LevelInfo
		}
		attrs := []any{"file", d.File}
		if d.Rule != "" {
			attrs = append(attrs, "rule", d.Rule)
		}
		b.log.Log(context.Background(), level, d.Message, attrs...)
	}
	b.logged = seen
}

// diagKey identifies a logged diagnostic.
type diagKey struct{ file, message, version string }

func sameSkill(a, b *events.Skill) bool {
	if a.QualifiedName != b.QualifiedName || a.Name != b.Name || a.Description != b.Description ||
		a.Listed != b.Listed || a.ModelInvocable != b.ModelInvocable || a.UserInvocable != b.UserInvocable ||
		a.AssistantOverridden != b.AssistantOverridden || a.UserOverridden != b.UserOverridden ||
		a.Dir != b.Dir || a.Source != b.Source || !bytes.Equal(a.Frontmatter, b.Frontmatter) || len(a.Files) != len(b.Files) {
		return false
	}
	if len(a.Files) > 0 && &a.Files[0] == &b.Files[0] {
		return true
	}
	for i := range a.Files {
		if a.Files[i].Path != b.Files[i].Path || a.Files[i].Digest != b.Files[i].Digest || a.Files[i].DiskName != b.Files[i].DiskName {
			return false
		}
	}
	return true
}

// sameSkills reports whether next would show clients nothing prev does
// not: the same skills (both sorted by URI) with the same manifests
// (digests, sizes and modification times), flags and frontmatter. A
// manifest shared with prev (an unchanged skill the memo reused) is the
// same without a look at its files.
func sameSkills(prev, next []*events.Skill) bool {
	if len(prev) != len(next) {
		return false
	}
	for i := range prev {
		a, b := prev[i], next[i]
		if a == b {
			continue // carried over: the very same skill
		}
		// A folder swapped for another one with the same bytes shows
		// clients nothing, but reads must open the new one.
		if a.URI != b.URI || a.SkillPath != b.SkillPath || !sameSkill(a, b) || a.RealDir != b.RealDir || a.DirID != b.DirID {
			return false
		}
		if len(a.Files) > 0 && &a.Files[0] == &b.Files[0] {
			continue
		}
		for j := range a.Files {
			if a.Files[j].Size != b.Files[j].Size || !a.Files[j].ModTime.Equal(b.Files[j].ModTime) {
				return false
			}
		}
	}
	return true
}
