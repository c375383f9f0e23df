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

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

var update = flag.Bool("update", false, "record the replay trace and its skills/list golden file anew")

const (
	traceFile  = "testdata/traces/startup.trace.jsonl"
	traceGold  = "testdata/traces/startup.skills.json"
	traceSkill = "testdata/traces/skills"
)

// TestReplay replays a trace recorded from a real run of the binary (serving
// testdata/traces/skills) into a fresh catalog builder and facade, and checks
// that skills/list gives what the real run gave. Run with -update to record
// the trace and the golden skills/list anew.
func TestReplay(t *testing.T) {
	if *update {
		recordTrace(t)
	}
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
	in := actors.CatalogInboxes{
		Configured: sub(events.TopicSourcesConfigured),
		Scanned:    sub(events.TopicSourceScanned),
		Overrides:  sub(events.TopicOverridesChanged),
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always"})
	fc, fu := sub(events.TopicCatalogChanged), sub(events.TopicResourcesUpdated)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return actors.NewCatalogBuilder(in, bus, nil).Run(gctx) })
	g.Go(func() error { return facade.Run(gctx, fc, fu) })
	defer func() {
		cancel()
		if err := g.Wait(); err != nil {
			t.Errorf("actors: %v", err)
		}
	}()

	n, err := events.Replay(ctx, f, bus, &events.ReplayOptions{Topics: []string{
		events.TopicSourcesConfigured, events.TopicSourceScanned, events.TopicOverridesChanged,
	}})
	if err != nil || n == 0 {
		t.Fatalf("Replay = %d, %v; want some messages", n, err)
	}
	srv, err := facade.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := walkList(t, ctx, connectInMemory(t, ctx, srv))
	want, err := os.ReadFile(traceGold)
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

// recordTrace runs the binary with --trace over the fixture skills and
// writes the trace and the skills/list it served.
func recordTrace(t *testing.T) {
	abs, err := filepath.Abs(traceFile)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(abs)
	s := startServer(t, legacyVersion, filepath.Dir(traceSkill), nil, "--trace="+abs, "skills")
	entries := s.listAll()
	s.close()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(entries); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(traceGold, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s and %s (%d entries)", traceFile, traceGold, len(entries))
}
