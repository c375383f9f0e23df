package wellknown_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/remote/remotetest"
	"github.com/skilljack/skilljack-mcp/actors/remote/wellknown"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// wkFake is a minimal publisher: a v0.2 index of skill-md entries.
type wkFake struct {
	srv   *httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newWKFake(t *testing.T) *wkFake {
	f := &wkFake{files: map[string][]byte{}}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		b, ok := f.files[r.URL.Path]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// publish makes skills (name → SKILL.md) the publisher's index.
func (f *wkFake) publish(t *testing.T, skills map[string]string) {
	t.Helper()
	var entries []map[string]string
	files := map[string][]byte{}
	for name, md := range skills {
		entries = append(entries, map[string]string{"name": name, "type": "skill-md", "description": "d",
			"url": "/" + name + "/SKILL.md", "digest": skilltest.Digest(md)})
		files["/"+name+"/SKILL.md"] = []byte(md)
	}
	idx, err := json.Marshal(map[string]any{"$schema": wellknown.DiscoverySchemaV02, "skills": entries})
	if err != nil {
		t.Fatal(err)
	}
	files["/.well-known/agent-skills/index.json"] = idx
	f.mu.Lock()
	f.files = files
	f.mu.Unlock()
}

// wkRun is one running fetcher of one publisher source.
type wkRun struct {
	t *testing.T
	f *wellknown.Fetcher
	// syncs is the fetcher's sync.requested inbox.
	syncs chan *message.Message
	pub   *eventstest.Publisher
	logs  *eventstest.LogBuffer
	key   string // the publisher folder's name
	stop  func()
}

// startFetcher runs a fetcher of fake with cfg (CacheDir required) and
// sends it one static configuration with the publisher as its source.
func startFetcher(t *testing.T, fake *wkFake, cfg config.WellKnown) *wkRun {
	t.Helper()
	spec, err := config.ParseWellKnownURL(fake.srv.URL, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AllowedOrigins = []string{spec.Origin}
	log, logs := eventstest.CaptureLog()
	in := make(chan *message.Message, 1)
	r := &wkRun{t: t, syncs: make(chan *message.Message, 1), pub: eventstest.NewPublisher(), logs: logs, key: spec.Key}
	r.f = wellknown.New(wellknown.Inboxes{Configured: in, SyncRequested: r.syncs}, r.pub, &wellknown.Options{Config: cfg, HTTPClient: fake.srv.Client(), Backoff: time.Millisecond, Logger: log})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		r.f.Run(ctx)
		close(done)
	}()
	r.stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	t.Cleanup(r.stop)
	src := events.Source{ID: "0", Kind: events.SourceWellKnown, Location: fake.srv.URL, Prefix: spec.Prefix,
		Root: filepath.Join(cfg.CacheDir, spec.Key, "skills"), Publisher: spec.ForEvent()}
	in <- eventstest.Encode(t, events.SourcesConfigured{Seq: 1, Static: true, Sources: []events.Source{src}})
	return r
}

// next waits for the fetcher's next event: "synced" or "failed: …".
func (r *wkRun) next() string {
	r.t.Helper()
	select {
	case m := <-r.pub.C:
		if m.Metadata.Get(events.MetadataName) == "SourceFailed" {
			ev, _ := events.Decode[events.SourceFailed](m)
			return "failed: " + ev.Error
		}
		return "synced"
	case <-time.After(10 * time.Second):
		r.t.Fatalf("no event within 10 s; log:\n%s", r.logs.String())
	}
	return ""
}

// TestWellKnownCacheRefusesWhatIsNotOurs is the well-known half of issue
// 10 F1's acceptance: after a first sync, the cache folder, the publisher
// folder, skills/, a skill folder to update, a skill folder to prune and
// the staging and trash leftovers are in turn a link to a canary, a file
// and a foreign folder; a second sync (one skill updated, one dropped)
// with a crash-leftover cleanup leaves the canary and the foreign folder
// as they were and logs the refused folder. (The old code deleted the
// canary through a skills/ or .staging link and wrote into it through a
// publisher-folder link.)
func TestWellKnownCacheRefusesWhatIsNotOurs(t *testing.T) {
	positions := []remotetest.Case{
		{Pos: "cache folder", Rel: "."},
		{Pos: "publisher folder", Rel: "{key}"},
		{Pos: "skills folder", Rel: "{key}/skills"},
		{Pos: "updated skill folder", Rel: "{key}/skills/hello"},
		{Pos: "pruned skill folder", Rel: "{key}/skills/bye"},
		{Pos: "staging leftover", Rel: "{key}/.staging-hello~1", Leftover: true},
		{Pos: "trash leftover", Rel: "{key}/.trash-bye~1", Leftover: true},
		{Pos: "staging folder of an earlier version", Rel: "{key}/.staging", Leftover: true, Quiet: true},
	}
	for _, tc := range remotetest.Cases(positions, nil) {
		t.Run(tc.Pos+"/"+string(tc.V), func(t *testing.T) {
			if tc.Pos == "cache folder" && tc.V == remotetest.AsForeign {
				tc.Quiet = true // a top folder needs no marker: the sync goes on in its own folder
			}
			if tc.Pos == "staging folder of an earlier version" && tc.V == remotetest.AsOtherUser {
				t.Skip("the earlier staging folder is only ever removed when empty")
			}
			fake := newWKFake(t)
			fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V1."), "bye": skilltest.SkillMD("bye", "Bye.")})
			cache := filepath.Join(t.TempDir(), "well-known")
			r := startFetcher(t, fake, config.WellKnown{CacheDir: cache})
			if got := r.next(); got != "synced" {
				t.Fatalf("first sync: %s", got)
			}
			canary := remotetest.MakeCanary(t)
			before := remotetest.Snapshot(t, canary)
			p := filepath.Join(cache, strings.ReplaceAll(tc.Rel, "{key}", r.key))
			foreign := remotetest.ReplaceWith(t, p, tc.V, canary, tc.Leftover)

			fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V2.")})
			r.syncs <- eventstest.Encode(t, events.SyncRequested{})
			r.next()
			r.stop()
			remotetest.CheckCanaries(t, tc, canary, before, foreign, p, r.logs.String())
		})
	}
}

// TestCachesOfEarlierVersionsAreAdopted: caches written before the marker
// existed (cache index / sync metadata, no marker) keep working: the next
// sync updates and prunes them and marks them (issue 10 F1).
func TestCachesOfEarlierVersionsAreAdopted(t *testing.T) {
	t.Run("well-known", func(t *testing.T) {
		fake := newWKFake(t)
		fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V1."), "bye": skilltest.SkillMD("bye", "Bye."), "same": skilltest.SkillMD("same", "Same.")})
		cache := filepath.Join(t.TempDir(), "well-known")
		r := startFetcher(t, fake, config.WellKnown{CacheDir: cache})
		r.next()
		r.stop()
		remotetest.RemoveMarkers(t, cache)
		fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V2."), "same": skilltest.SkillMD("same", "Same.")})
		r = startFetcher(t, fake, config.WellKnown{CacheDir: cache})
		if got := r.next(); got != "synced" {
			t.Fatalf("sync of a cache of an earlier version: %s\n%s", got, r.logs.String())
		}
		r.stop()
		skills := filepath.Join(cache, r.key, "skills")
		if b, err := os.ReadFile(filepath.Join(skills, "hello", "SKILL.md")); err != nil || string(b) != skilltest.SkillMD("hello", "V2.") {
			t.Errorf("hello = %q, %v; want V2", b, err)
		}
		if _, err := os.Lstat(filepath.Join(skills, "bye")); err == nil {
			t.Error("bye was not pruned")
		}
		for _, p := range []string{filepath.Join(cache, r.key), skills, filepath.Join(skills, "hello")} {
			if _, err := os.Stat(filepath.Join(p, ".skilljack-cache")); err != nil {
				t.Errorf("%s is not marked: %v", p, err)
			}
		}
		if strings.Contains(r.logs.String(), "level=WARN") || strings.Contains(r.logs.String(), "level=ERROR") {
			t.Errorf("warnings for a cache of an earlier version:\n%s", r.logs.String())
		}
	})
}

// TestWellKnownCaps: a publisher index longer than WELL_KNOWN_MAX_SKILLS
// serves its first entries, and a sync stops downloading once
// WELL_KNOWN_MAX_CACHE_MB is spent, keeping what is cached; each with a
// warning (issue 10, "a publisher index is not capped in size").
func TestWellKnownCaps(t *testing.T) {
	md := func(n string) string { return skilltest.SkillMD(n, strings.Repeat("x", 200)) }
	tests := []struct {
		name string
		cfg  config.WellKnown
		want []string
		warn string
	}{
		{"entries", config.WellKnown{MaxSkills: 2}, []string{"a", "b"}, "WELL_KNOWN_MAX_SKILLS"},
		{"bytes", config.WellKnown{MaxCacheBytes: int64(len(md("a"))*2 + 10)}, []string{"a", "b"}, "WELL_KNOWN_MAX_CACHE_MB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newWKFake(t)
			// Index order is map order in publish: publish one by one.
			var entries []map[string]string
			files := map[string][]byte{}
			for _, n := range []string{"a", "b", "c", "d"} {
				entries = append(entries, map[string]string{"name": n, "type": "skill-md", "description": "d", "url": "/" + n + "/SKILL.md", "digest": skilltest.Digest(md(n))})
				files["/"+n+"/SKILL.md"] = []byte(md(n))
			}
			idx, _ := json.Marshal(map[string]any{"$schema": wellknown.DiscoverySchemaV02, "skills": entries})
			files["/.well-known/agent-skills/index.json"] = idx
			fake.files = files
			tc.cfg.CacheDir = filepath.Join(t.TempDir(), "well-known")
			r := startFetcher(t, fake, tc.cfg)
			r.next()
			r.stop()
			var got []string
			ents, _ := os.ReadDir(filepath.Join(tc.cfg.CacheDir, r.key, "skills"))
			for _, e := range ents {
				if e.IsDir() {
					got = append(got, e.Name())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cached skills (-want +got):\n%s", diff)
			}
			if !strings.Contains(r.logs.String(), tc.warn) {
				t.Errorf("no warning naming %s:\n%s", tc.warn, r.logs.String())
			}
		})
	}
}

// TestWellKnownCacheRootRefusedBeforeFirstSync is issue 10 F1 for the
// folder above the well-known cache (SKILLJACK_CACHE_DIR): when it is a
// link to a canary or a file before the first sync ever, the publisher
// fetcher creates nothing through it, fails the source and names it. (An
// adversarial pass found the fetcher creating well-known/… inside the
// canary through a linked SKILLJACK_CACHE_DIR.)
func TestWellKnownCacheRootRefusedBeforeFirstSync(t *testing.T) {
	for _, v := range []remotetest.Variant{remotetest.AsLink, remotetest.AsFile, remotetest.AsOtherUser} {
		t.Run(string(v), func(t *testing.T) {
			fake := newWKFake(t)
			fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V1.")})
			canary := remotetest.MakeCanary(t)
			before := remotetest.Snapshot(t, canary)
			root := filepath.Join(t.TempDir(), "cache")
			foreign := remotetest.ReplaceWith(t, root, v, canary, false)
			r := startFetcher(t, fake, config.WellKnown{CacheDir: filepath.Join(root, "well-known")})
			if got := r.next(); !strings.HasPrefix(got, "failed: ") {
				t.Errorf("first sync through %s: %s, want failed", v, got)
			}
			r.stop()
			remotetest.CheckCanaries(t, remotetest.Case{Pos: "cache root", V: v}, canary, before, foreign, root, r.logs.String())
			if foreign != nil {
				if _, err := os.Lstat(filepath.Join(root, "well-known")); err == nil {
					t.Errorf("well-known/ was created inside another user's folder")
				}
			}
		})
	}
}
