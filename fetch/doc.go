// Package fetch is the HTTP client remote sources use: every URL (the first
// one and each redirect hop) is checked against an allowlist and the scheme
// rules before its request is sent; redirects are followed by hand (at most
// 5 by default); bodies are streamed and aborted past a byte cap;
// conditional requests (If-None-Match, If-Modified-Since) report 304 as
// NotModified; 5xx answers and network errors are retried with backoff,
// 4xx never. [Digest] and [VerifyDigest] implement the SHA-256 checks of
// WKAS-R12/R17 (strict format, BR-26). Redirect hops are re-checked and
// counted as BR-24 requires; the final URL is reported as the base for
// relative references (WKAS-R15, R25). [GitHub] is a small client of the
// GitHub REST API (commit of a ref, whether a ref is a tag, tarball of a
// commit) built on [Client]; its token is only sent to the API origin and
// codeload.github.com and never appears in an error or a log line.
//
// Errors and log lines name URLs with credential-like query values
// (token=, signature=…) redacted; request headers are never logged.
//
// It is a leaf package: it imports nothing else from this module and knows
// nothing of the bus or MCP. Only the standard library.
package fetch
