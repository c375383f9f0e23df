package actors_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/events"
)

// notifierCatalog builds a catalog of skills "skills/<d>" from files
// (path "<d>/<file>" → content).
func notifierCatalog(version uint64, files map[string]string, skillDirs ...string) *events.Catalog {
	var skills []events.Skill
	for _, d := range skillDirs {
		s := events.Skill{QualifiedName: "skills__" + d, SkillPath: "skills/" + d, URI: "skill://skills/" + d + "/SKILL.md"}
		s.Files = append(s.Files, events.File{Path: "SKILL.md", Digest: digest(files[d+"/SKILL.md"])})
		for p, c := range files {
			if rest, ok := strings.CutPrefix(p, d+"/"); ok && rest != "SKILL.md" {
				s.Files = append(s.Files, events.File{Path: rest, Digest: digest(c)})
			}
		}
		skills = append(skills, s)
	}
	return events.NewCatalog(version, false, skills, nil)
}

// TestNotifier checks which URIs are published and when: changed and
// vanished files, the index when skills come or go, stale versions
// dropped, and the per-URI debounce (in synctest's fake time).
func TestNotifier(t *testing.T) {
	const d = actors.DefaultNotifyDebounce
	v1 := notifierCatalog(1, map[string]string{"a/SKILL.md": "a", "a/x.md": "x", "a/y.md": "y", "b/SKILL.md": "b"}, "a", "b")
	v2 := notifierCatalog(2, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "a/y.md": "y", "b/SKILL.md": "b"}, "a", "b")
	v3 := notifierCatalog(3, map[string]string{"a/SKILL.md": "a", "a/x.md": "x3", "a/y.md": "y", "b/SKILL.md": "b"}, "a", "b")
	v4 := notifierCatalog(4, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "b/SKILL.md": "b"}, "a", "b")
	v5 := notifierCatalog(5, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2"}, "a")
	v6 := notifierCatalog(6, map[string]string{"a/SKILL.md": "a", "a/x.md": "x2", "c/SKILL.md": "c"}, "a", "c")
	type step struct {
		after time.Duration // since the previous step
		cat   *events.Catalog
	}
	type sent struct {
		At time.Duration // since the start
		events.ResourcesUpdated
	}
	tests := []struct {
		name  string
		steps []step
		want  []sent
	}{
		{
			name:  "two changes of one URI within the window: one notice, newest version",
			steps: []step{{0, v1}, {0, v2}, {d / 2, v3}},
			want:  []sent{{d, events.ResourcesUpdated{Version: 3, URIs: []string{"skill://skills/a/x.md"}}}},
		},
		{
			name:  "a change after the window: a second notice",
			steps: []step{{0, v1}, {0, v2}, {d * 2, v3}},
			want: []sent{
				{d, events.ResourcesUpdated{Version: 2, URIs: []string{"skill://skills/a/x.md"}}},
				{3 * d, events.ResourcesUpdated{Version: 3, URIs: []string{"skill://skills/a/x.md"}}},
			},
		},
		{
			name:  "windows of two URIs end apart",
			steps: []step{{0, v1}, {0, v2}, {d / 2, v4}},
			want: []sent{
				{d, events.ResourcesUpdated{Version: 2, URIs: []string{"skill://skills/a/x.md"}}},
				{d + d/2, events.ResourcesUpdated{Version: 4, URIs: []string{"skill://skills/a/y.md"}}},
			},
		},
		{
			name:  "URIs due together share a notice",
			steps: []step{{0, v1}, {0, v2}, {0, v4}},
			want:  []sent{{d, events.ResourcesUpdated{Version: 4, URIs: []string{"skill://skills/a/x.md", "skill://skills/a/y.md"}}}},
		},
		{
			name:  "vanished skill: its files and the index",
			steps: []step{{0, v4}, {0, v5}},
			want:  []sent{{d, events.ResourcesUpdated{Version: 5, URIs: []string{"skill://index.json", "skill://skills/b/SKILL.md"}}}},
		},
		{
			name:  "added skill: the index only",
			steps: []step{{0, v5}, {0, v6}},
			want:  []sent{{d, events.ResourcesUpdated{Version: 6, URIs: []string{"skill://index.json"}}}},
		},
		{
			name:  "stale and repeated versions are dropped; the first catalog sends nothing",
			steps: []step{{0, v2}, {0, v1}, {0, v2}, {d * 2, v1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				in := make(chan *message.Message)
				pub := newRecordingPublisher()
				n := actors.NewNotifier(in, pub, nil)
				done := make(chan error)
				go func() { done <- n.Run(ctx) }()
				start := time.Now()
				var got []sent
				received := make(chan struct{})
				go func() {
					defer close(received)
					for m := range pub.ch {
						ev, err := events.Decode[events.ResourcesUpdated](m)
						if err != nil {
							t.Error(err)
						}
						got = append(got, sent{time.Since(start), ev})
					}
				}()
				for _, s := range tc.steps {
					// Fake time: the bubble's clock jumps once every
					// goroutine is blocked, firing due timers on the way.
					time.Sleep(s.after)
					in <- encode(t, events.CatalogChanged{Catalog: s.cat})
				}
				time.Sleep(3 * d)
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run = %v, want nil", err)
				}
				close(pub.ch)
				<-received
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("notices mismatch (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestNotifierDebounceOption checks that NotifierOptions.Debounce sets the
// window.
func TestNotifierDebounceOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		in := make(chan *message.Message)
		pub := newRecordingPublisher()
		n := actors.NewNotifierWithOptions(in, pub, &actors.NotifierOptions{Debounce: time.Second})
		go n.Run(ctx)
		v1 := notifierCatalog(1, map[string]string{"a/SKILL.md": "a"}, "a")
		v2 := notifierCatalog(2, map[string]string{"a/SKILL.md": "a2"}, "a")
		in <- encode(t, events.CatalogChanged{Catalog: v1})
		in <- encode(t, events.CatalogChanged{Catalog: v2})
		start := time.Now()
		<-pub.ch
		if got := time.Since(start); got != time.Second {
			t.Errorf("notice sent after %v, want 1s", got)
		}
	})
}
