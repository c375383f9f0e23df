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
