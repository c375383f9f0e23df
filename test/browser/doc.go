// Package browser checks the two MCP Apps views of skilljack-mcp in a real
// browser through the official host bridge (issue 14).
//
// It is its own module so that chromedp and esbuild stay out of the server's
// go.mod. The tests build the server binary from the parent module (or use
// $SKILLJACK_BIN), bundle AppBridge of the pinned @modelcontextprotocol/ext-apps
// (installed into .tools/browser by run.sh) with esbuild's Go API, serve a
// host page and a sandbox proxy on two loopback ports (the proxy with the MCP
// Apps default CSP), and drive headless Chromium with chromedp. Each scenario
// has its own HOME, so config.json ($HOME/.skilljack/config.json) starts as
// the scenario writes it. Screenshots go to out/ (git-ignored, CI artifacts).
//
// Run it with test/browser/run.sh, which installs what it needs.
package browser
