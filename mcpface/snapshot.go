package mcpface

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// indexSchema is the $schema of the R0 skill://index.json shape, which strict
// readers match exactly (SEP2640-R84, R88).
const indexSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// snapshot is one catalog plus the values derived from it, built once when
// the catalog arrives and never changed afterwards. Building it reads no
// file: every MIME type is in the catalog (issue 11 item 6).
type snapshot struct {
	cat *events.Catalog
	// views holds, by index in cat.Skills, the files each skill serves as
	// resources; a skill unchanged since the previous snapshot shares its
	// view ([newSnapshot]). Read them, and order, after
	// [snapshot.ensureViews]: the first snapshot builds them on first use.
	views []*skillView
	// nested lists, ascending, the indexes of the views of nested skills
	// (or skills holding one), so that carrying the views over to the
	// next snapshot looks at those alone, not at 10,000 views.
	nested []int
	// order is every served resource (each file URI once, plus
	// skill://index.json), sorted by URI: 8 bytes each, the resources/list
	// entries themselves made on demand ([snapshot.resource]) — at 10,000
	// skills, 40,000 entries kept would be some 14 MB of heap (issue 12).
	order     []resRef
	viewsOnce sync.Once
	// dirs maps a directory URI (skill root or subdirectory, no trailing
	// slash) to its direct children, sorted by URI; built on first use
	// ([snapshot.dir]): only resources/directory/read needs it.
	dirs     map[string][]*mcp.Resource
	dirsOnce sync.Once
	// index is the body of skill://index.json, built on first use
	// ([snapshot.indexJSON]): encoding it for 10,000 skills on every catalog
	// version would delay every edit's notification (issue 12).
	index     []byte
	indexOnce sync.Once
	// listed holds the index in cat.Skills of every listed skill, in URI
	// (skills/list) order.
	listed []int
	// entries holds the encoded SEP-2640 Skill object of each skill, by its
	// index in cat.Skills, made on first use ([snapshot.entry]).
	entries []atomic.Pointer[json.RawMessage]
	// verified maps a supporting file's manifest entry (*events.File) to
	// the identity of the file whose bytes were last found to match it
	// ([readFile]).
	verified sync.Map
	// maxURI bounds the length of the longest spelling of a served URI
	// that names it ([maxURIBound]). A longer request URI cannot match.
	maxURI int
}

// skillView names the files one skill serves as resources (those it owns:
// a nested skill's files belong to the nested skill), by index in its
// manifest, in URI order. It holds no pointer into a catalog, so a view
// shared by later snapshots keeps no old catalog alive.
type skillView struct {
	key    viewKey
	files  []int32
	nested bool // the skill was nested or held one: never reused
}

// resRef names one served resource of a snapshot: file File of skill
// Skill (indexes in cat.Skills and its manifest), or skill://index.json
// when Skill is -1.
type resRef struct{ skill, file int32 }

// indexRef is the resRef of skill://index.json.
var indexRef = resRef{-1, -1}

// viewKey is everything [fileResource] reads of a skill, to tell whether a
// view built for one catalog version still holds for the next.
type viewKey struct {
	uri, name, description string
	model, user            bool
	files                  []events.File
}

func keyOf(sk *events.Skill) viewKey {
	return viewKey{sk.URI, sk.Name, sk.Description, sk.ModelInvocable, sk.UserInvocable, sk.Files}
}

// same reports whether a view built for k serves exactly what one built for
// o would: the same skill fields and a manifest with the same files
// (compared at once when both share their backing array, as the catalog
// builder's versions do for every unchanged skill).
func (k *viewKey) same(o *viewKey) bool {
	if k.uri != o.uri || k.name != o.name || k.description != o.description ||
		k.model != o.model || k.user != o.user || len(k.files) != len(o.files) {
		return false
	}
	if len(k.files) == 0 || &k.files[0] == &o.files[0] {
		return true
	}
	for i := range k.files {
		a, b := &k.files[i], &o.files[i]
		if a.Path != b.Path || a.Size != b.Size || !a.ModTime.Equal(b.ModTime) || fileMIME(a) != fileMIME(b) {
			return false
		}
	}
	return true
}

