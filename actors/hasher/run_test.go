package hasher_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// TestHasherRunPublishes checks the hasher actor: one scan per served
// source, increasing Seq, ConfigSeq set, remote sources skipped.
func TestHasherRunPublishes(t *testing.T) {
	root := t.TempDir()
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d")})
	cfg := events.SourcesConfigured{Seq: 4, Sources: []events.Source{
		localSource(root),
		{ID: "1", Kind: events.SourceWellKnown, Location: "https://example.com", Root: filepath.Join(root, "..", "unsynced-cache")},
		bundledSource(),
	}}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		in := make(chan *message.Message)
		pub := eventstest.NewPublisher()
		h := hasher.New(hasher.Inboxes{Configured: in}, pub, &hasher.Options{Bundled: actors.Bundled()})
		done := make(chan error)
		go func() { done <- h.Run(ctx) }()
		in <- eventstest.Encode(t, cfg)
		in <- eventstest.Encode(t, events.SourcesConfigured{Seq: 2, Sources: cfg.Sources}) // stale: ignored
		for range 3 {
			<-pub.C
		}
		synctest.Wait()
		type row struct {
			Seq, ConfigSeq uint64
			ID             string
			Skills, Hashed int
		}
		var got []row
		for _, m := range pub.All() {
			ev, err := events.Decode[events.SourceScanned](m)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, row{ev.Seq, ev.ConfigSeq, ev.Source.ID, len(ev.Skills), ev.Hashed})
		}
		// The publisher's cache is not synced yet: scanned, empty.
		want := []row{{1, 4, "0", 1, 1}, {2, 4, "1", 0, 0}, {3, 4, "bundled", 1, 1}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("scans mismatch (-want +got):\n%s", diff)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
}

func bundledSource() events.Source {
	return events.Source{ID: "bundled", Kind: events.SourceBundled, Location: "bundled", Root: "."}
}
