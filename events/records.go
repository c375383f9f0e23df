package events

import json "github.com/segmentio/encoding/json"

// Trace-only records (issue 13 item 13). A trace begins with what ran
// ([TraceStarted]) and holds each client's introduction
// ([SessionInitialized]) and, with --trace-mcp, each MCP request
// ([MCPRequest]), so the first bug a user hits is visible in it. They are
// written by [TracePublisher.Record] straight into the trace, never
// published on the bus, and [Replay] skips them unless they are asked for
// by topic: no actor consumes them.

// TopicTraceStarted is the topic of [TraceStarted].
const TopicTraceStarted = "trace.started"

// TraceStarted is the first line of every trace: the server that wrote it.
type TraceStarted struct {
	// Version is the server version (serverInfo.version).
	Version string `json:"version"`
	// Args are the command-line arguments, with any secret replaced by
	// "REDACTED" (see the caller); the environment is not recorded, so
	// GITHUB_TOKEN never is.
	Args []string `json:"args"`
	// GoVersion, OS and Arch describe the build.
	GoVersion string `json:"go_version,omitempty"`
	OS        string `json:"os,omitempty"`
	Arch      string `json:"arch,omitempty"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport,omitempty"`
	// TraceMCP reports whether MCP requests are recorded ([MCPRequest]).
	TraceMCP bool `json:"trace_mcp"`
}

// TopicSessionInitialized is the topic of [SessionInitialized].
const TopicSessionInitialized = "session.initialized"

// SessionInitialized records how a client introduced itself: its
// initialize request on 2025-11-25, or on 2026-07-28 (no initialize) the
// first request of a session carrying the per-request protocol _meta.
// Over stateless HTTP, each distinct introduction is recorded once.
type SessionInitialized struct {
	// Method is the request it was read from ("initialize",
	// "server/discover", ...).
	Method string `json:"method"`
	// Protocol is the protocol version the client asked for.
	Protocol string `json:"protocol"`
	// Client is the client's clientInfo, as JSON.
	Client json.RawMessage `json:"client,omitempty"`
	// Capabilities are the client's capabilities, as JSON.
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
}

// TopicMCPRequest is the topic of [MCPRequest].
const TopicMCPRequest = "mcp.request"

// MCPRequest records one MCP request the server answered (--trace-mcp).
type MCPRequest struct {
	// Method is the JSON-RPC method.
	Method string `json:"method"`
	// Target is the tool, prompt or resource URI the request named, if
	// any (clipped).
	Target string `json:"target,omitempty"`
	// DurationMS is how long the server took to answer, in milliseconds.
	DurationMS float64 `json:"duration_ms"`
	// Error is the error answered, "" on success.
	Error string `json:"error,omitempty"`
	// Code is the JSON-RPC error code answered, 0 when none.
	Code int64 `json:"code,omitempty"`
}

// traceOnly are the topics of trace-only records, which [Replay] skips
// unless asked for.
var traceOnly = map[string]bool{
	TopicTraceStarted:       true,
	TopicSessionInitialized: true,
	TopicMCPRequest:         true,
}