// newSnapshot builds the snapshot of c. Each skill's view is taken from
// prev (the snapshot served before, or nil) when the skill is unchanged and
// neither nested in another skill nor holding one, in prev or in c
// (ownership of nested files then depends on other skills), so that a one-file edit in 10,000
// skills builds one view, not 40,000 resources (issue 12: edit latency).
// A pending prev (whose views no client was served) counts as none.
//
// When c's skills keep prev's shape ([diffSkills]), everything derived
// from an unchanged skill is shared with prev rather than made again: its encoded
// entry, its view, the listed skills and the resource order when no view
// changed ([snapshot.carry]).
//
// The first snapshot (prev nil) leaves its views to its first use
// ([snapshot.ensureViews]): at 10,000 skills they are 40,000 resources,
// some 75 ms and 30 MiB that the first initialize, answered from a
// persisted catalog, does not need (issue 12). maxURI is a bound computed
// without encoding any URI.
func newSnapshot(c *events.Catalog, prev *snapshot) *snapshot {
	var d skillDiff
	if prev != nil {
		d = diffSkills(prev.cat, c)
	}
	return newSnapshotOf(c, prev, d)
}

// newSnapshotOf is [newSnapshot] given d, how c's skills differ from
// prev's.
func newSnapshotOf(c *events.Catalog, prev *snapshot, d skillDiff) *snapshot {
	s := &snapshot{cat: c}
	s.entries = make([]atomic.Pointer[json.RawMessage], len(c.Skills))
	if prev != nil && d.shape {
		s.carry(prev, d)
	} else {
		s.listed = listedSkills(c)
		s.maxURI = maxURIBound(c.Skills)
	}
	if prev != nil && !prev.cat.Pending {
		s.viewsOnce.Do(func() {
			if !d.shape || !s.carryViews(prev, d) {
				s.buildViews(prev)
			}
		})
	}
	return s
}

// listedSkills returns the index in c.Skills of every listed skill.
func listedSkills(c *events.Catalog) []int {
	var listed []int
	for i := range c.Skills {
		if c.Skills[i].Listed {
			listed = append(listed, i)
		}
	}
	return listed
}

// carry takes from prev, whose catalog's skills differ from s's by d (of
// the same shape), the encoded entry of every unchanged skill (an entry is
// a function of the skill value alone), the listed skills when no changed
// skill's Listed flag changed, and the URI length bound: prev's, raised
// for the changed skills (counted again in full when one that set it
// lowered its own).
func (s *snapshot) carry(prev *snapshot, d skillDiff) {
	next := 0
	relist := false
	for i := range s.entries {
		if next < len(d.changed) && d.changed[next] == i {
			next++
			relist = relist || prev.cat.Skills[i].Listed != s.cat.Skills[i].Listed
			continue
		}
		if e := prev.entries[i].Load(); e != nil {
			s.entries[i].Store(e)
		}
	}
	if relist {
		s.listed = listedSkills(s.cat)
	} else {
		s.listed = prev.listed
	}
	s.maxURI = prev.maxURI
	for _, i := range d.changed {
		was, is := maxURIBound(prev.cat.Skills[i:i+1]), maxURIBound(s.cat.Skills[i:i+1])
		if was >= prev.maxURI && is < was {
			// A skill that set the bound lowered its own: count them all.
			s.maxURI = maxURIBound(s.cat.Skills)
			return
		}
		s.maxURI = max(s.maxURI, is)
	}
}

// maxURIBound returns a bound on the length of any spelling of a URI
// skills serve: three times the longest, each file path counted as if
// every byte were percent-encoded, and at least that of skill://index.json.
func maxURIBound(skills []*events.Skill) int {
	n := 3 * len(events.IndexURI)
	for i := range skills {
		sk := skills[i]
		root := len(sk.SkillRootURI())
		for j := range sk.Files {
			n = max(n, 3*(root+1+3*len(sk.Files[j].Path)))
		}
	}
	return n
}

// ensureViews builds the views and resources of a first snapshot, once.
// Safe for concurrent use.
func (s *snapshot) ensureViews() {
	s.viewsOnce.Do(func() { s.buildViews(nil) })
}

// resources returns every served resource, sorted by URI, as names to
// make them from ([snapshot.resource], [snapshot.uri]). Safe for
// concurrent use; the caller must not modify it.
func (s *snapshot) resources() []resRef {
	s.ensureViews()
	return s.order
}

