// Package fetch will hold the HTTP client that remote sources use: a
// per-hop allowlist, manual redirects, size caps, conditional requests,
// retries and SHA-256 verification. It is a leaf package: it imports nothing
// else from this module and knows nothing of the bus or MCP.
//
// It is empty until remote sources land; local and bundled skills need no
// network.
package fetch
