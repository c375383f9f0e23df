package catalog_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
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
	srcs                []events.Source // src first
	hasher              *hasher.Hasher
	cfgIn, scanIn, ovIn chan *message.Message
	pub                 *eventstest.Publisher
	last                *events.Catalog
	seq                 uint64
	stop                func()
}

func startProc(t *testing.T, root, cache string) *proc {
	t.Helper()
	p := newProc(t, cache, root)
	p.configure()
	return p
}

// newProc starts the builder of a process serving roots (each a local
// source) without sending it the configuration yet ([proc.configure]).
func newProc(t *testing.T, cache string, roots ...string) *proc {
	t.Helper()
	p := &proc{t: t, hasher: newTestHasher(&hasher.Options{CacheDir: cache}),
		cfgIn: make(chan *message.Message, 1), scanIn: make(chan *message.Message, 1), ovIn: make(chan *message.Message, 1),
		pub: eventstest.NewPublisher()}
	for i, r := range roots {
		src := localSource(r)
		src.ID = strconv.Itoa(i)
		p.srcs = append(p.srcs, src)
	}
	p.src = p.srcs[0]
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
	return p
}

// configure sends the builder the configuration (every source) and the
// overrides.
func (p *proc) configure() {
	p.cfgIn <- eventstest.Encode(p.t, events.SourcesConfigured{Seq: 1, Sources: p.srcs})
	p.ovIn <- eventstest.Encode(p.t, events.OverridesChanged{Seq: 1})
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

// scan scans the (first) folder and feeds the scan to the builder.
func (p *proc) scan() { p.t.Helper(); p.scanSource(p.src) }

// scanSource scans src and feeds the scan to the builder.
func (p *proc) scanSource(src events.Source) {
	p.t.Helper()
	scan, err := p.hasher.Scan(p.t.Context(), src)
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
func skillsOf(c *events.Catalog) []*events.Skill { return c.Skills }

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

// TestPersistedCatalogRewrittenAfterRevalidation (adversarial trial, bug
// 1): when the revalidating scans of a restart find a change, the file is
// rewritten once every source has a real scan — also when the source
// scanned last changed nothing — so the next restart serves the change, not
// the first catalog ever written.
func TestPersistedCatalogRewrittenAfterRevalidation(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	rootA, rootB, cache := filepath.Join(base, "a"), filepath.Join(base, "b"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, rootA, map[string]string{"x/SKILL.md": skilltest.SkillMD("x", "X.")})
	skilltest.WriteTree(t, rootB, map[string]string{"y/SKILL.md": skilltest.SkillMD("y", "Y.")})
	start := func() *proc { p := newProc(t, cache, rootA, rootB); p.configure(); return p }
	first := start()
	first.scanSource(first.srcs[0])
	first.scanSource(first.srcs[1])
	if c := first.next(10 * time.Second); c == nil {
		t.Fatal("first start: no catalog")
	}
	file := persistedFile(t, cache, time.Time{})
	first.stop()
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	skilltest.WriteTree(t, rootA, map[string]string{"x/SKILL.md": skilltest.SkillMD("x", "X, changed while down.")})
	second := start()
	if c := second.next(10 * time.Second); c == nil {
		t.Fatal("second start: the persisted catalog was not served")
	}
	second.scanSource(second.srcs[0]) // the change: published, b still a stand-in
	if c := second.next(10 * time.Second); c == nil || c.SkillByName("a__x").Description != "X, changed while down." {
		t.Fatalf("second start after a's scan: %+v, want the change", c)
	}
	second.scanSource(second.srcs[1]) // no change: nothing published, but now the file is written
	// Compared by content: a file's mtime comes from a coarse clock and
	// may read earlier than a time.Now taken before the write.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if now, _ := os.ReadFile(file); len(now) > 0 && !bytes.Equal(now, written) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the persisted catalog was not rewritten after the revalidation found a change")
		}
	}
	second.stop()

	third := start()
	if c := third.next(10 * time.Second); c == nil || c.SkillByName("a__x").Description != "X, changed while down." {
		t.Fatalf("third start served %+v, want the change the second start found", c)
	}
}

// TestPersistedCatalogScanBeforeConfig (adversarial trial, bug 2): a real
// scan the builder reads before the configuration (its inboxes are read in
// any order) is not replaced by the persisted catalog's stand-in.
func TestPersistedCatalogScanBeforeConfig(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{"b/SKILL.md": skilltest.SkillMD("b", "Bravo.")})
	first := startProc(t, root, cache)
	first.scan()
	if first.next(10*time.Second) == nil {
		t.Fatal("first start: no catalog")
	}
	persistedFile(t, cache, time.Time{})
	first.stop()

	skilltest.WriteTree(t, root, map[string]string{"b/SKILL.md": skilltest.SkillMD("b", "Bravo, changed while down.")})
	second := newProc(t, cache, root)
	second.scan()
	for len(second.scanIn) > 0 { // the builder has taken the scan
		time.Sleep(time.Millisecond)
	}
	second.configure()
	var last *events.Catalog
	for c := second.next(2 * time.Second); c != nil; c = second.next(300 * time.Millisecond) {
		last = c
	}
	if last == nil || last.SkillByName("skills__b").Description != "Bravo, changed while down." {
		t.Fatalf("served %+v, want the real scan's change", last)
	}
}
