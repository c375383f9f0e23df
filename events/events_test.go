package events_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/events"
)

func TestEncodeDecode(t *testing.T) {
	want := events.SourcesConfigured{Seq: 3, Sources: []events.Source{{ID: "0", Kind: events.SourceLocal, Location: "x", Root: "/x", Prefix: "x"}}}
	msg, err := events.Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Metadata.Get(events.MetadataName); got != "SourcesConfigured" {
		t.Errorf("name metadata = %q, want SourcesConfigured", got)
	}
	got, err := events.Decode[events.SourcesConfigured](msg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode mismatch (-want +got):\n%s", diff)
	}
	if _, err := events.Decode[events.SourceScanned](msg); !errors.Is(err, events.ErrWrongEvent) {
		t.Errorf("Decode of the wrong type = %v, want ErrWrongEvent", err)
	}
	if _, err := events.Encode(struct{}{}); err == nil {
		t.Error("Encode of a non-event succeeded")
	}
}

func TestTopicOf(t *testing.T) {
	for _, tc := range []struct {
		ev   any
		want string
	}{
		{events.SourcesConfigured{}, events.TopicSourcesConfigured},
		{&events.SourceScanned{}, events.TopicSourceScanned},
		{events.OverridesChanged{}, events.TopicOverridesChanged},
		{events.CatalogChanged{}, events.TopicCatalogChanged},
		{events.ResourcesUpdated{}, events.TopicResourcesUpdated},
		{events.FilesChanged{}, events.TopicFilesChanged},
	} {
		if got, ok := events.TopicOf(tc.ev); !ok || got != tc.want {
			t.Errorf("TopicOf(%T) = %q, %v; want %q", tc.ev, got, ok, tc.want)
		}
	}
}

// TestHandleRecoversPanic: a panicking handler is logged, acked once, and
// reported as an error (never nacked).
func TestHandleRecoversPanic(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	msg := message.NewMessage("u1", nil)
	err := events.Handle(log, msg, func(*message.Message) error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Handle = %v, want the panic as an error", err)
	}
	select {
	case <-msg.Acked():
	default:
		t.Error("message not acked after a panic")
	}
	if !strings.Contains(logs.String(), "handler panicked") {
		t.Errorf("log lacks the panic: %s", logs.String())
	}
}

// TestTraceReplay records messages through the trace publisher on one bus
// and replays the trace onto a second bus; the subscriber sees the same
// events with the same UUIDs.
func TestTraceReplay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		bus := events.NewBus(nil)
		defer bus.Close()
		var trace bytes.Buffer
		tp := events.NewTracePublisher(bus, &trace)
		in, err := bus.Subscribe(ctx, events.TopicOverridesChanged)
		if err != nil {
			t.Fatal(err)
		}
		yes := true
		sent := events.OverridesChanged{Seq: 1, Overrides: map[string]events.Override{"a__b": {Assistant: &yes}}}
		go func() {
			for m := range in {
				m.Ack()
			}
		}()
		if err := events.Publish(tp, sent); err != nil {
			t.Fatal(err)
		}
		if err := events.Publish(tp, events.ResourcesUpdated{Version: 2, URIs: []string{"skill://x/SKILL.md"}}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(trace.String(), "\n"); n != 2 {
			t.Fatalf("trace has %d lines, want 2:\n%s", n, trace.String())
		}

		bus2 := events.NewBus(nil)
		defer bus2.Close()
		in2, err := bus2.Subscribe(ctx, events.TopicOverridesChanged)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan events.OverridesChanged, 1)
		go func() {
			for m := range in2 {
				ev, err := events.Decode[events.OverridesChanged](m)
				m.Ack()
				if err == nil {
					got <- ev
				}
			}
		}()
		n, err := events.Replay(ctx, bytes.NewReader(trace.Bytes()), bus2, &events.ReplayOptions{Topics: []string{events.TopicOverridesChanged}})
		if err != nil || n != 1 {
			t.Fatalf("Replay = %d, %v; want 1 message", n, err)
		}
		select {
		case ev := <-got:
			if diff := cmp.Diff(sent, ev); diff != "" {
				t.Errorf("replayed event mismatch (-want +got):\n%s", diff)
			}
		case <-time.After(time.Minute):
			t.Fatal("replayed event never arrived")
		}
		if _, err := events.Replay(ctx, strings.NewReader("{not json\n"), bus2, nil); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("Replay of a malformed trace = %v, want an error naming line 1", err)
		}
	})
}

func TestCatalogLookups(t *testing.T) {
	files := func(paths ...string) []events.File {
		var fs []events.File
		for _, p := range paths {
			fs = append(fs, events.File{Path: p, Digest: "sha256:" + strings.Repeat("0", 64)})
		}
		return fs
	}
	c := events.NewCatalog(7, false, []*events.Skill{
		{QualifiedName: "s__outer__inner", SkillPath: "s/outer/inner", URI: "skill://s/outer/inner/SKILL.md", Files: files("SKILL.md", "refs/n.md")},
		{QualifiedName: "s__outer", SkillPath: "s/outer", URI: "skill://s/outer/SKILL.md", Files: files("SKILL.md", "inner/SKILL.md", "inner/refs/n.md", "a b.md")},
	}, nil)
	if c.Skills[0].URI != "skill://s/outer/SKILL.md" {
		t.Errorf("skills not sorted by URI: %s first", c.Skills[0].URI)
	}
	if s := c.SkillByName("s__outer"); s == nil || s.URI != "skill://s/outer/SKILL.md" {
		t.Errorf("SkillByName = %+v", s)
	}
	// A nested skill's file resolves to the innermost skill (SEP2640-R25).
	if r, ok := c.File("skill://s/outer/inner/refs/n.md"); !ok || r.Skill.QualifiedName != "s__outer__inner" {
		t.Errorf("File(nested) = %+v, %v; want the inner skill", r, ok)
	}
	if _, ok := c.File("skill://s/outer/a%20b.md"); !ok {
		t.Error("File of a percent-encoded name not found")
	}
	if _, ok := c.File("skill://s/outer/../outer/SKILL.md"); ok {
		t.Error("a non-normalised URI matched (BR-21)")
	}
	// A decoded catalog rebuilds its index.
	msg, err := events.Encode(events.CatalogChanged{Catalog: c})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := events.Decode[events.CatalogChanged](msg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Catalog.SkillByURI("skill://s/outer/inner/SKILL.md") == nil {
		t.Error("decoded catalog lost its index")
	}
}

func TestEncodePath(t *testing.T) {
	for in, want := range map[string]string{
		"My First Skill/SKILL.md": "My%20First%20Skill/SKILL.md",
		"a/b&c=d:e@f.md":          "a/b%26c%3Dd%3Ae%40f.md",
		"x(1)!~*'.md":             "x(1)!~*'.md",
		"ü.md":                    "%C3%BC.md",
	} {
		if got := events.EncodePath(in); got != want {
			t.Errorf("EncodePath(%q) = %q, want %q", in, got, want)
		}
	}
}
