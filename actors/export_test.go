package actors

import (
	"bytes"

	"github.com/skilljack/skilljack-mcp/events"
)

// DiffCatalogs lists the SKILL.md URIs added to, removed from and changed
// between prev (nil: nothing before) and next. The builder published these
// lists with every catalog until the notifier became the one authority on
// what changed (issue 11 item 5); tests still check the builder's versions
// by them.
func DiffCatalogs(prev, next *events.Catalog) (added, removed, changed []string) {
	if prev == nil {
		for _, s := range next.Skills {
			added = append(added, s.URI)
		}
		return added, nil, nil
	}
	for _, s := range next.Skills {
		old := prev.SkillByURI(s.URI)
		switch {
		case old == nil:
			added = append(added, s.URI)
		case !sameSkill(old, &s):
			changed = append(changed, s.URI)
		}
	}
	for _, s := range prev.Skills {
		if next.SkillByURI(s.URI) == nil {
			removed = append(removed, s.URI)
		}
	}
	return added, removed, changed
}

// sameSkill is the catalog builder's comparison of two versions of a skill
// (catalog.sameSkill), for [DiffCatalogs].
func sameSkill(a, b *events.Skill) bool {
	if a.QualifiedName != b.QualifiedName || a.Name != b.Name || a.Description != b.Description ||
		a.Listed != b.Listed || a.ModelInvocable != b.ModelInvocable || a.UserInvocable != b.UserInvocable ||
		a.AssistantOverridden != b.AssistantOverridden || a.UserOverridden != b.UserOverridden ||
		a.Dir != b.Dir || a.Source != b.Source || !bytes.Equal(a.Frontmatter, b.Frontmatter) || len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Files {
		if a.Files[i].Path != b.Files[i].Path || a.Files[i].Digest != b.Files[i].Digest || a.Files[i].DiskName != b.Files[i].DiskName {
			return false
		}
	}
	return true
}
