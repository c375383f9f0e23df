package events

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCatalogFileLookup checks File against the map it replaced (every
// manifest file's URI → the innermost skill holding it), over random
// catalogs of nested skills with names that need percent-encoding, and
// against URIs that are near misses.
func TestCatalogFileLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dirs := []string{"a", "a/b c", "a/b c/d", "e%", "e%/f"}
	files := []string{"SKILL.md", "x.md", "b c/SKILL.md", "b c/y é.md", "d/SKILL.md", "f/z.md"}
	for round := range 500 {
		var skills []*Skill
		for _, d := range dirs {
			if rng.IntN(3) == 0 {
				continue
			}
			sk := Skill{SkillPath: "src/" + d, URI: "skill://src/" + EncodePath(d) + "/SKILL.md", QualifiedName: d}
			for k, f := range files {
				if k == 0 || rng.IntN(2) == 0 {
					sk.Files = append(sk.Files, File{Path: f, Digest: fmt.Sprint(rng.IntN(9))})
				}
			}
			skills = append(skills, &sk)
		}
		c := NewCatalog(1, false, skills, nil)
		want := map[string]FileRef{}
		for i := range c.Skills {
			s := c.Skills[i]
			for j := range s.Files {
				uri := s.FileURI(s.Files[j].Path)
				if prev, ok := want[uri]; ok && len(prev.Skill.SkillPath) >= len(s.SkillPath) {
					continue
				}
				want[uri] = FileRef{Skill: s, File: &s.Files[j]}
			}
		}
		for uri, w := range want {
			if got, ok := c.File(uri); !ok || got != w {
				t.Fatalf("round %d: File(%q) = %v, %v; want %v", round, uri, got, ok, w)
			}
			for _, miss := range []string{uri + "x", uri[:len(uri)-1], uri + "/", "skill://src/a/x%2Emd"} {
				if _, inWant := want[miss]; inWant {
					continue
				}
				if got, ok := c.File(miss); ok {
					t.Fatalf("round %d: File(%q) = %v, want none", round, miss, got)
				}
			}
		}
		for i := range c.Skills {
			if got := c.SkillByURI(c.Skills[i].URI); got != c.Skills[i] {
				t.Fatalf("round %d: SkillByURI(%q) = %v", round, c.Skills[i].URI, got)
			}
			if got := c.SkillByURI(c.Skills[i].SkillRootURI()); got != nil {
				t.Fatalf("round %d: SkillByURI(root %q) = %v, want nil", round, c.Skills[i].SkillRootURI(), got)
			}
		}
	}
}

// TestPatchCatalog: a catalog patched from another (skills replaced by
// others of the same URI and qualified name) shares its lookup index and
// finds what a catalog built afresh finds; anything else is built afresh.
func TestPatchCatalog(t *testing.T) {
	mk := func(names ...string) []*Skill {
		var skills []*Skill
		for _, n := range names {
			skills = append(skills, &Skill{QualifiedName: "q_" + n, URI: "skill://s/" + n + "/SKILL.md",
				Files: []File{{Path: "SKILL.md"}, {Path: "x.md"}}})
		}
		return skills
	}
	prev := NewCatalog(1, false, mk("a", "b", "c"), nil)
	next := append([]*Skill(nil), prev.Skills...)
	changed := *next[1] // prev keeps its own
	changed.Description, changed.Files = "changed", []File{{Path: "SKILL.md"}, {Path: "y.md"}}
	next[1] = &changed
	c := PatchCatalog(prev, 2, false, next, nil)
	if c.idx != prev.idx {
		t.Error("a patch does not share the index")
	}
	fresh := NewCatalog(2, false, append([]*Skill(nil), next...), nil)
	for i := range c.Skills {
		sk := c.Skills[i]
		if c.SkillByURI(sk.URI) != sk || c.SkillByName(sk.QualifiedName) != sk {
			t.Errorf("skill %s not found in the patched catalog", sk.URI)
		}
		for _, f := range []string{"x.md", "y.md"} {
			got, ok := c.File(sk.FileURI(f))
			want, wok := fresh.File(sk.FileURI(f))
			if ok != wok || ok && (got.File.Path != want.File.Path || got.Skill.URI != want.Skill.URI) {
				t.Errorf("File(%s) = %v, %v; fresh %v, %v", sk.FileURI(f), got, ok, want, wok)
			}
		}
	}
	for name, skills := range map[string][]*Skill{
		"renamed": func() []*Skill {
			s := append([]*Skill(nil), prev.Skills...)
			r := *s[0]
			r.QualifiedName = "other"
			s[0] = &r
			return s
		}(),
		"moved":     mk("a", "b", "d"),
		"one fewer": mk("a", "b"),
	} {
		if c := PatchCatalog(prev, 2, false, skills, nil); c.idx == prev.idx {
			t.Errorf("%s: shares the index", name)
		} else if c.SkillByName(skills[0].QualifiedName) != c.Skills[0] {
			t.Errorf("%s: index not rebuilt", name)
		}
	}
}
