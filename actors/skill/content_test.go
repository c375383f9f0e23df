package skill_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/actors/skill"
)

// TestDescribe pins the MIME types and text flags the hasher records
// (issue 11 item 6): the extension decides, else the first 8192 bytes are
// sniffed (UTF-8 → text/plain) exactly as the facade did on disk before,
// and the text flag needs a text type and valid UTF-8 throughout.
func TestDescribe(t *testing.T) {
	euro := "\u20ac" // three bytes
	cutAt := strings.Repeat("a", skill.SniffSize-1) + euro
	tests := []struct {
		name, path string
		data       []byte
		mime       string
		text       bool
	}{
		{"markdown", "SKILL.md", []byte("# hi\n"), "text/markdown", true},
		{"lower-case skill.md", "inner/skill.md", []byte("# hi\n"), "text/markdown", true},
		{"extension case", "A.JSON", []byte("{}"), "application/json", true},
		{"image", "assets/logo.png", []byte{0x89, 'P', 'N', 'G'}, "image/png", false},
		{"svg is text", "a.svg", []byte("<svg/>"), "image/svg+xml", true},
		{"text type, bytes not UTF-8", "notes.txt", []byte{'a', 0xff}, "text/plain", false},
		{"unknown, UTF-8", "notes.unknownext", []byte("plain words\n"), "text/plain", true},
		{"unknown, not UTF-8", "blob.weird", []byte{0xff, 0xfe, 0xfd}, "application/octet-stream", false},
		{"unknown, empty", "empty", nil, "text/plain", true},
		{"no extension, binary", "Makefile", []byte{0, 0xc3}, "application/octet-stream", false},
		{"unknown, rune cut at the sniff size", "long", []byte(cutAt), "text/plain", true},
		{"unknown, bad byte after the sniff size", "long2", []byte(strings.Repeat("a", skill.SniffSize) + "\xff"), "text/plain", false},
		{"unknown, short file ending in a cut rune", "short", []byte("ab" + euro[:2]), "application/octet-stream", false},
		{"unknown, file of exactly the sniff size ending in a cut rune", "exact", []byte(cutAt[:skill.SniffSize]), "text/plain", false},
		{"bin", "x.bin", []byte("text"), "application/octet-stream", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mime, text := skill.Describe(tc.path, tc.data)
			if mime != tc.mime || text != tc.text {
				t.Errorf("Describe(%q) = %q, %v; want %q, %v", tc.path, mime, text, tc.mime, tc.text)
			}
			// Written in pieces of every size, the answer is the same.
			for _, step := range []int{1, 2, 3, 5, 4096, skill.SniffSize + 1} {
				c := skill.NewContent(tc.path)
				for b := tc.data; len(b) > 0; b = b[min(step, len(b)):] {
					c.Write(b[:min(step, len(b))])
				}
				if c.MIME() != tc.mime || c.Text() != tc.text {
					t.Errorf("Content(%q) in pieces of %d = %q, %v; want %q, %v", tc.path, step, c.MIME(), c.Text(), tc.mime, tc.text)
				}
			}
		})
	}
}

// TestContentUTF8Pieces checks the text flag of a text type against
// utf8.Valid for random bytes written in random pieces.
func TestContentUTF8Pieces(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := [][]byte{[]byte("a"), []byte("\u00e9"), []byte("\u20ac"), []byte("\U0001F600"), {0xff}, {0x80}, {0xe2, 0x82}, {0xf0}}
	for range 5000 {
		var b bytes.Buffer
		for range r.IntN(12) {
			b.Write(alphabet[r.IntN(len(alphabet))])
		}
		data := b.Bytes()
		c := skill.NewContent("f.txt")
		for rest := data; len(rest) > 0; {
			n := 1 + r.IntN(len(rest))
			c.Write(rest[:n])
			rest = rest[n:]
		}
		if got, want := c.Text(), utf8.Valid(data); got != want {
			t.Fatalf("Content(%x).Text() = %v, want %v", data, got, want)
		}
	}
}
