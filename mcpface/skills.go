package mcpface

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// Method names of SEP-2640.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"
)

// entry is a SEP-2640 Skill object (SEP2640-R26..R37).
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
