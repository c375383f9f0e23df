package main

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
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

// TestRedactHandler (issue 10: secrets): the message and every string,
// error, other and grouped attribute reach the next handler redacted.
func TestRedactHandler(t *testing.T) {
	const tok = "ghp_CANARYtok3n9876543210"
	var b bytes.Buffer
	log := slog.New(redactHandler{slog.NewTextHandler(&b, nil), newRedactor(tok, "short")}).With("w", "https://u:p@h/x")
	log.WithGroup("g").Warn("msg "+tok, "s", tok, "e", errors.New("GET https://a:"+tok+"@h"), "any", []string{tok},
		slog.Group("grp", "inner", tok), "n", 3, "short", "short")
	out := b.String()
	if strings.Contains(out, tok) || strings.Contains(out, "u:p@") || strings.Count(out, "REDACTED") != 6 || !strings.Contains(out, "short=short") {
		t.Errorf("redacted log line = %s", out)
	}
}
