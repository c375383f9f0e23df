package test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/watch"
)

const wkPath = "/.well-known/agent-skills/"

var helloMD = []byte("---\nname: hello\ndescription: Greets the user. Use when the user says hi.\n---\n\nSay hello back.\n")

// TestWellKnownEndToEnd: skill-md, tar.gz and zip entries served through
// the MCP facade on both eras (issue 5 acceptance; WKAS-R12, R15, R17, R20,
// R26), then a 304 poll with no download (WKAS-R18/R19), an update with
// resources/updated to a subscriber, and a removed skill pruned.
func TestWellKnownEndToEnd(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) { wellKnownEndToEnd(t, era) })
	}
}

func wellKnownEndToEnd(t *testing.T, era string) {
	pub := newPublisher(t, "publisher.test")
	tgz := tarGz(t, [][2]string{
		{"SKILL.md", "---\nname: tools-tgz\ndescription: Tools packed as tar.gz.\n---\n\nSee references/REF.md.\n"},
		{"references/REF.md", "# Reference\n"},
		{"scripts/run.sh", "#!/bin/sh\necho hi\n"},
	})
	zp := zipOf(t, [][2]string{
		{"SKILL.md", "---\nname: tools-zip\ndescription: Tools packed as zip.\n---\n"},
		{"assets/logo.txt", "logo\n"},
	})
	pub.set(wkPath+"hello/SKILL.md", pubFile{body: helloMD, contentType: "text/markdown"})
	pub.set(wkPath+"tools-tgz.tar.gz", pubFile{body: tgz, contentType: "application/gzip"})
	pub.set("/cdn/tools.zip", pubFile{body: zp, contentType: "application/octet-stream"}) // generic type: extension decides (WKAS-R16)
	index := wkIndex(
		wkEntry("hello", "skill-md", "/.well-known/agent-skills/hello/SKILL.md", helloMD), // path-absolute
		wkEntry("tools-tgz", "archive", "tools-tgz.tar.gz", tgz),                          // relative
		wkEntry("tools-zip", "archive", "https://publisher.test/cdn/tools.zip", zp),       // absolute
	)
	pub.set(wkPath+"index.json", pubFile{body: index, contentType: "application/json"})

	w := startWK(t, pubClient(10*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, era, pub.origin())
	if ev := w.next(t); ev.Synced == nil || len(ev.Synced.Synced) != 3 {
		t.Fatalf("first sync = %+v / %+v, want 3 skills synced", ev.Synced, ev.Failed)
	}
	s := w.s
	waitFor(t, "three publisher skills in skills/list", func() bool { return len(s.listAll()) == 4 }, w.logs)

	w.s.servedEverywhere("publisher.test__hello", "skill://publisher.test/hello/SKILL.md", "hello", helloMD, true)
	for _, c := range []struct {
		uri   string
		files map[string]string
	}{
		{"skill://publisher.test/tools-tgz/SKILL.md", map[string]string{"references/REF.md": "# Reference\n", "scripts/run.sh": "#!/bin/sh\necho hi\n"}},
		{"skill://publisher.test/tools-zip/SKILL.md", map[string]string{"assets/logo.txt": "logo\n"}},
	} {
		e := s.entry(c.uri)
		if e == nil {
			t.Fatalf("skills/list lacks %s", c.uri)
		}
		if len(e.Resources) != 1+len(c.files) {
			t.Errorf("%s: %d resources, want %d", c.uri, len(e.Resources), 1+len(c.files))
		}
		base := strings.TrimSuffix(c.uri, "SKILL.md")
		for rel, content := range c.files {
			b, _, err := s.readBytes(base + rel)
			if err != nil || string(b) != content {
				t.Errorf("resources/read %s = %q, %v; want %q", base+rel, b, err, content)
			}
			found := false
			for _, r := range e.Resources {
				if r.URI == base+rel && r.Digest == digestOf([]byte(content)) && r.Size == int64(len(content)) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no manifest entry for %s with its digest", c.uri, rel)
			}
		}
	}

	// WKAS-R18/R19: an unchanged index answers 304 and nothing is downloaded.
	before := pub.total()
	w.syncNow(t)
	waitFor(t, "the conditional index request", func() bool { return pub.total() > before }, w.logs)
	time.Sleep(200 * time.Millisecond) // a download would follow the index at once
	if got := pub.total() - before; got != 1 || pub.notModified() != 1 {
		t.Fatalf("poll with an unchanged index made %d requests (%d answered 304), want 1 (304)", got, pub.notModified())
	}

	// An update: hello changes; a subscriber gets resources/updated, the new
	// bytes are served. tools-zip leaves the index: pruned everywhere.
	helloURI := "skill://publisher.test/hello/SKILL.md"
	s.subscribe(helloURI)
	hello2 := append(bytes.Clone(helloMD), "Wave too.\n"...)
	pub.set(wkPath+"hello/SKILL.md", pubFile{body: hello2})
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(
		wkEntry("hello", "skill-md", "hello/SKILL.md", hello2),
		wkEntry("tools-tgz", "archive", "tools-tgz.tar.gz", tgz),
	)})
	ev := w.sync(t)
	if ev.Synced == nil || strings.Join(ev.Synced.Synced, ",") != "hello" || strings.Join(ev.Synced.Removed, ",") != "tools-zip" {
		t.Fatalf("second sync = %+v / %+v, want hello synced and tools-zip removed", ev.Synced, ev.Failed)
	}
	if got := wait(t, s.notes.updated, "resources/updated for hello", w.logs); got != helloURI {
		t.Errorf("resources/updated for %s, want %s", got, helloURI)
	}
	waitFor(t, "tools-zip pruned", func() bool { return s.entry("skill://publisher.test/tools-zip/SKILL.md") == nil }, w.logs)
	if b, _, err := s.readBytes(helloURI); err != nil || !bytes.Equal(b, hello2) {
		t.Errorf("resources/read %s after the update = %q, %v", helloURI, b, err)
	}
	if e := s.entry(helloURI); e == nil || e.Resources[0].Digest != digestOf(hello2) {
		t.Errorf("skills/list %s after the update = %+v, want digest %s", helloURI, e, digestOf(hello2))
	}
	if _, err := os.Stat(filepath.Join(w.cache, "well-known", "publisher.test", "skills", "tools-zip")); !os.IsNotExist(err) {
		t.Errorf("tools-zip cache folder still there: %v", err)
	}
	s.notServed("publisher.test__tools-zip", "skill://publisher.test/tools-zip/SKILL.md")
}

