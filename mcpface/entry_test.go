package mcpface_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// TestAppendEntryMatchesEncoder checks the direct encoding of skills/list and
// skills/get entries against encoding/json's (issue 12): byte for byte,
// for every skill of the real corpora and for skills whose URIs, paths,
// digests and frontmatter hold what JSON or a URI must escape.
func TestAppendEntryMatchesEncoder(t *testing.T) {
	var skills []*events.Skill
	for _, root := range fastCorpora {
		if _, err := os.Stat(root); err != nil {
			t.Logf("corpus %s not present: %v", root, err)
			continue
		}
		skills = append(skills, corpusCatalog(t, root).Skills...)
	}
	odd := []string{"plain", `quo"te`, `back\slash`, "tab\there", "nl\nx", "ctl\x01\x1f", "del\x7f",
		"<html>&amp;", "ünïcödé", "bad\xff\xfeutf8", "cut\xe2\x82", "line\u2028sep\u2029", "sp ace/%41", "emoji😀"}
	for i, s := range odd {
		fm := map[string]any{"name": s, "description": "d " + s, "n": i, "nested": map[string]any{"k": []any{s, 1.5, true, nil}}}
		raw, err := json.MarshalIndent(fm, "", "  ") // not compact: the entry compacts it
		if err != nil {
			t.Fatal(err)
		}
		root := "skill://src/" + s
		if i%2 == 0 {
			root = "skill://src/" + events.EncodePath(s)
		}
		sk := events.Skill{URI: root + "/SKILL.md", Frontmatter: raw, Files: []events.File{
			{Path: "SKILL.md", Digest: "sha256:" + s, Size: int64(i)},
			{Path: "dir " + s + "/file " + s + ".md", Digest: "sha256:00", Size: 1 << 40},
		}}
		skills = append(skills, &sk)
	}
	skills = append(skills, &events.Skill{URI: "skill://src/empty/SKILL.md"}) // no frontmatter, no files
	for i := range skills {
		sk := skills[i]
		want, err := mcpface.EncoderEntry(sk)
		if err != nil {
			t.Fatalf("%s: encoding/json: %v", sk.URI, err)
		}
		got, err := mcpface.AppendEntry([]byte("prefix"), sk)
		if err != nil {
			t.Fatalf("%s: AppendEntry: %v", sk.URI, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%s:\n got %s\nwant prefix%s", sk.URI, got, want)
		}
	}
	t.Logf("%d skills checked", len(skills))
	if _, err := mcpface.AppendEntry(nil, &events.Skill{URI: "skill://x/SKILL.md", Frontmatter: json.RawMessage("{")}); err == nil {
		t.Error("AppendEntry of a frontmatter that is not JSON: no error")
	}
}
