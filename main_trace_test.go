package main

import (
	"slices"
	"testing"
)

// TestRedactArgs (issue 13 item 13): no secret of the command line reaches
// a trace.
func TestRedactArgs(t *testing.T) {
	in := []string{"--trace=t.jsonl", "https://bob:ghp_x@example.com/.well-known/agent-skills/", "--api-key=k1",
		"GITHUB_TOKEN=ghp_y", "lib", "mine=github.com/acme/skills@v1", "pasted-ghp_secret123", "--tools=always"}
	want := []string{"--trace=t.jsonl", "https://REDACTED@example.com/.well-known/agent-skills/", "--api-key=REDACTED",
		"GITHUB_TOKEN=REDACTED", "lib", "mine=github.com/acme/skills@v1", "pasted-REDACTED", "--tools=always"}
	if got := redactArgs(in, " ghp_secret123 "); !slices.Equal(got, want) {
		t.Errorf("redactArgs =\n%q\nwant\n%q", got, want)
	}
}
