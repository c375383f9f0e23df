package wellknown

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/remote"
	"github.com/skilljack/skilljack-mcp/actors/remote/remotetest"
	"github.com/skilljack/skilljack-mcp/events"
)

// runFetcherPaths runs, on the tree below base, what a sync of the
// publisher fetcher does to its cache besides downloading: open and check
// the folders, remove crash leftovers, swap a new copy of a skill in, and
// prune every skill the cache index records (none stays). (The GitHub
// poller's half of the tree is exercised by actors/remote/github's
// FuzzCachePrune.)
func runFetcherPaths(base string) {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &wkWorker{f: &Fetcher{log: discard}, dir: filepath.Join(base, "wk", "pub"), warned: map[string]bool{}}
	if c, err := w.openCache(); err == nil {
		w.removeStale(c, discard)
		cached := remote.ReadJSON[wkCacheIndex](c.pub, "index.json")
		if c.openSkills() == nil {
			if claimSkill(c, "a", cached.Skills["a"], len(cached.Skills) > 0) == nil {
				if stage, err := remote.MakeTempFolder(c.pub, ".staging-a"); err == nil {
					if remote.SwapFolder(c.pub, stage, "skills/a", ".trash-a~9") != nil {
						c.pub.RemoveAll(stage)
					}
				}
			}
			w.prune(c, discard, cached, wkCacheIndex{Skills: map[string]wkCached{}}, &events.SourceSynced{})
		}
		c.close()
	}
}

// FuzzCachePrune is [remotetest.FuzzCachePrune] on this fetcher's cache
// paths ([runFetcherPaths]): nothing outside the caches changes and
// nothing inside them goes unless it was the fetchers' own (issue 10 F1).
// Its seed corpus runs in plain go test.
func FuzzCachePrune(f *testing.F) {
	remotetest.FuzzCachePrune(f, runFetcherPaths)
}
