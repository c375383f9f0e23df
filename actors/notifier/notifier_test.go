package notifier_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/notifier"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// notifierCatalog builds a catalog of listed skills "skills/<d>" from files
// (path "<d>/<file>" → content).
func notifierCatalog(version uint64, files map[string]string, skillDirs ...string) *events.Catalog {
	var skills []*events.Skill
	for _, d := range skillDirs {
		s := events.Skill{QualifiedName: "skills__" + d, Name: d, SkillPath: "skills/" + d, URI: "skill://skills/" + d + "/SKILL.md", Listed: true}
		s.Files = append(s.Files, events.File{Path: "SKILL.md", Digest: skilltest.Digest(files[d+"/SKILL.md"])})
		for p, c := range files {
			if rest, ok := strings.CutPrefix(p, d+"/"); ok && rest != "SKILL.md" {
				s.Files = append(s.Files, events.File{Path: rest, Digest: skilltest.Digest(c)})
			}
		}
		skills = append(skills, &s)
	}
	return events.NewCatalog(version, false, skills, nil)
}

// notifierStep feeds one catalog to the notifier.
type notifierStep struct {
	after time.Duration // since the previous step
	cat   *events.Catalog
}

// notice is one events.ResourcesUpdated the notifier published.
type notice struct {
	At time.Duration // since the start
	events.ResourcesUpdated
}

// runNotifier feeds steps to a notifier with the default debounce, in a
// synctest bubble, and returns what it published until three windows after
// the last step.
func runNotifier(t *testing.T, steps []notifierStep) []notice {
	t.Helper()
	const d = notifier.DefaultDebounce
	var got []notice
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		in := make(chan *message.Message)
		pub := eventstest.NewPublisher()
		n := notifier.New(notifier.Inboxes{Catalog: in}, pub, nil)
		done := make(chan error)
		go func() { done <- n.Run(ctx) }()
		start := time.Now()
		received := make(chan struct{})
		go func() {
			defer close(received)
			for m := range pub.C {
				ev, err := events.Decode[events.ResourcesUpdated](m)
				if err != nil {
					t.Error(err)
				}
				got = append(got, notice{time.Since(start), ev})
			}
		}()
		for _, s := range steps {
			// Fake time: the bubble's clock jumps once every goroutine is
			// blocked, firing due timers on the way.
			time.Sleep(s.after)
			in <- eventstest.Encode(t, events.CatalogChanged{Catalog: s.cat})
		}
		time.Sleep(3 * d)
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		close(pub.C)
		<-received
	})
	return got
}

