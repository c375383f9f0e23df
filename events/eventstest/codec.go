package eventstest

import (
	"bytes"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// Encode is [events.Encode] for tests: it fails t at once when ev does not
// encode.
func Encode(t testing.TB, ev any) *message.Message {
	t.Helper()
	m, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// CatalogDiff is a catalog.changed with the SKILL.md URIs added, removed
// and changed since the catalog before it, which the tests work out
// themselves ([DiffCatalogs]): the builder no longer lists them, the
// notifier alone decides what changed (issue 11 item 5).
type CatalogDiff struct {
	Catalog                 *events.Catalog
	Added, Removed, Changed []string
}

// DecodeCatalog decodes the catalog.changed m and diffs its catalog
// against prev (nil: the first catalog). It returns the decoding error.
func DecodeCatalog(prev *events.Catalog, m *message.Message) (CatalogDiff, error) {
	ev, err := events.Decode[events.CatalogChanged](m)
	if err != nil {
		return CatalogDiff{}, err
	}
	d := CatalogDiff{Catalog: ev.Catalog}
	d.Added, d.Removed, d.Changed = DiffCatalogs(prev, ev.Catalog)
	return d, nil
}

// DiffCatalogs lists the SKILL.md URIs added to, removed from and changed
// between prev (nil: nothing before) and next, in catalog order. The
// builder published these lists with every catalog until the notifier
// became the one authority on what changed (issue 11 item 5); tests still
// check the builder's versions by them.
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
		case !sameSkill(old, s):
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
