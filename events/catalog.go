package events

import (
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"
)

// Skill is one served skill of a [Catalog]. It is plain data; the catalog
// builder fills it and nobody changes it afterwards.
type Skill struct {
	// QualifiedName names the skill in tools, prompts and the
	// <available_skills> catalog: the skill path's segments, each sanitized,
	// joined with "__" ("skills__acme__billing__refunds").
	QualifiedName string `json:"qualified_name"`
	// Name is the frontmatter name, trimmed, or the folder name when the
	// frontmatter has none.
	Name string `json:"name"`
	// Description is the frontmatter description, trimmed of leading and
	// trailing white space.
	Description string `json:"description"`
	// SkillPath is the '/'-joined, unencoded skill path: prefix, container
	// folders, name ("skills/acme/billing/refunds", "skilljack-docs").
	SkillPath string `json:"skill_path"`
	// URI is the SKILL.md resource URI, each segment percent-encoded
	// ("skill://skills/My%20First%20Skill/SKILL.md").
	URI string `json:"uri"`
	// Source is the source the skill came from.
	Source Source `json:"source"`
	// Dir is the skill folder (see [ScannedSkill.Dir]).
	Dir string `json:"dir"`
	// RealDir and DirID are the folder every read opens and the identity
	// it must still have (see [ScannedSkill.RealDir]). An empty RealDir
	// (a catalog recorded before they existed) means Dir.
	RealDir string   `json:"real_dir,omitempty"`
	DirID   FolderID `json:"dir_id"`
	// Frontmatter is the SKILL.md frontmatter rendered verbatim as a JSON
	// object (SEP2640-R28).
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Listed reports whether the skill has a skills/list entry: its
	// frontmatter carries a string name that is a valid Agent Skills name and
	// equals the last segment of its skill path (SEP2640-R13, R14, R30), and
	// keeps within the Agent Skills field rules a strict client checks
	// (description at most 1,024 characters, compatibility a string of at
	// most 500, string metadata values: ASF-R11, R13, R14). An unlisted skill
	// is still served through tools, prompts and resources (issue 13 item 4).
	Listed bool `json:"listed"`
	// ModelInvocable is the effective model-invocation flag: the override, or
	// else not disable-model-invocation: true.
	ModelInvocable bool `json:"model_invocable"`
	// UserInvocable is the effective user-invocation flag: the override, or
	// else not user-invocable: false.
	UserInvocable bool `json:"user_invocable"`
	// AssistantOverridden and UserOverridden report whether an override set
	// the matching flag.
	AssistantOverridden bool `json:"assistant_overridden,omitempty"`
	UserOverridden      bool `json:"user_overridden,omitempty"`
	// Files is the manifest; Files[0] is the SKILL.md. The URI of a file is
	// [Skill.FileURI] of its Path.
	Files []File `json:"files"`
	// SkillMD is nil in a catalog the builder makes: it holds no file's
	// bytes (issue 12); the facade reads the SKILL.md on demand and serves
	// it only when its bytes match Files[0]. A catalog made by hand or
	// recorded before may carry the bytes Files[0] describes here, which
	// the facade then serves.
	SkillMD []byte `json:"skill_md"`
}

// SkillRootURI returns the skill root directory URI: the SKILL.md URI minus
// "/SKILL.md" (SEP2640-R12).
func (s *Skill) SkillRootURI() string {
	return strings.TrimSuffix(s.URI, "/SKILL.md")
}

// FileURI returns the resource URI of the file at the '/'-separated path rel
// inside the skill, each segment percent-encoded (SEP2640-R10).
func (s *Skill) FileURI(rel string) string {
	return s.SkillRootURI() + "/" + EncodePath(rel)
}

