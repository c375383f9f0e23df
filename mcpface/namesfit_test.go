package mcpface

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestNamesFitCountsAsRenderingDoes checks that namesFit, which counts,
// gives the largest prefix whose rendering fits, as a search over
// renderings of every prefix does (issue 12, issue 13 item 6).
func TestNamesFitCountsAsRenderingDoes(t *testing.T) {
	var skills []*events.Skill
	for i := range 40 {
		skills = append(skills, &events.Skill{QualifiedName: fmt.Sprintf("src__skill-%d%s", i, []string{"", "é&<", "ü"}[i%3])})
	}
	for budget := -1; budget <= chars(renderNames(skills))+2; budget++ {
		want := 0
		for n := range len(skills) + 1 {
			if chars(renderNames(skills[:n])) <= budget {
				want = n
			}
		}
		if got := namesFit(skills, budget); got != want {
			t.Fatalf("budget %d: namesFit = %d, want %d", budget, got, want)
		}
	}
}

// BenchmarkRenderAvailable10k renders the <available_skills> block of
// 10,000 skills within a 16,000-character budget, as the first
// initialize of a 10k-skill corpus does (issue 12).
func BenchmarkRenderAvailable10k(b *testing.B) {
	var skills []*events.Skill
	for i := range 10000 {
		skills = append(skills, &events.Skill{QualifiedName: fmt.Sprintf("gen__s%05d-deploy-genome", i),
			Description: "Use this skill to score query module ratio genome report library review matrix measure plot schema series signal index window metric weight.",
			URI:         fmt.Sprintf("skill://gen/s%05d-deploy-genome/SKILL.md", i), Dir: fmt.Sprintf("/work/corpora/gen-10000/s%05d-deploy-genome", i),
			Source: events.Source{Kind: events.SourceLocal}, Files: []events.File{{Path: "SKILL.md"}}})
	}
	f := &Facade{opts: Options{CatalogBudget: 16000}, log: slog.New(slog.DiscardHandler)}
	f.budgetWarned.Store(true)
	for b.Loop() {
		f.renderAvailable(skills, false)
	}
}

// TestShorten checks that shorten cuts as a []rune of the text does (the
// way it did before it stopped making one, issue 12): characters, not
// bytes, an ellipsis counted, trimmed, and a byte that is not UTF-8 made
// U+FFFD in what is kept.
func TestShorten(t *testing.T) {
	byRunes := func(s string, n int) string {
		if n < 0 || utf8.RuneCountInString(s) <= n {
			return s
		}
		r := []rune(s)
		return strings.TrimSpace(string(r[:max(n-1, 0)])) + "…"
	}
	for _, s := range []string{"", "abc", "héllo wörld ünïcode", "a b c d e f", "日本語のテキストです", "bad \xff byte here", "\xfe\xff", "end with space  x"} {
		for n := -1; n <= utf8.RuneCountInString(s)+1; n++ {
			if got, want := shorten(s, n), byRunes(s, n); got != want {
				t.Errorf("shorten(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
