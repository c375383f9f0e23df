package actors

import (
	"path/filepath"
	"strings"

	"github.com/skilljack/skilljack-mcp/events"
)

// Finding is one diagnostic of a [Validate] catalog as the validate and
// list commands report it (issue 15): the file it is about, the rule it
// cites and the reason without the file repeated.
type Finding struct {
	// Level is "error" (the skill is skipped), "warn" or "note".
	Level string `json:"level"`
	// File is the file or folder the finding is about: an absolute path
	// for a local source, the source as given for a remote one without a
	// cached copy.
	File string `json:"file"`
	// Rule is the requirement ID cited (ASF-R05, SEP2640-R43…), "" when the
	// finding cites none.
	Rule string `json:"rule"`
	// Reason says what is off and what the server does about it.
	Reason string `json:"reason"`
	// Unserved is true when something the source holds is not served as
	// written: validate exits 1 on it (as on every error).
	Unserved bool `json:"unserved"`
}

// NewFinding returns d as a [Finding]: its message without the leading
// file name most messages begin with ("skipped F: reason" becomes
// "skipped: reason").
func NewFinding(d events.Diagnostic) Finding {
	msg := strings.TrimPrefix(strings.TrimPrefix(d.Message, d.File+": "), "skipped "+d.File+": ")
	if msg != d.Message && strings.HasPrefix(d.Message, "skipped ") {
		msg = "skipped: " + msg
	}
	if msg == d.Message {
		msg = strings.TrimPrefix(msg, d.File+" ")
	}
	return Finding{Level: d.Level, File: d.File, Rule: d.Rule, Reason: msg, Unserved: d.Unserved || d.Level == events.LevelError}
}

// ListedSkill is one skill of a catalog as the list command reports it:
// what a client would be served.
type ListedSkill struct {
	// QualifiedName names the skill in tools, prompts and the catalog.
	QualifiedName string `json:"qualified_name"`
	// SkillPath is the '/'-joined skill path (prefix, containers, name).
	SkillPath string `json:"skill_path"`
	// URI is the SKILL.md resource URI.
	URI string `json:"uri"`
	// Source is the source as configured ("~/skills", "github.com/o/r",
	// "bundled"); SourceKind its kind (local, github, well-known, bundled).
	Source     string `json:"source"`
	SourceKind string `json:"source_kind"`
	// Dir is the skill folder (absolute for a local source).
	Dir string `json:"dir"`
	// Files and Bytes count the files served (SKILL.md included) and their
	// total size.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// InSkillsList is false for a skill served through tools, prompts and
	// resources but left out of skills/list (see [events.Skill.Listed]).
	InSkillsList bool `json:"in_skills_list"`
	// Warnings are the findings about files inside the skill's folder
	// (each given to the innermost skill holding its file); never nil.
	Warnings []Finding `json:"warnings"`
}

// List returns the skills of cat in URI order as [ListedSkill]s, and the
// findings about no served skill (a skipped skill, a source, the config
// file). It does no I/O.
func List(cat *events.Catalog) ([]ListedSkill, []Finding) {
	skills := make([]ListedSkill, len(cat.Skills))
	for i, s := range cat.Skills {
		skills[i] = ListedSkill{QualifiedName: s.QualifiedName, SkillPath: s.SkillPath, URI: s.URI,
			Source: s.Source.Location, SourceKind: string(s.Source.Kind), Dir: s.Dir,
			Files: len(s.Files), Bytes: s.TotalSize(), InSkillsList: s.Listed, Warnings: []Finding{}}
	}
	other := []Finding{}
	for _, d := range cat.Diagnostics {
		f := NewFinding(d)
		if i := owner(cat.Skills, d.File); i >= 0 && d.Level != events.LevelError {
			skills[i].Warnings = append(skills[i].Warnings, f)
		} else {
			other = append(other, f)
		}
	}
	return skills, other
}

// owner returns the index of the skill whose folder holds file, the
// innermost when skills nest, or -1.
func owner(skills []*events.Skill, file string) int {
	best, bestLen := -1, 0
	for i, s := range skills {
		if s.Dir == "" || !filepath.IsAbs(s.Dir) {
			continue
		}
		if file == s.Dir || strings.HasPrefix(file, s.Dir+string(filepath.Separator)) {
			if len(s.Dir) > bestLen {
				best, bestLen = i, len(s.Dir)
			}
		}
	}
	return best
}
