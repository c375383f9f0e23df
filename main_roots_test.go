package main

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client roots (issue 13 item 14): a stdio client that declares roots gets
// the skill folders of its workspace roots served beside the configured
// sources, re-read when its roots change; --roots=off and a client without
// roots are never asked.

// fileURI is the file:// URI of the absolute folder dir.
func fileURI(dir string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
}

// index reads skill://index.json (on 2026-07-28 the read that carries the
// roots round trip when they are due).
func index(t *testing.T, r *running) string {
	t.Helper()
	res, err := r.cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://index.json"})
	if err != nil {
		t.Fatalf("reading the index: %v\nstderr:\n%s", err, r.stderr)
	}
	if res.NeedsInput() || len(res.Contents) != 1 {
		t.Fatalf("index read = %+v, want its contents", res)
	}
	return res.Contents[0].Text
}

// waitIndex reads the index until ok accepts it, for up to 20 s.
func waitIndex(t *testing.T, r *running, what string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		text := index(t, r)
		if ok(text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("index never %s:\n%s\nstderr:\n%s", what, text, r.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRunClientRoots: on both eras a client declaring roots that point at a
// project holding .claude/skills/x gets x served (as alpha__x, prefixed by
// the root's folder name) with a list_changed; when the client replaces the
// root (notifications/roots/list_changed) the old root's skills go and the
// new root's come. A root that is not file:// is ignored (issue 13 item 14).
func TestRunClientRoots(t *testing.T) {
	base := t.TempDir()
	lib := filepath.Join(base, "lib")
	alpha := filepath.Join(base, "alpha")
	beta := filepath.Join(base, "beta")
	writeFile(t, filepath.Join(lib, "hello", "SKILL.md"), skillBody("hello", "Says hello."))
	writeFile(t, filepath.Join(alpha, ".claude", "skills", "x", "SKILL.md"), skillBody("x", "Project skill x."))
	writeFile(t, filepath.Join(beta, "skills", "y", "SKILL.md"), skillBody("y", "Project skill y."))
	writeFile(t, filepath.Join(beta, ".agents", "skills", "z", "SKILL.md"), skillBody("z", "Project skill z."))
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			var changed atomic.Int32
			client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "v0"}, &mcp.ClientOptions{
				ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
				PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed.Add(1) },
				ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed.Add(1) },
			})
			client.AddRoots(&mcp.Root{URI: fileURI(alpha), Name: "alpha"}, &mcp.Root{URI: "https://example.com/repo"})
			r := startRunClient(t, version, client, "--verbose", "--tools=always", lib)
			ctx := t.Context()

			waitIndex(t, r, "listed alpha/x", func(s string) bool { return strings.Contains(s, "skill://alpha/x/SKILL.md") })
			res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "alpha__x"}})
			if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Body of x.") {
				t.Fatalf("load-skill alpha__x: %v %+v", err, res)
			}
			waitFor(t, "a list_changed after the roots were read", func() bool { return changed.Load() > 0 })

			before := changed.Load()
			client.RemoveRoots(fileURI(alpha))
			client.AddRoots(&mcp.Root{URI: fileURI(beta)})
			waitIndex(t, r, "swapped alpha for beta", func(s string) bool {
				return !strings.Contains(s, "alpha/x") && strings.Contains(s, "skill://beta/y/SKILL.md") && strings.Contains(s, "skill://beta/z/SKILL.md")
			})
			if !strings.Contains(index(t, r), "skill://lib/hello/SKILL.md") {
				t.Errorf("the configured source went with the roots")
			}
			waitFor(t, "a list_changed after the roots changed", func() bool { return changed.Load() > before })
			r.stop(t)
			if s := r.stderr.String(); !strings.Contains(s, "client root ignored: not a local file:// folder") {
				t.Errorf("stderr lacks the debug line about the https root:\n%s", s)
			}
		})
	}
}

// TestRunClientRootsNotAsked: with --roots=off, or with a client that does
// not declare roots, the server never asks (no roots/list request on
// 2025-11-25, no input_required result on 2026-07-28) and serves the
// configured sources only (issue 13 item 14).
func TestRunClientRootsNotAsked(t *testing.T) {
	base := t.TempDir()
	lib := filepath.Join(base, "lib")
	alpha := filepath.Join(base, "alpha")
	writeFile(t, filepath.Join(lib, "hello", "SKILL.md"), skillBody("hello", "Says hello."))
	writeFile(t, filepath.Join(alpha, ".claude", "skills", "x", "SKILL.md"), skillBody("x", "Project skill x."))
	cases := []struct {
		name string
		caps *mcp.ClientCapabilities
		args []string
	}{
		{"roots off", nil, []string{"--roots=off"}},
		{"client without roots", &mcp.ClientCapabilities{}, nil},
	}
	for _, version := range eras {
		for _, c := range cases {
			t.Run(version+"/"+c.name, func(t *testing.T) {
				var asked atomic.Int32
				client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "v0"}, &mcp.ClientOptions{
					Capabilities: c.caps,
					// A 2026-07-28 input_required result comes back as it is.
					MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				})
				client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "roots/list" {
							asked.Add(1)
						}
						return next(ctx, method, req)
					}
				})
				client.AddRoots(&mcp.Root{URI: fileURI(alpha)})
				r := startRunClient(t, version, client, append([]string{"--verbose", lib}, c.args...)...)
				for range 3 {
					if text := index(t, r); strings.Contains(text, "alpha") || !strings.Contains(text, "skill://lib/hello/SKILL.md") {
						t.Fatalf("index = %s, want the configured source only", text)
					}
					if _, err := r.cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "skill", Arguments: map[string]string{"name": "lib__hello"}}); err != nil {
						t.Fatal(err)
					}
					time.Sleep(100 * time.Millisecond)
				}
				r.stop(t)
				if n := asked.Load(); n != 0 {
					t.Errorf("roots/list asked %d times", n)
				}
				if s := r.stderr.String(); strings.Contains(s, "asking the client for its roots") {
					t.Errorf("the server asked for roots:\n%s", s)
				}
			})
		}
	}
}

// waitFor polls ok for up to 20 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunClientRootsRetryServed: on 2026-07-28 the retry that carries the
// roots is served against them: the first load-skill of a root's skill
// succeeds (the go-sdk client answers the input request and retries by
// itself). An adversarial pass found the retry answered "No skill named"
// before the roots' catalog arrived.
func TestRunClientRootsRetryServed(t *testing.T) {
	base := t.TempDir()
	lib := filepath.Join(base, "lib")
	shop := filepath.Join(base, "shop")
	writeFile(t, filepath.Join(lib, "hello", "SKILL.md"), skillBody("hello", "Says hello."))
	writeFile(t, filepath.Join(shop, ".claude", "skills", "cart", "SKILL.md"), skillBody("cart", "Cart skill."))
	client := mcp.NewClient(&mcp.Implementation{Name: "roots-test", Version: "v0"}, nil)
	client.AddRoots(&mcp.Root{URI: fileURI(shop)})
	r := startRunClient(t, "2026-07-28", client, "--tools=always", lib)
	res, err := r.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "load-skill", Arguments: map[string]any{"name": "shop__cart"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Errorf("the first load-skill of a root's skill failed: %+v\nstderr:\n%s", res.Content, r.stderr)
	}
	r.stop(t)
}
