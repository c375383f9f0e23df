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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// indexSchema is the $schema of the R0 skill://index.json shape, which strict
// readers match exactly (SEP2640-R84, R88).
const indexSchema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// snapshot is one catalog plus the values derived from it, each built once
// (when the catalog arrives, or on first use) and never changed afterwards.
// Building it reads no file: every MIME type is in the catalog (issue 11
// item 6).
type snapshot struct {
	cat *events.Catalog
	// files is the resource metadata of every served file, built on first
	// use ([snapshot.fileIndex]): at 10,000 skills it is 40,000 resources
	// and some 30 MiB, which the first initialize does not need (issue 12).
	files     *fileIndex
	filesOnce sync.Once
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
	// that names it: three times the longest URI, as if every byte were
	// percent-encoded (with each path's encoding bounded the same way). A
	// longer request URI cannot match.
	maxURI int
}

// fileIndex is the resource metadata of a snapshot's files.
type fileIndex struct {
	// resources is every served resource (each file URI once, plus
	// skill://index.json), sorted by URI.
	resources []*mcp.Resource
	// byURI maps a file URI to its resource metadata.
	byURI map[string]*mcp.Resource
	// dirs maps a directory URI (skill root or subdirectory, no trailing
	// slash) to its direct children, sorted by URI.
	dirs map[string][]*mcp.Resource
}

func newSnapshot(c *events.Catalog) *snapshot {
	s := &snapshot{cat: c}
	s.entries = make([]atomic.Pointer[json.RawMessage], len(c.Skills))
	for i := range c.Skills {
		sk := &c.Skills[i]
		if sk.Listed {
			s.listed = append(s.listed, i)
		}
		// A bound on every served URI's length, without encoding them:
		// each byte of a path encodes to at most three.
		root := len(sk.SkillRootURI())
		for j := range sk.Files {
			s.maxURI = max(s.maxURI, 3*(root+1+3*len(sk.Files[j].Path)))
		}
	}
	s.maxURI = max(s.maxURI, 3*len(events.IndexURI))
	return s
}

// fileIndex returns the resource metadata of s's files, built on its first
// use. Safe for concurrent use; the caller must not modify it.
func (s *snapshot) fileIndex() *fileIndex {
	s.filesOnce.Do(func() { s.files = newFileIndex(s.cat) })
	return s.files
}

// resourceList returns every served resource, sorted by URI
// ([fileIndex.resources]).
func (s *snapshot) resourceList() []*mcp.Resource { return s.fileIndex().resources }

func newFileIndex(c *events.Catalog) *fileIndex {
	// Sized up front: growing maps of 10,000s of entries is a good part of
	// building a snapshot (issue 12: edit latency).
	files := 0
	for i := range c.Skills {
		files += len(c.Skills[i].Files)
	}
	s := &fileIndex{
		byURI:     make(map[string]*mcp.Resource, files),
		dirs:      make(map[string][]*mcp.Resource, 2*len(c.Skills)),
		resources: make([]*mcp.Resource, 0, files+1),
	}
	s.resources = append(s.resources, indexResource())
	for i := range c.Skills {
		sk := &c.Skills[i]
		for j := range sk.Files {
			f := &sk.Files[j]
			uri := sk.FileURI(f.Path)
			// A nested skill's files sit in its parent's manifest too; the
			// innermost skill owns them.
			if ref, ok := c.File(uri); !ok || ref.Skill != sk {
				continue
			}
			r := fileResource(sk, f, uri)
			s.resources = append(s.resources, r)
			s.byURI[uri] = r
		}
	}
	slices.SortFunc(s.resources, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })

	// Directories: every level below each skill root, derived from its
	// manifest (which includes nested skills' files, SEP2640-R25).
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
		sk := &c.Skills[i]
		root := sk.SkillRootURI()
		if children[root] == nil {
			children[root] = make(map[string]*mcp.Resource)
		}
		for _, f := range sk.Files {
			segs := strings.Split(f.Path, "/")
			dir := root
			for _, seg := range segs[:len(segs)-1] {
				sub := dir + "/" + events.EncodePath(seg)
				addChild(dir, &mcp.Resource{URI: sub, Name: seg, MIMEType: "inode/directory"})
				dir = sub
			}
			if r := s.byURI[sk.FileURI(f.Path)]; r != nil {
				// A directory listing names each child by its own segment
				// (TV-SEP2640-10), not by the skill-qualified list name.
				child := *r
				child.Name = segs[len(segs)-1]
				addChild(dir, &child)
			}
		}
	}
	for dir, m := range children {
		list := make([]*mcp.Resource, 0, len(m))
		for _, r := range m {
			list = append(list, r)
		}
		slices.SortFunc(list, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
		s.dirs[dir] = list
	}
	return s
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

func fileResource(sk *events.Skill, f *events.File, uri string) *mcp.Resource {
	ann := &mcp.Annotations{Audience: audience(sk), LastModified: isoTime(f.ModTime)}
	if f.Path == "SKILL.md" {
		ann.Priority = 0.8
		return &mcp.Resource{
			URI:         uri,
			Name:        sk.Name,
			Description: strings.TrimSpace(sk.Description),
			MIMEType:    "text/markdown",
			Size:        f.Size,
			Annotations: ann,
		}
	}
	ann.Priority = 0.3
	return &mcp.Resource{
		URI:         uri,
		Name:        sk.Name + "/" + f.Path,
		Description: "Supporting file in " + sk.Name,
		MIMEType:    fileMIME(f),
		Size:        f.Size,
		Annotations: ann,
	}
}

func audience(sk *events.Skill) []mcp.Role {
	var a []mcp.Role
	if sk.ModelInvocable {
		a = append(a, "assistant")
	}
	if sk.UserInvocable {
		a = append(a, "user")
	}
	return a
}

// isoTime formats t as JavaScript's Date.toISOString does.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
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
		sk := &c.Skills[i]
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// As the SDK encodes results: <, > and & as they are.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(newEntry(&s.cat.Skills[i])); err != nil {
		panic(err) // plain strings and a frontmatter object: cannot fail
	}
	e := json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	s.entries[i].Store(&e)
	return e
}

// skillIndex returns the index of sk, a skill of s, in s.cat.Skills, found
// by its URI (the skills are sorted by URI).
func (s *snapshot) skillIndex(sk *events.Skill) int {
	skills := s.cat.Skills
	for i := sort.Search(len(skills), func(i int) bool { return skills[i].URI >= sk.URI }); i < len(skills); i++ {
		if &skills[i] == sk {
			return i
		}
	}
	for i := range skills { // a catalog not sorted after all
		if &skills[i] == sk {
			return i
		}
	}
	panic("mcpface: skill not in its snapshot")
}
