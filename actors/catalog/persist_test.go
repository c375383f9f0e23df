package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// proc is one process's catalog builder with a persisted catalog in a
// cache folder, and the hasher (with its own digest cache there) that
// scans for it.
type proc struct {
	t                   *testing.T
	src                 events.Source
	hasher              *hasher.Hasher
	cfgIn, scanIn, ovIn chan *message.Message
	pub                 *eventstest.Publisher
	last                *events.Catalog
	seq                 uint64
	stop                func()
}

func startProc(t *testing.T, root, cache string) *proc {
	t.Helper()
	p := &proc{t: t, src: localSource(root), hasher: newTestHasher(&hasher.Options{CacheDir: cache}),
		cfgIn: make(chan *message.Message, 1), scanIn: make(chan *message.Message, 1), ovIn: make(chan *message.Message, 1),
		pub: eventstest.NewPublisher()}
	ctx, cancel := context.WithCancel(t.Context())
	b := catalog.New(catalog.Inboxes{Configured: p.cfgIn, Scanned: p.scanIn, Overrides: p.ovIn}, p.pub, &catalog.Options{CacheDir: cache})
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	p.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		})
	}
	t.Cleanup(p.stop)
	p.cfgIn <- eventstest.Encode(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{p.src}})
	p.ovIn <- eventstest.Encode(t, events.OverridesChanged{Seq: 1})
	return p
}

// next returns the next catalog published within wait, or nil.
func (p *proc) next(wait time.Duration) *events.Catalog {
	p.t.Helper()
	select {
	case m := <-p.pub.C:
		ev, err := eventstest.DecodeCatalog(p.last, m)
		if err != nil {
			p.t.Fatal(err)
		}
		p.last = ev.Catalog
		return ev.Catalog
	case <-time.After(wait):
		return nil
	}
}

// scan scans the folder and feeds the scan to the builder.
func (p *proc) scan() {
	p.t.Helper()
	scan, err := p.hasher.Scan(p.t.Context(), p.src)
	if err != nil {
		p.t.Fatal(err)
	}
	p.seq++
	scan.Seq, scan.ConfigSeq = p.seq, 1
	p.scanIn <- eventstest.Encode(p.t, scan)
}

// persistedFile waits for the one persisted catalog file in cache to be
// written after since, and returns its path.
func persistedFile(t *testing.T, cache string, since time.Time) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(cache, "catalog-*.bin"))
		if len(m) == 1 {
			if fi, err := os.Stat(m[0]); err == nil && !fi.ModTime().Before(since) {
				return m[0]
			}
		}
		if len(m) > 1 || time.Now().After(deadline) {
			t.Fatalf("persisted catalog files %v, want one written after %v", m, since)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// skillsOf is what clients see of a catalog's skills, for comparison.
func skillsOf(c *events.Catalog) []events.Skill { return c.Skills }

// TestPersistedCatalogServedAtOnce is issue 12 "Serve the last catalog at
// once": a second start over the same sources publishes the last catalog
// before any scan, then revalidates it: an unchanged scan publishes
// nothing, a change made while no process ran is published as the next
// version.
func TestPersistedCatalogServedAtOnce(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{
		"a/SKILL.md": skilltest.SkillMD("a", "Alpha."), "a/ref.md": "1",
		"b/SKILL.md":      skilltest.SkillMD("b", "Bravo."),
		"broken/SKILL.md": "no frontmatter\n",
	})
	start := time.Now()
	first := startProc(t, root, cache)
	if c := first.next(100 * time.Millisecond); c != nil {
		t.Fatalf("first start published version %d before any scan; no catalog was persisted", c.Version)
	}
	first.scan()
	built := first.next(10 * time.Second)
	if built == nil || len(built.Skills) != 2 {
		t.Fatalf("first start: catalog %+v, want skills a and b", built)
	}
	persistedFile(t, cache, start)
	first.stop()

	second := startProc(t, root, cache)
	served := second.next(10 * time.Second)
	if served == nil {
		t.Fatal("second start published no catalog before its scan")
	}
	if diff := cmp.Diff(skillsOf(built), skillsOf(served)); diff != "" {
		t.Errorf("persisted catalog differs from the one built (-built +served):\n%s", diff)
	}
	if diff := cmp.Diff(built.Diagnostics, served.Diagnostics); diff != "" {
		t.Errorf("persisted diagnostics differ (-built +served):\n%s", diff)
	}
	second.scan()
	if c := second.next(300 * time.Millisecond); c != nil {
		t.Errorf("an unchanged scan published version %d; want none", c.Version)
	}
	second.stop()

	skilltest.WriteTree(t, root, map[string]string{"b/SKILL.md": skilltest.SkillMD("b", "Bravo, changed while down.")})
	third := startProc(t, root, cache)
	stale := third.next(10 * time.Second)
	if stale == nil || stale.SkillByName("skills__b").Description != "Bravo." {
		t.Fatalf("third start: %+v, want the persisted catalog at once", stale)
	}
	third.scan()
	fresh := third.next(10 * time.Second)
	if fresh == nil || fresh.Version != stale.Version+1 || fresh.SkillByName("skills__b").Description != "Bravo, changed while down." {
		t.Fatalf("after the revalidating scan: %+v, want the change as the next version", fresh)
	}
}