// TestWellKnownFailuresKeepLastGood: after a good sync, a digest mismatch, a
// 500, a timeout and a truncated body each leave the previous version
// served byte for byte (issue 5 acceptance; WKAS-R17), and the skill is
// updated once the publisher is fixed.
func TestWellKnownFailuresKeepLastGood(t *testing.T) {
	pub := newPublisher(t, "publisher.test")
	pub.set(wkPath+"hello/SKILL.md", pubFile{body: helloMD})
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(wkEntry("hello", "skill-md", "hello/SKILL.md", helloMD))})
	w := startWK(t, pubClient(500*time.Millisecond, pub),
		map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
	if ev := w.next(t); ev.Synced == nil {
		t.Fatalf("first sync failed: %+v", ev.Failed)
	}
	uri := "skill://publisher.test/hello/SKILL.md"
	s := w.s
	waitFor(t, "hello served", func() bool { return s.entry(uri) != nil }, w.logs)
	s.subscribe(uri)
	good := s.entry(uri)

	hello2 := append(bytes.Clone(helloMD), "v2\n"...)
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(wkEntry("hello", "skill-md", "hello/SKILL.md", hello2))})
	for _, c := range []struct {
		name string
		file pubFile
		want string // in the skill's error
	}{
		{"digest mismatch", pubFile{body: append(bytes.Clone(hello2), '\n')}, "digest mismatch"},
		{"500", pubFile{status: 500, body: []byte("boom")}, "500"},
		{"timeout", pubFile{body: hello2, hang: 5 * time.Second}, ""},
		{"truncated body", pubFile{body: bytes.Repeat(hello2, 100), truncate: true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pub.set(wkPath+"hello/SKILL.md", c.file)
			ev := w.sync(t)
			if ev.Synced == nil || ev.Synced.Errors["hello"] == "" || len(ev.Synced.Paths) != 0 {
				t.Fatalf("sync = %+v / %+v, want an error for hello and nothing changed", ev.Synced, ev.Failed)
			}
			if !strings.Contains(ev.Synced.Errors["hello"], c.want) {
				t.Errorf("error %q does not mention %q", ev.Synced.Errors["hello"], c.want)
			}
			if got := s.entry(uri); got == nil || !cmp.Equal(normEntry(t, *got), normEntry(t, *good)) {
				t.Errorf("skills/list entry changed: %+v, want %+v", got, good)
			}
			if b, _, err := s.readBytes(uri); err != nil || !bytes.Equal(b, helloMD) {
				t.Errorf("resources/read = %q, %v; want the last good bytes", b, err)
			}
			if !strings.Contains(w.logs.String(), "publisher skill hello not updated") {
				t.Errorf("no log line naming hello:\n%s", w.logs)
			}
		})
	}
	select {
	case u := <-s.notes.updated:
		t.Errorf("resources/updated %s after failed syncs, want none", u)
	default:
	}

	// The index itself failing: source.failed, the skill still served.
	pub.set(wkPath+"index.json", pubFile{status: 503, body: []byte("down")})
	if ev := w.sync(t); ev.Failed == nil || !strings.Contains(ev.Failed.Error, "503") {
		t.Fatalf("sync with a failing index = %+v / %+v, want source.failed naming 503", ev.Synced, ev.Failed)
	}
	if b, _, err := s.readBytes(uri); err != nil || !bytes.Equal(b, helloMD) {
		t.Errorf("resources/read after an index failure = %q, %v", b, err)
	}

	// Fixed: the new version arrives.
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(wkEntry("hello", "skill-md", "hello/SKILL.md", hello2))})
	pub.set(wkPath+"hello/SKILL.md", pubFile{body: hello2})
	if ev := w.sync(t); ev.Synced == nil || len(ev.Synced.Paths) != 1 {
		t.Fatalf("sync after the fix = %+v / %+v", ev.Synced, ev.Failed)
	}
	wait(t, s.notes.updated, "resources/updated after the fix", w.logs)
	if b, _, err := s.readBytes(uri); err != nil || !bytes.Equal(b, hello2) {
		t.Errorf("resources/read after the fix = %q, %v", b, err)
	}
}

