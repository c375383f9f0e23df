package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

// topicRecorder is a publisher that only notes the topics published.
type topicRecorder struct{ topics []string }

func (r *topicRecorder) Publish(topic string, msgs ...*message.Message) error {
	for range msgs {
		r.topics = append(r.topics, topic)
	}
	return nil
}

func (r *topicRecorder) Close() error { return nil }

// traceLines reads a trace file's message lines (blob lines left out).
func traceLines(t *testing.T, path string) []events.TraceLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.TraceLine
	for l := range bytes.Lines(b) {
		var line events.TraceLine
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatalf("trace line %q: %v", l, err)
		}
		if line.Blob == "" {
			out = append(out, line)
		}
	}
	return out
}

// TestIssue13Trace is issue 13 item 13: a trace begins with the server
// version and its arguments (never GITHUB_TOKEN), records the session's
// client introduction (protocol, clientInfo, capabilities) and, with
// --trace-mcp only, each MCP request with method, target, duration and
// error — an unknown tool's error included; its internal events still
// replay, the new records skipped.
func TestIssue13Trace(t *testing.T) {
	const token = "ghp_e2e_trace_secret"
	base := t.TempDir()
	root := filepath.Join(base, "lib")
	writeFile(t, filepath.Join(root, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	for _, era := range eras {
		for _, mcpReqs := range []bool{true, false} {
			name := era + "/trace"
			if mcpReqs {
				name += "-mcp"
			}
			t.Run(name, func(t *testing.T) {
				trace := filepath.Join(t.TempDir(), "run.jsonl")
				args := []string{"--tools=always", "--trace=" + trace}
				if mcpReqs {
					args = append(args, "--trace-mcp")
				}
				args = append(args, root)
				s := startServer(t, era, base, []string{"GITHUB_TOKEN=" + token}, args...)
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				if _, err := s.cs.ListPrompts(ctx, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool"}); err == nil {
					t.Fatal("calling an unknown tool succeeded")
				}
				s.close()

				raw, err := os.ReadFile(trace)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(raw), token) {
					t.Error("GITHUB_TOKEN is in the trace")
				}
				lines := traceLines(t, trace)
				if len(lines) == 0 || lines[0].Topic != events.TopicTraceStarted {
					t.Fatalf("first trace line = %+v, want the server's %s", lines[0], events.TopicTraceStarted)
				}
				var started events.TraceStarted
				if err := json.Unmarshal(lines[0].Payload, &started); err != nil || started.Version == "" || !slices.Equal(started.Args, args) || started.TraceMCP != mcpReqs {
					t.Errorf("trace.started = %+v, %v; want a version, args %q, trace_mcp %v", started, err, args, mcpReqs)
				}

				var inits []events.SessionInitialized
				var reqs []events.MCPRequest
				for _, l := range lines {
					switch l.Topic {
					case events.TopicSessionInitialized:
						var ev events.SessionInitialized
						if err := json.Unmarshal(l.Payload, &ev); err != nil {
							t.Fatal(err)
						}
						inits = append(inits, ev)
					case events.TopicMCPRequest:
						var ev events.MCPRequest
						if err := json.Unmarshal(l.Payload, &ev); err != nil {
							t.Fatal(err)
						}
						reqs = append(reqs, ev)
					}
				}
				if len(inits) != 1 {
					t.Fatalf("%d session.initialized records, want 1: %+v", len(inits), inits)
				}
				in := inits[0]
				if in.Protocol != era || !strings.Contains(string(in.Client), `"skilljack-e2e"`) || len(in.Capabilities) == 0 || in.Capabilities[0] != '{' {
					t.Errorf("session.initialized = method %s protocol %s client %s capabilities %s; want %s, the client's info and capabilities",
						in.Method, in.Protocol, in.Client, in.Capabilities, era)
				}
				if era == legacyVersion && in.Method != "initialize" {
					t.Errorf("2025-11-25 introduction read from %s, want initialize", in.Method)
				}
				if !mcpReqs {
					if len(reqs) != 0 {
						t.Errorf("without --trace-mcp %d mcp.request records, want none", len(reqs))
					}
				} else {
					var listed, unknown bool
					for _, r := range reqs {
						if r.DurationMS < 0 {
							t.Errorf("request %s took %v ms", r.Method, r.DurationMS)
						}
						listed = listed || r.Method == "prompts/list" && r.Error == ""
						unknown = unknown || r.Method == "tools/call" && r.Target == "no-such-tool" && strings.Contains(r.Error, "no-such-tool") && r.Code != 0
					}
					if !listed || !unknown {
						t.Errorf("mcp.request records = %+v; want prompts/list without error and tools/call no-such-tool with its error and code", reqs)
					}
				}

				rec := &topicRecorder{}
				n, err := events.Replay(t.Context(), bytes.NewReader(raw), rec, nil)
				if err != nil || n == 0 {
					t.Fatalf("Replay = %d, %v", n, err)
				}
				for _, topic := range rec.topics {
					if topic == events.TopicTraceStarted || topic == events.TopicSessionInitialized || topic == events.TopicMCPRequest {
						t.Errorf("Replay published the trace-only record %s", topic)
						break
					}
				}
			})
		}
	}
}
