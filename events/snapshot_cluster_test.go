package events_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestCatalogSnapshotRoundTrip: a catalog written as a content-addressed
// snapshot reads back equal under a new version, and a second catalog that
// changed one skill of 300 writes only a few new blobs (issue 16).
func TestCatalogSnapshotRoundTrip(t *testing.T) {
	skills := func(changed string) []*events.Skill {
		var out []*events.Skill
		for i := range 300 {
			name := fmt.Sprintf("s%03d", i)
			desc := "Does " + name
			if name == "s150" {
				desc += changed
			}
			out = append(out, &events.Skill{QualifiedName: "x__" + name, Name: name, Description: desc, SkillPath: "x/" + name,
				URI: "skill://x/" + name + "/SKILL.md", Frontmatter: []byte(`{"name":"` + name + `"}`), Files: []events.File{{Path: "SKILL.md", Digest: "sha256:00", Size: 3}}})
		}
		return out
	}
	store := map[string][]byte{}
	put := func(d string, data []byte) error {
		sum := sha256.Sum256(data)
		if want := "sha256:" + hex.EncodeToString(sum[:]); want != d {
			t.Fatalf("blob named %s has digest %s", d, want)
		}
		store[d] = data
		return nil
	}
	has := func(d string) bool { _, ok := store[d]; return ok }
	c1 := events.NewCatalog(7, false, skills(""), []events.Diagnostic{{Level: events.LevelWarn, Message: "m"}})
	snap, err := events.WriteCatalogSnapshot(c1, has, put)
	if err != nil {
		t.Fatal(err)
	}
	first := len(store)
	got, err := events.ReadCatalogSnapshot(snap, 42, func(d string) ([]byte, error) {
		if b, ok := store[d]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("no blob %s", d)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 42 || got.SkillByName("x__s007") == nil {
		t.Errorf("version %d, lookup of x__s007 failed", got.Version)
	}
	if diff := cmp.Diff(c1.Skills, got.Skills, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
	c2 := events.NewCatalog(8, false, skills(" and more"), c1.Diagnostics)
	if _, err := events.WriteCatalogSnapshot(c2, has, put); err != nil {
		t.Fatal(err)
	}
	if added := len(store) - first; added < 2 || added > 3 {
		t.Errorf("one changed skill added %d blobs, want the skill and its chunk", added)
	}
}
