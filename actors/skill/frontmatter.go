package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// utf8BOM is the byte-order mark some Windows editors write at the start of
// a file. One leading BOM is ignored for parsing (BR-02).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Reasons a SKILL.md has no usable frontmatter. The catalog builder skips
// such a skill and names the reason (BR-07, ASF-R23); ErrNoFrontmatter
// inside a served skill is only a note (issue 13 item 7).
var (
	ErrNoFrontmatter  = errors.New("no YAML frontmatter: the file does not begin with ---")
	errNotClosed      = errors.New("YAML frontmatter is not closed with a --- line")
	errNotMapping     = errors.New("YAML frontmatter is not a mapping")
	errEmptyFallbacks = errors.New("invalid YAML in frontmatter and no top-level key: value line")
)

// Frontmatter is the parsed YAML header of a SKILL.md.
type Frontmatter struct {
	// root is the mapping node; in a line-based reading it holds only
	// !!str scalars.
	root *yaml.Node
	// JSON is the mapping rendered verbatim as a JSON object (SEP2640-R28).
	JSON json.RawMessage
	// Fallback is non-empty when strict parsing failed and the line-based
	// reading was used (BR-01); it holds the parser's message.
	Fallback string
	// DupKeys are the top-level keys given more than once, in file order.
	// The mapping and JSON keep only the last occurrence of each (ASF-R27).
	DupKeys []string
}

// ParseFrontmatter reads the frontmatter of a SKILL.md's raw bytes. One
// leading UTF-8 BOM is skipped (BR-02); the opening line is `---` with
// optional trailing blanks (CRLF tolerated, ASF-R03) and the header ends at
// the first later line that is `---` plus optional white space. The YAML is
// decoded strictly into a node (types kept: `name: 123` is an int); when that
// fails, top-level `key: value` lines are read as strings instead (BR-01)
// and Fallback reports why. A top-level key given more than once keeps only
// its last occurrence, in the mapping and JSON alike, and is listed in DupKeys.
// It returns an error naming the reason when there
// is no frontmatter, it is not closed, or it is not a mapping. It does no
// I/O and does not modify b.
func ParseFrontmatter(b []byte) (*Frontmatter, error) {
	b = bytes.TrimPrefix(b, utf8BOM)
	// Only the header is read: the body (kilobytes per skill, 10,000
	// skills at a first start) is never copied.
	text := string(frontmatterRegion(b))
	first, rest, ok := cutLine(text)
	if strings.TrimRight(first, " \t\r") != "---" {
		return nil, ErrNoFrontmatter
	}
	if !ok {
		return nil, errNotClosed
	}
	var header []string
	closed := false
	for rest != "" {
		var line string
		line, rest, _ = cutLine(rest)
		if strings.TrimRight(line, " \t\r\f\v") == "---" {
			closed = true
			break
		}
		header = append(header, strings.TrimSuffix(line, "\r"))
	}
	if !closed {
		return nil, errNotClosed
	}
	if root, ok := simpleMapping(header); ok {
		// What the YAML parser gives of this header, without it: most
		// frontmatter is a few `key: text` lines, and parsing 10,000 of
		// them is on the way to a first start's initialize (issue 12).
		return mappingFrontmatter(root)
	}
	return parseHeader(header)
}

// mappingFrontmatter is the Frontmatter of the mapping node root.
func mappingFrontmatter(root *yaml.Node) (*Frontmatter, error) {
	root, dups := lastOccurrences(root)
	js, err := renderJSON(root)
	if err != nil {
		return nil, fmt.Errorf("rendering frontmatter as JSON: %w", err)
	}
	return &Frontmatter{root: root, JSON: js, DupKeys: dups}, nil
}

// parseHeader is [ParseFrontmatter] of the header lines, through the YAML
// parser (or the line-based reading when it fails).
func parseHeader(header []string) (*Frontmatter, error) {
	src := strings.Join(header, "\n") + "\n"

	var doc yaml.Node
	err := yaml.Unmarshal([]byte(src), &doc)
	if err != nil {
		// The parser counts from the first header line, which is the
		// file's second (issue 13 item 10).
		err = fileLines(err, 1)
	}
	if err == nil {
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			return nil, errNotMapping
		}
		root := resolveAlias(doc.Content[0])
		if root.Kind != yaml.MappingNode {
			return nil, errNotMapping
		}
		return mappingFrontmatter(root)
	}
	root, dups := lastOccurrences(lineMapping(header))
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%w: %v", errEmptyFallbacks, err)
	}
	js, jerr := renderJSON(root)
	if jerr != nil {
		return nil, fmt.Errorf("rendering frontmatter as JSON: %w", jerr)
	}
	return &Frontmatter{root: root, JSON: js, Fallback: err.Error(), DupKeys: dups}, nil
}

