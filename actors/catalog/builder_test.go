package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// builderRun drives a catalog builder inside a synctest bubble with scans
// of a real folder, and returns what each step published.
type builderRun struct {
	t                   *testing.T
	root                string
	src                 events.Source
	hasher              *hasher.Hasher
	cfgIn, scanIn, ovIn chan *message.Message
	pub                 *eventstest.Publisher
	seq, ovSeq          uint64
	last                *events.Catalog // the last catalog published
}

func startBuilder(t *testing.T, root string, static bool) (*builderRun, *eventstest.LogBuffer) {
	t.Helper()
	r := &builderRun{t: t, root: root, src: localSource(root), hasher: newTestHasher(nil),
		cfgIn: make(chan *message.Message), scanIn: make(chan *message.Message), ovIn: make(chan *message.Message),
		pub: eventstest.NewPublisher()}
	logger, logs := eventstest.CaptureLog()
	ctx, cancel := context.WithCancel(t.Context())
	b := catalog.New(catalog.Inboxes{Configured: r.cfgIn, Scanned: r.scanIn, Overrides: r.ovIn}, r.pub, &catalog.Options{Logger: logger})
	done := make(chan error)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	r.cfgIn <- eventstest.Encode(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{r.src}, Static: static})
	r.overrides(nil)
	return r, logs
}

// rescan scans the folder, feeds the scan and returns the catalog.changed
// published, with what changed since the last one, or nil.
func (r *builderRun) rescan() *eventstest.CatalogDiff {
	r.t.Helper()
	scan, err := r.hasher.Scan(r.t.Context(), r.src)
	if err != nil {
		r.t.Fatal(err)
	}
	r.seq++
	scan.Seq, scan.ConfigSeq = r.seq, 1
	r.scanIn <- eventstest.Encode(r.t, scan)
	return r.published()
}

func (r *builderRun) overrides(o map[string]events.Override) *eventstest.CatalogDiff {
	r.t.Helper()
	r.ovSeq++
	r.ovIn <- eventstest.Encode(r.t, events.OverridesChanged{Seq: r.ovSeq, Overrides: o})
	return r.published()
}

func (r *builderRun) published() *eventstest.CatalogDiff {
	r.t.Helper()
	synctest.Wait()
	select {
	case m := <-r.pub.C:
		ev, err := eventstest.DecodeCatalog(r.last, m)
		if err != nil {
			r.t.Fatal(err)
		}
		r.last = ev.Catalog
		select {
		case <-r.pub.C:
			r.t.Fatal("two catalogs published for one event")
		default:
		}
		return &ev
	default:
		return nil
	}
}

func (r *builderRun) write(files map[string]string) { skilltest.WriteTree(r.t, r.root, files) }

func (r *builderRun) remove(rel string) {
	if err := os.RemoveAll(filepath.Join(r.root, filepath.FromSlash(rel))); err != nil {
		r.t.Fatal(err)
	}
}

// diffLists is what changed in a published catalog.
type diffLists struct {
	Version                 uint64
	Added, Removed, Changed []string
}

func lists(ev *eventstest.CatalogDiff) *diffLists {
	if ev == nil {
		return nil
	}
	return &diffLists{ev.Catalog.Version, ev.Added, ev.Removed, ev.Changed}
}

func uris(cat *events.Catalog) []string {
	var out []string
	for _, s := range cat.Skills {
		out = append(out, s.URI)
	}
	return out
}

