package mcpface

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

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
	// resources is every served resource (each file URI once, plus
	// skill://index.json), sorted by URI.
	resources []*mcp.Resource
	// byURI maps a file URI to its resource metadata.
	byURI map[string]*mcp.Resource
	// dirs maps a directory URI (skill root or subdirectory, no trailing
	// slash) to its direct children, sorted by URI.
	dirs map[string][]*mcp.Resource
	// index is the body of skill://index.json.
	index []byte
	// maxURI is the length of the longest spelling of a served URI that
	// names it: three times the longest URI, as if every byte were
	// percent-encoded. A longer request URI cannot match.
	maxURI int
}

func newSnapshot(c *events.Catalog) *snapshot {
	s := &snapshot{
		cat:   c,
		byURI: make(map[string]*mcp.Resource),
		dirs:  make(map[string][]*mcp.Resource),
	}
	s.index = buildIndex(c)
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
	for _, r := range s.resources {
		s.maxURI = max(s.maxURI, 3*len(r.URI))
	}

	// Directories: every level below each skill root, derived from its
	// manifest (which includes nested skills' files, SEP2640-R25).
	children := make(map[string]map[string]*mcp.Resource)
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

// isFile reports whether uri names a served file (or the index), for the
// resources/directory/read error message.
func (s *snapshot) isFile(uri string) bool {
	if uri == events.IndexURI {
		return true
	}
	_, ok := s.cat.File(uri)
	return ok
}