// TotalSize returns the sum of the sizes of the skill's manifest, in bytes.
func (s *Skill) TotalSize() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// Catalog is one immutable version of everything the server serves. The
// catalog builder makes a new one for every change; the facade and the
// notifier swap a pointer to it. Methods are safe for concurrent use; the
// fields must not be modified after [NewCatalog].
type Catalog struct {
	// Version increases by one with every catalog the builder publishes.
	Version uint64 `json:"version"`
	// Static mirrors [SourcesConfigured.Static].
	Static bool `json:"static"`
	// ConfigSeq and OverridesSeq are the Seq of the [SourcesConfigured] and
	// [OverridesChanged] the catalog was built from, so that whoever sent a
	// [ConfigCommand] can tell when the catalog it leads to is served
	// (the config tools). Zero in catalogs recorded before they existed.
	ConfigSeq    uint64 `json:"config_seq,omitempty"`
	OverridesSeq uint64 `json:"overrides_seq,omitempty"`
	// Scanned maps each source ID to the [SourceScanned.ScannedAt] of the
	// scan the catalog was built from, so that a cluster leader can tell
	// whether a catalog holds what a remote source's sync brought (issue
	// 16). Nil in catalogs recorded before it existed or made by hand.
	Scanned map[string]time.Time `json:"scanned,omitempty"`
	// Skills are sorted by URI (plain byte comparison), which is the
	// skills/list order.
	Skills []*Skill `json:"skills"`
	// Diagnostics are every finding about the served sources, hasher and
	// catalog builder alike, for `skilljack-mcp validate`.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Pending is set on a catalog built from a partial scan
	// ([SourceScanned.Partial]): some supporting files have no digest yet
	// (empty [File.Digest]). Names, descriptions and SKILL.md digests are
	// final; a consumer that serves digests or files waits for a catalog
	// without it. The catalog builder publishes pending catalogs only
	// before its first complete one and never persists them.
	Pending bool `json:"pending,omitempty"`

	idx *catalogIndex
}

// catalogIndex holds a catalog's lookup maps: two entries per skill and
// none per file (a file is found through its skill's root URI), so that a
// new version costs no allocation per file and little heap.
type catalogIndex struct {
	byRoot map[string]int // by [Skill.SkillRootURI]
	byName map[string]int
}

// FileRef locates one served file in a [Catalog].
type FileRef struct {
	// Skill is the skill whose manifest holds the file.
	Skill *Skill
	// File is the manifest element.
	File *File
}

// NewCatalog returns a catalog holding skills (which it sorts by URI) and
// builds its lookup index. It takes ownership of both slices.
func NewCatalog(version uint64, static bool, skills []*Skill, diags []Diagnostic) *Catalog {
	sortSkills(skills)
	c := &Catalog{Version: version, Static: static, Skills: skills, Diagnostics: diags}
	c.index()
	return c
}

// PatchCatalog returns a catalog holding skills, which the caller made from
// prev's by replacing some skills with others of the same URI and qualified
// name at the same index (the catalog builder's incremental path, issue
// 12): it shares prev's lookup index rather than building one (two map
// entries per skill, some 2 ms and 1.3 MB at 10,000 skills per edit).
// Where skills is not such a patch of prev's (checked: a URI or qualified
// name differs, or their number), it is [NewCatalog]. It takes ownership
// of both slices.
func PatchCatalog(prev *Catalog, version uint64, static bool, skills []*Skill, diags []Diagnostic) *Catalog {
	if prev == nil || prev.idx == nil || len(skills) != len(prev.Skills) {
		return NewCatalog(version, static, skills, diags)
	}
	for i := range skills {
		if skills[i] == prev.Skills[i] {
			continue // carried over: one comparison, no look at the skill
		}
		if skills[i].URI != prev.Skills[i].URI || skills[i].QualifiedName != prev.Skills[i].QualifiedName {
			return NewCatalog(version, static, skills, diags)
		}
	}
	// prev's skills are sorted by URI, and so are these: the same URIs.
	return &Catalog{Version: version, Static: static, Skills: skills, Diagnostics: diags, idx: prev.idx}
}

// UnmarshalJSON decodes a catalog and rebuilds its lookup index.
func (c *Catalog) UnmarshalJSON(data []byte) error {
	type plain Catalog
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*c = Catalog(p)
	c.index()
	return nil
}

func (c *Catalog) index() {
	idx := &catalogIndex{
		byRoot: make(map[string]int, len(c.Skills)),
		byName: make(map[string]int, len(c.Skills)),
	}
	for i := range c.Skills {
		s := c.Skills[i]
		idx.byRoot[s.SkillRootURI()] = i
		idx.byName[s.QualifiedName] = i
	}
	c.idx = idx
}