// TestCatalogBuilderChanges checks the SKILL.md URIs added, removed and
// changed between the catalogs published for each kind of change, and that
// a rebuild that changes nothing publishes no version.
func TestCatalogBuilderChanges(t *testing.T) {
	const a, b, c = "skill://skills/a/SKILL.md", "skill://skills/b/SKILL.md", "skill://skills/c/SKILL.md"
	f := false
	synctest.Test(t, func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "skills")
		r, _ := startBuilder(t, root, false)
		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d"), "a/ref.md": "1", "b/SKILL.md": skilltest.SkillMD("b", "d")})
		steps := []struct {
			name string
			do   func() *eventstest.CatalogDiff
			want *diffLists
		}{
			{"first catalog: everything added", r.rescan, &diffLists{1, []string{a, b}, nil, nil}},
			{"no-op rescan: nothing published", r.rescan, nil},
			{"file edited in a skill", func() *eventstest.CatalogDiff {
				r.write(map[string]string{"a/ref.md": "2"})
				return r.rescan()
			}, &diffLists{2, nil, nil, []string{a}}},
			{"skill added", func() *eventstest.CatalogDiff {
				r.write(map[string]string{"c/SKILL.md": skilltest.SkillMD("c", "d")})
				return r.rescan()
			}, &diffLists{3, []string{c}, nil, nil}},
			{"skill removed", func() *eventstest.CatalogDiff {
				r.remove("c")
				return r.rescan()
			}, &diffLists{4, nil, []string{c}, nil}},
			{"skill renamed: old removed, new added", func() *eventstest.CatalogDiff {
				if err := os.Rename(filepath.Join(root, "b"), filepath.Join(root, "c")); err != nil {
					t.Fatal(err)
				}
				r.write(map[string]string{"c/SKILL.md": skilltest.SkillMD("c", "d")})
				return r.rescan()
			}, &diffLists{5, []string{c}, []string{b}, nil}},
			{"override set", func() *eventstest.CatalogDiff {
				return r.overrides(map[string]events.Override{"skills__a": {User: &f}})
			}, &diffLists{6, nil, nil, []string{a}}},
			// A new override set takes a version even when it changes no
			// skill: the config tools wait for the catalog of their command
			// (Catalog.OverridesSeq). The config actor publishes overrides
			// only when they differ, so this costs nothing in practice.
			{"same overrides again (new Seq): a version that changes nothing", func() *eventstest.CatalogDiff {
				return r.overrides(map[string]events.Override{"skills__a": {User: &f}})
			}, &diffLists{7, nil, nil, nil}},
			{"frontmatter flag changed", func() *eventstest.CatalogDiff {
				r.write(map[string]string{"c/SKILL.md": "---\nname: c\ndescription: d\ndisable-model-invocation: true\n---\n"})
				return r.rescan()
			}, &diffLists{8, nil, nil, []string{c}}},
			{"reconcile tick: nothing published", r.rescan, nil},
		}
		for _, s := range steps {
			if diff := cmp.Diff(s.want, lists(s.do())); diff != "" {
				t.Errorf("%s: catalog.changed mismatch (-want +got):\n%s", s.name, diff)
			}
		}
	})
}

// TestCatalogBuilderInvalidThenFixed checks that a skill whose SKILL.md
// becomes invalid drops out with one warning for that version, and is
// served again once fixed.
func TestCatalogBuilderInvalidThenFixed(t *testing.T) {
	const a = "skill://skills/a/SKILL.md"
	synctest.Test(t, func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "skills")
		r, logs := startBuilder(t, root, false)
		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d"), "b/SKILL.md": skilltest.SkillMD("b", "d")})
		r.rescan()
		r.write(map[string]string{"a/SKILL.md": "---\nname: a\n---\n"})
		ev := r.rescan()
		if ev == nil || ev.Catalog.SkillByURI(a) != nil || !cmp.Equal(ev.Removed, []string{a}) {
			t.Fatalf("after breaking a/SKILL.md: %+v, want a removed", lists(ev))
		}
		r.write(map[string]string{"b/ref.md": "x"}) // another change: the warning is not repeated
		r.rescan()
		const warning = "a/SKILL.md: the frontmatter has no description"
		if n := strings.Count(logs.String(), warning); n != 1 {
			t.Errorf("warning %q logged %d times, want 1:\n%s", warning, n, logs.String())
		}
		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "fixed")})
		ev = r.rescan()
		if ev == nil || !cmp.Equal(ev.Added, []string{a}) || ev.Catalog.SkillByURI(a).Description != "fixed" {
			t.Errorf("after fixing a/SKILL.md: %+v, want a added with the new description", lists(ev))
		}
	})
}

