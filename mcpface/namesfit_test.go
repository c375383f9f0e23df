package mcpface

import (
	"fmt"
	"log/slog"
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
