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
func snapSkill(path, desc string, files map[string]string) *events.Skill {
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
	return &sk
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
	for _, ref := range s.resources() {
		r := s.resource(ref)
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
	base := func() []*events.Skill {
		return []*events.Skill{
			snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x", "d/y.md": "y"}),
			snapSkill("a-b", "AB", map[string]string{"SKILL.md": "ab"}),
			snapSkill("p", "P", map[string]string{"SKILL.md": "p", "n/SKILL.md": "n", "n/r.md": "r", "q.md": "q"}),
			snapSkill("p/n", "N", map[string]string{"SKILL.md": "n", "r.md": "r"}),
			snapSkill("z", "Z", map[string]string{"SKILL.md": "z"}),
		}
	}
	edit := func(f func([]*events.Skill) []*events.Skill) *events.Catalog {
		return events.NewCatalog(2, false, f(base()), nil)
	}
	tests := []struct {
		name string
		next *events.Catalog
	}{
		{"nothing changed", edit(func(s []*events.Skill) []*events.Skill { return s })},
		{"one file's bytes", edit(func(s []*events.Skill) []*events.Skill {
			s[0].Files[1].Digest, s[0].Files[1].Size = "sha256:x2", 2
			return s
		})},
		{"a file added", edit(func(s []*events.Skill) []*events.Skill {
			s[0] = snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x", "d/y.md": "y", "d/e/w.md": "w"})
			return s
		})},
		{"description and flags", edit(func(s []*events.Skill) []*events.Skill {
			s[1].Description, s[4].ModelInvocable, s[4].UserInvocable = "new", false, true
			return s
		})},
		{"a skill removed", edit(func(s []*events.Skill) []*events.Skill { return slices.Delete(s, 1, 2) })},
		{"a skill added", edit(func(s []*events.Skill) []*events.Skill {
			return append(s, snapSkill("m", "M", map[string]string{"SKILL.md": "m", "k.md": "k"}))
		})},
		{"nested skill gone, its files stay in the parent's manifest", edit(func(s []*events.Skill) []*events.Skill {
			return slices.Delete(s, 3, 4)
		})},
		{"a skill nested into an unchanged one", edit(func(s []*events.Skill) []*events.Skill {
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
		i := slices.IndexFunc(next, func(sk *events.Skill) bool { return sk.SkillPath == "a" })
		changed := *next[i] // prev keeps its own
		changed.Description = "changed"
		next[i] = &changed
		s := newSnapshot(events.NewCatalog(2, false, next, nil), prev)
		prev.ensureViews()
		for i, sk := range s.cat.Skills {
			shared := &s.views[i].files[0] == &prev.views[i].files[0]
			wantShared := sk.SkillPath == "a-b" || sk.SkillPath == "z" // a changed; p and p/n are nested
			if shared != wantShared {
				t.Errorf("skill %s: view shared = %v, want %v", sk.SkillPath, shared, wantShared)
			}
		}
	})
}

// TestResourceOrder (issue 12: resources/list entries made on demand): the
// resources a snapshot serves are skill://index.json and every file under
// the innermost skill holding it (as [events.Catalog.File] resolves its
// URI), each once, in strictly increasing URI order — also where skill
// roots prefix one another, nested skills interleave their files with
// their parent's, and paths need escaping — and sameResources tells a
// change of any listed field from none.
func TestResourceOrder(t *testing.T) {
	skills := []*events.Skill{
		snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x y.md": "1", "d/é.md": "2", "Z.md": "3", "d-e/f.md": "4"}),
		snapSkill("a-b", "AB", map[string]string{"SKILL.md": "ab", "%.md": "5"}),
		snapSkill("a.b", "A.B", map[string]string{"SKILL.md": "a.b"}),
		snapSkill("ab", "AB2", map[string]string{"SKILL.md": "ab2", "(1).md": "6"}),
		snapSkill("p", "P", map[string]string{"SKILL.md": "p", "A/SKILL.md": "pa", "A/r.md": "7", "n/SKILL.md": "n", "n/r.md": "r", "q.md": "q", "n-x.md": "8"}),
		snapSkill("p/A", "PA", map[string]string{"SKILL.md": "pa", "r.md": "7"}),
		snapSkill("p/n", "N", map[string]string{"SKILL.md": "n", "r.md": "r"}),
		snapSkill("p-q", "PQ", map[string]string{"SKILL.md": "pq"}),
		snapSkill("z", "Z", map[string]string{"SKILL.md": "z"}),
	}
	c := events.NewCatalog(1, false, skills, nil)
	s := newSnapshot(c, nil)
	var got []string
	for _, r := range s.resources() {
		got = append(got, s.uri(r))
		if u := s.resource(r).URI; u != got[len(got)-1] {
			t.Errorf("resource %v: entry URI %s, uri %s", r, u, got[len(got)-1])
		}
	}
	want := []string{events.IndexURI}
	for i := range c.Skills {
		sk := c.Skills[i]
		for _, f := range sk.Files {
			if ref, ok := c.File(sk.FileURI(f.Path)); ok && ref.Skill == sk {
				want = append(want, sk.FileURI(f.Path))
			}
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources differ from every owned file and the index in URI order (-want +got):\n%s", diff)
	}
	if !sameResources(s, newSnapshot(events.NewCatalog(2, false, slices.Clone(c.Skills), nil), nil)) {
		t.Error("sameResources: a copy of the catalog differs")
	}
	for name, edit := range map[string]func(sk []*events.Skill){
		"size":        func(sk []*events.Skill) { sk[0].Files[1].Size++ },
		"time":        func(sk []*events.Skill) { sk[0].Files[1].ModTime = sk[0].Files[1].ModTime.Add(time.Second) },
		"MIME":        func(sk []*events.Skill) { sk[0].Files[1].MIME = "text/x-other" },
		"name":        func(sk []*events.Skill) { sk[8].Name = "zz" },
		"description": func(sk []*events.Skill) { sk[8].Description = "new" },
		"audience":    func(sk []*events.Skill) { sk[8].UserInvocable = true },
	} {
		next := make([]*events.Skill, len(c.Skills))
		for i, sk := range c.Skills {
			cp := *sk // c keeps its own
			cp.Files = slices.Clone(sk.Files)
			next[i] = &cp
		}
		edit(next)
		if sameResources(s, newSnapshot(events.NewCatalog(2, false, next, nil), nil)) {
			t.Errorf("sameResources: a changed %s goes unnoticed", name)
		}
	}
}
