package skill

import (
	"path"
	"strings"
	"unicode/utf8"
)

// SniffSize is how many leading bytes of a file whose extension does not
// tell its type decide text/plain against application/octet-stream, as in
// the reference.
const SniffSize = 8192

// mimeTypes maps a lower-case extension to its MIME type.
var mimeTypes = map[string]string{
	"md":       "text/markdown",
	"markdown": "text/markdown",
	"txt":      "text/plain",
	"py":       "text/x-python",
	"js":       "text/javascript",
	"mjs":      "text/javascript",
	"cjs":      "text/javascript",
	"ts":       "text/typescript",
	"json":     "application/json",
	"yaml":     "text/yaml",
	"yml":      "text/yaml",
	"html":     "text/html",
	"htm":      "text/html",
	"css":      "text/css",
	"csv":      "text/csv",
	"xml":      "application/xml",
	"sh":       "text/x-shellscript",
	"png":      "image/png",
	"jpg":      "image/jpeg",
	"jpeg":     "image/jpeg",
	"gif":      "image/gif",
	"webp":     "image/webp",
	"svg":      "image/svg+xml",
	"pdf":      "application/pdf",
	"ttf":      "font/ttf",
	"otf":      "font/otf",
	"woff":     "font/woff",
	"woff2":    "font/woff2",
	"zip":      "application/zip",
	"gz":       "application/gzip",
	"tgz":      "application/gzip",
	"bin":      "application/octet-stream",
}

// MIMEByExt returns the MIME type that the extension of the slash path name
// gives (case-insensitive), or "" when the extension does not tell.
func MIMEByExt(name string) string {
	return mimeTypes[strings.TrimPrefix(strings.ToLower(path.Ext(name)), ".")]
}

// IsTextMIME reports whether content of type m is served as text when its
// bytes are valid UTF-8.
func IsTextMIME(m string) bool {
	if strings.HasPrefix(m, "text/") {
		return true
	}
	switch m {
	case "application/json", "application/xml", "image/svg+xml", "application/javascript", "application/yaml":
		return true
	}
	return false
}

// Content learns, from the bytes of one file written to it in order, what
// a reader of the file needs besides them: its MIME type ([Content.MIME])
// and whether it is served as text ([Content.Text]). The hasher writes
// every file it hashes through one, so both describe exactly the bytes its
// digest does and nobody reads the file again to decide them. The zero
// value is not usable; see [NewContent].
type Content struct {
	byExt string // the type the extension gives, or ""
	head  []byte // the first SniffSize bytes, kept when byExt is ""
	check bool   // whether UTF-8 validity matters (a text type is possible)
	valid utf8Stream
}

// NewContent returns a Content for the file at the slash path name, whose
// extension is the first thing that decides its type.
func NewContent(name string) *Content {
	m := MIMEByExt(name)
	return &Content{byExt: m, check: m == "" || IsTextMIME(m)}
}

// Write takes the next bytes of the file; it never fails.
func (c *Content) Write(p []byte) (int, error) {
	if c.byExt == "" && len(c.head) < SniffSize {
		c.head = append(c.head, p[:min(len(p), SniffSize-len(c.head))]...)
	}
	if c.check {
		c.valid.write(p)
	}
	return len(p), nil
}

// MIME returns the file's MIME type: the one its extension gives, else
// text/plain when its first [SniffSize] bytes are UTF-8 (a rune cut off at
// their end allowed when the file is longer), else
// application/octet-stream.
func (c *Content) MIME() string {
	if c.byExt != "" {
		return c.byExt
	}
	if utf8Prefix(c.head, len(c.head) == SniffSize) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// Text reports whether the file is served as text: its type is a text type
// ([IsTextMIME]) and all of its bytes are valid UTF-8.
func (c *Content) Text() bool {
	return IsTextMIME(c.MIME()) && c.valid.ok()
}

// Describe returns the MIME type and text flag of the file at the slash
// path name whose bytes are data, as a [Content] fed data would.
func Describe(name string, data []byte) (mime string, text bool) {
	c := NewContent(name)
	c.Write(data)
	return c.MIME(), c.Text()
}

// utf8Prefix reports whether b is valid UTF-8, allowing a rune cut off at the
// end when b was truncated.
func utf8Prefix(b []byte, truncated bool) bool {
	if utf8.Valid(b) {
		return true
	}
	if !truncated {
		return false
	}
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.Valid(b[:len(b)-k]) && !utf8.FullRune(b[len(b)-k:]) {
			return true
		}
	}
	return false
}

// utf8Stream checks that bytes written in any number of pieces are valid
// UTF-8 as a whole: a rune split between two pieces is carried over.
type utf8Stream struct {
	carry [utf8.UTFMax]byte
	n     int // bytes in carry: the start of a rune not complete yet
	bad   bool
}

func (u *utf8Stream) write(p []byte) {
	if u.bad {
		return
	}
	for u.n > 0 && len(p) > 0 {
		u.carry[u.n] = p[0]
		u.n++
		p = p[1:]
		if !utf8.FullRune(u.carry[:u.n]) {
			continue
		}
		r, size := utf8.DecodeRune(u.carry[:u.n])
		if r == utf8.RuneError && size == 1 || size != u.n {
			u.bad = true
			return
		}
		u.n = 0
	}
	if u.n > 0 {
		return // p ended inside the carried rune
	}
	// Carry the start of a rune that the end of p cuts off.
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(p[:cut]) {
		u.bad = true
		return
	}
	u.n = copy(u.carry[:], p[cut:])
}

// ok reports whether everything written is valid UTF-8, ending in no cut
// rune.
func (u *utf8Stream) ok() bool { return !u.bad && u.n == 0 }
