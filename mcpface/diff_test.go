package mcpface

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/events"
)

// differ changes v, a settable value, to another value of its type.
func differ(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Struct:
		differ(t, v.Field(0))
	case reflect.Slice:
		// A new array with one more element: another manifest or other
		// bytes.
		v.Set(reflect.Append(reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()+1), v), reflect.Zero(v.Type().Elem())))
	default:
		t.Fatalf("differ: no change for a %s", v.Kind())
	}
}

// TestSameSkillCoversEveryField: sameSkill tells a skill from one that
// differs in any field, so that nothing the facade derives from a skill
// is shared with a version in which that field changed; and it holds for
// a copy sharing the manifest, as the builder's versions do.
func TestSameSkillCoversEveryField(t *testing.T) {
	base := *snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x"})
	base.Frontmatter = json.RawMessage(`{"name":"a"}`)
	base.SkillMD = []byte("---\nname: a\n---\n")
	base.RealDir, base.Dir = "/r/a", "/d/a"
	cp := base
	if !sameSkill(&base, &cp) {
		t.Fatal("sameSkill: a copy differs")
	}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		other := base
		differ(t, reflect.ValueOf(&other).Elem().Field(i))
		if sameSkill(&base, &other) {
			t.Errorf("sameSkill: a change of %s goes unnoticed", f.Name)
		}
	}
	other := base
	other.Files = slices.Clone(base.Files)
	if sameSkill(&base, &other) {
		t.Error("sameSkill: a manifest in another array counts as the same (it may hold other files)")
	}
	other = base
	other.SkillMD = nil
	if sameSkill(&base, &other) {
		t.Error("sameSkill: SKILL.md bytes dropped go unnoticed")
	}
}

// TestSnapshotCarried (issue 12: edit latency): a snapshot built from the
// one before, from a catalog version that shares every unchanged skill
// with it (as the builder's incremental path makes them), serves exactly
// what one built afresh serves — resources, directories, listed skills,
// URI bound and every encoded skills/list entry — and reuses the entries
// and views of the unchanged skills.
func TestSnapshotCarried(t *testing.T) {
	base := func() []*events.Skill {
		return []*events.Skill{
			snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x", "d/y.md": "y"}),
			snapSkill("a-b", "AB", map[string]string{"SKILL.md": "ab"}),
			snapSkill("long/path/to/a/skill", "L", map[string]string{"SKILL.md": "l", "very/long/path/of/a/file.md": "f"}),
			snapSkill("p", "P", map[string]string{"SKILL.md": "p", "n/SKILL.md": "n", "n/r.md": "r", "q.md": "q"}),
			snapSkill("p/n", "N", map[string]string{"SKILL.md": "n", "r.md": "r"}),
			snapSkill("z", "Z", map[string]string{"SKILL.md": "z"}),
		}
	}
	ed := NewSkillEditor()
	at := func(skills []*events.Skill, path string) *events.Skill {
		return ed.At(skills, func(sk *events.Skill) bool { return sk.SkillPath == path })
	}
	tests := []struct {
		name string
		edit func(s []*events.Skill)
	}{
		{"nothing", func([]*events.Skill) {}},
		{"one file's bytes", func(s []*events.Skill) {
			sk := at(s, "a")
			sk.Files = slices.Clone(sk.Files)
			sk.Files[1].Digest, sk.Files[1].Size, sk.Files[1].ModTime = "sha256:x2", 2, time.Unix(9, 0)
		}},
		{"a file added", func(s []*events.Skill) {
			*at(s, "a") = *snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x", "d/y.md": "y", "d/e/w.md": "w"})
		}},
		{"a file removed", func(s []*events.Skill) {
			*at(s, "a") = *snapSkill("a", "A", map[string]string{"SKILL.md": "a", "x.md": "x"})
		}},
		{"the longest path gone", func(s []*events.Skill) {
			*at(s, "long/path/to/a/skill") = *snapSkill("long/path/to/a/skill", "L", map[string]string{"SKILL.md": "l"})
		}},
		{"description, flags, listed", func(s []*events.Skill) {
			at(s, "a-b").Description = "new"
			at(s, "z").ModelInvocable, at(s, "z").UserInvocable, at(s, "z").Listed = false, true, false
		}},
		{"a nested skill's file", func(s []*events.Skill) {
			sk := at(s, "p/n")
			sk.Files = slices.Clone(sk.Files)
			sk.Files[1].Size = 7
		}},
		{"frontmatter", func(s []*events.Skill) { at(s, "z").Frontmatter = json.RawMessage(`{"name":"z","x":1}`) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev := newSnapshot(events.NewCatalog(1, false, base(), nil), nil)
			prev.ensureViews()
			for i := range prev.cat.Skills {
				prev.entry(i)
			}
			next := slices.Clone(prev.cat.Skills)
			ed.Reset()
			tc.edit(next)
			got := newSnapshot(events.NewCatalog(2, false, next, nil), prev)
			fresh := newSnapshot(events.NewCatalog(2, false, slices.Clone(next), nil), nil)
			if diff := cmp.Diff(viewOf(fresh), viewOf(got)); diff != "" {
				t.Errorf("carried snapshot differs from a fresh one (-fresh +carried):\n%s", diff)
			}
			d := diffSkills(prev.cat, got.cat)
			for i := range got.cat.Skills {
				if string(got.entry(i)) != string(fresh.entry(i)) {
					t.Errorf("skill %s: entry %s, fresh %s", got.cat.Skills[i].SkillPath, got.entry(i), fresh.entry(i))
				}
				changed := slices.Contains(d.changed, i)
				if shared := got.entries[i].Load() == prev.entries[i].Load(); shared == changed {
					t.Errorf("skill %s: entry shared = %v, changed = %v", got.cat.Skills[i].SkillPath, shared, changed)
				}
				if !changed && !got.views[i].nested && &got.views[i].files[0] != &prev.views[i].files[0] {
					t.Errorf("skill %s: unchanged, view not shared", got.cat.Skills[i].SkillPath)
				}
			}
			if d := diffSkills(prev.cat, got.cat); !d.shape {
				t.Fatal("diffSkills: the shape changed")
			}
			f := New(nil)
			f.diffs = diffMemo{from: prev, to: got, d: d}
			if a, b := f.sameResourcesAs(prev, got), sameResources(prev, got); a != b {
				t.Errorf("sameResourcesAs = %v, sameResources = %v", a, b)
			}
		})
	}
}