// TestCatalogBuilderStatic checks static mode: the first catalog fixes the
// skill set; a new folder is not added, an edit still updates the served
// digest, a deleted skill goes.
func TestCatalogBuilderStatic(t *testing.T) {
	const a, b = "skill://skills/a/SKILL.md", "skill://skills/b/SKILL.md"
	synctest.Test(t, func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "skills")
		r, logs := startBuilder(t, root, true)
		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d"), "a/ref.md": "1", "b/SKILL.md": skilltest.SkillMD("b", "d")})
		if ev := r.rescan(); ev == nil || !ev.Catalog.Static || !cmp.Equal(uris(ev.Catalog), []string{a, b}) {
			t.Fatalf("first static catalog = %+v, want a and b", lists(ev))
		}

		r.write(map[string]string{"new/SKILL.md": skilltest.SkillMD("new", "d")})
		if ev := r.rescan(); ev == nil || len(ev.Added) != 0 || !cmp.Equal(uris(ev.Catalog), []string{a, b}) {
			t.Errorf("after a new folder: %+v, want no skill added", lists(ev))
		}
		if !strings.Contains(logs.String(), "appeared after startup and is not served") {
			t.Errorf("no warning about the skill left out:\n%s", logs.String())
		}
		if ev := r.rescan(); ev != nil {
			t.Errorf("no-op rescan in static mode published %+v", lists(ev))
		}

		r.write(map[string]string{"a/ref.md": "2"})
		ev := r.rescan()
		if ev == nil || !cmp.Equal(ev.Changed, []string{a}) {
			t.Fatalf("after an edit: %+v, want a changed", lists(ev))
		}
		if ref, ok := ev.Catalog.File("skill://skills/a/ref.md"); !ok || ref.File.Digest != skilltest.Digest("2") {
			t.Errorf("served a/ref.md = %+v, want the new digest", ref.File)
		}

		r.remove("b")
		if ev := r.rescan(); ev == nil || !cmp.Equal(ev.Removed, []string{b}) || !cmp.Equal(uris(ev.Catalog), []string{a}) {
			t.Errorf("after deleting b: %+v, want b removed", lists(ev))
		}
		r.write(map[string]string{"b/SKILL.md": skilltest.SkillMD("b", "back")})
		if ev := r.rescan(); ev == nil || !cmp.Equal(ev.Added, []string{b}) {
			t.Errorf("after b came back: %+v, want b served again (it was there at startup)", lists(ev))
		}
	})
}