// SkillByURI returns the skill whose SKILL.md URI is uri, or nil.
func (c *Catalog) SkillByURI(uri string) *Skill {
	root, ok := strings.CutSuffix(uri, "/SKILL.md")
	if !ok {
		return nil
	}
	if i, ok := c.idx.byRoot[root]; ok && c.Skills[i].URI == uri {
		return c.Skills[i]
	}
	return nil
}

// SkillIndexByRoot returns the index in c.Skills of the skill whose
// [Skill.SkillRootURI] is root, and whether there is one.
func (c *Catalog) SkillIndexByRoot(root string) (int, bool) {
	i, ok := c.idx.byRoot[root]
	return i, ok
}

// SkillByName returns the skill with the qualified name name, or nil.
func (c *Catalog) SkillByName(name string) *Skill {
	if i, ok := c.idx.byName[name]; ok {
		return c.Skills[i]
	}
	return nil
}

// File returns the served file whose resource URI is exactly uri (compared
// as written, after no normalisation), and whether there is one. A nested
// skill's files also sit in its parent's manifest; the file belongs to the
// innermost skill holding it, whose SKILL.md it is under: the skill roots
// that prefix uri are tried longest first.
func (c *Catalog) File(uri string) (FileRef, bool) {
	for end := len(uri); ; {
		k := strings.LastIndexByte(uri[:end], '/')
		if k < 0 {
			return FileRef{}, false
		}
		if i, ok := c.idx.byRoot[uri[:k]]; ok {
			s := c.Skills[i]
			rel := uri[k+1:]
			for j := range s.Files {
				if encodesTo(s.Files[j].Path, rel) {
					return FileRef{Skill: s, File: &s.Files[j]}, true
				}
			}
		}
		end = k
	}
}

// encodesTo reports whether [EncodePath](p) == enc, without building it.
func encodesTo(p, enc string) bool {
	const digits = "0123456789ABCDEF"
	k := 0
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if ch == '/' || isUnreserved(ch) {
			if k >= len(enc) || enc[k] != ch {
				return false
			}
			k++
			continue
		}
		if k+3 > len(enc) || enc[k] != '%' || enc[k+1] != digits[ch>>4] || enc[k+2] != digits[ch&0xF] {
			return false
		}
		k += 3
	}
	return k == len(enc)
}

// TopicCatalogChanged is the topic of [CatalogChanged].
const TopicCatalogChanged = "catalog.changed"

// CatalogChanged is published by the catalog builder with every new catalog
// version. Consumed by the notifier and the MCP facade, which drop a catalog
// whose Version is not above the one they hold. What changed between two
// versions is the notifier's to decide ([ResourcesUpdated]).
type CatalogChanged struct {
	// Catalog is the new version.
	Catalog *Catalog `json:"catalog"`
}

// TopicCatalogServed is where a cluster replica's importer publishes the
// [CatalogChanged] of every cluster catalog version it takes (issue 16):
// in cluster mode the facade and the notifier read this topic, while the
// local builder's [TopicCatalogChanged] feeds the leader's exporter only.
// It is the one topic besides its own that an event type travels on (the
// same value, versioned by the cluster); publish it with [Encode] and
// Publish, not [Publish], which picks [TopicCatalogChanged].
const TopicCatalogServed = "catalog.served"

// TopicResourcesUpdated is the topic of [ResourcesUpdated].
const TopicResourcesUpdated = "resources.updated"

// ResourcesUpdated is published by the notifier, the one component that
// decides which resources clients hear changed: the resource URIs whose
// content changed, or that vanished, between catalog versions, including
// [IndexURI] when the body of the index changes. Consumed by the MCP facade,
// which sends notifications/resources/updated for each URI to its
// subscribers once it serves catalog Version or a newer one, and then drops
// the subscriptions to the URIs in Gone.
type ResourcesUpdated struct {
	// Version is the newest catalog version any of the URIs changed in: the
	// new content (or the absence) is readable from that version on.
	Version uint64 `json:"version"`
	// URIs are the changed or vanished resource URIs, sorted.
	URIs []string `json:"uris"`
	// Gone are the URIs of URIs, sorted, whose skill went with them: the
	// newest catalog the notifier holds when it publishes serves neither
	// them nor the skill that last served them. A file that vanished from a
	// skill that stays is in URIs only.
	Gone []string `json:"gone,omitempty"`
}