// TestNotifier checks which URIs are published and when: changed and
// vanished files, the index when skills come or go, stale versions
// dropped, and the per-URI debounce (in synctest's fake time).
func TestNotifier(t *testing.T) {
	const d = notifier.DefaultDebounce
	v1 := notifierCatalog(1, map[string]string{"a/SKILL.md": "a", "a/x.md": "x", "a/y.md": "y", "b/SKILL.md": "b"}, "a", "b")
	v2 := notifierCatalog(2, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "a/y.md": "y", "b/SKILL.md": "b"}, "a", "b")
	v3 := notifierCatalog(3, map[string]string{"a/SKILL.md": "a", "a/x.md": "x3", "a/y.md": "y", "b/SKILL.md": "b"}, "a", "b")
	v4 := notifierCatalog(4, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "b/SKILL.md": "b"}, "a", "b")
	v5 := notifierCatalog(5, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2"}, "a")
	v6 := notifierCatalog(6, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "c/SKILL.md": "c"}, "a", "c")
	v7 := notifierCatalog(7, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "a/y.md": "y2", "b/SKILL.md": "b"}, "a", "b")
	v8 := notifierCatalog(8, map[string]string{"a/SKILL.md": "a", "a/x.md": "x8", "a/y.md": "y8", "b/SKILL.md": "b"}, "a", "b")
	type step = notifierStep
	type sent = notice
	tests := []struct {
		name  string
		steps []step
		want  []sent
	}{
		{
			name:  "a change is sent at once; a second within the window waits for its end",
			steps: []step{{0, v1}, {0, v2}, {d / 2, v3}},
			want: []sent{
				{0, events.ResourcesUpdated{Version: 2, URIs: []string{"skill://skills/a/x.md"}}},
				{d, events.ResourcesUpdated{Version: 3, URIs: []string{"skill://skills/a/x.md"}}},
			},
		},
		{
			name:  "a change after the window: sent at once too",
			steps: []step{{0, v1}, {0, v2}, {d * 2, v3}},
			want: []sent{
				{0, events.ResourcesUpdated{Version: 2, URIs: []string{"skill://skills/a/x.md"}}},
				{2 * d, events.ResourcesUpdated{Version: 3, URIs: []string{"skill://skills/a/x.md"}}},
			},
		},
		{
			name:  "a vanished file waits one window (it may come back); a changed one does not",
			steps: []step{{0, v1}, {0, v2}, {d / 2, v4}},
			want: []sent{
				{0, events.ResourcesUpdated{Version: 2, URIs: []string{"skill://skills/a/x.md"}}},
				{d + d/2, events.ResourcesUpdated{Version: 4, URIs: []string{"skill://skills/a/y.md"}}},
			},
		},
		{
			name:  "URIs due together share a notice",
			steps: []step{{0, v1}, {0, v7}},
			want:  []sent{{0, events.ResourcesUpdated{Version: 7, URIs: []string{"skill://skills/a/x.md", "skill://skills/a/y.md"}}}},
		},
		{
			name:  "held URIs due together share a notice",
			steps: []step{{0, v1}, {0, v7}, {d / 2, v8}},
			want: []sent{
				{0, events.ResourcesUpdated{Version: 7, URIs: []string{"skill://skills/a/x.md", "skill://skills/a/y.md"}}},
				{d, events.ResourcesUpdated{Version: 8, URIs: []string{"skill://skills/a/x.md", "skill://skills/a/y.md"}}},
			},
		},
		{
			name:  "vanished skill: its files and the index",
			steps: []step{{0, v4}, {0, v5}},
			want: []sent{
				{0, events.ResourcesUpdated{Version: 5, URIs: []string{"skill://index.json"}}},
				{d, events.ResourcesUpdated{Version: 5, URIs: []string{"skill://skills/b/SKILL.md"}, Gone: []string{"skill://skills/b/SKILL.md"}}},
			},
		},
		{
			name:  "added skill: the index only",
			steps: []step{{0, v5}, {0, v6}},
			want:  []sent{{0, events.ResourcesUpdated{Version: 6, URIs: []string{"skill://index.json"}}}},
		},
		{
			name:  "stale and repeated versions are dropped; the first catalog sends nothing",
			steps: []step{{0, v2}, {0, v1}, {0, v2}, {d * 2, v1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runNotifier(t, tc.steps)); diff != "" {
				t.Errorf("notices mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotifierDebounceOption checks that NotifierOptions.Debounce sets the
// window: the first change goes at once, the next one a window later.
func TestNotifierDebounceOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		in := make(chan *message.Message)
		pub := eventstest.NewPublisher()
		n := notifier.New(notifier.Inboxes{Catalog: in}, pub, &notifier.Options{Debounce: time.Second})
		go n.Run(ctx)
		v1 := notifierCatalog(1, map[string]string{"a/SKILL.md": "a"}, "a")
		v2 := notifierCatalog(2, map[string]string{"a/SKILL.md": "a2"}, "a")
		v3 := notifierCatalog(3, map[string]string{"a/SKILL.md": "a3"}, "a")
		start := time.Now()
		in <- eventstest.Encode(t, events.CatalogChanged{Catalog: v1})
		in <- eventstest.Encode(t, events.CatalogChanged{Catalog: v2})
		<-pub.C
		if got := time.Since(start); got != 0 {
			t.Errorf("first notice sent after %v, want at once", got)
		}
		in <- eventstest.Encode(t, events.CatalogChanged{Catalog: v3})
		<-pub.C
		if got := time.Since(start); got != time.Second {
			t.Errorf("second notice sent after %v, want 1s (the window)", got)
		}
	})
}

// TestNotifierIndexAndGone (issue 11 item 5: the notifier is the one
// authority for resources/updated): skill://index.json is listed exactly
// when the body the facade renders for it changes (the listed skills'
// names, descriptions, URIs and SKILL.md digests), and Gone lists the
// vanished URIs whose skill went, as of the newest catalog.
func TestNotifierIndexAndGone(t *testing.T) {
	const (
		d     = notifier.DefaultDebounce
		index = events.IndexURI
		aMD   = "skill://skills/a/SKILL.md"
		aX    = "skill://skills/a/x.md"
		bMD   = "skill://skills/b/SKILL.md"
		bY    = "skill://skills/b/y.md"
	)
	base := map[string]string{"a/SKILL.md": "a", "a/x.md": "x", "b/SKILL.md": "b", "b/y.md": "y"}
	with := func(version uint64, edit func(files map[string]string), dirs ...string) *events.Catalog {
		files := maps.Clone(base)
		if edit != nil {
			edit(files)
		}
		return notifierCatalog(version, files, dirs...)
	}
	// alter returns a copy of c at version with f applied to skill i.
	alter := func(c *events.Catalog, version uint64, i int, f func(*events.Skill)) *events.Catalog {
		skills := slices.Clone(c.Skills)
		sk := *skills[i] // c keeps its own
		f(&sk)
		skills[i] = &sk
		return events.NewCatalog(version, false, skills, nil)
	}
	v1 := with(1, nil, "a", "b")
	tests := []struct {
		name  string
		steps []notifierStep
		want  []notice
	}{
		{
			name:  "SKILL.md edited: it and the index (its digest is in the index)",
			steps: []notifierStep{{0, v1}, {0, with(2, func(f map[string]string) { f["a/SKILL.md"] = "a2" }, "a", "b")}},
			want:  []notice{{0, events.ResourcesUpdated{Version: 2, URIs: []string{index, aMD}}}},
		},
		{
			name:  "supporting file edited: not the index",
			steps: []notifierStep{{0, v1}, {0, with(2, func(f map[string]string) { f["b/y.md"] = "y2" }, "a", "b")}},
			want:  []notice{{0, events.ResourcesUpdated{Version: 2, URIs: []string{bY}}}},
		},
		{
			name:  "file removed from a skill that stays: listed, not Gone",
			steps: []notifierStep{{0, v1}, {0, with(2, func(f map[string]string) { delete(f, "b/y.md") }, "a", "b")}},
			want:  []notice{{d, events.ResourcesUpdated{Version: 2, URIs: []string{bY}}}},
		},
		{
			name:  "skill removed: its files Gone, and the index",
			steps: []notifierStep{{0, v1}, {0, with(2, nil, "a")}},
			want: []notice{
				{0, events.ResourcesUpdated{Version: 2, URIs: []string{index}}},
				{d, events.ResourcesUpdated{Version: 2, URIs: []string{bMD, bY}, Gone: []string{bMD, bY}}},
			},
		},
		{
			name:  "skill removed and back within the window: nothing Gone",
			steps: []notifierStep{{0, v1}, {0, with(2, nil, "a")}, {d / 2, with(3, nil, "a", "b")}},
			want: []notice{
				{0, events.ResourcesUpdated{Version: 2, URIs: []string{index}}},
				{d, events.ResourcesUpdated{Version: 3, URIs: []string{index, bMD, bY}}},
			},
		},
		{
			name: "skill back after its notice: the next notice lists no Gone",
			steps: []notifierStep{{0, v1}, {0, with(2, nil, "a")}, {2 * d, with(3, nil, "a", "b")},
				{0, with(4, func(f map[string]string) { f["b/y.md"] = "y2" }, "a", "b")}},
			want: []notice{
				{0, events.ResourcesUpdated{Version: 2, URIs: []string{index}}},
				{d, events.ResourcesUpdated{Version: 2, URIs: []string{bMD, bY}, Gone: []string{bMD, bY}}},
				{2 * d, events.ResourcesUpdated{Version: 3, URIs: []string{index}}},
				{2 * d, events.ResourcesUpdated{Version: 4, URIs: []string{bY}}},
			},
		},
		{
			name:  "skill taken out of skills/list: the index only",
			steps: []notifierStep{{0, v1}, {0, alter(v1, 2, 1, func(s *events.Skill) { s.Listed = false })}},
			want:  []notice{{0, events.ResourcesUpdated{Version: 2, URIs: []string{index}}}},
		},
		{
			name:  "description changed with the same SKILL.md digest (an override): the index only",
			steps: []notifierStep{{0, v1}, {0, alter(v1, 2, 0, func(s *events.Skill) { s.Description = "new" })}},
			want:  []notice{{0, events.ResourcesUpdated{Version: 2, URIs: []string{index}}}},
		},
		{
			name: "a flag the index does not show, and surrounding blanks of a description: nothing",
			steps: []notifierStep{{0, v1}, {0, alter(v1, 2, 0, func(s *events.Skill) { s.UserInvocable = true })},
				{0, alter(v1, 3, 0, func(s *events.Skill) { s.Description = "  " })}},
		},
		{
			name: "an unlisted skill comes and goes: not the index",
			steps: []notifierStep{{0, v1},
				{0, events.NewCatalog(2, false, append(slices.Clone(v1.Skills), &events.Skill{QualifiedName: "skills__h", Name: "h", SkillPath: "skills/h",
					URI: "skill://skills/h/SKILL.md", Files: []events.File{{Path: "SKILL.md", Digest: skilltest.Digest("h")}}}), nil)},
				{0, with(3, nil, "a", "b")}},
			want: []notice{{d, events.ResourcesUpdated{Version: 3, URIs: []string{"skill://skills/h/SKILL.md"}, Gone: []string{"skill://skills/h/SKILL.md"}}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runNotifier(t, tc.steps)); diff != "" {
				t.Errorf("notices mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNotifierNestedSkillGone (issue 11 item 5): a nested skill's files sit
// in its parent's manifest too, so when the nested skill goes they stay
// served by the parent: not Gone, and unchanged; only the index changes.
// When the parent goes as well, they go with it.
func TestNotifierNestedSkillGone(t *testing.T) {
	const d = notifier.DefaultDebounce
	outer := events.Skill{QualifiedName: "skills__o", Name: "o", SkillPath: "skills/o", URI: "skill://skills/o/SKILL.md", Listed: true,
		Files: []events.File{{Path: "SKILL.md", Digest: skilltest.Digest("o")}, {Path: "i/SKILL.md", Digest: skilltest.Digest("i")}, {Path: "i/r.md", Digest: skilltest.Digest("r")}}}
	inner := events.Skill{QualifiedName: "skills__o__i", Name: "i", SkillPath: "skills/o/i", URI: "skill://skills/o/i/SKILL.md", Listed: true,
		Files: []events.File{{Path: "SKILL.md", Digest: skilltest.Digest("i")}, {Path: "r.md", Digest: skilltest.Digest("r")}}}
	got := runNotifier(t, []notifierStep{
		{0, events.NewCatalog(1, false, []*events.Skill{&outer, &inner}, nil)},
		{0, events.NewCatalog(2, false, []*events.Skill{&outer}, nil)},
		{2 * d, events.NewCatalog(3, false, nil, nil)},
	})
	all := []string{"skill://skills/o/SKILL.md", "skill://skills/o/i/SKILL.md", "skill://skills/o/i/r.md"}
	want := []notice{
		{0, events.ResourcesUpdated{Version: 2, URIs: []string{events.IndexURI}}},
		{2 * d, events.ResourcesUpdated{Version: 3, URIs: []string{events.IndexURI}}},
		{3 * d, events.ResourcesUpdated{Version: 3, URIs: all, Gone: all}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notices mismatch (-want +got):\n%s", diff)
	}
}
