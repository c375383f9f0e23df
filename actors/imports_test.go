package actors_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/skilljack/skilljack-mcp"

// Packages of this module by role (import paths relative to the module).
var (
	// leaves import nothing of this module.
	leaves = []string{"events", "fetch", "archive"}
	// actorPackages are the actors, one package each; none imports another.
	actorPackages = []string{
		"actors/watch", "actors/hasher", "actors/catalog", "actors/notifier",
		"actors/config", "actors/remote/wellknown", "actors/remote/github", "actors/cluster",
	}
	// shared are what an actor package may import of this module.
	shared = []string{"events", "fetch", "archive", "actors/skill", "actors/remote", "actors/config"}
	// wiring may import every actor package: it builds and runs them. The
	// actors root holds only NewPipeline, Run, Validate and Bundled; main
	// (".") loads the configuration and starts the pipeline and the facade.
	wiring = []string{"actors", "."}
	// allowedExtra lists, per package, imports of this module allowed on
	// top of its role. Tighten by deleting entries.
	allowedExtra = map[string][]string{
		"actors/skill":  {"events"},
		"actors/remote": {"events", "fetch", "archive", "actors/skill"},
		"mcpface":       {"events", "actors/skill", "mcpface/apps"},
		// The test-support packages (see testSupport) import the package
		// they support and nothing else of this module, so that a test of
		// any package may import them without a cycle.
		"events/eventstest":        {"events"},
		"actors/skill/skilltest":   {},
		"actors/remote/remotetest": {"actors/remote"},
	}
)

// testSupport reports whether pkg is a test-support package: one named
// like net/http/httptest, after the package it supports and "test".
// Only tests import one; no package's non-test code may.
func testSupport(pkg string) bool {
	base := path.Base(pkg)
	return base != "test" && strings.HasSuffix(base, "test")
}

// Third-party packages only one package of this module may import.
var exclusive = map[string]string{
	"github.com/modelcontextprotocol/go-sdk": "mcpface",
	"github.com/rjeczalik/notify":            "actors/watch",
	"golang.org/x/sys/unix":                  "actors/watch", // the inotify backend (Linux)
	// The cluster (issue 16): watermill over JetStream in its one package;
	// the NATS server is embedded by tests only ("tests" names no package),
	// and so are NATS JWTs (the tests' operator-mode server and .creds
	// files; a replica reads its .creds file through nats.go and nkeys).
	"github.com/ThreeDotsLabs/watermill-nats": "actors/cluster",
	"github.com/nats-io/nats-server":          "tests",
	"github.com/nats-io/jwt":                  "tests",
}

// TestImportRules checks the import graph of the module's non-test code
// (DESIGN "Rules that keep it an actor system"): events, fetch and archive
// import nothing of this module; an actor package imports events, fetch,
// archive, actors/skill, actors/remote and actors/config, never another
// actor package; only mcpface imports the MCP SDK; only actors/watch
// imports rjeczalik/notify; test-support packages (events/eventstest …)
// import only what they support and only tests import them. It reads the sources, build tags ignored, so
// every platform's files are checked.
func TestImportRules(t *testing.T) {
	imports := moduleImports(t, "..")
	if len(imports["actors/watch"]) == 0 {
		t.Fatalf("found no imports of actors/watch among %d packages: wrong module root?", len(imports))
	}
	for pkg, imps := range imports {
		for _, imp := range imps {
			if why := importRule(pkg, imp); why != "" {
				t.Errorf("%s imports %s: %s", displayPkg(pkg), imp, why)
			}
		}
	}
}

// importRule returns why pkg may not import imp, or "".
func importRule(pkg, imp string) string {
	for prefix, owner := range exclusive {
		if (imp == prefix || strings.HasPrefix(imp, prefix+"/")) && pkg != owner {
			return "only " + owner + " may import " + prefix
		}
	}
	rel, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return ""
	}
	if testSupport(rel) && !testSupport(pkg) {
		return "a test-support package is imported only by tests"
	}
	switch {
	case slices.Contains(leaves, pkg):
		return "events, fetch and archive are leaves: they import nothing of this module"
	case slices.Contains(wiring, pkg):
		return ""
	case slices.Contains(allowedExtra[pkg], rel):
		return ""
	case slices.Contains(actorPackages, pkg):
		if rel == pkg || slices.Contains(shared, rel) {
			return ""
		}
		return "an actor package imports only " + strings.Join(shared, ", ") + " of this module, never another actor"
	case slices.Contains(actorPackages, rel):
		return "only the wiring (actors) imports an actor package"
	}
	if _, listed := allowedExtra[pkg]; listed {
		return "not in its allowed imports"
	}
	return ""
}