// frontmatterRegion returns the prefix of b that [ParseFrontmatter] reads:
// through the line that closes the header (the first `---` line after the
// opening one), or through the first line when it does not open one; all of
// b when the header is not closed. Lines are split as ParseFrontmatter
// splits them.
func frontmatterRegion(b []byte) []byte {
	opening := true
	for off := 0; off < len(b); {
		line, next := b[off:], len(b)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], off+i+1
		}
		if opening {
			if string(bytes.TrimRight(line, " \t\r")) != "---" {
				return b[:next]
			}
			opening = false
		} else if string(bytes.TrimRight(line, " \t\r\f\v")) == "---" {
			return b[:next]
		}
		off = next
	}
	return b
}

// simpleMapping reads header lines that use only the plainest YAML — top-level
// `key: text` lines, `key:` lines followed by `  key: text` lines (a
// mapping of texts, each line indented by the same spaces), blank lines and comment
// lines, where every text is a plain scalar that YAML reads as a string
// ([plainText]) — into the mapping node the YAML parser makes of them:
// string scalars in order, duplicates kept. ok is false for anything else,
// which is left to the parser (TestSimpleMappingMatchesYAML).
func simpleMapping(header []string) (root *yaml.Node, ok bool) {
	root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var nested *yaml.Node // the mapping the indented lines go to
	indent := 0           // of its lines, set by the first
	for _, line := range header {
		switch {
		case line == "" || line[0] == '#':
			continue
		case line[0] == ' ':
			n := len(line) - len(strings.TrimLeft(line, " "))
			if indent == 0 {
				indent = n
			}
			k, v, ok := keyText(line[n:])
			if nested == nil || n != indent || !ok || v == "" {
				return nil, false
			}
			for i := 0; i < len(nested.Content); i += 2 {
				if nested.Content[i].Value == k {
					return nil, false // left to the parser
				}
			}
			nested.Content = append(nested.Content, strNode(k), strNode(v))
			continue
		}
		if nested != nil && len(nested.Content) == 0 {
			return nil, false // `key:` with nothing below: null
		}
		nested, indent = nil, 0
		k, v, ok := keyText(line)
		if !ok {
			return nil, false
		}
		if v == "" {
			nested = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			root.Content = append(root.Content, strNode(k), nested)
			continue
		}
		root.Content = append(root.Content, strNode(k), strNode(v))
	}
	if len(root.Content) == 0 || nested != nil && len(nested.Content) == 0 {
		return nil, false
	}
	return root, true
}

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// keyText splits a `key: text` line (or `key:`, text "") whose key is
// letters, digits, - and _ (a letter first) and whose text is [plainText];
// ok is false for any other line.
func keyText(line string) (key, text string, ok bool) {
	i := strings.IndexByte(line, ':')
	if i <= 0 {
		return "", "", false
	}
	key = line[:i]
	for j := 0; j < len(key); j++ {
		c := key[j]
		if !(isLetter(c) || j > 0 && (c >= '0' && c <= '9' || c == '-' || c == '_')) {
			return "", "", false
		}
	}
	rest := line[i+1:]
	if rest == "" {
		return key, "", true
	}
	if rest[0] != ' ' || !plainText(rest[1:]) {
		return "", "", false
	}
	return key, rest[1:], true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// plainText reports whether YAML reads s, a plain scalar in block context
// on one line, as the string s itself: it starts with a letter (no
// indicator, number, date or special float), is not one of the words YAML
// reads as a boolean or null, and holds no character that ends or changes
// a plain scalar (": ", " #", a trailing ':' or white space, tabs, control
// characters, flow brackets) nor a Unicode line break or byte-order mark.
// Conservative: a string it refuses is only left to the parser.
func plainText(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return false
	}
	last := s[len(s)-1]
	if last == ' ' || last == ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c == 0x7f || c == '[' || c == ']' || c == '{' || c == '}':
			return false
		case c == ':' && s[i+1] == ' ', c == '#' && s[i-1] == ' ':
			return false
		case c >= 0x80:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r >= 0x80 && r < 0xA0 {
				return false
			}
			i += n - 1
		}
	}
	return true
}

// yamlLine matches the line numbers in a YAML parser message.
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// fileLines returns err with every "line N" of its message moved down by
// offset lines, so that it names a line of the file rather than of the
// frontmatter text the parser was given.
func fileLines(err error, offset int) error {
	msg := yamlLine.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, convErr := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if convErr != nil {
			return m
		}
		return "line " + strconv.Itoa(n+offset)
	})
	return errors.New(msg)
}