// TestWellKnownAllowlistAndLimits: a redirect off the allowlist and an
// artifact URL off the allowlist are refused before any request reaches
// them; an index over WELL_KNOWN_MAX_ARTIFACT_MB is refused; a source whose
// origin is not allowlisted is not served at all (issue 5 acceptance;
// WKAS-R30, reference §5).
func TestWellKnownAllowlistAndLimits(t *testing.T) {
	t.Run("redirect off the allowlist", func(t *testing.T) {
		pub, evil := newPublisher(t, "publisher.test"), newPublisher(t, "evil.test")
		pub.set(wkPath+"index.json", pubFile{status: 302, location: "https://evil.test/index.json"})
		evil.set("/index.json", pubFile{body: wkIndex()})
		w := startWK(t, pubClient(5*time.Second, pub, evil), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
		ev := w.next(t)
		if ev.Failed == nil || !strings.Contains(ev.Failed.Error, "https://evil.test/index.json") || !strings.Contains(ev.Failed.Error, "WELL_KNOWN_ALLOWED_ORIGINS") {
			t.Fatalf("sync = %+v / %+v, want source.failed naming the refused URL and the allowlist", ev.Synced, ev.Failed)
		}
		if n := evil.total(); n != 0 {
			t.Errorf("the refused origin got %d requests, want 0", n)
		}
	})
	t.Run("artifact off the allowlist", func(t *testing.T) {
		pub, other := newPublisher(t, "publisher.test"), newPublisher(t, "other.test")
		other.set("/x/SKILL.md", pubFile{body: helloMD})
		pub.set(wkPath+"index.json", pubFile{body: wkIndex(wkEntry("hello", "skill-md", "https://other.test/x/SKILL.md", helloMD))})
		w := startWK(t, pubClient(5*time.Second, pub, other), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
		ev := w.next(t)
		if ev.Synced == nil || !strings.Contains(ev.Synced.Errors["hello"], "other.test") {
			t.Fatalf("sync = %+v / %+v, want hello refused naming other.test", ev.Synced, ev.Failed)
		}
		if n := other.total(); n != 0 {
			t.Errorf("the artifact's origin got %d requests, want 0", n)
		}
		if w.s.entry("skill://publisher.test/hello/SKILL.md") != nil {
			t.Error("hello is served, want it refused")
		}
	})
	t.Run("index too large", func(t *testing.T) {
		pub := newPublisher(t, "publisher.test")
		big := wkIndex(map[string]any{"name": "x", "pad": strings.Repeat("a", 1<<20)})
		pub.set(wkPath+"index.json", pubFile{body: big})
		w := startWK(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin(), "WELL_KNOWN_MAX_ARTIFACT_MB": "1"}, legacyVersion, pub.origin())
		ev := w.next(t)
		if ev.Failed == nil || !strings.Contains(ev.Failed.Error, "too large") {
			t.Fatalf("sync = %+v / %+v, want source.failed: too large", ev.Synced, ev.Failed)
		}
	})
	t.Run("origin not allowlisted", func(t *testing.T) {
		pub := newPublisher(t, "publisher.test")
		pub.set(wkPath+"index.json", pubFile{body: wkIndex()})
		w := startWK(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": "https://publisher.test:8443"}, legacyVersion, pub.origin())
		// Issue 11 item 4 reverses what this checked (no fetcher without an
		// allowlisted publisher): the fetcher exists from the start, idle;
		// the blocked publisher gets no request (checked below).
		// The pipeline exports no actor any more: a sync request reaches
		// the fetcher, which stays idle (no request, checked below).
		w.syncNow(t)
		if !strings.Contains(w.logs.String(), "not in WELL_KNOWN_ALLOWED_ORIGINS") {
			t.Errorf("no log line naming WELL_KNOWN_ALLOWED_ORIGINS:\n%s", w.logs)
		}
		time.Sleep(100 * time.Millisecond)
		if n := pub.total(); n != 0 {
			t.Errorf("the blocked publisher got %d requests", n)
		}
	})
}

// TestWellKnownBR22 runs case BR-22: hostile zip and tar.gz archives are
// refused as a whole, naming the first hostile entry; nothing is written
// outside the cache, no partial folder is left, and the good sibling is
// served.
func TestWellKnownBR22(t *testing.T) {
	dir := caseDir(t, "BR-22")
	goodMD := []byte("---\nname: good\ndescription: A well-formed sibling.\n---\n")
	if d := digestOf(goodMD); d != "sha256:9e386009e0c075a4d82250a052517337973fc391a5c6d0cbea2a1d0e68858382" {
		t.Fatalf("good SKILL.md digest %s differs from the case's", d)
	}
	for _, c := range []struct{ file, entry string }{
		{"evil-skill.zip", "../../escaped.md"},
		{"evil-skill.tar.gz", "evil-skill/../../escaped.md"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data := readCaseFile(t, dir, c.file)
			pub := newPublisher(t, "publisher.test")
			pub.set(wkPath+c.file, pubFile{body: data})
			pub.set(wkPath+"good/SKILL.md", pubFile{body: goodMD})
			index := wkIndex(wkEntry("evil-skill", "archive", c.file, data), wkEntry("good", "skill-md", "good/SKILL.md", goodMD))
			pub.set(wkPath+"index.json", pubFile{body: index})
			w := startWK(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
			ev := w.next(t)
			if ev.Synced == nil || !strings.Contains(ev.Synced.Errors["evil-skill"], c.entry) || strings.Join(ev.Synced.Synced, ",") != "good" {
				t.Fatalf("sync = %+v / %+v, want evil-skill refused naming %q and good synced", ev.Synced, ev.Failed, c.entry)
			}
			lines := stderrLines(w.logs.String(), []string{"WARN", "ERROR"}, "evil-skill", c.entry)
			if len(lines) != 1 {
				t.Errorf("%d WARN/ERROR lines name evil-skill and %q, want 1:\n%s", len(lines), c.entry, w.logs)
			}
			s := w.s
			waitFor(t, "good served", func() bool { return s.entry("skill://publisher.test/good/SKILL.md") != nil }, w.logs)
			w.s.servedEverywhere("publisher.test__good", "skill://publisher.test/good/SKILL.md", "good", goodMD, true)
			s.notServed("publisher.test__evil-skill", "skill://publisher.test/evil-skill/SKILL.md")
			// Nothing outside the cache, no links, no partial folder.
			root := filepath.Dir(w.cache)
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				if n := d.Name(); n == "escaped.md" || n == "absolute.md" || n == "passwd" || n == "hard" || n == "link" {
					t.Errorf("hostile entry written: %s", p)
				}
				if d.Type()&fs.ModeSymlink != 0 {
					t.Errorf("symbolic link written: %s", p)
				}
				if n := d.Name(); n == "evil-skill" && d.IsDir() {
					t.Errorf("partial folder left: %s", p)
				}
				return nil
			})
			if _, err := os.Lstat("/absolute.md"); err == nil {
				t.Error("/absolute.md exists")
			}
			// The server keeps polling the publisher.
			before := pub.total()
			w.sync(t)
			if pub.total() <= before {
				t.Error("no request on the next sync")
			}
		})
	}
}

