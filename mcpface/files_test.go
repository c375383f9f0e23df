package mcpface_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/mcpface"
)

// mapSource is a FileSource over a map from digest to bytes.
type mapSource map[string][]byte

func (m mapSource) Bytes(digest string, size int64) ([]byte, error) {
	if b, ok := m[digest]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("no object %s", digest)
}

// TestFileSourceServes: with Options.Files the facade serves every file,
// SKILL.md included, from the source by digest — the skill folders may be
// gone — and refuses bytes that are not the manifest's; /healthz carries
// the cluster field (issue 16).
func TestFileSourceServes(t *testing.T) {
	fx := newFixture(t)
	src := mapSource{}
	for _, sk := range fx.cat.Skills {
		for _, f := range sk.Files {
			b, err := os.ReadFile(filepath.Join(sk.Dir, filepath.FromSlash(f.OnDisk())))
			if err != nil {
				t.Fatal(err)
			}
			src[f.Digest] = b
		}
	}
	cr := fx.skills["skills__code-review"]
	for _, f := range cr.Files {
		if f.Path == "templates/sub/x.txt" {
			src[f.Digest] = []byte("y\n") // same size, other bytes
		}
	}
	if err := os.RemoveAll(fx.root); err != nil {
		t.Fatal(err)
	}
	f := newFacade(t, fx.cat, &mcpface.Options{Version: "1.2.3", Files: src})
	ts := serveHTTP(t, f, &mcpface.HTTPOptions{Loopback: true, Cluster: func() mcpface.ClusterHealth {
		return mcpface.ClusterHealth{Name: "c", Node: "n1", Leader: true}
	}})
	cs := connectHTTP(t, ts, "2025-11-25", nil, nil)
	for uri, want := range map[string]string{
		"skill://skills/code-review/templates/email.md": "Dear customer,\n",
		cr.URI: "name: code-review",
	} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("read %s: %v", uri, err)
			continue
		}
		if got := res.Contents[0].Text; !strings.Contains(got, want) {
			t.Errorf("read %s = %q, want %q in it", uri, got, want)
		}
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://skills/code-review/templates/sub/x.txt"}); err == nil {
		t.Error("bytes that are not the manifest's were served")
	}
	status, body := get(t, ts.URL+"/healthz")
	if want := `"cluster":{"name":"c","node":"n1","leader":true}`; status != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("GET /healthz = %d %s, want %s in it", status, body, want)
	}
}
