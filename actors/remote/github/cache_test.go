package github_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/remote/remotetest"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
)

// TestGitHubCacheRefusesWhatIsNotOurs is the GitHub half of issue 10 F1's
// acceptance: after a first sync, the cache folder, the owner folder, the
// clone folder and the staging, trash and download leftovers are in turn
// a link to a canary, a file and a foreign folder; a second sync (a new
// commit, so the clone is swapped and the old one removed) with a
// crash-leftover cleanup leaves the canary and the foreign folder as they
// were and logs the refused folder. (The old code wrote the clone into
// the canary through an owner-folder link, and swapped out and deleted a
// foreign clone folder.)
func TestGitHubCacheRefusesWhatIsNotOurs(t *testing.T) {
	positions := []remotetest.Case{
		{Pos: "cache folder", Rel: "."},
		{Pos: "owner folder", Rel: "acme"},
		{Pos: "clone folder", Rel: "acme/skills"},
		{Pos: "staging leftover", Rel: "acme/.staging-skills~1", Leftover: true},
		{Pos: "trash leftover", Rel: "acme/.trash-skills~1", Leftover: true},
		{Pos: "download leftover", Rel: "acme/.download-skills~1.tar.gz", Leftover: true},
	}
	// A regular file by a download's name is what a crash leaves: removed.
	for _, tc := range remotetest.Cases(positions, map[string][]remotetest.Variant{"download leftover": {remotetest.AsFile}}) {
		t.Run(tc.Pos+"/"+string(tc.V), func(t *testing.T) {
			if tc.Pos == "cache folder" && tc.V == remotetest.AsForeign {
				tc.Quiet = true // SKILLJACK_CACHE_DIR itself needs no marker
			}
			api := newGHAPI(t)
			api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "A.")})
			cache := filepath.Join(t.TempDir(), "cache")
			r := startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
			r.synced()
			canary := remotetest.MakeCanary(t)
			before := remotetest.Snapshot(t, canary)
			p := filepath.Join(cache, filepath.FromSlash(tc.Rel))
			foreign := remotetest.ReplaceWith(t, p, tc.V, canary, tc.Leftover)

			api.commit(t, "acme/skills", "main", shaB, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "B.")})
			r.syncNow()
			r.next()
			r.stop()
			remotetest.CheckCanaries(t, tc, canary, before, foreign, p, r.logs.String())
		})
	}
}

// TestGitHubCacheDirHoldsCheckouts: SKILLJACK_CACHE_DIR pointing at a
// source tree (~/src) whose acme/skills is the user's own checkout: the
// tree is untouched and the source refused with the message of issue 10
// F1, naming the clone folder; with acme/ holding other projects only, the
// owner folder is named.
func TestGitHubCacheDirHoldsCheckouts(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		named string
	}{
		{"checkout at the clone folder", map[string]string{"acme/skills/.git/HEAD": "ref: refs/heads/main\n", "acme/skills/README.md": "mine\n",
			"acme/skills/s/SKILL.md": skilltest.SkillMD("s", "Mine."), "acme/other/go.mod": "module x\n"}, "acme/skills"},
		{"other projects in the owner folder", map[string]string{"acme/other/.git/HEAD": "ref: refs/heads/main\n", "acme/notes.txt": "mine\n"}, "acme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "src")
			skilltest.WriteTree(t, src, tc.files)
			remotetest.AgeTree(t, src)
			before := remotetest.Snapshot(t, src)
			api := newGHAPI(t)
			api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "A.")})
			r := startPoller(t, api, config.GitHub{CacheDir: src}, "github.com/acme/skills")
			f := r.failed()
			r.stop()
			want := "cache folder " + filepath.Join(src, filepath.FromSlash(tc.named)) + " exists and was not created by skilljack-mcp; move it or choose another SKILLJACK_CACHE_DIR"
			if f.Error != want {
				t.Errorf("source.failed error = %q, want %q", f.Error, want)
			}
			if diff := cmp.Diff(before, remotetest.Snapshot(t, src)); diff != "" {
				t.Errorf("the source tree changed (-before +after):\n%s", diff)
			}
			if n := api.count("/repos/acme/skills/tarball/"); n != 0 {
				t.Errorf("%d tarball downloads for a refused cache, want 0", n)
			}
		})
	}
}

// TestCachesOfEarlierVersionsAreAdopted: caches written before the marker
// existed (cache index / sync metadata, no marker) keep working: the next
// sync updates and prunes them and marks them (issue 10 F1).
func TestCachesOfEarlierVersionsAreAdopted(t *testing.T) {
	t.Run("github", func(t *testing.T) {
		api := newGHAPI(t)
		api.commit(t, "acme/skills", "main", shaA, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "A.")})
		cache := filepath.Join(t.TempDir(), "cache")
		r := startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
		r.synced()
		r.stop()
		remotetest.RemoveMarkers(t, cache)
		api.commit(t, "acme/skills", "main", shaB, false, map[string]string{"s/SKILL.md": skilltest.SkillMD("s", "B.")})
		r = startPoller(t, api, config.GitHub{CacheDir: cache}, "github.com/acme/skills")
		if ev := r.synced(); ev.Revision != shaB {
			t.Errorf("revision %s, want %s", ev.Revision, shaB)
		}
		r.stop()
		if b, err := os.ReadFile(filepath.Join(cache, "acme", "skills", "s", "SKILL.md")); err != nil || string(b) != skilltest.SkillMD("s", "B.") {
			t.Errorf("SKILL.md = %q, %v; want B", b, err)
		}
		if strings.Contains(r.logs.String(), "level=WARN") || strings.Contains(r.logs.String(), "level=ERROR") {
			t.Errorf("warnings for a cache of an earlier version:\n%s", r.logs.String())
		}
	})
}