// TestWellKnownBR24 runs case BR-24: the index behind a 302 to a CDN, its
// relative artifact URL resolved against the final index URL, served under
// the configured publisher's host slug; and the three refused variants.
func TestWellKnownBR24(t *testing.T) {
	dir := caseDir(t, "BR-24")
	demo := readCaseFile(t, dir, "cdn/v7/agent-skills/demo/SKILL.md")
	const demoDigest = "sha256:15125de239150d5a7e02da15064e2592fbabd7119ab86d36c00e7199b80fbcdc"
	if digestOf(demo) != demoDigest {
		t.Fatalf("demo SKILL.md digest %s differs from the case's", digestOf(demo))
	}
	index := bytes.ReplaceAll(readCaseFile(t, dir, "cdn/v7/agent-skills/index.json"),
		[]byte("sha256:<sha256 of cdn/v7/agent-skills/demo/SKILL.md>"), []byte(demoDigest))
	setup := func(t *testing.T) (*publisher, *publisher) {
		pub, cdn := newPublisher(t, "publisher.test"), newPublisher(t, "cdn.publisher.test")
		pub.set(wkPath+"index.json", pubFile{status: 302, location: "https://cdn.publisher.test/v7/agent-skills/index.json"})
		cdn.set("/v7/agent-skills/index.json", pubFile{body: index})
		cdn.set("/v7/agent-skills/demo/SKILL.md", pubFile{body: demo})
		return pub, cdn
	}
	both := "https://publisher.test,https://cdn.publisher.test"
	src := "https://publisher.test/.well-known/agent-skills/"

	t.Run("followed", func(t *testing.T) {
		pub, cdn := setup(t)
		w := startWK(t, pubClient(5*time.Second, pub, cdn), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": both}, legacyVersion, src)
		if ev := w.next(t); ev.Synced == nil {
			t.Fatalf("sync failed: %+v", ev.Failed)
		}
		if n := pub.requests(wkPath + "demo/SKILL.md"); n != 0 {
			t.Errorf("%d requests for the artifact on the configured host, want 0", n)
		}
		s := w.s
		uri := "skill://publisher.test/demo/SKILL.md"
		waitFor(t, "demo served", func() bool { return s.entry(uri) != nil }, w.logs)
		w.s.servedEverywhere("publisher.test__demo", uri, "demo", demo, true)
		if diff := cmp.Diff(normEntry(t, entryJSON(t, `{"uri": "skill://publisher.test/demo/SKILL.md",
			"frontmatter": {"name": "demo", "description": "Demo skill behind a redirect."},
			"resources": [{"uri": "skill://publisher.test/demo/SKILL.md",
			"digest": "sha256:15125de239150d5a7e02da15064e2592fbabd7119ab86d36c00e7199b80fbcdc", "size": 85}]}`)), normEntry(t, *s.entry(uri))); diff != "" {
			t.Errorf("skills/list entry (-want +got):\n%s", diff)
		}
	})
	for _, c := range []struct {
		name, allow, location, want string
		hops                        int
	}{
		{name: "CDN origin not allowed", allow: "https://publisher.test", location: "https://cdn.publisher.test/v7/agent-skills/index.json", want: "WELL_KNOWN_ALLOWED_ORIGINS"},
		{name: "plain http hop", allow: both, location: "http://cdn.publisher.test/v7/agent-skills/index.json", want: "scheme"},
		{name: "six hops", allow: both, hops: 6, want: "redirect"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pub, cdn := setup(t)
			if c.location != "" {
				pub.set(wkPath+"index.json", pubFile{status: 302, location: c.location})
			}
			if c.hops > 0 {
				pub.set(wkPath+"index.json", pubFile{status: 302, location: wkPath + "index.json?hop=1"})
				for i := 1; i < c.hops; i++ {
					pub.set(wkPath+"index.json?hop="+itoa(i), pubFile{status: 302, location: wkPath + "index.json?hop=" + itoa(i+1)})
				}
				pub.set(wkPath+"index.json?hop="+itoa(c.hops), pubFile{status: 302, location: "https://cdn.publisher.test/v7/agent-skills/index.json"})
			}
			w := startWK(t, pubClient(5*time.Second, pub, cdn), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": c.allow}, legacyVersion, src)
			ev := w.next(t)
			if ev.Failed == nil || !strings.Contains(ev.Failed.Error, c.want) {
				t.Fatalf("sync = %+v / %+v, want source.failed mentioning %q", ev.Synced, ev.Failed, c.want)
			}
			if n := cdn.total(); n != 0 {
				t.Errorf("the refused target got %d requests, want 0", n)
			}
			if c.hops > 0 && pub.requests(wkPath+"index.json?hop=6") != 0 {
				t.Error("the sixth hop was requested")
			}
			if len(w.s.listAll()) != 1 { // only the bundled skill
				t.Errorf("skills/list = %d entries, want only the bundled skill", len(w.s.listAll()))
			}
		})
	}
	t.Run("five hops followed", func(t *testing.T) {
		pub, cdn := setup(t)
		pub.set(wkPath+"index.json", pubFile{status: 302, location: wkPath + "index.json?hop=1"})
		for i := 1; i < 5; i++ {
			pub.set(wkPath+"index.json?hop="+itoa(i), pubFile{status: 302, location: wkPath + "index.json?hop=" + itoa(i+1)})
		}
		pub.set(wkPath+"index.json?hop=4", pubFile{status: 302, location: "https://cdn.publisher.test/v7/agent-skills/index.json"})
		w := startWK(t, pubClient(5*time.Second, pub, cdn), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": both}, legacyVersion, src)
		if ev := w.next(t); ev.Synced == nil {
			t.Fatalf("a chain of 5 redirects: %+v", ev.Failed)
		}
	})
}

// TestWellKnownBR26 runs case BR-26: a digest that does not match refuses
// the skill before anything is written (A); drift after a good copy keeps
// the good copy with no resources/updated (B); malformed digests skip the
// entry without a download.
func TestWellKnownBR26(t *testing.T) {
	dir := caseDir(t, "BR-26")
	site := filepath.Join(dir, "site")
	md := readCaseFile(t, site, ".well-known/agent-skills/drifted/SKILL.md")
	badIndex := readCaseFile(t, site, ".well-known/agent-skills/index.json")
	const real = "sha256:e4be574aaaace3f8a6116ca56b16b6303597f7bafbe2c9c34ca149ef3c5755fb"
	const bad = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	goodIndex := bytes.ReplaceAll(badIndex, []byte(bad), []byte(real))
	uri := "skill://publisher.test/drifted/SKILL.md"
	start := func(t *testing.T, index []byte) (*publisher, *wkStack) {
		pub := newPublisher(t, "publisher.test")
		pub.set(wkPath+"drifted/SKILL.md", pubFile{body: md})
		pub.set(wkPath+"index.json", pubFile{body: index})
		return pub, startWK(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
	}
	checkLog := func(t *testing.T, w *wkStack) {
		t.Helper()
		if lines := stderrLines(w.logs.String(), []string{"WARN", "ERROR"}, "drifted", bad, real); len(lines) == 0 {
			t.Errorf("no WARN/ERROR line names drifted with both digests:\n%s", w.logs)
		}
	}
	t.Run("A", func(t *testing.T) {
		_, w := start(t, badIndex)
		if ev := w.next(t); ev.Synced == nil || ev.Synced.Errors["drifted"] == "" {
			t.Fatalf("sync = %+v / %+v, want drifted refused", ev.Synced, ev.Failed)
		}
		checkLog(t, w)
		filepath.WalkDir(w.cache, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), "drifted") {
				t.Errorf("cache holds %s", p)
			}
			return nil
		})
		w.s.notServed("publisher.test__drifted", uri)
	})
	t.Run("B", func(t *testing.T) {
		pub, w := start(t, goodIndex)
		if ev := w.next(t); ev.Synced == nil || len(ev.Synced.Synced) != 1 {
			t.Fatalf("sync = %+v / %+v", ev.Synced, ev.Failed)
		}
		s := w.s
		waitFor(t, "drifted served", func() bool { return s.entry(uri) != nil }, w.logs)
		w.s.servedEverywhere("publisher.test__drifted", uri, "drifted", md, true)
		s.subscribe(uri)
		good := s.entry(uri)
		if good.Resources[0].Digest != real || good.Resources[0].Size != 90 {
			t.Fatalf("entry = %+v, want digest %s size 90", good, real)
		}
		pub.set(wkPath+"index.json", pubFile{body: badIndex})
		if ev := w.sync(t); ev.Synced == nil || ev.Synced.Errors["drifted"] == "" {
			t.Fatalf("drift sync = %+v / %+v, want drifted refused", ev.Synced, ev.Failed)
		}
		if n := pub.requests(wkPath + "drifted/SKILL.md"); n != 2 {
			t.Errorf("artifact fetched %d times, want 2 (the changed entry is downloaded again)", n)
		}
		checkLog(t, w)
		if got := s.entry(uri); got == nil || !cmp.Equal(normEntry(t, *got), normEntry(t, *good)) {
			t.Errorf("entry after drift = %+v, want the good one", got)
		}
		if b, _, err := s.readBytes(uri); err != nil || !bytes.Equal(b, md) {
			t.Errorf("resources/read after drift = %q, %v", b, err)
		}
		time.Sleep(300 * time.Millisecond) // past the notifier's debounce
		select {
		case u := <-s.notes.updated:
			t.Errorf("resources/updated %s, want none", u)
		default:
		}
	})
	t.Run("malformed digests", func(t *testing.T) {
		for _, d := range []string{"SHA256:" + real[7:], "sha256:" + strings.ToUpper(real[7:]), real[:len(real)-1], real[7:]} {
			t.Run(d[:8], func(t *testing.T) {
				other := []byte("---\nname: other\ndescription: Another skill.\n---\n")
				pub := newPublisher(t, "publisher.test")
				pub.set(wkPath+"drifted/SKILL.md", pubFile{body: md})
				pub.set(wkPath+"other/SKILL.md", pubFile{body: other})
				e := wkEntry("drifted", "skill-md", "drifted/SKILL.md", md)
				e["digest"] = d
				pub.set(wkPath+"index.json", pubFile{body: wkIndex(e, wkEntry("other", "skill-md", "other/SKILL.md", other))})
				w := startWK(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
				if ev := w.next(t); ev.Synced == nil || strings.Join(ev.Synced.Synced, ",") != "other" {
					t.Fatalf("sync = %+v / %+v, want only other synced", ev.Synced, ev.Failed)
				}
				if n := pub.requests(wkPath + "drifted/SKILL.md"); n != 0 {
					t.Errorf("drifted downloaded %d times, want 0", n)
				}
				if lines := stderrLines(w.logs.String(), []string{"WARN"}, "drifted", d); len(lines) != 1 {
					t.Errorf("%d WARN lines name drifted and %q, want 1:\n%s", len(lines), d, w.logs)
				}
			})
		}
	})
}

// TestWellKnownLegacyV01: a publisher with only the v0.1 layout
// (/.well-known/skills/index.json, files arrays, no digests) is served with
// a warning that it carries no integrity (WKAS-R32, R33).
func TestWellKnownLegacyV01(t *testing.T) {
	pub := newPublisher(t, "publisher.test")
	notes := []byte("---\nname: release-notes\ndescription: Draft release notes.\n---\n\nFollow references/STYLE.md.\n")
	pub.set("/.well-known/skills/index.json", pubFile{body: []byte(`{"skills":[{"name":"release-notes","description":"Draft release notes.","files":["SKILL.md","references/STYLE.md"]},
		{"name":"bad","description":"d","files":["SKILL.md","../secrets.txt"]}]}`)})
	pub.set("/.well-known/skills/release-notes/SKILL.md", pubFile{body: notes})
	pub.set("/.well-known/skills/release-notes/references/STYLE.md", pubFile{body: []byte("Be brief.\n")})
	w := startWK(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
	if ev := w.next(t); ev.Synced == nil || strings.Join(ev.Synced.Synced, ",") != "release-notes" {
		t.Fatalf("sync = %+v / %+v", ev.Synced, ev.Failed)
	}
	if !strings.Contains(w.logs.String(), "no integrity") {
		t.Errorf("no warning about the missing integrity:\n%s", w.logs)
	}
	s := w.s
	uri := "skill://publisher.test/release-notes/SKILL.md"
	waitFor(t, "release-notes served", func() bool { return s.entry(uri) != nil }, w.logs)
	if b, _, err := s.readBytes("skill://publisher.test/release-notes/references/STYLE.md"); err != nil || string(b) != "Be brief.\n" {
		t.Errorf("STYLE.md = %q, %v", b, err)
	}
	// Unchanged: the conditional index request answers 304 and nothing
	// is downloaded or swapped.
	before := pub.total()
	w.syncNow(t)
	waitFor(t, "the conditional index requests", func() bool { return pub.total() >= before+2 }, w.logs)
	time.Sleep(200 * time.Millisecond)
	if got := pub.total() - before; got != 2 || pub.notModified() != 1 {
		t.Errorf("an unchanged v0.1 publisher: %d requests (%d answered 304), want the v0.2 404 and the v0.1 304", got, pub.notModified())
	}
	select {
	case ev := <-w.remote:
		t.Errorf("an unchanged v0.1 publisher published %+v", ev)
	default:
	}
}

// TestWellKnownStartupNeverBlocks: with an allowlisted publisher that hangs
// for 30 s, initialize answers and the cached copy is served at once
// (issue 5: the reference blocks initialize on the first sync).
func TestWellKnownStartupNeverBlocks(t *testing.T) {
	pub := newPublisher(t, "publisher.test")
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(), hang: 30 * time.Second})
	base := t.TempDir()
	// A cached copy from an earlier run.
	cached := filepath.Join(base, "cache", "well-known", "publisher.test", "skills", "hello")
	if err := os.MkdirAll(cached, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cached, "SKILL.md"), helloMD, 0o644); err != nil {
		t.Fatal(err)
	}
	// An earlier run leaves its cache index beside skills/: without it the
	// folder would not be the fetcher's (issue 10 F1) and no sync would run.
	if err := os.WriteFile(filepath.Join(base, "cache", "well-known", "publisher.test", "index.json"), []byte(`{"skills":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	w := startWK(t, pubClient(60*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin(),
		"SKILLJACK_CACHE_DIR": filepath.Join(base, "cache")}, modernVersion, pub.origin())
	if e := w.s.entry("skill://publisher.test/hello/SKILL.md"); e == nil {
		t.Fatal("the cached copy is not served at startup")
	}
	if d := time.Since(started); d > time.Second {
		t.Errorf("startup with a hanging publisher took %v, want under 1 s", d)
	}
	waitFor(t, "the index request in flight", func() bool { return pub.total() == 1 }, w.logs)
}

// TestWellKnownBinary: the built binary serves a publisher over stdio on
// both eras (SSL_CERT_FILE trusts the test certificate; the publisher is
// on 127.0.0.1), answering initialize fast while the first sync runs.
func TestWellKnownBinary(t *testing.T) {
	pub := newPublisher(t, "127.0.0.1")
	origin := "https://" + pub.srv.Listener.Addr().String()
	// The SKILL.md answers after a second, so that the first sync ends
	// after initialize and its catalog reaches the session as list_changed
	// (answered at once, the sync could end before the session starts:
	// flaky under load).
	pub.set(wkPath+"hello/SKILL.md", pubFile{body: helloMD, hang: time.Second})
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(wkEntry("hello", "skill-md", "hello/SKILL.md", helloMD))})
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(certFile, testCAPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			n := newNotes()
			env := []string{"SSL_CERT_FILE=" + certFile, "WELL_KNOWN_ALLOWED_ORIGINS=" + origin, "SKILLJACK_CACHE_DIR=" + t.TempDir()}
			s := startServerNotes(t, era, t.TempDir(), env, n, origin+"/.well-known/agent-skills/index.json")
			slug := strings.ReplaceAll(pub.srv.Listener.Addr().String(), ":", "-")
			uri := "skill://" + slug + "/hello/SKILL.md"
			wait(t, n.resources, "resources/list_changed after the first sync", s.stderr)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != string(helloMD) {
				t.Fatalf("resources/read %s = %+v, %v\nstderr:\n%s", uri, res, err, s.stderr)
			}
			if e := s.entry(uri); e == nil || e.Resources[0].Digest != digestOf(helloMD) {
				t.Errorf("skills/list %s = %+v", uri, e)
			}
		})
	}
}

// TestWellKnownCacheChangedOnDisk: the publisher cache is watched like a
// skill folder, so a change made to it by someone else (another process
// sharing SKILLJACK_CACHE_DIR, a person) is served at once, never as bytes
// that disagree with their digest; and the next sync, even with an
// unchanged index (304), sees that the cached copy is not what it wrote
// and downloads it again.
func TestWellKnownCacheChangedOnDisk(t *testing.T) {
	pub := newPublisher(t, "publisher.test")
	tgz := tarGz(t, [][2]string{
		{"SKILL.md", "---\nname: kit\ndescription: A kit.\n---\n"},
		{"references/REF.md", "# Reference\n"},
	})
	pub.set(wkPath+"hello/SKILL.md", pubFile{body: helloMD})
	pub.set(wkPath+"kit.tar.gz", pubFile{body: tgz})
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(wkEntry("hello", "skill-md", "hello/SKILL.md", helloMD), wkEntry("kit", "archive", "kit.tar.gz", tgz))})
	w := startWKWith(t, pubClient(5*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion,
		func(o *actors.PipelineOptions) {
			o.Watch = true
			o.Watcher = watch.Options{Debounce: 20 * time.Millisecond, Reconcile: -1}
		}, pub.origin())
	if ev := w.next(t); ev.Synced == nil || len(ev.Synced.Synced) != 2 {
		t.Fatalf("first sync = %+v / %+v", ev.Synced, ev.Failed)
	}
	s := w.s
	helloURI, refURI := "skill://publisher.test/hello/SKILL.md", "skill://publisher.test/kit/references/REF.md"
	waitFor(t, "both skills served", func() bool { return s.entry("skill://publisher.test/kit/SKILL.md") != nil && s.entry(helloURI) != nil }, w.logs)

	// Someone else rewrites hello and deletes kit's reference.
	skills := filepath.Join(w.cache, "well-known", "publisher.test", "skills")
	tampered := []byte("---\nname: hello\ndescription: Changed by someone else.\n---\n")
	if err := os.WriteFile(filepath.Join(skills, "hello", "SKILL.md"), tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(skills, "kit", "references", "REF.md")); err != nil {
		t.Fatal(err)
	}
	// The watcher serves what is on disk now, digest and bytes agreeing.
	waitFor(t, "the changed cache served", func() bool {
		e := s.entry(helloURI)
		b, _, err := s.readBytes(helloURI)
		return e != nil && e.Resources[0].Digest == digestOf(tampered) && err == nil && bytes.Equal(b, tampered)
	}, w.logs)
	if _, _, err := s.readBytes(refURI); err == nil {
		t.Errorf("resources/read %s after its file was deleted: no error", refURI)
	}

	// The index is unchanged (304), yet the sync repairs both skills.
	before := pub.notModified()
	ev := w.sync(t)
	if ev.Synced == nil || strings.Join(ev.Synced.Synced, ",") != "hello,kit" || pub.notModified() != before+1 {
		t.Fatalf("repair sync = %+v / %+v (304s %d→%d), want hello and kit downloaded again after a 304", ev.Synced, ev.Failed, before, pub.notModified())
	}
	if !strings.Contains(w.logs.String(), "cached copy of publisher skill hello changed on disk") {
		t.Errorf("no warning about the changed cache:\n%s", w.logs)
	}
	waitFor(t, "the publisher's bytes served again", func() bool {
		b, _, err := s.readBytes(helloURI)
		r, _, rerr := s.readBytes(refURI)
		return err == nil && bytes.Equal(b, helloMD) && rerr == nil && string(r) == "# Reference\n"
	}, w.logs)
	// Intact now: the next 304 downloads nothing.
	n := pub.requests(wkPath + "hello/SKILL.md")
	w.syncNow(t)
	waitFor(t, "another 304", func() bool { return pub.notModified() == before+2 }, w.logs)
	time.Sleep(200 * time.Millisecond)
	if got := pub.requests(wkPath + "hello/SKILL.md"); got != n {
		t.Errorf("hello downloaded %d more times after the repair, want 0", got-n)
	}

	// An edit that keeps the size and puts the mtime back is still caught:
	// a skill-md skill's SKILL.md is checked against its digest.
	md := filepath.Join(skills, "hello", "SKILL.md")
	fi, err := os.Stat(md)
	if err != nil {
		t.Fatal(err)
	}
	same := bytes.Replace(helloMD, []byte("hello back"), []byte("HELLO BACK"), 1)
	if err := os.WriteFile(md, same, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(md, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if ev := w.sync(t); ev.Synced == nil || strings.Join(ev.Synced.Synced, ",") != "hello" {
		t.Fatalf("sync after a same-size edit = %+v / %+v, want hello downloaded again", ev.Synced, ev.Failed)
	}
}

// TestWellKnownCheckpoints: a long sync saves its progress and announces
// the skills swapped in so far every couple of seconds, so clients see
// skills as they arrive and an interrupted first sync resumes.
func TestWellKnownCheckpoints(t *testing.T) {
	pub := newPublisher(t, "publisher.test")
	var entries []map[string]any
	for i, name := range []string{"a", "b", "c", "d"} {
		body := []byte("---\nname: " + name + "\ndescription: Skill " + name + ".\n---\n")
		f := pubFile{body: body}
		if i == 2 {
			f.hang = 2500 * time.Millisecond // past the 2 s checkpoint
		}
		pub.set(wkPath+name+"/SKILL.md", f)
		entries = append(entries, wkEntry(name, "skill-md", name+"/SKILL.md", body))
	}
	pub.set(wkPath+"index.json", pubFile{body: wkIndex(entries...)})
	w := startWK(t, pubClient(10*time.Second, pub), map[string]string{"WELL_KNOWN_ALLOWED_ORIGINS": pub.origin()}, legacyVersion, pub.origin())
	first := w.next(t)
	if first.Synced == nil || strings.Join(first.Synced.Synced, ",") != "a,b,c" {
		t.Fatalf("first event = %+v / %+v, want a checkpoint with a, b, c", first.Synced, first.Failed)
	}
	idx, err := os.ReadFile(filepath.Join(w.cache, "well-known", "publisher.test", "index.json"))
	if err != nil || !strings.Contains(string(idx), `"c"`) {
		t.Errorf("progress not saved at the checkpoint: %s, %v", idx, err)
	}
	if last := w.next(t); last.Synced == nil || strings.Join(last.Synced.Synced, ",") != "d" {
		t.Fatalf("last event = %+v / %+v, want d", last.Synced, last.Failed)
	}
	waitFor(t, "four skills", func() bool { return len(w.s.listAll()) == 5 }, w.logs)
}
