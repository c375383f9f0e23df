package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/events"
)

// MaxNameLen is the Agent Skills limit on a skill name, in characters
// (ASF-R05); going over it is a warning, never a reason to drop a skill.
const MaxNameLen = 64

// SegmentSafe reports whether a trimmed, non-empty name can be one segment
// of a skill path: no / or \, not . or .., no control characters. Other
// characters (spaces, uppercase) are percent-encoded in URIs (BR-09).
func SegmentSafe(name string) bool {
	if name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
		return false
	}
	return !strings.ContainsFunc(name, unicode.IsControl)
}

// NameProblems lists the Agent Skills naming rules name breaks
// (ASF-R05..R08; spec charset a-z, 0-9, -) and their IDs.
func NameProblems(name string) (broken, rules []string) {
	if n := utf8.RuneCountInString(name); n > MaxNameLen {
		broken = append(broken, fmt.Sprintf("is %d characters long, over the %d limit (ASF-R05)", n, MaxNameLen))
		rules = append(rules, "ASF-R05")
	}
	upper, other := false, false
	for _, r := range name {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9', r == '-':
		case unicode.IsUpper(r):
			upper = true
		default:
			other = true
		}
	}
	if upper {
		broken = append(broken, "has uppercase letters (ASF-R06)")
	}
	if other {
		broken = append(broken, "has a character other than a-z, 0-9 and - (ASF-R06)")
	}
	if upper || other {
		rules = append(rules, "ASF-R06")
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		broken = append(broken, "starts or ends with - (ASF-R07)")
		rules = append(rules, "ASF-R07")
	}
	if strings.Contains(name, "--") {
		broken = append(broken, "contains -- (ASF-R08)")
		rules = append(rules, "ASF-R08")
	}
	return broken, rules
}

// SanitizeSegment makes one skill-path segment safe for a qualified name:
// white-space runs become "-", characters outside [A-Za-z0-9._-] are
// dropped, leading and trailing "-" trimmed (reference sanitizePrefix).
func SanitizeSegment(s string) string {
	var b strings.Builder
	inSpace := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !inSpace {
				b.WriteByte('-')
			}
			inSpace = true
			continue
		}
		inSpace = false
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		}
	}
	return strings.Trim(b.String(), "-")
}

// Path is the skill path of the skill named name found in the folder
// relDir ('/'-separated, relative to its source root) of a source with the
// given prefix: the prefix, relDir's parent folders, then the name.
func Path(prefix, relDir, name string) string {
	segs := []string{}
	if prefix != "" {
		segs = append(segs, prefix)
	}
	if dir := path.Dir(relDir); dir != "." && dir != "/" {
		segs = append(segs, strings.Split(dir, "/")...)
	}
	segs = append(segs, name)
	return strings.Join(segs, "/")
}

// QualifiedName is the qualified name of the skill at skillPath: its
// segments, each through [SanitizeSegment], joined by "__". A segment that
// sanitizes to nothing although it had characters (a name written only in
// other scripts: "日本語", "한국어") becomes "u" and the first 8 hex digits of
// its SHA-256, so that two such skills in one folder keep distinct names
// instead of one hiding the other; empty segments are dropped.
func QualifiedName(skillPath string) string {
	var qn []string
	for seg := range strings.SplitSeq(skillPath, "/") {
		s := SanitizeSegment(seg)
		if s == "" && strings.TrimSpace(seg) != "" && strings.Trim(seg, "-") != "" {
			sum := sha256.Sum256([]byte(seg))
			s = "u" + hex.EncodeToString(sum[:4])
		}
		if s != "" {
			qn = append(qn, s)
		}
	}
	return strings.Join(qn, "__")
}

// URI is the skill:// URI of the SKILL.md of the skill at skillPath.
func URI(skillPath string) string {
	return events.URIScheme + events.EncodePath(skillPath) + "/SKILL.md"
}