// uri returns the URI of the resource r names.
func (s *snapshot) uri(r resRef) string {
	if r.skill < 0 {
		return events.IndexURI
	}
	sk := s.cat.Skills[r.skill]
	return sk.FileURI(sk.Files[r.file].Path)
}

// resource returns the resources/list entry of the resource r names, made
// anew: the caller may modify it.
func (s *snapshot) resource(r resRef) *mcp.Resource {
	return s.resourcesOf([]resRef{r})[0]
}

// resourcesOf returns the resources/list entries of the resources refs
// name, in order, made anew (the caller may modify them) in a few
// allocations whatever their number: the entries and their annotations
// in one slab, their strings (URI, name, time, description) cut from one
// buffer (issue 12: a resources/list page of 500 made on demand).
func (s *snapshot) resourcesOf(refs []resRef) []*mcp.Resource {
	type entry struct {
		r mcp.Resource
		a mcp.Annotations
	}
	slab := make([]entry, len(refs))
	out := make([]*mcp.Resource, len(refs))
	size := 0
	for _, r := range refs {
		if r.skill >= 0 {
			sk := s.cat.Skills[r.skill]
			p := sk.Files[r.file].Path
			size += len(sk.URI) + 4*len(p) + len(isoLayout) + 8 + 2*len(sk.Name) + len(supportingPrefix) + 1
		}
	}
	// Strings are cut from buf and never written again; were size short,
	// append would move on to a new array and the strings cut so far would
	// keep the old one.
	buf := make([]byte, 0, size)
	cut := func(from int) string { return unsafe.String(unsafe.SliceData(buf[from:]), len(buf)-from) }
	descOf, desc := int32(-1), ""
	for i, r := range refs {
		if r.skill < 0 {
			out[i] = indexResource()
			continue
		}
		sk := s.cat.Skills[r.skill]
		f := &sk.Files[r.file]
		from := len(buf)
		buf = append(append(buf, sk.SkillRootURI()...), '/')
		buf = appendEncodedPath(buf, f.Path)
		uri := cut(from)
		lastModified := ""
		if !f.ModTime.IsZero() {
			from = len(buf)
			buf = f.ModTime.UTC().AppendFormat(buf, isoLayout)
			lastModified = cut(from)
		}
		name := sk.Name
		if f.Path != "SKILL.md" {
			from = len(buf)
			buf = append(append(append(buf, sk.Name...), '/'), f.Path...)
			name = cut(from)
			if descOf != r.skill {
				from = len(buf)
				buf = append(append(buf, supportingPrefix...), sk.Name...)
				descOf, desc = r.skill, cut(from)
			}
		}
		e := &slab[i]
		e.a = mcp.Annotations{Audience: audience(sk), LastModified: lastModified}
		fileResource(&e.r, &e.a, sk, f, uri, name, desc)
		out[i] = &e.r
	}
	return out
}

// appendEncodedPath appends [events.EncodePath](p) to dst: every byte but
// '/' and those encodeURIComponent leaves alone as %XX.
func appendEncodedPath(dst []byte, p string) []byte {
	const digits = "0123456789ABCDEF"
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '/' || unreservedByte(c) {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', digits[c>>4], digits[c&0xF])
		}
	}
	return dst
}

// buildViews fills s.views and s.order, reusing prev's views.
func (s *snapshot) buildViews(prev *snapshot) {
	c := s.cat
	s.views = make([]*skillView, len(c.Skills))
	nested := nestedSkills(c)
	old := prevViews(c, prev)
	files := 0
	for i := range c.Skills {
		sk := c.Skills[i]
		k := keyOf(sk)
		if v := old[i]; v != nil && !nested[i] && !v.nested && v.key.same(&k) {
			s.views[i] = &skillView{key: k, files: v.files}
		} else {
			s.views[i] = buildView(c, sk, k, nested[i])
		}
		if nested[i] {
			s.nested = append(s.nested, i)
		}
		files += len(s.views[i].files)
	}
	s.order = resourceOrder(s, files)
}

