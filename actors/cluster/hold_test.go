package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestHoldRemote: a new leader exports the cluster's skills of a remote
// source until its own sync of that source is in the local catalog; a
// source the cluster has no skills of, or a local source, is exported as
// the leader has it; a source no longer configured goes (issue 16: a
// leader change must not drop or roll back remote skills).
func TestHoldRemote(t *testing.T) {
	gh := events.Source{ID: "1", Kind: events.SourceGitHub, Location: "github.com/acme/skills"}
	wk := events.Source{ID: "2", Kind: events.SourceWellKnown, Location: "https://pub.example/"}
	gone := events.Source{ID: "3", Kind: events.SourceGitHub, Location: "github.com/old/skills"}
	loc := events.Source{ID: "0", Kind: events.SourceLocal, Location: "/srv/skills"}
	sk := func(src events.Source, name, desc string) *events.Skill {
		return &events.Skill{QualifiedName: src.ID + "__" + name, URI: "skill://" + src.ID + "/" + name + "/SKILL.md", Description: desc, Source: src}
	}
	cluster := []*events.Skill{sk(gh, "gamma", "cluster"), sk(gone, "old", "cluster"), sk(loc, "alpha", "cluster")}
	var h holding
	h.configure(events.SourcesConfigured{Sources: []events.Source{loc, gh, wk}})
	synced := time.Now()
	before, after := synced.Add(-time.Second), synced.Add(time.Second)
	local := []*events.Skill{sk(loc, "alpha", "leader"), sk(wk, "pub", "leader")} // gh not synced yet: none
	names := func(skills []*events.Skill) []string {
		var out []string
		for _, s := range skills {
			out = append(out, s.QualifiedName+"="+s.Description)
		}
		slices.Sort(out)
		return out
	}
	check := func(what string, cat *events.Catalog, local []*events.Skill, want ...string) {
		t.Helper()
		got, _ := h.merge(cat, local, cluster)
		if !slices.Equal(names(got), want) {
			t.Errorf("%s: exported %v, want %v", what, names(got), want)
		}
	}
	cat := &events.Catalog{Scanned: map[string]time.Time{"0": after, "1": before, "2": after}}
	check("before any sync", cat, local, "0__alpha=leader", "1__gamma=cluster", "2__pub=leader")
	h.sync(events.SourceSynced{Source: gh, SyncedAt: synced})
	check("synced, catalog scanned before the sync", cat, local, "0__alpha=leader", "1__gamma=cluster", "2__pub=leader")
	cat.Scanned["1"] = after
	local = append(local, sk(gh, "gamma", "leader"), sk(gh, "delta", "leader"))
	check("synced and rescanned", cat, local, "0__alpha=leader", "1__delta=leader", "1__gamma=leader", "2__pub=leader")
}
