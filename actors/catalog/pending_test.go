package catalog_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// feed scans src completely, sends the scan (made partial, its supporting
// files pending as the hasher's deferred first scan leaves them, when
// partial is set) to the builder, and returns it.
func (p *proc) feed(partial bool) events.SourceScanned {
	p.t.Helper()
	scan, err := p.hasher.Scan(p.t.Context(), p.src)
	if err != nil {
		p.t.Fatal(err)
	}
	if partial {
		scan.Partial = true
		for i := range scan.Skills {
			files := append([]events.File(nil), scan.Skills[i].Files...)
			for j := 1; j < len(files); j++ {
				files[j].Digest, files[j].MIME, files[j].Text = "", "", false
			}
			scan.Skills[i].Files = files
		}
	}
	p.seq++
	scan.Seq, scan.ConfigSeq = p.seq, 1
	p.scanIn <- eventstest.Encode(p.t, scan)
	return scan
}

// pendingFiles counts the files of c without a digest.
func pendingFiles(c *events.Catalog) int {
	n := 0
	for _, sk := range c.Skills {
		for _, f := range sk.Files {
			if f.Digest == "" {
				n++
			}
		}
	}
	return n
}

// TestPendingCatalog is issue 12 "no hashing on the way to initialize":
// a partial scan makes a pending catalog (names and descriptions final,
// supporting files without digests) that is never persisted; the complete
// scan makes the next version, not pending, which is persisted; a partial
// scan after a complete catalog is ignored, so a pending catalog never
// follows a complete one.
func TestPendingCatalog(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{
		"a/SKILL.md": skilltest.SkillMD("a", "Alpha."), "a/ref.md": "1", "a/x/y.txt": "yy",
		"b/SKILL.md": skilltest.SkillMD("b", "Bravo."),
	})
	start := time.Now()
	p := startProc(t, root, cache)
	p.feed(true)
	pending := p.next(10 * time.Second)
	if pending == nil || !pending.Pending || len(pending.Skills) != 2 || pendingFiles(pending) != 2 {
		t.Fatalf("after a partial scan: %+v; want a pending catalog of a and b with 2 pending files", pending)
	}
	if a := pending.SkillByName("skills__a"); a == nil || a.Description != "Alpha." || a.Files[0].Digest == "" {
		t.Fatalf("pending catalog's skill a: %+v; want its description and SKILL.md digest", a)
	}
	time.Sleep(200 * time.Millisecond)
	if m, _ := filepath.Glob(filepath.Join(cache, "catalog-*.bin")); len(m) != 0 {
		t.Fatalf("a pending catalog was persisted: %v", m)
	}

	p.feed(false)
	complete := p.next(10 * time.Second)
	if complete == nil || complete.Pending || complete.Version != pending.Version+1 || pendingFiles(complete) != 0 {
		t.Fatalf("after the complete scan: %+v; want the next version, complete", complete)
	}
	persistedFile(t, cache, start)

	p.feed(true)
	if c := p.next(300 * time.Millisecond); c != nil {
		t.Errorf("a partial scan after a complete catalog published version %d (pending %v); want none", c.Version, c.Pending)
	}
	p.stop()

	// The next start serves the persisted catalog: complete.
	q := startProc(t, root, cache)
	served := q.next(10 * time.Second)
	if served == nil || served.Pending || pendingFiles(served) != 0 {
		t.Fatalf("persisted catalog served: %+v; want a complete one", served)
	}
	// A partial scan (its digest cache deleted) does not replace it.
	q.feed(true)
	if c := q.next(300 * time.Millisecond); c != nil {
		t.Errorf("a partial scan after the persisted catalog published version %d (pending %v); want none", c.Version, c.Pending)
	}
}

// TestPendingCatalogCompletedWithoutChange checks that completing a
// pending catalog publishes a new version even when no file was pending
// (skills without supporting files): consumers wait for a catalog that is
// not pending.
func TestPendingCatalogCompletedWithoutChange(t *testing.T) {
	catalog.SetPersistDelay(t, 0)
	base := t.TempDir()
	root, cache := filepath.Join(base, "skills"), filepath.Join(base, "cache")
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "Alpha.")})
	p := startProc(t, root, cache)
	p.feed(true)
	if c := p.next(10 * time.Second); c == nil || !c.Pending {
		t.Fatalf("after a partial scan: %+v; want a pending catalog", c)
	}
	p.feed(false)
	if c := p.next(10 * time.Second); c == nil || c.Pending {
		t.Fatalf("after the complete scan: %+v; want a complete catalog", c)
	}
}
