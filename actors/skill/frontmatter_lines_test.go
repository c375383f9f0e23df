package skill

import (
	"strings"
	"testing"
)

// TestFrontmatterErrorFileLines is issue 13 item 10: a YAML error names the
// line of the file, not of the frontmatter (which starts on line 2), with
// or without a BOM and CRLF line endings.
func TestFrontmatterErrorFileLines(t *testing.T) {
	for name, md := range map[string]string{
		"lf":   "---\nname: x\ndescription: a: b\n---\nbody\n",
		"crlf": "\xEF\xBB\xBF---\r\nname: x\r\ndescription: a: b\r\n---\r\n",
	} {
		fm, err := ParseFrontmatter([]byte(md))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(fm.Fallback, "line 3:") {
			t.Errorf("%s: Fallback = %q, want the file line 3", name, fm.Fallback)
		}
	}
	_, err := ParseFrontmatter([]byte("---\n# a comment\n\n  - [\n---\n"))
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("error = %v, want one naming file line 4", err)
	}
}

// TestFrontmatterRegion: ParseFrontmatter reads only the header of a
// SKILL.md (issue 12: the body is never copied), and the prefix it reads
// ends exactly where its line rules end the header.
func TestFrontmatterRegion(t *testing.T) {
	for _, c := range []struct{ md, region string }{
		{"---\nname: x\n---\nbody\n", "---\nname: x\n---\n"},
		{"--- \r\nname: x\r\n--- \f\r\nbody", "--- \r\nname: x\r\n--- \f\r\n"},
		{"---\nname: x\n---", "---\nname: x\n---"},
		{"---\nname: x\n", "---\nname: x\n"},
		{"---", "---"},
		{"# title\n---\nname: x\n---\n", "# title\n"},
		{"", ""},
		{"---\n----\n---\nx\n", "---\n----\n---\n"},
	} {
		if got := string(frontmatterRegion([]byte(c.md))); got != c.region {
			t.Errorf("frontmatterRegion(%q) = %q, want %q", c.md, got, c.region)
		}
		whole, errWhole := ParseFrontmatter([]byte(c.md))
		part, errPart := ParseFrontmatter([]byte(c.region))
		if (errWhole == nil) != (errPart == nil) || errWhole != nil && errWhole.Error() != errPart.Error() {
			t.Errorf("%q: errors %v and %v", c.md, errWhole, errPart)
		} else if errWhole == nil && string(whole.JSON) != string(part.JSON) {
			t.Errorf("%q: %s and %s", c.md, whole.JSON, part.JSON)
		}
	}
}
