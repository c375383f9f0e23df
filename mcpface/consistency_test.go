package mcpface_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// versions records every catalog a test published and which version each
// digest belongs to (each version's bytes are unique).
type versions struct {
	mu     sync.Mutex
	cats   map[uint64]*events.Catalog
	digest map[string]uint64
}

func (v *versions) add(c *events.Catalog) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cats[c.Version] = c
	for i := range c.Skills {
		for _, f := range c.Skills[i].Files {
			v.digest[f.Digest] = c.Version
		}
	}
}

func (v *versions) catalog(n uint64) *events.Catalog {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.cats[n]
}

func (v *versions) of(digest string) (uint64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	n, ok := v.digest[digest]
	return n, ok
}

// versioned returns the bytes of file rel at version n; the first line
// names the version.
func versioned(n uint64, rel string) []byte {
	head := fmt.Sprintf("version %d\n", n)
	if rel == "SKILL.md" {
		return []byte("---\nname: x\ndescription: Version " + fmt.Sprint(n) + ".\n---\n" + head)
	}
	return []byte(head + strings.Repeat(rel+"\n", int(n%7)+1))
}

// swapFixture writes three skills of two files each on disk and returns
// them, the versions record and next, which rewrites every file for version
// n and returns (and records) the catalog of that version.
func swapFixture(t *testing.T) ([]*events.Skill, *versions, func(n uint64) *events.Catalog) {
	t.Helper()
	root := t.TempDir()
	var skills []*events.Skill
	for _, name := range []string{"alpha", "beta", "gamma"} {
		skills = append(skills, writeSkill(t, root, skillSpec{dir: name, name: name, desc: "d",
			files: map[string][]byte{"a.md": []byte("a"), "b/c.txt": []byte("c")}}))
	}
	vs := &versions{cats: map[uint64]*events.Catalog{}, digest: map[string]uint64{}}
	next := func(n uint64) *events.Catalog {
		for i := range skills {
			for _, f := range skills[i].Files {
				skills[i] = rewrite(t, skills[i], f.Path, versioned(n, f.Path))
			}
		}
		c := events.NewCatalog(n, false, cloneSkills(skills), nil)
		vs.add(c)
		return c
	}
	return skills, vs, next
}

// TestConsistentUnderSwaps swaps catalogs (each file rewritten on disk just
// before its catalog is set) while clients of both eras read resources and
// page through skills/list. Every successful read returns bytes whose
// digest is the one the catalog of the version written in those bytes
// advertises; the only acceptable failure is -32603 "changed on disk", for a
// read whose snapshot was taken before the file was rewritten for the next
// catalog (the facade serves only bytes that hash to its snapshot's digest,
// so it refuses rather than serve bytes of another version). No skills/list
// page mixes versions.
func TestConsistentUnderSwaps(t *testing.T) {
	skills, vs, next := swapFixture(t)
	f := newFacade(t, next(1), &mcpface.Options{PageSize: 2})
	var uris []string
	for _, sk := range skills {
		for _, file := range sk.Files {
			uris = append(uris, sk.FileURI(file.Path))
		}
	}

	sessions := []*mcp.ClientSession{connect(t, f, legacy, nil), connect(t, f, modern, nil)}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var okReads, changed sync.Map // counters by session
	count := func(m *sync.Map, k int) {
		v, _ := m.LoadOrStore(k, new(int))
		*(v.(*int))++
	}
	for k, cs := range sessions {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				uri := uris[i%len(uris)]
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				switch {
				case err == nil:
					checkRead(t, vs, uri, res)
					count(&okReads, k)
				case wireCode(err) == -32603 && strings.Contains(err.Error(), "changed on disk"):
					count(&changed, k)
				default:
					t.Errorf("ReadResource(%s): %v", uri, err)
					return
				}
				if i%3 == 0 {
					checkPages(t, cs, vs)
				}
			}
		})
	}
	const last = 40
	for n := uint64(2); n <= last; n++ {
		if !f.SetCatalog(next(n)) {
			t.Fatalf("SetCatalog(%d) = false", n)
		}
	}
	close(done)
	wg.Wait()
	// Quiet now: every read succeeds, with the last version.
	for _, cs := range sessions {
		for _, uri := range uris {
			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("ReadResource(%s) after the swaps: %v", uri, err)
			}
			if n := checkRead(t, vs, uri, res); n != last {
				t.Errorf("ReadResource(%s) after the swaps: version %d, want %d", uri, n, last)
			}
		}
	}
	okReads.Range(func(k, v any) bool {
		t.Logf("session %d: %d reads served during swaps", k, *(v.(*int)))
		return true
	})
	changed.Range(func(k, v any) bool {
		t.Logf("session %d: %d reads refused as changed on disk", k, *(v.(*int)))
		return true
	})
}

func cloneSkills(skills []*events.Skill) []*events.Skill {
	out := make([]*events.Skill, len(skills))
	for i, s := range skills {
		c := *s
		c.Files = append([]events.File(nil), s.Files...)
		out[i] = &c
	}
	return out
}

// checkRead checks that the bytes of a read hash to the digest that the
// catalog of their own version advertises for uri, and returns that version.
func checkRead(t *testing.T, vs *versions, uri string, res *mcp.ReadResourceResult) uint64 {
	t.Helper()
	c := res.Contents[0]
	b := c.Blob
	if c.Text != "" {
		b = []byte(c.Text)
	}
	var n uint64
	line := b[bytes.Index(b, []byte("version ")):]
	if _, err := fmt.Sscanf(string(line), "version %d", &n); err != nil {
		t.Errorf("read %s: no version in %q", uri, b)
		return 0
	}
	cat := vs.catalog(n)
	if cat == nil {
		t.Errorf("read %s: bytes of version %d, which was never published", uri, n)
		return n
	}
	ref, ok := cat.File(uri)
	if !ok || ref.File.Digest != digest(b) {
		t.Errorf("read %s: bytes of version %d hash to %s, catalog %d advertises %+v", uri, n, digest(b), n, ref.File)
	}
	return n
}

// checkPages pages through skills/list and checks that each page's digests
// all belong to one catalog version.
func checkPages(t *testing.T, cs *mcp.ClientSession, vs *versions) {
	t.Helper()
	cursor := ""
	for {
		m, err := call(t, cs, "skills/list", &rawParams{Cursor: cursor})
		if err != nil {
			t.Errorf("skills/list: %v", err)
			return
		}
		var page struct {
			Skills []struct {
				Resources []struct {
					URI    string `json:"uri"`
					Digest string `json:"digest"`
				} `json:"resources"`
			} `json:"skills"`
			NextCursor string `json:"nextCursor"`
		}
		b, _ := json.Marshal(m)
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		seen := map[uint64]bool{}
		for _, s := range page.Skills {
			for _, r := range s.Resources {
				n, ok := vs.of(r.Digest)
				if !ok {
					t.Errorf("skills/list: %s has digest %s of no published catalog", r.URI, r.Digest)
				}
				seen[n] = true
			}
		}
		if len(seen) > 1 {
			t.Errorf("skills/list page mixes versions %v", seen)
		}
		if page.NextCursor == "" {
			return
		}
		cursor = page.NextCursor
	}
}
