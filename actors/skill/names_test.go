package skill_test

import (
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/skill"
)

// TestQualifiedName checks the qualified names skill paths get: ASCII
// segments sanitized as the reference's sanitizePrefix does, and a segment
// written only in other scripts kept distinct (a fresh-user trial found three
// CJK-named skills in one folder served as one, the others hidden as
// duplicates).
func TestQualifiedName(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"src/pdf", "src__pdf"},
		{"My Skills/fill  form", "My-Skills__fill-form"},
		{"src/café-ünï", "src__caf-n"},
		{"skilljack-docs", "skilljack-docs"},
		{"src//x", "src__x"},
		{"src/-/x", "src__x"},
	} {
		if got := skill.QualifiedName(tc.path); got != tc.want {
			t.Errorf("QualifiedName(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	seen := map[string]string{}
	for _, p := range []string{"src/日本語", "src/中文", "src/한국어", "日本語/pdf", "中文/pdf"} {
		q := skill.QualifiedName(p)
		if q != skill.QualifiedName(p) {
			t.Errorf("QualifiedName(%q) is not stable", p)
		}
		for _, seg := range strings.Split(q, "__") {
			if skill.SanitizeSegment(seg) != seg || seg == "" {
				t.Errorf("QualifiedName(%q) = %q: segment %q is not a safe name", p, q, seg)
			}
		}
		if other, dup := seen[q]; dup {
			t.Errorf("QualifiedName(%q) = QualifiedName(%q) = %q: distinct skills must keep distinct names", p, other, q)
		}
		seen[q] = p
	}
}
