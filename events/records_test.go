package events_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// countingPublisher counts what is published per topic.
type countingPublisher struct{ topics []string }

func (c *countingPublisher) Publish(topic string, msgs ...*message.Message) error {
	for range msgs {
		c.topics = append(c.topics, topic)
	}
	return nil
}

func (c *countingPublisher) Close() error { return nil }

// TestTraceRecords (issue 13 item 13): trace-only records are written to
// the trace and never published; the trace still starts as a trace; Replay
// skips them unless asked for by topic, so older replays are unchanged.
func TestTraceRecords(t *testing.T) {
	next := &countingPublisher{}
	var trace bytes.Buffer
	tp := events.NewTracePublisher(next, &trace)
	if err := tp.Record(events.TraceStarted{Version: "1.2.3", Args: []string{"--trace=x", "lib"}}); err != nil {
		t.Fatal(err)
	}
	if err := events.Publish(tp, events.OverridesChanged{Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if err := tp.Record(events.SessionInitialized{Method: "initialize", Protocol: "2025-11-25", Capabilities: json.RawMessage(`{"roots":{}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := tp.Record(events.MCPRequest{Method: "tools/call", Target: "load-skill", DurationMS: 0.5, Error: "unknown tool", Code: -32602}); err != nil {
		t.Fatal(err)
	}
	if err := tp.Record(events.OverridesChanged{Seq: 2}); err == nil {
		t.Error("Record took a pipeline event; want an error")
	}
	if len(next.topics) != 1 || next.topics[0] != events.TopicOverridesChanged {
		t.Errorf("published %v, want only the overrides", next.topics)
	}
	lines := strings.Split(strings.TrimSpace(trace.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `{"time":"`) || !strings.Contains(lines[0], `"topic":"trace.started"`) || !strings.Contains(lines[0], `"version":"1.2.3"`) {
		t.Fatalf("trace = \n%s\nwant 4 lines, the first the server's", trace.String())
	}

	all := &countingPublisher{}
	if n, err := events.Replay(t.Context(), bytes.NewReader(trace.Bytes()), all, nil); err != nil || n != 1 || all.topics[0] != events.TopicOverridesChanged {
		t.Errorf("Replay = %d, %v (%v); want the one pipeline event", n, err, all.topics)
	}
	asked := &countingPublisher{}
	if n, err := events.Replay(t.Context(), bytes.NewReader(trace.Bytes()), asked, &events.ReplayOptions{Topics: []string{events.TopicMCPRequest}}); err != nil || n != 1 {
		t.Errorf("Replay of mcp.request = %d, %v; want 1", n, err)
	}
}

// TestTraceRedact (issue 10: secrets): with [events.TraceRedact] no line
// of the trace, snapshot blobs included, holds the secret, and the trace
// still replays.
func TestTraceRedact(t *testing.T) {
	const tok = "ghp_CANARYtok3n9876543210"
	var trace bytes.Buffer
	tp := events.NewTracePublisher(&countingPublisher{}, &trace, events.TraceRedact(func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(tok), []byte("REDACTED"))
	}))
	src := events.Source{ID: "0", Kind: events.SourceGitHub, Location: "github.com/acme/repo@" + tok, Prefix: "MYKEY=" + tok}
	if err := events.Publish(tp, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}}); err != nil {
		t.Fatal(err)
	}
	scan := events.SourceScanned{Seq: 1, ConfigSeq: 1, Source: src, Skills: []events.ScannedSkill{{Dir: "/c/" + tok, RelDir: "x", SkillMD: []byte("---\nname: x\n---\n" + tok)}}}
	if err := events.Publish(tp, scan); err != nil {
		t.Fatal(err)
	}
	if err := tp.Record(events.TraceStarted{Args: []string{tok}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(trace.String(), tok) || !strings.Contains(trace.String(), "github.com/acme/repo@REDACTED") {
		t.Errorf("trace holds the token or lacks the redacted location:\n%s", trace.String())
	}
	all := &countingPublisher{}
	if n, err := events.Replay(t.Context(), bytes.NewReader(trace.Bytes()), all, nil); err != nil || n != 2 {
		t.Errorf("Replay = %d, %v; want the two events", n, err)
	}
}
