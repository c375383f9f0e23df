package mcpface

import (
	"bytes"

	"github.com/skilljack/skilljack-mcp/events"
)

// A catalog version the builder's incremental path makes (issue 12: edit
// latency) holds every skill an edit did not touch as the very same
// *events.Skill as the version before. The facade finds the changed skills
// by comparing the two versions skill by skill, which for an unchanged
// skill compares one pointer, and then
// rebuilds what it derives from a catalog (views, encoded entries,
// registrations) for the changed skills alone, sharing the rest with the
// snapshot before.

// skillDiff is how one catalog's skills differ from another's.
type skillDiff struct {
	// shape reports that both catalogs hold as many skills with the same
	// URI at each index: then the listing order, the nesting of skills and
	// every index-keyed value derived from the unchanged skills hold for
	// both. When it is false, changed is nil and nothing is shared.
	shape bool
	// changed holds, in increasing order, the indexes of the skills that
	// are not the same value in both ([sameSkill]).
	changed []int
}

// diffSkills returns how b's skills differ from a's.
func diffSkills(a, b *events.Catalog) skillDiff {
	if len(a.Skills) != len(b.Skills) {
		return skillDiff{}
	}
	d := skillDiff{shape: true}
	for i := range b.Skills {
		x, y := a.Skills[i], b.Skills[i]
		if sameSkill(x, y) {
			continue
		}
		if x.URI != y.URI {
			return skillDiff{}
		}
		d.changed = append(d.changed, i)
	}
	return d
}

// sameSkill reports whether a and b are the same value for everything
// the facade derives from a skill: every field equal, the manifests the
// same array (a manifest is never changed once made, so one shared array
// holds the same files; equal files in another array count as a change,
// which costs a rebuild, never a stale value). Strings the builder carried
// over are the same pointers, which == compares first.
func sameSkill(a, b *events.Skill) bool {
	if a == b {
		return true
	}
	return a.QualifiedName == b.QualifiedName && a.Name == b.Name && a.Description == b.Description &&
		a.SkillPath == b.SkillPath && a.URI == b.URI && a.Source == b.Source && a.Dir == b.Dir &&
		a.RealDir == b.RealDir && a.DirID == b.DirID && sameBytes(a.Frontmatter, b.Frontmatter) &&
		a.Listed == b.Listed && a.ModelInvocable == b.ModelInvocable && a.UserInvocable == b.UserInvocable &&
		a.AssistantOverridden == b.AssistantOverridden && a.UserOverridden == b.UserOverridden &&
		sameManifest(a.Files, b.Files) && sameBytes(a.SkillMD, b.SkillMD)
}

// sameBytes reports whether a and b hold the same bytes and are both nil
// or both not (a nil SKILL.md means "read it from disk").
func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// sameManifest reports whether a and b are the same manifest array.
func sameManifest(a, b []events.File) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// diffMemo remembers the last diff computed between two snapshots, so
// that SetCatalog and the registrations that follow it compare the two
// catalogs once.
type diffMemo struct {
	from, to *snapshot
	d        skillDiff
}

// diffOf returns how b's skills differ from a's, from m when it holds
// that pair.
func (m *diffMemo) diffOf(a, b *snapshot) skillDiff {
	if m.from == a && m.to == b {
		return m.d
	}
	return diffSkills(a.cat, b.cat)
}
