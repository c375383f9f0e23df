package skill

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSimpleMappingMatchesYAML: the frontmatter read without the YAML parser
// (issue 12, [simpleMapping]) is what the parser makes of it — the same
// JSON, fields, kinds and duplicate keys — on hand-picked headers and on
// random ones built from pieces YAML treats specially; and what it refuses
// is only left to the parser.
func TestSimpleMappingMatchesYAML(t *testing.T) {
	cases := [][]string{
		{"name: pdf", "description: Use this skill to read PDF files, forms and tables."},
		{"name: x", "description: a", "license: MIT", "metadata:", "  generator: gencorpus v1", "  version: one"},
		{"name: x", "", "# comment", "description: it's C# code, 100% (mostly) done!"},
		{"name: x", "name: y", "description: d"},
		{"name: x", "description: see https://example.com/a?b=c&d=e"},
		{"name: x", "allowed-tools: Read, Grep, Bash(git:*)"},
		{"name: x", "description: a*b & c|d >e %f @g `h` 'i' \"j\""},
		{"name: true", "description: yes"},
		{"name: x", "description: Null"},
		{"name: x", "metadata:", "  a: b", "", "  c: d"},
		{"name: x", "metadata:", "    skill-author: K-Dense Inc.", "    b: c"},
		{"name: x", "metadata:", "    a: b", "  c: d"},
		{"name: x", "metadata:", "  a: b", "    c: d"},
		{"name: x", "metadata:", "  a: b", "desc: x", "meta:", "    c: d"},
		{"name: x", "metadata:", "# c", "  a: b"},
		{"name: x", "description: naïve café — ünïcødé"},
		{"name: x", "description: a\u2028b"},
		{"name: x", "description: a\u0085b"},
		{"name: x", "description: a: b"},
		{"name: x", "description: a #b"},
		{"name: x", "description: a:b"},
		{"name: x", "description: ab:"},
		{"name: x", "metadata:"},
		{"name: x", "metadata:", "name: y"},
		{"name: x", "metadata:", "  a: b", "  a: c"},
		{"name: x", "description: one", "  two"},
		{"x_y-z: v", "Name: W"},
		{"name: x", "description: [a]"},
		{"name: x", "description: a [b]"},
		{"name: x", "description: a\tb"},
		{"name: x", "description:  two spaces"},
		{"name: x", "description: trailing "},
		{"", "# only comments"},
	}
	pieces := []string{"a", "Z", "b c", ",", ":", ": ", " #", "#", "'", "\"", "-", "?", "|", ">", "&", "*", "!", "%", "@", "`",
		"[", "]", "{", "}", "\t", " ", "true", "yes", "null", "~", "1", "0x1", "1.5", ".inf", "2024-01-01", "é", "\u2028", "\u00a0", "\u0085", "\ufeff", "~x", "<<"}
	rnd := rand.New(rand.NewPCG(1, 2))
	starts := []string{"a", "Z", "b c", "true", "yes", "null", "Null", "é", "n", "No"}
	text := func() string {
		var b strings.Builder
		b.WriteString(starts[rnd.IntN(len(starts))])
		for range rnd.IntN(3) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		return b.String()
	}
	keys := []string{"name", "description", "license", "metadata", "compatibility", "user-invocable", "x_1", "y", "1x", "a b"}
	for range 20000 {
		var h []string
		for range 1 + rnd.IntN(5) {
			k := keys[rnd.IntN(len(keys))]
			switch rnd.IntN(6) {
			case 0:
				h = append(h, k+":")
				indent := strings.Repeat(" ", 1+rnd.IntN(4))
				for range rnd.IntN(3) {
					if rnd.IntN(8) == 0 {
						indent += " "
					}
					h = append(h, indent+keys[rnd.IntN(len(keys))]+": "+text())
				}
			case 1:
				h = append(h, "")
			default:
				h = append(h, k+": "+text())
			}
		}
		cases = append(cases, h)
	}
	simple := 0
	for _, h := range cases {
		root, ok := simpleMapping(h)
		if !ok {
			continue
		}
		simple++
		got, err := mappingFrontmatter(root)
		if err != nil {
			t.Fatalf("%q: %v", h, err)
		}
		want, err := parseHeader(h)
		if err != nil {
			t.Errorf("%q: read without the parser, which refuses it: %v", h, err)
			continue
		}
		if want.Fallback != "" || string(got.JSON) != string(want.JSON) || !slices.Equal(got.DupKeys, want.DupKeys) {
			t.Errorf("%q:\n without the parser %s %q\n with it            %s %q (fallback %q)", h, got.JSON, got.DupKeys, want.JSON, want.DupKeys, want.Fallback)
			continue
		}
		for _, k := range keys {
			gs, gstr, gp := got.Str(k)
			ws, wstr, wp := want.Str(k)
			gb, gok := got.Boolean(k)
			wb, wok := want.Boolean(k)
			if gs != ws || gstr != wstr || gp != wp || gb != wb || gok != wok || got.KindOf(k) != want.KindOf(k) {
				t.Errorf("%q: field %q differs", h, k)
			}
		}
		if !slices.Equal(got.NonStringMetadata(), want.NonStringMetadata()) {
			t.Errorf("%q: NonStringMetadata %q, want %q", h, got.NonStringMetadata(), want.NonStringMetadata())
		}
	}
	t.Logf("%d of %d headers read without the parser", simple, len(cases))
	if simple < 2000 {
		t.Errorf("only %d of %d headers read without the parser: the test no longer covers it", simple, len(cases))
	}
}
