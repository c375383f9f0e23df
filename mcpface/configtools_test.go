package mcpface

import (
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestConfigTextProblemAndPlurals: skill-config's text and
// structuredContent say that the config file failed to parse and where,
// and its header reads as English for zero, one and many (trial bug E).
func TestConfigTextProblemAndPlurals(t *testing.T) {
	problem := "config file /h/.skilljack/config.json is not valid JSON (line 3, column 1: invalid character '}')"
	v := &events.ConfigView{ActiveSource: "none", ConfigPath: "/h/.skilljack/config.json", ConfigProblem: problem}
	res := configSnapshot(v, nil)
	if res.ConfigProblem != problem {
		t.Errorf("structuredContent configProblem = %q, want %q", res.ConfigProblem, problem)
	}
	text := configText(res)
	for _, want := range []string{"Config file problem: " + problem, "Skill directories (no entries; no skills served in all):"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	one, two := 1, 2
	for _, tc := range []struct {
		r    configResult
		want string
	}{
		{configResult{ActiveSource: "none", TotalSkills: &one}, "Skill directories (no entries; 1 skill served in all):"},
		{configResult{ActiveSource: events.FromConfig, TotalSkills: &two, Directories: []configDirectory{{Path: "/a"}}},
			"Skill directories (1 entry; served from the config file list; 2 skills served in all):"},
	} {
		if got := directoriesHeader(tc.r); got != tc.want {
			t.Errorf("header = %q, want %q", got, tc.want)
		}
	}
}