// carryViews fills s.views and s.order from prev's, whose catalog's skills
// differ from s's by d (of the same shape): the same skill roots, so the
// same nesting. Each changed skill gets its own view (prev's when its key
// holds), every other one prev's (a nested one made again, as
// buildViews makes it); the order is prev's when every changed view lists
// the same files. It reports false, having set nothing, when
// prev has no views or a changed skill is nested or holds one (the owner
// of a nested file depends on the other skills): [snapshot.buildViews]
// then does it all.
func (s *snapshot) carryViews(prev *snapshot, d skillDiff) bool {
	prev.ensureViews()
	if len(prev.views) != len(s.cat.Skills) {
		return false
	}
	for _, i := range d.changed {
		if prev.views[i].nested {
			return false
		}
	}
	views := slices.Clone(prev.views)
	for _, i := range prev.nested {
		// As buildViews does: a nested skill's view is always made anew
		// (few skills are nested; the files they own do not change here,
		// nor does the order).
		views[i] = buildView(s.cat, s.cat.Skills[i], views[i].key, true)
	}
	s.nested = prev.nested
	sameOrder := true
	files := len(prev.order) - 1
	for _, i := range d.changed {
		sk := s.cat.Skills[i]
		k := keyOf(sk)
		v := prev.views[i]
		if v.key.same(&k) {
			views[i] = &skillView{key: k, files: v.files}
			continue
		}
		views[i] = buildView(s.cat, sk, k, false)
		files += len(views[i].files) - len(v.files)
		sameOrder = sameOrder && slices.Equal(views[i].files, v.files)
	}
	s.views = views
	if sameOrder {
		s.order = prev.order
	} else {
		s.order = resourceOrder(s, files)
	}
	return true
}

// resourceOrder returns every resource of s (its views built), sorted by
// URI, without making a URI but for nested skills. Skills are in URI order,
// and the resources of a skill that neither is nested nor holds one sort
// as a block in the same place: no other skill's root is its root followed
// by '/', so the first byte that tells two such URIs apart is the one that
// tells the skills' own URIs apart. The resources of a run of nested
// skills interleave and are sorted by URI; skill://index.json goes where
// it sorts.
func resourceOrder(s *snapshot, files int) []resRef {
	order := make([]resRef, 0, files+1)
	for i := 0; i < len(s.views); {
		if !s.views[i].nested {
			for _, f := range s.views[i].files {
				order = append(order, resRef{int32(i), f})
			}
			i++
			continue
		}
		start := len(order)
		for ; i < len(s.views) && s.views[i].nested; i++ {
			for _, f := range s.views[i].files {
				order = append(order, resRef{int32(i), f})
			}
		}
		run := order[start:]
		uris := make(map[resRef]string, len(run))
		for _, r := range run {
			uris[r] = s.uri(r)
		}
		slices.SortFunc(run, func(a, b resRef) int { return strings.Compare(uris[a], uris[b]) })
	}
	at := sort.Search(len(order), func(k int) bool { return s.uri(order[k]) >= events.IndexURI })
	return slices.Insert(order, at, indexRef)
}

// prevViews returns, by index in c.Skills, the view prev held for the skill
// with the same URI (nil where there is none), matching both catalogs'
// skill lists in their URI order at once.
func prevViews(c *events.Catalog, prev *snapshot) []*skillView {
	out := make([]*skillView, len(c.Skills))
	if prev == nil {
		return out
	}
	prev.ensureViews()
	if len(prev.views) != len(prev.cat.Skills) {
		return out
	}
	ps, ns := prev.cat.Skills, c.Skills
	for i, j := 0, 0; i < len(ps) && j < len(ns); {
		switch cmp := strings.Compare(ps[i].URI, ns[j].URI); {
		case cmp < 0:
			i++
		case cmp > 0:
			j++
		default:
			out[j] = prev.views[i]
			i++
			j++
		}
	}
	return out
}

// nestedSkills reports, by index in c.Skills, the skills nested in another
// skill's folder or holding one: their views are always rebuilt.
func nestedSkills(c *events.Catalog) []bool {
	out := make([]bool, len(c.Skills))
	for i := range c.Skills {
		root := c.Skills[i].SkillRootURI()
		for k := strings.LastIndexByte(root, '/'); k > len("skill://"); k = strings.LastIndexByte(root[:k], '/') {
			if j, ok := c.SkillIndexByRoot(root[:k]); ok {
				out[i], out[j] = true, true
			}
		}
	}
	return out
}

