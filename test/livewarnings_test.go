package test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLiveConfigWarningReachesClient: a config file broken while the
// server runs gives a warning with startup's wording (line and column,
// trailing-comma hint), and it reaches a connected client as a
// notifications/message at once, without the client sending another
// request (trial bug E; issue 13 item 8: every warning reaches each
// client).
func TestLiveConfigWarningReachesClient(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(lib, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	home := t.TempDir()
	cfg := filepath.Join(home, ".skilljack", "config.json")
	writeFile(t, cfg, `{"skillDirectories": [`+jsonString(lib)+`]}`)
	sink := &logSink{}
	cs, stderr := startLogClient(t, legacyVersion, []string{"HOME=" + home}, sink)
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListPrompts(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, "{\n  \"skillDirectories\": [\"/nowhere\"],\n}\n")
	want := []string{"warning config file " + cfg + " is not valid JSON (line 3, column 1", "trailing comma", "the last good configuration stays served"}
	deadline := time.Now().Add(notifyTimeout)
	for time.Now().Before(deadline) {
		for _, m := range sink.all() {
			if containsAll(m, want...) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("no log message with %q; got %q\nstderr:\n%s", want, sink.all(), stderr)
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