// TestPersistedCatalogDeletedOrCorrupt is issue 12: a deleted, truncated
// or altered persisted catalog is not served; the first catalog waits for
// the scan, and the file is written anew.
func TestPersistedCatalogDeletedOrCorrupt(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "Alpha.")})
	start := time.Now()
	p := startProc(t, root, cache)
	p.scan()
	if p.next(10*time.Second) == nil {
		t.Fatal("no catalog")
	}
	file := persistedFile(t, cache, start)
	p.stop()
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func() error
	}{
		{"deleted", func() error { return os.Remove(file) }},
		{"truncated", func() error { return os.WriteFile(file, good[:len(good)/2], 0o600) }},
		{"altered", func() error {
			bad := append([]byte(nil), good...)
			bad[len(bad)/2] ^= 1
			return os.WriteFile(file, bad, 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.spoil(); err != nil {
				t.Fatal(err)
			}
			since := time.Now()
			p := startProc(t, root, cache)
			if c := p.next(200 * time.Millisecond); c != nil {
				t.Fatalf("published version %d before any scan from a %s file", c.Version, tc.name)
			}
			p.scan()
			if c := p.next(10 * time.Second); c == nil || len(c.Skills) != 1 {
				t.Fatalf("after the scan: %+v, want skill a", c)
			}
			persistedFile(t, cache, since)
			p.stop()
			q := startProc(t, root, cache)
			if q.next(10*time.Second) == nil {
				t.Errorf("the rewritten file is not served at the next start")
			}
			q.stop()
		})
	}
}

// TestPersistedCatalogTwoProcesses is issue 12: two processes serving the
// same sources from one cache folder, one of them after an edit, each
// persist their own last catalog; whichever file a third start loads, its
// scan brings it to what is on disk.
func TestPersistedCatalogTwoProcesses(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "One."), "b/SKILL.md": skilltest.SkillMD("b", "B.")})
	one, two := startProc(t, root, cache), startProc(t, root, cache)
	one.scan()
	two.scan()
	if one.next(10*time.Second) == nil || two.next(10*time.Second) == nil {
		t.Fatal("no first catalogs")
	}
	since := time.Now()
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "Two.")})
	if err := os.RemoveAll(filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	two.scan()
	if c := two.next(10 * time.Second); c == nil || len(c.Skills) != 1 {
		t.Fatalf("process two after the edit: %+v", c)
	}
	persistedFile(t, cache, since)
	one.stop()
	two.stop()

	third := startProc(t, root, cache)
	if third.next(10*time.Second) == nil {
		t.Fatal("third start published nothing before its scan")
	}
	third.scan()
	third.next(300 * time.Millisecond) // a new version only if the file was one's
	got := third.last
	if len(got.Skills) != 1 || got.Skills[0].Description != "Two." {
		t.Errorf("third start serves %+v after its scan; want only a, described Two.", got.Skills)
	}
}

// TestUnreadSkillMDNotKept is issue 12: a scan that does not carry a
// SKILL.md's bytes (its digest was cached) makes the builder read them;
// when they no longer match the digest the skill is skipped with an error,
// and the next build reads them again rather than reusing the failure.
func TestUnreadSkillMDNotKept(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	md := skilltest.SkillMD("a", "Alpha.")
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": md})
	src := localSource(root)
	scan, err := newTestHasher(nil).Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	scan.Seq, scan.ConfigSeq = 1, 1
	scan.Skills[0].SkillMD = nil // as from a warm digest cache
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": strings.ToUpper(md)})
	bl := catalog.NewBenchBuilder(events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
	c := bl.Scan(scan)
	if c == nil || len(c.Skills) != 0 || len(c.Diagnostics) != 1 || !strings.Contains(c.Diagnostics[0].Message, "cannot read it") {
		t.Fatalf("changed SKILL.md behind the scan: %+v, want no skill and one error", c)
	}
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": md})
	scan.Seq++
	if c := bl.Scan(scan); c == nil || len(c.Skills) != 1 || c.Skills[0].Description != "Alpha." {
		t.Fatalf("after the file was put back: %+v, want skill a read again", c)
	}
}