// buildView makes the view of sk, a skill of c, keyed by k; nested tells
// whether sk is nested in another skill or holds one. A nested skill's
// files sit in its parent's manifest too, and the innermost skill owns
// them; a skill that neither is nested nor holds one owns its whole
// manifest (no other skill's root prefixes its files' URIs).
func buildView(c *events.Catalog, sk *events.Skill, k viewKey, nested bool) *skillView {
	v := &skillView{key: k, files: make([]int32, 0, len(sk.Files)), nested: nested}
	for j := range sk.Files {
		if nested {
			if ref, ok := c.File(sk.FileURI(sk.Files[j].Path)); !ok || ref.Skill != sk {
				continue
			}
		}
		v.files = append(v.files, int32(j))
	}
	slices.SortFunc(v.files, func(a, b int32) int { return compareEncoded(sk.Files[a].Path, sk.Files[b].Path) })
	return v
}

// compareEncoded compares [events.EncodePath] of two paths, the order of
// the URIs of two files of one skill, making no string when neither path
// has a byte to escape (then the encoding changes nothing).
func compareEncoded(a, b string) int {
	if plainPath(a) && plainPath(b) {
		return strings.Compare(a, b)
	}
	return strings.Compare(events.EncodePath(a), events.EncodePath(b))
}

// plainPath reports whether [events.EncodePath] leaves p as it is.
func plainPath(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c != '/' && !unreservedByte(c) {
			return false
		}
	}
	return true
}

// unreservedByte reports whether a URI segment keeps c as it is: A-Z a-z
// 0-9 - _ . ! ~ * ' ( ), as encodeURIComponent does.
func unreservedByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-_.!~*'()", c) >= 0
}

// dir returns the direct children of the directory uri (a skill root or a
// folder inside a skill, no trailing slash), sorted by URI, and whether
// there is such a directory. Safe for concurrent use.
func (s *snapshot) dir(uri string) ([]*mcp.Resource, bool) {
	s.dirsOnce.Do(func() { s.dirs = buildDirs(s) })
	children, ok := s.dirs[uri]
	return children, ok
}

// buildDirs maps every directory of s below each skill root, derived from
// its manifest (which includes nested skills' files, SEP2640-R25), to its
// direct children.
func buildDirs(s *snapshot) map[string][]*mcp.Resource {
	c := s.cat
	s.ensureViews()
	children := make(map[string]map[string]*mcp.Resource, 2*len(c.Skills))
	addChild := func(dir string, r *mcp.Resource) {
		m := children[dir]
		if m == nil {
			m = make(map[string]*mcp.Resource)
			children[dir] = m
		}
		m[r.URI] = r
	}
	for i := range c.Skills {
		sk := c.Skills[i]
		root := sk.SkillRootURI()
		if children[root] == nil {
			children[root] = make(map[string]*mcp.Resource)
		}
		owned := s.views[i].files // sorted by URI, not by manifest index
		own := make(map[int32]bool, len(owned))
		for _, j := range owned {
			own[j] = true
		}
		for j, f := range sk.Files {
			segs := strings.Split(f.Path, "/")
			dir := root
			for _, seg := range segs[:len(segs)-1] {
				sub := dir + "/" + events.EncodePath(seg)
				addChild(dir, &mcp.Resource{URI: sub, Name: seg, MIMEType: "inode/directory"})
				dir = sub
			}
			if own[int32(j)] {
				// A directory listing names each child by its own segment
				// (TV-SEP2640-10), not by the skill-qualified list name.
				child := s.resource(resRef{int32(i), int32(j)})
				child.Name = segs[len(segs)-1]
				addChild(dir, child)
			}
		}
	}
	dirs := make(map[string][]*mcp.Resource, len(children))
	for dir, m := range children {
		list := make([]*mcp.Resource, 0, len(m))
		for _, r := range m {
			list = append(list, r)
		}
		slices.SortFunc(list, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
		dirs[dir] = list
	}
	return dirs
}

// indexResource is the resources/list entry of skill://index.json.
func indexResource() *mcp.Resource {
	return &mcp.Resource{
		URI:         events.IndexURI,
		Name:        "Skill Index",
		Description: "Index of the skills this server serves (legacy discovery shape; prefer skills/list).",
		MIMEType:    "application/json",
		Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant", "user"}, Priority: 0.5},
	}
}

// fileResource fills r, the resources/list entry of f, a file of sk at
// uri, annotated by ann (its audience and modification time set); name
// and desc are the entry's name and description when f is a supporting
// file: sk.Name + "/" + f.Path and supportingPrefix + sk.Name.
func fileResource(r *mcp.Resource, ann *mcp.Annotations, sk *events.Skill, f *events.File, uri, name, desc string) {
	if f.Path == "SKILL.md" {
		ann.Priority = 0.8
		*r = mcp.Resource{
			URI:         uri,
			Name:        sk.Name,
			Description: strings.TrimSpace(sk.Description),
			MIMEType:    "text/markdown",
			Size:        f.Size,
			Annotations: ann,
		}
		return
	}
	ann.Priority = 0.3
	*r = mcp.Resource{
		URI:         uri,
		Name:        name,
		Description: desc,
		MIMEType:    fileMIME(f),
		Size:        f.Size,
		Annotations: ann,
	}
}

// supportingPrefix starts the description of every supporting file.
const supportingPrefix = "Supporting file in "

// audiences are the four audiences a skill's resources can have, shared
// by them all (nothing appends to one: each is capped at its length).
var audiences = [4][]mcp.Role{nil, {"assistant"}, {"user"}, {"assistant", "user"}}

func audience(sk *events.Skill) []mcp.Role {
	i := 0
	if sk.ModelInvocable {
		i |= 1
	}
	if sk.UserInvocable {
		i |= 2
	}
	a := audiences[i]
	return a[:len(a):len(a)]
}

// isoLayout is the layout of JavaScript's Date.toISOString.
const isoLayout = "2006-01-02T15:04:05.000Z"

// isoTime formats t as JavaScript's Date.toISOString does.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(isoLayout)
}

type indexEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

// buildIndex renders skill://index.json in the R0 shape for the listed
// skills only, so that it never disagrees with skills/list (SEP2640-R88).
func buildIndex(c *events.Catalog) []byte {
	doc := struct {
		Schema string       `json:"$schema"`
		Skills []indexEntry `json:"skills"`
	}{Schema: indexSchema, Skills: []indexEntry{}}
	for i := range c.Skills {
		sk := c.Skills[i]
		if !sk.Listed || len(sk.Files) == 0 {
			continue
		}
		doc.Skills = append(doc.Skills, indexEntry{
			Name:        sk.Name,
			Type:        "skill-md",
			Description: strings.TrimSpace(sk.Description),
			URL:         sk.URI,
			Digest:      sk.Files[0].Digest,
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(err) // plain strings only: cannot fail
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// indexJSON returns the body of skill://index.json for s, built once.
// Safe for concurrent use; the caller must not modify the bytes.
func (s *snapshot) indexJSON() []byte {
	s.indexOnce.Do(func() { s.index = buildIndex(s.cat) })
	return s.index
}

// isFile reports whether uri names a served file (or the index), for the
// resources/directory/read error message.
func (s *snapshot) isFile(uri string) bool {
	if uri == events.IndexURI {
		return true
	}
	_, ok := s.cat.File(uri)
	return ok
}

// entry returns the SEP-2640 Skill object of c.Skills[i] as skills/list and
// skills/get send it, encoded once per snapshot: the snapshot never
// changes, so neither does the encoding (issue 12). Safe for concurrent
// use; the caller must not modify the bytes.
func (s *snapshot) entry(i int) json.RawMessage {
	if e := s.entries[i].Load(); e != nil {
		return *e
	}
	sk := s.cat.Skills[i]
	b, err := appendEntry(make([]byte, 0, entrySize(sk)), sk)
	if err != nil {
		panic(err) // a frontmatter object: cannot fail
	}
	e := json.RawMessage(b)
	s.entries[i].Store(&e)
	return e
}

// skillIndex returns the index of sk, a skill of s, in s.cat.Skills, found
// by its URI (the skills are sorted by URI).
func (s *snapshot) skillIndex(sk *events.Skill) int {
	skills := s.cat.Skills
	for i := sort.Search(len(skills), func(i int) bool { return skills[i].URI >= sk.URI }); i < len(skills); i++ {
		if skills[i] == sk {
			return i
		}
	}
	for i := range skills { // a catalog not sorted after all
		if skills[i] == sk {
			return i
		}
	}
	panic("mcpface: skill not in its snapshot")
}
