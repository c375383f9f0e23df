package test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

var update = flag.Bool("update", false, "record the replay trace and its skills/list golden file anew")

const traceSkills = "testdata/traces/skills"

// traces are the replay fixtures: each was recorded from a real run of the
// binary serving a copy of testdata/traces/skills, with --trace, and its
// golden file holds the skills/list that run served at its end.
var traces = []struct {
	name   string
	record func(t *testing.T, trace string) []skillEntry
}{
	{"startup", recordStartup},
	{"edit-session", recordEditSession},
}

// TestReplay replays each recorded trace (its configuration, overrides and
// scans) into a fresh catalog builder and facade, and checks that skills/list
// gives what the real run gave. Run with -update to record them anew.
func TestReplay(t *testing.T) {
	for _, tc := range traces {
		t.Run(tc.name, func(t *testing.T) {
			traceFile := filepath.Join("testdata", "traces", tc.name+".trace.jsonl")
			goldFile := filepath.Join("testdata", "traces", tc.name+".skills.json")
			if *update {
				abs, err := filepath.Abs(traceFile)
				if err != nil {
					t.Fatal(err)
				}
				os.Remove(abs)
				entries := tc.record(t, abs)
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetIndent("", "  ")
				if err := enc.Encode(entries); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(goldFile, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("recorded %s and %s (%d entries)", traceFile, goldFile, len(entries))
			}
			got := replayTrace(t, traceFile)
			want, err := os.ReadFile(goldFile)
			if err != nil {
				t.Fatal(err)
			}
			var wantEntries []skillEntry
			if err := json.Unmarshal(want, &wantEntries); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(norm(t, wantEntries), norm(t, got)); diff != "" {
				t.Errorf("replayed skills/list differs from the recorded run (-want +got):\n%s", diff)
			}
		})
	}
}

// replayTrace feeds the trace's configuration, overrides and scans into a
// fresh catalog builder and facade and returns the skills/list it serves once
// the last scan is applied.
func replayTrace(t *testing.T, traceFile string) []skillEntry {
	f, err := os.Open(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	bus := events.NewBus(nil)
	defer bus.Close()
	sub := func(topic string) <-chan *message.Message {
		ch, err := bus.Subscribe(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	in := catalog.Inboxes{
		Configured: sub(events.TopicSourcesConfigured),
		Scanned:    sub(events.TopicSourceScanned),
		Overrides:  sub(events.TopicOverridesChanged),
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always"})
	fc, fu := sub(events.TopicCatalogChanged), sub(events.TopicResourcesUpdated)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return catalog.New(in, bus, nil).Run(gctx) })
	g.Go(func() error { return facade.Run(gctx, fc, fu) })
	defer func() {
		cancel()
		if err := g.Wait(); err != nil {
			t.Errorf("actors: %v", err)
		}
	}()
	// Wait: the builder takes the messages one at a time in file order, as
	// in the recorded run (publishing does not wait for it).
	n, err := events.Replay(ctx, f, bus, &events.ReplayOptions{Topics: []string{
		events.TopicSourcesConfigured, events.TopicSourceScanned, events.TopicOverridesChanged,
	}, Wait: bus.WaitIdle})
	if err != nil || n == 0 {
		t.Fatalf("Replay = %d, %v; want some messages", n, err)
	}
	// Barrier: the builder acks a message before it rebuilds and publishes,
	// and handles one message at a time, so it takes a stale event (which it
	// ignores) only after the last rebuild queued its catalog.changed for
	// the facade; once the bus is idle, the facade has handled that output.
	if err := events.Publish(bus, events.OverridesChanged{Seq: 0}); err != nil {
		t.Fatal(err)
	}
	if err := bus.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := facade.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return walkList(t, ctx, connectInMemory(t, ctx, srv))
}

func norm(t *testing.T, es []skillEntry) []normalEntry {
	var out []normalEntry
	for _, e := range es {
		out = append(out, normEntry(t, e))
	}
	return out
}

// connectInMemory connects a go-sdk client to srv in memory; the session
// closes with the test.
func connectInMemory(t testing.TB, ctx context.Context, srv *mcp.Server) *mcp.ClientSession {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "in-memory", Version: "v0"}, nil)
	if err := mcp.AddSendingCustomMethod[*skillsParams, *skillsResult](client, "skills/list"); err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// walkList walks every skills/list page.
func walkList(t testing.TB, ctx context.Context, cs *mcp.ClientSession) []skillEntry {
	var all []skillEntry
	cursor := ""
	for {
		res, err := mcp.CallCustomMethod[*skillsParams, *skillsResult](ctx, cs, "skills/list", &skillsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Skills...)
		if res.NextCursor == "" {
			return all
		}
		cursor = res.NextCursor
	}
}

// copySkills copies the fixture skills into a fresh folder named "skills".
func copySkills(t *testing.T) (dir, root string) {
	dir = t.TempDir()
	root = filepath.Join(dir, "skills")
	if err := os.CopyFS(root, os.DirFS(traceSkills)); err != nil {
		t.Fatal(err)
	}
	return dir, root
}

// recordStartup records a run that only starts and lists.
func recordStartup(t *testing.T, trace string) []skillEntry {
	dir, _ := copySkills(t)
	s := startServer(t, legacyVersion, dir, noReconcile, "--trace="+trace, "skills")
	entries := s.listAll()
	s.close()
	return entries
}

// recordEditSession records a run during which a skill is added, a
// supporting file edited and a skill deleted, each waited for.
func recordEditSession(t *testing.T, trace string) []skillEntry {
	dir, root := copySkills(t)
	n := newNotes()
	s := startServerNotes(t, legacyVersion, dir, noReconcile, n, "--trace="+trace, "skills")
	writeFile(t, filepath.Join(root, "added", "SKILL.md"), skillBody("added", "Added during the session."))
	s.eventually("added served", func() bool { return s.entry("skill://skills/added/SKILL.md") != nil })
	writeFile(t, filepath.Join(root, "flat", "extra.md"), "edited during the session\n")
	s.eventually("extra.md served", func() bool {
		e := s.entry("skill://skills/flat/SKILL.md")
		return e != nil && len(e.Resources) == 2
	})
	if err := os.RemoveAll(filepath.Join(root, "literal")); err != nil {
		t.Fatal(err)
	}
	s.eventually("literal gone", func() bool { return s.entry("skill://skills/literal/SKILL.md") == nil })
	entries := s.listAll()
	s.close()
	return entries
}
