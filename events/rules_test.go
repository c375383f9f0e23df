package events_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestRulesDocumented: every project rule ID is in the README's table
// with its meaning, IDs are unique and well formed, and the table lists
// no rule the code lacks (trial bug D).
func TestRulesDocumented(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`^SKJ-[SFC][0-9]{2}$`)
	seen := map[string]bool{}
	for _, r := range events.Rules {
		if !id.MatchString(r.ID) || seen[r.ID] || r.Meaning == "" {
			t.Errorf("rule %+v: malformed, repeated or without meaning", r)
		}
		seen[r.ID] = true
		if row := "| `" + r.ID + "` | " + r.Meaning + " |"; !strings.Contains(string(readme), row) {
			t.Errorf("README lacks the row %s", row)
		}
	}
	for _, m := range regexp.MustCompile("\\| `(SKJ-[A-Z0-9]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		if !seen[m[1]] {
			t.Errorf("README lists %s, which events.Rules lacks", m[1])
		}
	}
}
