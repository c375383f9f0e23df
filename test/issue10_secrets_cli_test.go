package test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestIssue10SecretsNeverShown (issue 10: secrets): GITHUB_TOKEN pasted
// into a publisher URL's user info, a GitHub source's ref and an unknown
// flag's value reaches neither stderr (at -v) nor the MCP log messages a
// client receives nor the --trace file.
func TestIssue10SecretsNeverShown(t *testing.T) {
	const tok = "ghp_CANARYtok3n9876543210"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not found "+r.URL.Path, http.StatusNotFound) // echoes the ref
	}))
	t.Cleanup(api.Close)
	lib := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(lib, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	env := []string{"GITHUB_TOKEN=" + tok, "GITHUB_ALLOWED_ORGS=acme", "GITHUB_API_URL=" + api.URL,
		"SKILLJACK_CACHE_DIR=" + t.TempDir(), "GITHUB_POLL_INTERVAL_MS=0"}
	sink := &logSink{}
	cs, stderr := startLogClient(t, legacyVersion, env, sink, "-v", "--trace="+trace, "--x-token="+tok,
		"https://x-access-token:"+tok+"@github.com/acme/repo",
		"https://u:"+tok+"@example.com/.well-known/agent-skills/",
		"github.com/acme/repo@"+tok, lib)
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(notifyTimeout)
	for (len(sink.all()) < 3 || !strings.Contains(stderr.String(), "REDACTED")) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the GitHub fetch fails and is logged
	cs.Close()
	msgs := strings.Join(sink.all(), "\n")
	if !strings.Contains(msgs, "user info") || !strings.Contains(msgs, "x-token") {
		t.Errorf("log messages lack the refused URL or the unknown flag:\n%s", msgs)
	}
	if strings.Contains(msgs, tok) {
		t.Errorf("an MCP log message holds the token:\n%s", msgs)
	}
	errText := stderr.String()
	if !strings.Contains(errText, "github.com/acme/repo@REDACTED") || !strings.Contains(errText, "level=DEBUG") {
		t.Errorf("stderr lacks the redacted GitHub source or the -v lines:\n%s", errText)
	}
	if strings.Contains(errText, tok) {
		t.Errorf("stderr holds the token:\n%s", errText)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "github.com/acme/repo@REDACTED") {
		t.Errorf("trace lacks the redacted location:\n%s", b)
	}
	if strings.Contains(string(b), tok) {
		t.Errorf("the trace holds the token:\n%s", b)
	}
}