// TestCatalogBuilderOrdering feeds events out of order and stale, and
// checks versions, readiness, and that each diagnostic is logged once.
func TestCatalogBuilderOrdering(t *testing.T) {
	root := "/r/skills"
	src := events.Source{ID: "0", Kind: events.SourceLocal, Root: root, Prefix: "skills"}
	remote := events.Source{ID: "1", Kind: events.SourceGitHub, Location: "github.com/a/b", Root: "/cache/a/b", Prefix: "a-b"}
	cfg := events.SourcesConfigured{Seq: 1, Sources: []events.Source{src, remote, bundledSource()}}
	scan := func(seq uint64, s events.Source, skills ...events.ScannedSkill) events.SourceScanned {
		return events.SourceScanned{Seq: seq, ConfigSeq: 1, Source: s, Skills: skills}
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cfgIn, scanIn, ovIn := make(chan *message.Message), make(chan *message.Message), make(chan *message.Message)
		pub := eventstest.NewPublisher()
		log, logs := eventstest.CaptureLog()
		b := catalog.New(catalog.Inboxes{Configured: cfgIn, Scanned: scanIn, Overrides: ovIn}, pub, &catalog.Options{Logger: log})
		done := make(chan error)
		go func() { done <- b.Run(ctx) }()

		// A scan before its configuration is kept; nothing is built yet.
		scanIn <- eventstest.Encode(t, scan(2, src, scanned("a", skilltest.SkillMD("a", "new")), scanned("bad", "no frontmatter")))
		cfgIn <- eventstest.Encode(t, cfg)
		synctest.Wait()
		if n := len(pub.All()); n != 0 {
			t.Fatalf("published %d catalogs before the bundled scan, want 0", n)
		}
		// A stale scan of the same source is dropped.
		scanIn <- eventstest.Encode(t, scan(1, src, scanned("a", skilltest.SkillMD("a", "old"))))
		scanIn <- eventstest.Encode(t, scan(3, bundledSource()))
		synctest.Wait()
		if n := len(pub.All()); n != 0 {
			t.Fatalf("published %d catalogs before the remote source's cache scan, want 0", n)
		}
		scanIn <- eventstest.Encode(t, scan(4, remote))
		synctest.Wait()
		// Every scan is in, but the first catalog waits for the overrides.
		if n := len(pub.All()); n != 0 {
			t.Fatalf("published %d catalogs before the overrides arrived, want 0", n)
		}
		ovIn <- eventstest.Encode(t, events.OverridesChanged{Seq: 1})
		synctest.Wait()
		msgs := pub.All()
		if len(msgs) != 1 {
			t.Fatalf("published %d catalogs, want 1", len(msgs))
		}
		ev, err := eventstest.DecodeCatalog(nil, msgs[0])
		if err != nil {
			t.Fatal(err)
		}
		if ev.Catalog.Version != 1 || len(ev.Catalog.Skills) != 1 || ev.Catalog.Skills[0].Description != "new" {
			t.Errorf("catalog = v%d %+v, want v1 with the newest scan", ev.Catalog.Version, ev.Catalog.Skills)
		}

		// A stale configuration changes nothing; overrides rebuild.
		cfgIn <- eventstest.Encode(t, events.SourcesConfigured{Seq: 0})
		f := false
		ovIn <- eventstest.Encode(t, events.OverridesChanged{Seq: 2, Overrides: map[string]events.Override{"skills__a": {Assistant: &f}}})
		ovIn <- eventstest.Encode(t, events.OverridesChanged{Seq: 2})
		synctest.Wait()
		msgs = pub.All()
		if len(msgs) != 2 {
			t.Fatalf("published %d catalogs, want 2", len(msgs))
		}
		ev, err = eventstest.DecodeCatalog(ev.Catalog, msgs[1])
		if err != nil {
			t.Fatal(err)
		}
		if ev.Catalog.Version != 2 || ev.Catalog.Skills[0].ModelInvocable || !cmp.Equal(ev.Changed, []string{"skill://skills/a/SKILL.md"}) {
			t.Errorf("second catalog = v%d changed %v model %v; want v2, a changed, not model-invocable",
				ev.Catalog.Version, ev.Changed, ev.Catalog.Skills[0].ModelInvocable)
		}
		if n := strings.Count(logs.String(), "skipped /r/skills/bad/SKILL.md"); n != 1 {
			t.Errorf("skip line logged %d times over two versions, want 1:\n%s", n, logs)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

func bundledSource() events.Source {
	return events.Source{ID: "bundled", Kind: events.SourceBundled, Location: "bundled", Root: "."}
}

// TestCatalogBuilderStaticRename is issue 13 item 12: in static mode a
// skill whose frontmatter name changes keeps its startup qualified name and
// URI with its new content, unlisted, with a warning; the override of its
// startup name still applies; renamed back, it is listed again.
func TestCatalogBuilderStaticRename(t *testing.T) {
	const a, b = "skill://skills/a/SKILL.md", "skill://skills/b/SKILL.md"
	synctest.Test(t, func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "skills")
		r, logs := startBuilder(t, root, true)
		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d"), "b/SKILL.md": skilltest.SkillMD("b", "d")})
		if ev := r.rescan(); ev == nil || !cmp.Equal(uris(ev.Catalog), []string{a, b}) {
			t.Fatalf("first static catalog = %+v, want a and b", lists(ev))
		}
		off := false
		r.overrides(map[string]events.Override{"skills__a": {User: &off}})

		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("zz-renamed", "new content")})
		ev := r.rescan()
		if ev == nil || !cmp.Equal(uris(ev.Catalog), []string{a, b}) || !cmp.Equal(ev.Changed, []string{a}) {
			t.Fatalf("after renaming a: %+v, want a changed under its startup URI", lists(ev))
		}
		sk := ev.Catalog.SkillByURI(a)
		if sk.QualifiedName != "skills__a" || sk.Name != "a" || sk.SkillPath != "skills/a" || sk.Description != "new content" || sk.Listed {
			t.Errorf("renamed a = %s %s %s %q listed=%v; want skills__a a skills/a \"new content\" unlisted", sk.QualifiedName, sk.Name, sk.SkillPath, sk.Description, sk.Listed)
		}
		if sk.UserInvocable || !sk.UserOverridden {
			t.Errorf("renamed a: the override of its startup name skills__a is not applied: user=%v overridden=%v", sk.UserInvocable, sk.UserOverridden)
		}
		if ev.Catalog.SkillByName("skills__zz-renamed") != nil {
			t.Error("the new name is served beside the startup name")
		}
		if !strings.Contains(logs.String(), "renamed to skills__zz-renamed after startup") || strings.Contains(logs.String(), "names no served skill") {
			t.Errorf("want one rename warning and no unmatched-override warning:\n%s", logs.String())
		}

		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "back")})
		ev = r.rescan()
		if ev == nil || !ev.Catalog.SkillByURI(a).Listed || ev.Catalog.SkillByURI(a).Description != "back" {
			t.Errorf("after renaming a back: %+v, want a listed again", lists(ev))
		}
	})
}

