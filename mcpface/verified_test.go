package mcpface_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// TestReadVerifiedIdentity checks that a supporting file served without a
// re-hash (its identity unchanged since its bytes matched the digest) is
// still never served once it changes behind the facade's back, even with
// its size and modification time restored: the change time tells (issue 12).
func TestReadVerifiedIdentity(t *testing.T) {
	fx := newFixture(t)
	cr := fx.skills["skills__code-review"]
	p := filepath.Join(cr.Dir, "templates", "email.md")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// An identity is remembered only once its change time has settled.
	time.Sleep(2100 * time.Millisecond)
	f := newFacade(t, fx.cat, nil)
	cs := connect(t, f, legacy, nil)
	const uri = "skill://skills/code-review/templates/email.md"
	for i := range 3 { // hashed, then served by identity
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || res.Contents[0].Text != "Dear customer,\n" {
			t.Fatalf("read %d: %v %+v", i, err, res)
		}
	}
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.ToUpper(old) // same size
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if we := wireError(t, err); we.Code != -32603 || !strings.Contains(we.Message, "changed on disk since it was hashed") {
		t.Errorf("changed file, size and mtime restored: error %d %q, want -32603", we.Code, we.Message)
	}
	// Back to the hashed bytes (a new change time): served again, hashed.
	if err := os.WriteFile(p, old, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || res.Contents[0].Text != "Dear customer,\n" {
		t.Fatalf("read after restore: %v %+v", err, res)
	}
}

// TestSkillMDReadOnDemand is issue 12: a catalog the builder makes holds no
// SKILL.md bytes; resources/read, load-skill and the prompt read the file
// on demand and serve it only while its bytes match Files[0]'s digest. A
// SKILL.md changed behind the facade's back, its size and modification
// time restored, is refused (no newer catalog comes), never served with
// the old digest.
func TestSkillMDReadOnDemand(t *testing.T) {
	fx := newFixture(t)
	var skills []*events.Skill
	for _, s := range fx.cat.Skills {
		c := *s
		c.SkillMD = nil
		skills = append(skills, &c)
	}
	cat := events.NewCatalog(1, false, skills, nil)
	cr := fx.skills["skills__code-review"]
	p := filepath.Join(cr.Dir, "SKILL.md")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // identities settle: served without a re-hash
	f := newFacade(t, cat, &mcpface.Options{Tools: "always"})
	cs := connect(t, f, legacy, nil)
	const uri = "skill://skills/code-review/SKILL.md"
	for i := range 2 {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || res.Contents[0].Text != string(old) {
			t.Fatalf("read %d: %v %+v", i, err, res)
		}
	}
	load := func() (*mcp.CallToolResult, error) {
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "skills__code-review"}})
	}
	if res, err := load(); err != nil || res.IsError || !strings.Contains(textOf(t, res.Content[0]), "Review a diff.") {
		t.Fatalf("load-skill: %v %+v", err, res)
	}
	if err := os.WriteFile(p, bytes.ToUpper(old), 0o644); err != nil { // same size
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if we := wireError(t, err); we.Code != -32603 || !strings.Contains(we.Message, "changed on disk since it was hashed") {
		t.Errorf("changed SKILL.md, size and mtime restored: error %d %q, want -32603", we.Code, we.Message)
	}
	if res, err := load(); err == nil && !res.IsError && strings.Contains(textOf(t, res.Content[0]), "REVIEW A DIFF.") {
		t.Errorf("load-skill served the changed SKILL.md under the old digest: %+v", res)
	}
}
