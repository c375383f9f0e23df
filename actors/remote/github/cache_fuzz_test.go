package github

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors/remote"
	"github.com/skilljack/skilljack-mcp/actors/remote/remotetest"
	"github.com/skilljack/skilljack-mcp/events"
)

// runFetcherPaths runs, on the tree below base, what a sync of the GitHub
// poller does to its cache besides downloading: open and check the
// folders, remove crash leftovers and swap a new copy of the clone in.
// (The publisher fetcher's half of the tree is exercised by
// actors/remote/wellknown's FuzzCachePrune.)
func runFetcherPaths(base string) {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := &ghWorker{p: &Poller{log: discard}, log: discard, spec: events.GitHubRepo{Owner: "acme", Repo: "skills"},
		ownerDir: filepath.Join(base, "gh", "acme"), clone: filepath.Join(base, "gh", "acme", "skills"), warned: map[string]bool{}}
	if owner, err := g.openCache(); err == nil {
		g.removeStale(owner)
		if stage, err := remote.MakeTempFolder(owner, ".staging-skills"); err == nil {
			if remote.SwapFolder(owner, stage, "skills", ".trash-skills~9") != nil {
				owner.RemoveAll(stage)
			}
		}
		owner.Close()
	}
}

// FuzzCachePrune is [remotetest.FuzzCachePrune] on this fetcher's cache
// paths ([runFetcherPaths]): nothing outside the caches changes and
// nothing inside them goes unless it was the fetchers' own (issue 10 F1).
// Its seed corpus runs in plain go test.
func FuzzCachePrune(f *testing.F) {
	remotetest.FuzzCachePrune(f, runFetcherPaths)
}
