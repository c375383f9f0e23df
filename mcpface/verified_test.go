package mcpface_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
