package hasher_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// deferredTree is two skills with supporting files.
func deferredTree(t *testing.T) string {
	root := t.TempDir()
	skilltest.WriteTree(t, root, map[string]string{
		"a/SKILL.md":       skilltest.SkillMD("a", "first"),
		"a/notes.txt":      "notes of a",
		"a/ref/guide.md":   "# guide",
		"b/SKILL.md":       skilltest.SkillMD("b", "second"),
		"b/scripts/run.sh": "#!/bin/sh\necho b\n",
	})
	return root
}

// nextScan returns the next source.scanned the hasher publishes.
func nextScan(t *testing.T, pub *eventstest.Publisher) events.SourceScanned {
	t.Helper()
	select {
	case m := <-pub.C:
		ev, err := events.Decode[events.SourceScanned](m)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no scan published")
	}
	return events.SourceScanned{}
}

// sha names the SHA-256 of the file at p as a manifest does (SEP2640-R40).
func sha(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestFirstScanDefersSupportingFiles checks issue 12's "no hashing on the
// way to initialize": the first scan of a root with a cold digest cache
// publishes a partial scan first — every SKILL.md hashed, its bytes
// carried, every supporting file listed with its size but no digest — and
// then the complete scan, whose every digest is the file's (SEP2640-R40);
// a later configuration never publishes a partial scan, and the digest
// cache written holds every file, so the next start hashes none.
func TestFirstScanDefersSupportingFiles(t *testing.T) {
	hasher.SetDeferMin(t, 1)
	hasher.SetRacySlack(t, 0)
	root := deferredTree(t)
	src := localSource(root)
	release := make(chan struct{})
	hasher.HoldRest(t, func(ctx context.Context) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	in := make(chan *message.Message, 2)
	pub := eventstest.NewPublisher()
	h := hasher.New(hasher.Inboxes{Configured: in}, pub, &hasher.Options{CacheDir: cache, DeferHashing: true})
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	in <- eventstest.Encode(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})

	first := nextScan(t, pub)
	if !first.Partial || first.Hashed != 2 {
		t.Fatalf("first scan: Partial %v, Hashed %d; want a partial scan that hashed the 2 SKILL.md files", first.Partial, first.Hashed)
	}
	for _, sk := range first.Skills {
		if sk.SkillMD == nil || sk.Files[0].Digest != sha(t, filepath.Join(root, sk.RelDir, "SKILL.md")) {
			t.Errorf("%s: partial scan's SKILL.md has no bytes or a wrong digest %q", sk.RelDir, sk.Files[0].Digest)
		}
		for _, f := range sk.Files[1:] {
			fi, err := os.Stat(filepath.Join(root, sk.RelDir, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			if f.Digest != "" || f.MIME != "" || f.Size != fi.Size() {
				t.Errorf("%s/%s in the partial scan: digest %q, MIME %q, size %d; want pending with size %d", sk.RelDir, f.Path, f.Digest, f.MIME, f.Size, fi.Size())
			}
		}
	}
	if len(first.Skills) != 2 || len(first.Skills[0].Files) != 3 || len(first.Skills[1].Files) != 2 {
		t.Fatalf("partial scan manifests: %v", manifest(first))
	}
	select {
	case m := <-pub.C:
		t.Fatalf("published %s while the complete scan was held", m.UUID)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)

	second := nextScan(t, pub)
	if second.Partial || second.Seq <= first.Seq || second.ConfigSeq != 1 {
		t.Fatalf("second scan: Partial %v, Seq %d after %d, ConfigSeq %d; want the complete scan", second.Partial, second.Seq, first.Seq, second.ConfigSeq)
	}
	for _, sk := range second.Skills {
		for _, f := range sk.Files {
			if want := sha(t, filepath.Join(root, sk.RelDir, f.Path)); f.Digest != want || f.MIME == "" {
				t.Errorf("%s/%s: digest %q, MIME %q; want %s and a MIME type", sk.RelDir, f.Path, f.Digest, f.MIME, want)
			}
		}
	}
	// A later configuration scans completely at once.
	in <- eventstest.Encode(t, events.SourcesConfigured{Seq: 2, Sources: []events.Source{src}})
	if third := nextScan(t, pub); third.Partial {
		t.Errorf("a later configuration published a partial scan")
	}
	cancel()
	<-done

	// The digest cache holds every file: a new process hashes nothing and
	// publishes no partial scan.
	scan, err := hasher.New(hasher.Inboxes{Configured: make(chan *message.Message)}, eventstest.NewPublisher(), &hasher.Options{CacheDir: cache}).Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if scan.Partial || scan.Hashed != 0 {
		t.Errorf("warm scan: Partial %v, Hashed %d; want complete, nothing read", scan.Partial, scan.Hashed)
	}
}

// TestFirstScanHashesFewMisses checks that a first scan missing fewer
// supporting files than the threshold hashes them at once: one complete
// scan, no partial one.
func TestFirstScanHashesFewMisses(t *testing.T) {
	hasher.SetDeferMin(t, 4) // the tree has 3 supporting files
	root := deferredTree(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	in := make(chan *message.Message, 1)
	pub := eventstest.NewPublisher()
	h := hasher.New(hasher.Inboxes{Configured: in}, pub, &hasher.Options{DeferHashing: true})
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	in <- eventstest.Encode(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{localSource(root)}})
	if scan := nextScan(t, pub); scan.Partial || scan.Hashed != 5 {
		t.Errorf("scan: Partial %v, Hashed %d; want one complete scan of 5 files", scan.Partial, scan.Hashed)
	}
	cancel()
	<-done
}

// TestWarmStartAwaitsServedCatalog (issue 12): with every root's digest
// cache on disk, the first scans wait for the first catalog (the one the
// builder persisted, served at once) so that the revalidation walk does
// not run beside the first initialize — at most a bounded while, for a
// start whose persisted catalog does not match. A cold start does not
// wait: its scans make the first catalog.
func TestWarmStartAwaitsServedCatalog(t *testing.T) {
	hasher.SetRacySlack(t, 0)
	root := deferredTree(t)
	src := localSource(root)
	cache := t.TempDir()
	cfg := eventstest.Encode(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
	run := func(t *testing.T, catalogs chan *message.Message) (*eventstest.Publisher, func()) {
		in := make(chan *message.Message, 1)
		pub := eventstest.NewPublisher()
		h := hasher.New(hasher.Inboxes{Configured: in, Catalogs: catalogs}, pub, &hasher.Options{CacheDir: cache, DeferHashing: true})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- h.Run(ctx) }()
		in <- cfg
		return pub, func() { cancel(); <-done }
	}
	quiet := func(t *testing.T, pub *eventstest.Publisher) {
		t.Helper()
		select {
		case m := <-pub.C:
			t.Fatalf("published %s before the first catalog", m.UUID)
		default:
		}
	}
	synctest.Test(t, func(t *testing.T) {
		// Cold: the scan comes without any catalog; it writes the cache.
		pub, stop := run(t, make(chan *message.Message))
		if scan := nextScan(t, pub); scan.Partial {
			t.Fatal("a partial scan of a 3-file tree")
		}
		stop()
	})
	synctest.Test(t, func(t *testing.T) {
		catalogs := make(chan *message.Message, 1)
		pub, stop := run(t, catalogs)
		defer stop()
		synctest.Wait()
		quiet(t, pub)
		catalogs <- eventstest.Encode(t, events.CatalogChanged{Catalog: &events.Catalog{Version: 1}})
		nextScan(t, pub)
	})
	synctest.Test(t, func(t *testing.T) {
		pub, stop := run(t, make(chan *message.Message))
		defer stop()
		synctest.Wait()
		quiet(t, pub)
		time.Sleep(time.Second) // no catalog comes: the scan starts anyway
		nextScan(t, pub)
	})
}
