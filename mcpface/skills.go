package mcpface

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// Method names of SEP-2640.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"
)

// entry is a SEP-2640 Skill object (SEP2640-R26..R37): the shape, and
// (newEntry encoded by encoding/json without HTML escaping) the bytes,
// that [appendEntry] writes directly.
type entry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []entryResource `json:"resources"`
}

type entryResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// cacheFields are the SEP-2549 fields, set only on 2026-07-28 requests
// (SEP2640-R08, BR-32); resultType with them.
type cacheFields struct {
	ResultType string `json:"resultType,omitempty"`
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

func newCacheFields(meta mcp.Meta) cacheFields {
	if !modernMeta(meta) {
		return cacheFields{}
	}
	zero := 0
	return cacheFields{ResultType: "complete", TTLMs: &zero, CacheScope: "private"}
}

type skillsListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillsListResult struct {
	mcp.ResultBase
	cacheFields
	// Skills is the page's entries ([snapshot.entry]).
	Skills     pageEntries `json:"skills"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// pageEntries is a skills/list page by reference: the indexes in s.cat.Skills
// of its skills (a part of s.listed), whose pre-encoded entries are written
// out only when the page is: a page is never assembled apart from the
// response that carries it (issue 12: a 150 KB page copied, zeroed and
// collected per call cost as much as writing it to the pipe). The zero
// value is JSON null.
type pageEntries struct {
	s   *snapshot
	idx []int
}

// appendJSON appends the page's JSON array to b.
func (p pageEntries) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for n, i := range p.idx {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, p.s.entry(i)...)
	}
	return append(b, ']')
}

// MarshalJSON implements [json.Marshaler]: the page's JSON array, null for
// the zero value.
func (p pageEntries) MarshalJSON() ([]byte, error) {
	if p.s == nil {
		return []byte("null"), nil
	}
	size := 2
	for _, i := range p.idx {
		size += len(p.s.entry(i)) + 1
	}
	return p.appendJSON(make([]byte, 0, size)), nil
}

type skillsGetParams struct {
	mcp.ParamsBase
	URI string `json:"uri,omitempty"`
}

type skillsGetResult struct {
	mcp.ResultBase
	cacheFields
	// Skill is the entry of the skill ([snapshot.entry]).
	Skill json.RawMessage `json:"skill"`
}

func newEntry(sk *events.Skill) entry {
	e := entry{URI: sk.URI, Frontmatter: sk.Frontmatter, Resources: make([]entryResource, 0, len(sk.Files))}
	if len(e.Frontmatter) == 0 {
		e.Frontmatter = json.RawMessage("{}")
	}
	for _, f := range sk.Files {
		e.Resources = append(e.Resources, entryResource{URI: sk.FileURI(f.Path), Digest: f.Digest, Size: f.Size})
	}
	return e
}

// appendEntry appends the JSON of sk's SEP-2640 Skill object to b: byte
// for byte what encoding/json, HTML escaping off, makes of [newEntry](sk)
// (entry_test.go checks it on real corpora and odd names), written
// directly: the reflective encoding with every file URI built as a string
// cost about 13 µs a skill, so that the first walk of 10,000 skills took
// longer than the reference's (issue 12). An error only when the
// frontmatter is not JSON.
func appendEntry(b []byte, sk *events.Skill) ([]byte, error) {
	root := sk.SkillRootURI()
	b = append(b, `{"uri":`...)
	b = appendJSONString(b, sk.URI)
	b = append(b, `,"frontmatter":`...)
	if len(sk.Frontmatter) == 0 {
		b = append(b, "{}"...)
	} else {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, sk.Frontmatter); err != nil {
			return nil, err
		}
		b = buf.Bytes()
	}
	b = append(b, `,"resources":[`...)
	for i := range sk.Files {
		f := &sk.Files[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"uri":`...)
		if plainJSON(root) {
			// The encoded path is printable ASCII: nothing in it to escape.
			b = append(b, '"')
			b = append(b, root...)
			b = append(b, '/')
			b = events.AppendEncodedPath(b, f.Path)
			b = append(b, '"')
		} else {
			b = appendJSONString(b, sk.FileURI(f.Path))
		}
		b = append(b, `,"digest":`...)
		b = appendJSONString(b, f.Digest)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, f.Size, 10)
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// entrySize is a close upper bound of the length of sk's entry, so that
// [appendEntry] fills one allocation.
func entrySize(sk *events.Skill) int {
	n := 64 + 2*len(sk.URI) + len(sk.Frontmatter)
	root := len(sk.SkillRootURI())
	for i := range sk.Files {
		f := &sk.Files[i]
		n += 48 + root + len(f.Path) + len(f.Digest) + 20
	}
	return n
}

// appendJSONString appends s as a JSON string: as is between quotes when it
// is plain ([plainJSON]), else as encoding/json writes it with HTML
// escaping off.
func appendJSONString(b []byte, s string) []byte {
	if plainJSON(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// plainJSON reports whether s is printable ASCII without '"' or '\\': a
// JSON string body as it stands, for any encoder.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// listSkills answers skills/list from the current snapshot ([skillsPage]).
func (f *Facade) listSkills(_ context.Context, _ *mcp.ServerSession, p *skillsListParams) (*skillsListResult, error) {
	var cursor string
	var meta mcp.Meta
	if p != nil {
		cursor, meta = p.Cursor, p.Meta
	}
	return f.skillsPage(f.current(), cursor, meta)
}

// skillsPage is the skills/list result of snapshot s for cursor, on the
// era meta selects: listed skills in URI order, PageSize entries a page,
// never split; the cursor names the last URI returned (SEP2640-R39,
// R46..R52). The SDK's handler and the stdio fast lane (fastlane.go) both
// answer with it.
func (f *Facade) skillsPage(s *snapshot, cursor string, meta mcp.Meta) (*skillsListResult, error) {
	listed := s.listed
	start, err := afterCursor(cursor, len(listed), func(i int) string { return s.cat.Skills[listed[i]].URI })
	if err != nil {
		return nil, err
	}
	end := min(start+f.opts.PageSize, len(listed))
	res := &skillsListResult{cacheFields: newCacheFields(meta), Skills: pageEntries{s, listed[start:end:end]}}
	if end < len(listed) {
		res.NextCursor = encodeCursor(s.cat.Skills[listed[end-1]].URI)
	}
	return res, nil
}

// getSkill answers skills/get from the current snapshot ([skillEntry]).
func (f *Facade) getSkill(_ context.Context, _ *mcp.ServerSession, p *skillsGetParams) (*skillsGetResult, error) {
	if p == nil {
		return nil, invalidParams("params.uri is required", "")
	}
	return f.skillEntry(f.current(), p.URI, p.Meta)
}

// skillEntry is the skills/get result of snapshot s for a listed skill's
// SKILL.md URI on the era meta selects (SEP2640-R53..R56); anything else
// is -32602. The SDK's handler and the stdio fast lane (fastlane.go) both
// answer with it.
func (f *Facade) skillEntry(s *snapshot, requested string, meta mcp.Meta) (*skillsGetResult, error) {
	if requested == "" {
		return nil, invalidParams("params.uri is required", "")
	}
	uri, err := lookupURI(requested, "Not a skill served here: "+clip(requested))
	if err != nil {
		return nil, err
	}
	sk := s.cat.SkillByURI(uri)
	if sk == nil || !sk.Listed {
		return nil, invalidParams("Not a skill served here: "+clip(requested), requested)
	}
	return &skillsGetResult{cacheFields: newCacheFields(meta), Skill: s.entry(s.skillIndex(sk))}, nil
}

func (f *Facade) addCustomMethods(srv *mcp.Server) {
	for _, err := range []error{
		mcp.AddReceivingCustomMethod(srv, methodSkillsList, f.listSkills),
		mcp.AddReceivingCustomMethod(srv, methodSkillsGet, f.getSkill),
		mcp.AddReceivingCustomMethod(srv, methodDirectoryRead, f.readDirectory),
	} {
		if err != nil {
			// Only a name clash with a standard method fails: a programming
			// error in this package.
			panic(fmt.Sprintf("mcpface: %v", err))
		}
	}
}
