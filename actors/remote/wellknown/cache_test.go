package wellknown_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
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
	"github.com/skilljack/skilljack-mcp/actors/remote/wellknown"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// The remote caches delete only what they created (issue 10 F1): a cache
// folder replaced by a link to a canary standing in for /etc, by a file or
// by a foreign folder is refused with a line naming it, and a sync with
// pruning and a crash-leftover cleanup leaves the canary (and the foreign
// folder) byte for byte as it was.

// old is the mtime of every canary entry and crash leftover: older than
// the fetchers' stale age, so a cleanup reaching them would remove them.
var old = time.Now().Add(-3 * time.Hour)

// makeCanary creates a folder standing in for /etc: files and folders a
// prune could pick (one named like a skill, one holding the cache marker,
// so that following a link would find something that looks like ours),
// every entry aged. It returns the folder.
func makeCanary(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "etc")
	skilltest.WriteTree(t, dir, map[string]string{
		"passwd":               "root:x:0:0:root:/root:/bin/sh\n",
		"hosts":                "127.0.0.1 localhost\n",
		"ssl/certs/ca.pem":     "-----BEGIN CERTIFICATE-----\n",
		"hello/SKILL.md":       skilltest.SkillMD("hello", "Canary."),
		"bye/.skilljack-cache": "marker\n",
		".skilljack-cache":     "marker\n",
		"index.json":           `{"skills":{}}`,
		"acme/skills/README":   "canary\n",
	})
	ageTree(t, dir)
	return dir
}

