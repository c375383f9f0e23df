package mcpface

import (
	"fmt"
	"testing"

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
