package watch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/actors/watch"
	"github.com/skilljack/skilljack-mcp/events"
)

// benchSizes are the corpus sizes of the watch benchmarks: the issue's
// 10,000 skills (26,669 folders) and a tenth of it, to show how the cost
// grows.
var benchSizes = []int{1000, 10000}

// skillTree writes n skills below a new root, laid out like the issue's
// generated corpus: root/skills/sNNNNN/ with SKILL.md, scripts/ and, for two
// skills in three, references/ — 2 + 8n/3 folders (26,668 for 10,000). It
// returns the root and its number of folders.
func skillTree(b *testing.B, n int) (string, int) {
	b.Helper()
	root := b.TempDir()
	dirs := 2
	for i := range n {
		s := filepath.Join(root, "skills", fmt.Sprintf("s%05d", i))
		sub := []string{"scripts"}
		if i%3 != 0 {
			sub = append(sub, "references")
		}
		for _, d := range sub {
			if err := os.MkdirAll(filepath.Join(s, d), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s, d, "f.md"), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		dirs += 1 + len(sub)
		if err := os.WriteFile(filepath.Join(s, "SKILL.md"), []byte(skilltest.SkillMD(fmt.Sprintf("s%05d", i), "d")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root, dirs
}

// benchWatcher is a running Watcher for benchmarks: no reconcile, nothing
// recorded.
type benchWatcher struct {
	in     chan *message.Message
	cancel context.CancelFunc
	done   chan error
}

func startBenchWatcher(b *testing.B) *benchWatcher {
	b.Helper()
	bw := &benchWatcher{in: make(chan *message.Message), done: make(chan error, 1)}
	w := watch.New(watch.Inboxes{Configured: bw.in}, newChangeRecorder(), &watch.Options{Reconcile: -1})
	var ctx context.Context
	ctx, bw.cancel = context.WithCancel(context.Background())
	go func() { bw.done <- w.Run(ctx) }()
	return bw
}

// configure sends a configuration with one local source per root and returns
// once the watcher acked it, that is once its watches are set.
func (bw *benchWatcher) configure(b *testing.B, seq uint64, roots ...string) {
	b.Helper()
	cfg := events.SourcesConfigured{Seq: seq}
	for _, r := range roots {
		cfg.Sources = append(cfg.Sources, events.Source{ID: r, Kind: events.SourceLocal, Location: r, Root: r})
	}
	msg, err := events.Encode(cfg)
	if err != nil {
		b.Fatal(err)
	}
	bw.in <- msg
	select {
	case <-msg.Acked():
	case <-msg.Nacked():
		b.Fatal("configuration nacked")
	}
}

// stop cancels Run, as main does when stdin closes, and waits for it.
func (bw *benchWatcher) stop(b *testing.B) {
	b.Helper()
	bw.cancel()
	if err := <-bw.done; err != nil {
		b.Fatalf("Run() = %v", err)
	}
}

// BenchmarkWatchStop measures shutdown: from cancelling Run's context (what
// main does once stdin closes) to Run returning, with one root of n skills
// watched. The goal at 10,000 skills is under 100 ms.
func BenchmarkWatchStop(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			root, dirs := skillTree(b, n)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				bw := startBenchWatcher(b)
				bw.configure(b, 1, root)
				b.StartTimer()
				bw.stop(b)
			}
			b.ReportMetric(float64(dirs), "folders")
		})
	}
}

// BenchmarkWatchRemoveRoot measures removing a watched root of n skills while
// running: from sending a configuration without it to its ack, by which the
// root is unwatched. The goal at 10,000 skills is under 1 s.
func BenchmarkWatchRemoveRoot(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			root, dirs := skillTree(b, n)
			other := b.TempDir()
			bw := startBenchWatcher(b)
			defer bw.stop(b)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				bw.configure(b, uint64(2*i+1), root, other)
				b.StartTimer()
				bw.configure(b, uint64(2*i+2), other)
			}
			b.ReportMetric(float64(dirs), "folders")
		})
	}
}