// TestCatalogBuilderOverridesWaitForTheirConfig: one edit of the config
// file that adds a source and an override for one of its skills publishes
// the overrides (ConfigSeq 2) and the new configuration on two topics in
// no fixed order; the builder applies the overrides only with the
// configuration they were read with, so no "names no served skill"
// warning is logged for a skill that is about to be served (found by an
// adversarial pass of issue 13's live configuration).
func TestCatalogBuilderOverridesWaitForTheirConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		r, logs := startBuilder(t, root, false)
		r.write(map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d")})
		if r.rescan() == nil {
			t.Fatal("no first catalog")
		}
		other := filepath.Join(t.TempDir(), "team")
		skilltest.WriteTree(t, other, map[string]string{"b/SKILL.md": skilltest.SkillMD("b", "d")})
		src2 := localSource(other)
		src2.ID = "1"
		off := false
		r.ovSeq++
		r.ovIn <- eventstest.Encode(t, events.OverridesChanged{Seq: r.ovSeq, ConfigSeq: 2,
			Overrides: map[string]events.Override{"team__b": {User: &off}}})
		if got := r.published(); got != nil {
			t.Fatalf("a catalog was built with overrides of a configuration not yet held: %+v", got)
		}
		r.cfgIn <- eventstest.Encode(t, events.SourcesConfigured{Seq: 2, Sources: []events.Source{r.src, src2}})
		synctest.Wait()
		for _, src := range []events.Source{r.src, src2} {
			scan, err := r.hasher.Scan(t.Context(), src)
			if err != nil {
				t.Fatal(err)
			}
			r.seq++
			scan.Seq, scan.ConfigSeq = r.seq, 2
			r.scanIn <- eventstest.Encode(t, scan)
		}
		got := r.published()
		if got == nil || got.Catalog.SkillByURI("skill://team/b/SKILL.md") == nil {
			t.Fatalf("catalog after the new configuration = %+v, want team/b served", got)
		}
		if strings.Contains(logs.String(), "names no served skill") {
			t.Errorf("a warning about an override of a skill that is served:\n%s", logs)
		}
	})
}
