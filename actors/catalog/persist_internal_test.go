package catalog

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestPersistedRoundTripAndMalformed checks that the persisted form
// decodes to what was encoded, and that a body cut short or altered under
// a matching checksum gives an error, never a panic or a value.
func TestPersistedRoundTripAndMalformed(t *testing.T) {
	src := events.Source{ID: "0", Kind: events.SourceLocal, Location: "/l", Root: "/l", Prefix: "l"}
	mod := time.Unix(1700000000, 123456789)
	p := &persisted{Sources: []events.Source{src}, Scans: []persistedScan{{
		Diagnostics: []events.Diagnostic{{File: "/l/x", Level: events.LevelWarn, Unserved: true, Rule: "R", Message: "m", Version: "v"}},
		Skills: []persistedSkill{
			{Scanned: events.ScannedSkill{Dir: "/l/a", RelDir: "a", RealDir: "/r/a", DirID: events.FolderID{Dev: 1, Ino: 2},
				Files: []events.File{{Path: "SKILL.md", DiskName: "skill.md", Digest: "sha256:00", Size: 3, ModTime: mod, MIME: "text/markdown", Text: true}, {Path: "b.bin", Digest: "sha256:11", Size: 4}}},
				OK: true, QualifiedName: "l__a", Name: "a", Description: "d é", SkillPath: "l/a", URI: "skill://l/a/SKILL.md",
				Frontmatter: []byte(`{"name":"a"}`), Listed: true, UserInvocable: true},
			{Scanned: events.ScannedSkill{Dir: "/l/b", RelDir: "b", Files: []events.File{{Path: "SKILL.md", Digest: "sha256:22", Size: 1, ModTime: mod}}},
				NoFM: true, Diag: &events.Diagnostic{File: "/l/b/SKILL.md", Level: events.LevelError, Message: "skipped"}},
		},
	}}}
	data, err := encodePersisted(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodePersisted(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got, cmp.AllowUnexported(persisted{})); diff != "" {
		t.Errorf("round trip differs (-encoded +decoded):\n%s", diff)
	}
	body := data[:len(data)-sha256.Size]
	for cut := len(persistMagic); cut < len(body); cut++ {
		for _, b := range [][]byte{body[:cut], flip(body, cut)} {
			sum := sha256.Sum256(b)
			if q, err := decodePersisted(append(append([]byte(nil), b...), sum[:]...)); err == nil && len(b) < len(body) {
				t.Fatalf("body cut at %d decoded to %+v", cut, q)
			}
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0xff
	return c
}

// TestPersistedEncodeSizeHint checks that a catalog encoded with the size
// of the file before as its hint is encoded without growing its buffer
// (issue 12: the doublings of a 12 MB buffer lifted the peak RSS of a warm
// start whose revalidation found a change), and that the hint changes no
// byte of the file.
func TestPersistedEncodeSizeHint(t *testing.T) {
	src := events.Source{ID: "0", Kind: events.SourceLocal, Location: "/l", Root: "/l", Prefix: "l"}
	desc := strings.Repeat("d", 600)
	scan := persistedScan{}
	for i := range 4000 {
		name := fmt.Sprintf("s%05d", i)
		scan.Skills = append(scan.Skills, persistedSkill{
			Scanned: events.ScannedSkill{Dir: "/l/" + name, RelDir: name,
				Files: []events.File{{Path: "SKILL.md", Digest: "sha256:00", Size: 3, MIME: "text/markdown", Text: true}}},
			OK: true, QualifiedName: "l__" + name, Name: name, Description: desc, SkillPath: "l/" + name, URI: "skill://l/" + name + "/SKILL.md", Listed: true})
	}
	p := &persisted{Sources: []events.Source{src}, Scans: []persistedScan{scan}}
	first, err := encodePersisted(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < 2<<20 {
		t.Fatalf("the catalog encodes to %d bytes; the test needs more than 2 MiB", len(first))
	}
	hinted, err := encodePersisted(p, len(first))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, hinted) {
		t.Fatal("the size hint changed the encoded bytes")
	}
	if want := len(first) + len(first)/8 + sha256.Size; cap(hinted) != want {
		t.Errorf("encoded with the hint %d: buffer capacity %d, want %d (it grew)", len(first), cap(hinted), want)
	}
	without := testing.AllocsPerRun(3, func() { _, _ = encodePersisted(p, 0) })
	with := testing.AllocsPerRun(3, func() { _, _ = encodePersisted(p, len(first)) })
	if with+2 > without {
		t.Errorf("allocations per encoding: %v with the hint, %v without; want at least the 2 doublings fewer", with, without)
	}
}

// TestPersistLaterCoalesces (issue 12: edit latency): each newer catalog
// pushes the pending write back by the delay it is given, so that a burst
// of edits is written once after it, but never past persistMaxDelay after
// the first catalog not written. Nothing here waits for a timer: the
// writes are seconds away, and stop drops them.
func TestPersistLaterCoalesces(t *testing.T) {
	st := &store{dir: t.TempDir(), log: discardLogger()}
	written := 0
	mk := func() *persisted { written++; return nil }
	short, long := persistMaxDelay/3, persistMaxDelay*2/3
	start := time.Now()
	st.later(mk, short)
	first := st.due
	st.later(mk, long)
	if !st.due.After(first) {
		t.Errorf("a newer catalog does not push the write back: due %v, first %v", st.due, first)
	}
	st.later(mk, 2*persistMaxDelay)
	if limit := start.Add(persistMaxDelay); st.due.After(time.Now().Add(persistMaxDelay)) || st.due.Before(limit) {
		t.Errorf("write due %v, want the bound %v", st.due, limit)
	}
	st.mu.Lock()
	st.since = start.Add(-persistMaxDelay)
	st.mu.Unlock()
	st.later(mk, short)
	if st.due.After(time.Now()) {
		t.Errorf("a burst longer than persistMaxDelay is not written at once: due %v", st.due)
	}
	st.stop()
	if written > 1 {
		t.Errorf("%d writes, want at most one", written)
	}
}
