package cluster

import (
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// TestCompareSources: a follower warns once per leader and its sources
// when they are not its own (in order); its own pointers, pointers without
// sources and a replica that says none are not compared.
func TestCompareSources(t *testing.T) {
	log, logs := eventstest.CaptureLog()
	im := &Importer{node: "me", sources: []string{"/skills", "bundled"}, log: log}
	warnings := func() int { return strings.Count(logs.String(), "other sources than the leader") }
	for _, p := range []Pointer{
		{Node: "me", Sources: []string{"/elsewhere"}},
		{Node: "a"},
		{Node: "a", Sources: []string{"/skills", "bundled"}},
	} {
		im.compareSources(p)
	}
	if n := warnings(); n != 0 {
		t.Fatalf("%d warnings, want none:\n%s", n, logs)
	}
	for range 3 {
		im.compareSources(Pointer{Node: "a", Sources: []string{"bundled", "/skills"}})
	}
	if n := warnings(); n != 1 || !strings.Contains(logs.String(), `leader_sources=bundled,/skills sources=/skills,bundled`) {
		t.Fatalf("%d warnings, want 1 naming both:\n%s", n, logs)
	}
	im.compareSources(Pointer{Node: "b", Sources: []string{"/other"}}) // a new leader
	im.compareSources(Pointer{Node: "b", Sources: []string{"/skills", "bundled"}})
	im.compareSources(Pointer{Node: "b", Sources: []string{"/other"}}) // changed again
	if n := warnings(); n != 3 {
		t.Errorf("%d warnings, want 3:\n%s", n, logs)
	}
	(&Importer{node: "me", log: log}).compareSources(Pointer{Node: "a", Sources: []string{"/other"}})
	if n := warnings(); n != 3 {
		t.Errorf("a replica without sources warned:\n%s", logs)
	}
}