func displayPkg(pkg string) string {
	if pkg == "." {
		return module
	}
	return module + "/" + pkg
}

// moduleImports maps each package directory below root (relative, "/"
// separated, "." for root) to the imports of its non-test Go files.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		pkg := path.Clean(filepath.ToSlash(rel))
		for _, s := range f.Imports {
			imp, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return err
			}
			if !slices.Contains(out[pkg], imp) {
				out[pkg] = append(out[pkg], imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestImportRuleCases pins importRule on the cases it must refuse and
// allow, so a rule cannot go silently lax.
func TestImportRuleCases(t *testing.T) {
	tests := []struct {
		pkg, imp string
		ok       bool
	}{
		{"actors/hasher", module + "/actors/catalog", false},
		{"actors/watch", module + "/actors/hasher", false},
		{"actors/remote/github", module + "/actors/remote/wellknown", false},
		{"actors/hasher", module + "/actors/skill", true},
		{"actors/hasher", module + "/events", true},
		{"actors/remote/wellknown", module + "/actors/remote", true},
		{"actors/catalog", module + "/actors/config", true},
		{"actors/notifier", module + "/mcpface", false},
		{"events", module + "/actors/skill", false},
		{"fetch", module + "/events", false},
		{"archive", module + "/fetch", false},
		{"actors/skill", module + "/actors/hasher", false},
		{"actors/catalog", "github.com/modelcontextprotocol/go-sdk/mcp", false},
		{"mcpface", "github.com/modelcontextprotocol/go-sdk/mcp", true},
		{"mcpface", module + "/actors/hasher", false},
		{"actors/hasher", "github.com/rjeczalik/notify", false},
		{"actors/watch", "github.com/rjeczalik/notify", true},
		{"actors", module + "/actors/hasher", true},
		{"actors", module + "/actors/remote/github", true},
		{"actors/remote", module + "/actors/config", false},
		{"actors/remote", module + "/actors/remote/wellknown", false},
		{"actors/remote", module + "/actors/skill", true},
		{"actors/skill", module + "/actors/config", false},
		{"actors/skill", module + "/actors/remote", false},
		{"actors/config", module + "/actors/hasher", false},
		{"actors/config", module + "/actors/skill", true},
		{"actors/hasher", module + "/actors/config", true},
		{"actors/remote/github", module + "/actors/remote", true},
		{"actors/remote/github", module + "/actors/config", true},
		{"actors/remote/wellknown", module + "/actors/remote/github", false},
		{"mcpface", module + "/actors/config", false},
		{"events/eventstest", module + "/events", true},
		{"events/eventstest", module + "/actors/skill/skilltest", false},
		{"events/eventstest", module + "/actors/config", false},
		{"actors/skill/skilltest", module + "/actors/skill", false},
		{"actors/skill/skilltest", module + "/events", false},
		{"actors/remote/remotetest", module + "/actors/remote", true},
		{"actors/remote/remotetest", module + "/actors/skill/skilltest", false},
		{"actors/remote/remotetest", module + "/actors/remote/github", false},
		{"actors/remote/remotetest", module + "/actors/config", false},
		{"actors/remote/remotetest", module + "/events/eventstest", false},
		{"actors/hasher", module + "/events/eventstest", false},
		{"actors", module + "/actors/remote/remotetest", false},
		{"mcpface", module + "/actors/skill/skilltest", false},
		{"events", module + "/events/eventstest", false},
		{"actors/cluster", "github.com/nats-io/jwt/v2", false},
		{"actors/cluster", "github.com/nats-io/nkeys", true},
	}
	for _, tc := range tests {
		why := importRule(tc.pkg, tc.imp)
		if (why == "") != tc.ok {
			t.Errorf("importRule(%q, %q) = %q, want allowed %v", tc.pkg, tc.imp, why, tc.ok)
		}
	}
}