// ageTree sets every entry below dir (links excepted) to old, deepest
// first so that folders keep the time.
func ageTree(t *testing.T, dir string) {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			paths = append(paths, p)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Chtimes(paths[i], old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot records every entry below dir, links not followed: type,
// permissions, size, mtime and the bytes of each file or the target of
// each link.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		desc := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// variant is what a managed cache folder is replaced with.
type variant string

const (
	asLink    variant = "link to the canary"
	asFile    variant = "file"
	asForeign variant = "foreign folder"
	// asOtherUser is a marked folder of another user: only its owner is
	// wrong. Creating it needs root (chown); elsewhere the case skips.
	asOtherUser variant = "folder of another user"
)

// otherUID owns the asOtherUser folders.
const otherUID = 12345

// replaceWith puts v at p (removing what the fetcher left there) and
// returns the snapshot of a foreign folder (nil for the other variants).
// With aged set, the new entry itself is aged like a crash leftover.
func replaceWith(t *testing.T, p string, v variant, canary string, aged bool) map[string]string {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	var foreign map[string]string
	switch v {
	case asLink:
		if err := os.Symlink(canary, p); err != nil {
			t.Fatal(err)
		}
		if aged {
			if err := wellknown.Lchtimes(p, old); err != nil {
				t.Skipf("cannot age a link here: %v", err)
			}
		}
	case asFile:
		if err := os.WriteFile(p, []byte("not a folder\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if aged {
			os.Chtimes(p, old, old)
		}
	case asForeign:
		skilltest.WriteTree(t, p, map[string]string{"notes.txt": "mine\n", "SKILL.md": skilltest.SkillMD("mine", "Mine."), "sub/data.bin": "data"})
		ageTree(t, p)
		foreign = snapshot(t, p)
	case asOtherUser:
		if os.Getuid() != 0 {
			t.Skip("making a folder of another user needs root")
		}
		skilltest.WriteTree(t, p, map[string]string{".skilljack-cache": "marker\n", "notes.txt": "theirs\n"})
		ageTree(t, p)
		filepath.WalkDir(p, func(q string, _ fs.DirEntry, err error) error {
			if err == nil {
				err = os.Lchown(q, otherUID, otherUID)
			}
			return err
		})
		foreign = snapshot(t, p)
	}
	return foreign
}

// cacheCase is one row of the canary tables.
type cacheCase struct {
	pos string // which folder is replaced
	rel string // its path relative to the cache folder
	v   variant
	// leftover: the entry is a crash leftover (created aged, not replaced)
	leftover bool
	// quiet: the entry is not refused, just left alone (no log line)
	quiet bool
}

// cases crosses positions with the three variants; skip names the
// variants a position does not take.
func cases(positions []cacheCase, skip map[string][]variant) []cacheCase {
	var out []cacheCase
	for _, p := range positions {
		for _, v := range []variant{asLink, asFile, asForeign, asOtherUser} {
			skipped := false
			for _, s := range skip[p.pos] {
				skipped = skipped || s == v
			}
			if !skipped {
				c := p
				c.v = v
				out = append(out, c)
			}
		}
	}
	return out
}

// checkCanaries compares the canary and the foreign folder with their
// snapshots and looks for the refused path in the log.
func checkCanaries(t *testing.T, tc cacheCase, canary string, before, foreign map[string]string, p, logs string) {
	t.Helper()
	if diff := cmp.Diff(before, snapshot(t, canary)); diff != "" {
		t.Errorf("the canary changed (-before +after):\n%s\nlog:\n%s", diff, logs)
	}
	if foreign != nil {
		after := snapshot(t, p)
		for rel, want := range foreign {
			if rel == "." {
				continue // an adopted top folder gains entries
			}
			if after[rel] != want {
				t.Errorf("foreign %s = %q, want %q unchanged", rel, after[rel], want)
			}
		}
	}
	if tc.quiet {
		return
	}
	if !strings.Contains(logs, "cache folder "+p+" ") {
		t.Errorf("the log does not name the refused folder %s:\n%s", p, logs)
	}
}

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
	positions := []cacheCase{
		{pos: "cache folder", rel: "."},
		{pos: "publisher folder", rel: "{key}"},
		{pos: "skills folder", rel: "{key}/skills"},
		{pos: "updated skill folder", rel: "{key}/skills/hello"},
		{pos: "pruned skill folder", rel: "{key}/skills/bye"},
		{pos: "staging leftover", rel: "{key}/.staging-hello~1", leftover: true},
		{pos: "trash leftover", rel: "{key}/.trash-bye~1", leftover: true},
		{pos: "staging folder of an earlier version", rel: "{key}/.staging", leftover: true, quiet: true},
	}
	for _, tc := range cases(positions, nil) {
		t.Run(tc.pos+"/"+string(tc.v), func(t *testing.T) {
			if tc.pos == "cache folder" && tc.v == asForeign {
				tc.quiet = true // a top folder needs no marker: the sync goes on in its own folder
			}
			if tc.pos == "staging folder of an earlier version" && tc.v == asOtherUser {
				t.Skip("the earlier staging folder is only ever removed when empty")
			}
			fake := newWKFake(t)
			fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V1."), "bye": skilltest.SkillMD("bye", "Bye.")})
			cache := filepath.Join(t.TempDir(), "well-known")
			r := startFetcher(t, fake, config.WellKnown{CacheDir: cache})
			if got := r.next(); got != "synced" {
				t.Fatalf("first sync: %s", got)
			}
			canary := makeCanary(t)
			before := snapshot(t, canary)
			p := filepath.Join(cache, strings.ReplaceAll(tc.rel, "{key}", r.key))
			foreign := replaceWith(t, p, tc.v, canary, tc.leftover)

			fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V2.")})
			r.syncs <- eventstest.Encode(t, events.SyncRequested{})
			r.next()
			r.stop()
			checkCanaries(t, tc, canary, before, foreign, p, r.logs.String())
		})
	}
}

// removeMarkers turns a cache into one written before the marker existed
// (issue 10 F1): every marker goes, each folder keeping its mtime.
func removeMarkers(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != ".skilljack-cache" {
			return err
		}
		fi, err := os.Stat(filepath.Dir(p))
		if err != nil {
			return err
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		return os.Chtimes(filepath.Dir(p), fi.ModTime(), fi.ModTime())
	})
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
		removeMarkers(t, cache)
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
	for _, v := range []variant{asLink, asFile, asOtherUser} {
		t.Run(string(v), func(t *testing.T) {
			fake := newWKFake(t)
			fake.publish(t, map[string]string{"hello": skilltest.SkillMD("hello", "V1.")})
			canary := makeCanary(t)
			before := snapshot(t, canary)
			root := filepath.Join(t.TempDir(), "cache")
			foreign := replaceWith(t, root, v, canary, false)
			r := startFetcher(t, fake, config.WellKnown{CacheDir: filepath.Join(root, "well-known")})
			if got := r.next(); !strings.HasPrefix(got, "failed: ") {
				t.Errorf("first sync through %s: %s, want failed", v, got)
			}
			r.stop()
			checkCanaries(t, cacheCase{pos: "cache root", v: v}, canary, before, foreign, root, r.logs.String())
			if foreign != nil {
				if _, err := os.Lstat(filepath.Join(root, "well-known")); err == nil {
					t.Errorf("well-known/ was created inside another user's folder")
				}
			}
		})
	}
}
