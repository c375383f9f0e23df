package mcpface_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// served is what a client reads of a facade's catalog: every list and
// every skills/list and skills/get answer, as JSON.
func served(t *testing.T, cs *mcp.ClientSession, cat *events.Catalog) string {
	t.Helper()
	ctx := t.Context()
	out := map[string]any{}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out["prompts"] = prompts.Prompts
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out["tools"] = tools.Tools
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out["resources"] = res.Resources
	list, err := call(t, cs, "skills/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	out["skills/list"] = list
	var gets []any
	for i := range cat.Skills {
		if sk := cat.Skills[i]; sk.Listed {
			g, err := call(t, cs, "skills/get", &rawParams{URI: sk.URI})
			if err != nil {
				t.Fatal(err)
			}
			gets = append(gets, g)
		}
	}
	out["skills/get"] = gets
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEditsServeAsFresh (issue 12: edit latency): a facade that takes
// catalog versions sharing every unchanged skill with the one before (as
// the builder's incremental path makes them) and so rebuilds only what
// the changed skills need serves, after each, exactly what a facade given
// that catalog first serves: prompts, tools (whose description carries
// the catalog in tool-description mode), resources, skills/list and
// skills/get — also where a change shortens the catalog to its budget.
func TestEditsServeAsFresh(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		budget int
	}{{mcpface.CatalogInstructions, 0}, {mcpface.CatalogInstructions, 1200}, {mcpface.CatalogToolDescription, 0}} {
		t.Run(fmt.Sprintf("%s/budget=%d", tc.mode, tc.budget), func(t *testing.T) {
			fx := newFixture(t)
			opts := &mcpface.Options{CatalogMode: tc.mode, Tools: mcpface.ToolsAlways, CatalogBudget: tc.budget}
			f := newFacade(t, fx.cat, opts)
			cs := connect(t, f, "2025-11-25", nil)
			served(t, cs, fx.cat)
			ed := mcpface.NewSkillEditor()
			at := func(s []*events.Skill, qname string) *events.Skill {
				return ed.At(s, func(sk *events.Skill) bool { return sk.QualifiedName == qname })
			}
			edits := []struct {
				name string
				edit func(s []*events.Skill)
			}{
				{"one file's bytes", func(s []*events.Skill) {
					sk := at(s, "skills__code-review")
					sk.Files = slices.Clone(sk.Files)
					sk.Files[1].Size++
					sk.Files[1].Digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
				}},
				{"a description", func(s []*events.Skill) { at(s, "skills__escape").Description = "A new description." }},
				{"a long description, over the budget", func(s []*events.Skill) {
					for range 40 {
						at(s, "skills__many").Description += "Much longer now. "
					}
				}},
				{"user-invocable off", func(s []*events.Skill) { at(s, "skills__escape").UserInvocable = false }},
				{"model-invocable off", func(s []*events.Skill) { at(s, "skills__code-review").ModelInvocable = false }},
				{"unlisted", func(s []*events.Skill) { at(s, "skills__code-review").Listed = false }},
				{"back", func(s []*events.Skill) { copy(s, fx.cat.Skills) }},
			}
			cat := fx.cat
			for _, e := range edits {
				next := slices.Clone(cat.Skills)
				ed.Reset()
				e.edit(next)
				cat = events.NewCatalog(cat.Version+1, false, next, nil)
				if !f.SetCatalog(cat) {
					t.Fatal("SetCatalog = false")
				}
				fresh := newFacade(t, events.NewCatalog(cat.Version, false, slices.Clone(cat.Skills), nil), opts)
				if got, want := served(t, cs, cat), served(t, connect(t, fresh, "2025-11-25", nil), cat); got != want {
					t.Errorf("%s: served after the edit differs from a fresh facade's:\n got %s\nwant %s", e.name, got, want)
				}
			}
		})
	}
}
