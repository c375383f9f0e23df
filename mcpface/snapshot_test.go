package mcpface

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/events"
)

// snapSkill is a skill at skill://c/<path> with the given files (each
// digest, size and time derived from the content string).
func snapSkill(path, desc string, files map[string]string) events.Skill {
	name := path[strings.LastIndexByte(path, '/')+1:]
	sk := events.Skill{QualifiedName: strings.ReplaceAll(path, "/", "__"), Name: name, Description: desc,
		SkillPath: path, URI: "skill://c/" + path + "/SKILL.md", Listed: true, ModelInvocable: true}
	for _, rel := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		c := files[rel]
		sk.Files = append(sk.Files, events.File{Path: rel, Digest: "sha256:" + c, Size: int64(len(c)),
			ModTime: time.Unix(int64(len(c)), 0), MIME: "text/plain", Text: true})
	}
	// SKILL.md first, as the scanner lists it.
	slices.SortStableFunc(sk.Files, func(a, b events.File) int {
		return strings.Compare(strings.TrimPrefix(a.Path, "SKILL.md"), strings.TrimPrefix(b.Path, "SKILL.md"))
	})
	return sk
}

// snapshotView is what requests read of a snapshot, for comparing one built
// incrementally with one built afresh.
type snapshotView struct {
	Resources []string
	Dirs      map[string][]string
	Listed    []int
	MaxURI    int
}

func viewOf(s *snapshot) snapshotView {
	v := snapshotView{Dirs: map[string][]string{}, Listed: s.listed, MaxURI: s.maxURI}
	for _, r := range s.resourceList() {
		v.Resources = append(v.Resources, fmt.Sprintf("%s|%s|%s|%s|%d|%v", r.URI, r.Name, r.Description, r.MIMEType, r.Size, *r.Annotations))
	}
	s.dir("") // build the map
	for d, children := range s.dirs {
		for _, r := range children {
			v.Dirs[d] = append(v.Dirs[d], r.URI+"|"+r.Name+"|"+r.MIMEType)
		}
	}
	return v
}

// TestSnapshotIncremental (issue 12: edit latency): a snapshot built from
// the previous one equals one built afresh, for every kind of change
// between versions, and shares the views of unchanged skills.
func TestSnapshotIncremental(t *testing.T) {
	base := func() []events.Skill {
		return []events.Skill{
			snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x", "d/y.md": "y"}),
			snapSkill("a-b", "AB", map[string]string{"SKILL.md": "ab"}),
			snapSkill("p", "P", map[string]string{"SKILL.md": "p", "n/SKILL.md": "n", "n/r.md": "r", "q.md": "q"}),
			snapSkill("p/n", "N", map[string]string{"SKILL.md": "n", "r.md": "r"}),
			snapSkill("z", "Z", map[string]string{"SKILL.md": "z"}),
		}
	}
	edit := func(f func([]events.Skill) []events.Skill) *events.Catalog {
		return events.NewCatalog(2, false, f(base()), nil)
	}
	tests := []struct {
		name string
		next *events.Catalog
	}{
		{"nothing changed", edit(func(s []events.Skill) []events.Skill { return s })},
		{"one file's bytes", edit(func(s []events.Skill) []events.Skill {
			s[0].Files[1].Digest, s[0].Files[1].Size = "sha256:x2", 2
			return s
		})},
		{"a file added", edit(func(s []events.Skill) []events.Skill {
			s[0] = snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x", "d/y.md": "y", "d/e/w.md": "w"})
			return s
		})},
		{"description and flags", edit(func(s []events.Skill) []events.Skill {
			s[1].Description, s[4].ModelInvocable, s[4].UserInvocable = "new", false, true
			return s
		})},
		{"a skill removed", edit(func(s []events.Skill) []events.Skill { return slices.Delete(s, 1, 2) })},
		{"a skill added", edit(func(s []events.Skill) []events.Skill {
			return append(s, snapSkill("m", "M", map[string]string{"SKILL.md": "m", "k.md": "k"}))
		})},
		{"nested skill gone, its files stay in the parent's manifest", edit(func(s []events.Skill) []events.Skill {
			return slices.Delete(s, 3, 4)
		})},
		{"a skill nested into an unchanged one", edit(func(s []events.Skill) []events.Skill {
			return append(s, snapSkill("a/d", "D", map[string]string{"SKILL.md": "y"}))
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev := newSnapshot(events.NewCatalog(1, false, base(), nil), nil)
			got := newSnapshot(tc.next, prev)
			want := newSnapshot(tc.next, nil)
			if diff := cmp.Diff(viewOf(want), viewOf(got)); diff != "" {
				t.Errorf("incremental snapshot differs from a fresh one (-fresh +incremental):\n%s", diff)
			}
		})
	}
	t.Run("unchanged skills share their view", func(t *testing.T) {
		skills := base()
		prev := newSnapshot(events.NewCatalog(1, false, skills, nil), nil)
		next := slices.Clone(prev.cat.Skills) // same manifests, as the builder's versions
		next[slices.IndexFunc(next, func(sk events.Skill) bool { return sk.SkillPath == "a" })].Description = "changed"
		s := newSnapshot(events.NewCatalog(2, false, next, nil), prev)
		prev.ensureViews()
		for i, sk := range s.cat.Skills {
			shared := &s.views[i].resources[0] == &prev.views[i].resources[0]
			wantShared := sk.SkillPath == "a-b" || sk.SkillPath == "z" // a changed; p and p/n are nested
			if shared != wantShared {
				t.Errorf("skill %s: view shared = %v, want %v", sk.SkillPath, shared, wantShared)
			}
		}
	})
}
