// Package apps holds the two MCP Apps views skilljack-mcp serves (SEP-1865,
// extension io.modelcontextprotocol/ui): the config app and the skills
// display. Each view is one self-contained HTML document embedded at build
// time; the facade serves it as a ui:// resource and links it from its tools.
package apps

import (
	_ "embed"
	"strings"
)

// ExtensionID is the capability key a client declares under
// capabilities.extensions when it renders MCP Apps views.
const ExtensionID = "io.modelcontextprotocol/ui"

// MIMEType is the media type of every view resource, exactly as the MCP Apps
// specification requires.
const MIMEType = "text/html;profile=mcp-app"

// ConfigURI and DisplayURI are the resource URIs of the two views, as the
// TypeScript reference names them.
const (
	ConfigURI  = "ui://skill-config/mcp-app.html"
	DisplayURI = "ui://skill-display/skill-display.html"
)

var (
	//go:embed skill-config.html
	configSource string
	//go:embed skill-display.html
	displaySource string
	//go:embed bridge.js
	bridgeJS string
	//go:embed shared.css
	sharedCSS string

	configHTML  = Assemble(configSource, sharedCSS, bridgeJS)
	displayHTML = Assemble(displaySource, sharedCSS, bridgeJS)
)

// The markers in each view's source that [Assemble] replaces: one in its
// style element, one in its script.
const (
	StyleMarker  = "/*@shared-style@*/"
	BridgeMarker = "/*@bridge@*/"
)

// Assemble returns the view document source with [StyleMarker] replaced by
// css (shared.css: the styles both views use) and [BridgeMarker] by js
// (bridge.js: the postMessage JSON-RPC client and the helpers both views
// use), so each served document is self-contained. It panics if source
// lacks a marker (a view edited wrongly fails at start, and in its test).
func Assemble(source, css, js string) string {
	for _, m := range []string{StyleMarker, BridgeMarker} {
		if !strings.Contains(source, m) {
			panic("mcpface/apps: a view has no " + m + " marker")
		}
	}
	source = strings.Replace(source, StyleMarker, css, 1)
	return strings.Replace(source, BridgeMarker, js, 1)
}

// ConfigHTML returns the config app's HTML document (served at ConfigURI).
// It is immutable and safe for concurrent use.
func ConfigHTML() string { return configHTML }

// DisplayHTML returns the skills display's HTML document (served at
// DisplayURI). It is immutable and safe for concurrent use.
func DisplayHTML() string { return displayHTML }
