package apps_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// views are the two embedded documents by name.
var views = map[string]string{"skill-config": apps.ConfigHTML(), "skill-display": apps.DisplayHTML()}

// TestViewsAreWholeDocuments: each view is one HTML5 document (APPS-R06).
func TestViewsAreWholeDocuments(t *testing.T) {
	for name, html := range views {
		low := strings.ToLower(html)
		if !strings.HasPrefix(low, "<!doctype html>") {
			t.Errorf("%s does not start with <!doctype html>", name)
		}
		for _, tag := range []string{"<html", "<head>", "<meta charset=\"utf-8\">", "<title>", "<body>", "</body>", "</html>"} {
			if !strings.Contains(low, tag) {
				t.Errorf("%s has no %s", name, tag)
			}
		}
	}
}

// TestViewsAreSelfContained: nothing a view needs comes from the network,
// and it uses no storage, so it works under the default CSP (APPS-R09:
// default-src 'none', connect-src 'none') at an opaque origin.
func TestViewsAreSelfContained(t *testing.T) {
	banned := []*regexp.Regexp{
		regexp.MustCompile(`(?i)<(script|img|iframe|link)[^>]*\s(src|href)\s*=`),
		regexp.MustCompile(`(?i)@import|url\(`),
		regexp.MustCompile(`\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon`),
		regexp.MustCompile(`localStorage|sessionStorage|document\.cookie|indexedDB`),
		regexp.MustCompile(`\beval\(|new Function\(`),
	}
	for name, html := range views {
		for _, re := range banned {
			if m := re.FindString(html); m != "" {
				t.Errorf("%s uses %q", name, m)
			}
		}
	}
}

// TestViewsSpeakTheAppsProtocol: each view initializes with the stable MCP
// Apps version, listens only to its parent, and answers the host's requests.
func TestViewsSpeakTheAppsProtocol(t *testing.T) {
	for name, html := range views {
		for _, want := range []string{
			`"ui/initialize"`, `protocolVersion: "2026-01-26"`, `"ui/notifications/initialized"`,
			`"ui/notifications/tool-result"`, `"ui/notifications/host-context-changed"`,
			`"ui/notifications/size-changed"`, `new ResizeObserver(`, `"ui/resource-teardown"`, `"ping"`,
			`ev.source !== window.parent`, `"tools/call"`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("%s lacks %s", name, want)
			}
		}
	}
}