// lastOccurrences returns m without the earlier occurrences of a key given
// more than once, and those keys in file order. yaml.v3 accepts duplicate
// keys in a node; a JSON client of the rendered frontmatter sees the last
// value, so every field is read from that same view. Keys are compared as
// rendered (their scalar text). m itself is not modified.
func lastOccurrences(m *yaml.Node) (*yaml.Node, []string) {
	last := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		last[resolveAlias(m.Content[i]).Value] = i
	}
	if 2*len(last) == len(m.Content)-len(m.Content)%2 {
		return m, nil
	}
	out := *m
	out.Content = make([]*yaml.Node, 0, 2*len(last))
	var dups []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := resolveAlias(m.Content[i]).Value
		if last[k] != i {
			if !slices.Contains(dups, k) {
				dups = append(dups, k)
			}
			continue
		}
		out.Content = append(out.Content, m.Content[i], m.Content[i+1])
	}
	return &out, dups
}

// cutLine splits s at its first '\n'. ok reports whether there was one.
func cutLine(s string) (line, rest string, ok bool) {
	line, rest, ok = strings.Cut(s, "\n")
	return line, rest, ok
}

// lineMapping reads top-level `key: value` lines the way Claude Code does
// when YAML fails: key is the text before the first ": ", value everything
// after it, trimmed, as a string (BR-01). Indented lines, comments and lines
// without ": " are ignored; duplicate keys are kept for [lastOccurrences].
func lineMapping(lines []string) *yaml.Node {
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, line := range lines {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' {
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		v = unquote(strings.TrimSpace(v))
		val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, val)
	}
	return root
}

// unquote drops one pair of matching surrounding quotes; escapes are kept.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// get returns the value node of the top-level key, aliases resolved, or nil.
func (f *Frontmatter) get(key string) *yaml.Node {
	for i := 0; i+1 < len(f.root.Content); i += 2 {
		if k := resolveAlias(f.root.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return resolveAlias(f.root.Content[i+1])
		}
	}
	return nil
}

// Str returns the value of key when it is a YAML string. present reports
// whether the key exists at all.
func (f *Frontmatter) Str(key string) (s string, isString, present bool) {
	n := f.get(key)
	if n == nil {
		return "", false, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value, true, true
	}
	return "", false, true
}

// Boolean returns the value of key when it is a YAML boolean.
func (f *Frontmatter) Boolean(key string) (v, ok bool) {
	n := f.get(key)
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return false, false
	}
	if err := n.Decode(&v); err != nil {
		return false, false
	}
	return v, true
}

// NonStringMetadata returns the keys under `metadata` whose values are not
// strings (ASF-R14), in file order.
func (f *Frontmatter) NonStringMetadata() []string {
	n := f.get("metadata")
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var bad []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := resolveAlias(n.Content[i+1])
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
			bad = append(bad, resolveAlias(n.Content[i]).Value)
		}
	}
	return bad
}

// KindOf describes the type of key's value for a warning ("int \"123\"",
// "a list"); "" when key is absent.
func (f *Frontmatter) KindOf(key string) string {
	n := f.get(key)
	if n == nil {
		return ""
	}
	return kindName(n)
}

// kindName describes a node's type for a warning ("int 123", "sequence").
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.ShortTag(), "!!"), n.Value)
	}
	return "not a string"
}

// renderJSON renders a YAML node as JSON, keeping mapping key order:
// strings stay strings, ints and floats become numbers, booleans and null
// their JSON kind, any other scalar (timestamps, custom tags) its text;
// sequences become arrays and mappings objects; aliases are resolved.
func renderJSON(n *yaml.Node) (json.RawMessage, error) {
	var buf bytes.Buffer
	budget := maxJSONNodes
	if err := writeJSON(&buf, n, 0, &budget); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// maxJSONDepth bounds recursion over hostile, deeply nested frontmatter.
const maxJSONDepth = 100

// maxJSONNodes bounds the rendered size when aliases multiply nodes (a
// "billion laughs" header); real frontmatter has a few dozen.
const maxJSONNodes = 100_000

func writeJSON(buf *bytes.Buffer, n *yaml.Node, depth int, budget *int) error {
	if depth > maxJSONDepth {
		return errors.New("frontmatter nested too deeply")
	}
	if *budget--; *budget < 0 {
		return errors.New("frontmatter too large once its aliases are expanded")
	}
	n = resolveAlias(n)
	if n == nil {
		buf.WriteString("null")
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return writeJSON(buf, n.Content[0], depth+1, budget)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, resolveAlias(n.Content[i]).Value)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1], depth+1, budget); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c, depth+1, budget); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		writeScalar(buf, n)
	default:
		buf.WriteString("null")
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
		return
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			buf.WriteString(strconv.FormatBool(b))
			return
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			buf.WriteString(strconv.FormatInt(i, 10))
			return
		}
		var u uint64
		if n.Decode(&u) == nil {
			buf.WriteString(strconv.FormatUint(u, 10))
			return
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			return
		}
	}
	writeString(buf, n.Value)
}

func writeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode appends '\n'
}
