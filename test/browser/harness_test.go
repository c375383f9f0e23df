package browser

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/evanw/esbuild/pkg/api"
)

// defaultCSP is the Content-Security-Policy a host MUST apply to a view whose
// resource declares no _meta.ui.csp (APPS-R09, stable 2026-01-26).
const defaultCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; media-src 'self' data:; connect-src 'none';"

//go:embed web
var web embed.FS

// repoRoot is the skilljack-mcp checkout this module sits in.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// serverBinary builds the skilljack-mcp binary once per test run, or
// returns $SKILLJACK_BIN when that names a binary built beforehand.
func serverBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("SKILLJACK_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "skilljack-browser-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "skilljack-mcp")
		cmd := exec.Command("go", "build", "-o", builtBin, ".")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// bundleHost bundles web/host.js with the pinned AppBridge from
// .tools/browser/node_modules (installed by test/browser/run.sh).
func bundleHost(t testing.TB) []byte {
	t.Helper()
	modules := filepath.Join(repoRoot(t), ".tools", "browser", "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "ext-apps", "package.json")); err != nil {
		t.Fatalf("the pinned @modelcontextprotocol/ext-apps is not installed in %s: run test/browser/run.sh (%v)", modules, err)
	}
	here, err := filepath.Abs("web")
	if err != nil {
		t.Fatal(err)
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{filepath.Join(here, "host.js")},
		Bundle:        true,
		Write:         false,
		Format:        api.FormatIIFE,
		Platform:      api.PlatformBrowser,
		Target:        api.ES2022,
		NodePaths:     []string{modules},
		AbsWorkingDir: here,
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		var b strings.Builder
		for _, m := range res.Errors {
			fmt.Fprintf(&b, "%s\n", m.Text)
		}
		t.Fatalf("bundling web/host.js: %s", b.String())
	}
	return res.OutputFiles[0].Contents
}

// host is the test's MCP Apps host: the host page with AppBridge on one
// loopback port, the sandbox proxy on another (its own origin, served with
// the default CSP), and the server binary behind /rpc.
type host struct {
	srv        backend
	hostURL    string
	sandboxURL string
	probes     atomic.Int64 // requests that reached /probe (a view's fetch must not)

	mu        sync.Mutex
	refused   []string // tools/call from the view the host refused (APPS-R11)
	appCalled []string // tools/call from the view passed to the server
}

func listen(t testing.TB, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return "http://" + ln.Addr().String()
}

func startHost(t testing.TB, srv backend, js []byte) *host {
	t.Helper()
	h := &host{srv: srv}
	page, _ := web.ReadFile("web/host.html")
	proxy, _ := web.ReadFile("web/sandbox.html")
	hm := http.NewServeMux()
	hm.HandleFunc("GET /host.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	hm.HandleFunc("GET /host.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(js)
	})
	hm.HandleFunc("/probe", func(w http.ResponseWriter, r *http.Request) {
		h.probes.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Write([]byte("reached"))
	})
	hm.HandleFunc("POST /rpc", h.rpc)
	h.hostURL = listen(t, hm)
	sm := http.NewServeMux()
	sm.HandleFunc("GET /sandbox.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", defaultCSP)
		w.Write(proxy)
	})
	h.sandboxURL = listen(t, sm)
	return h
}

// rpc forwards one request of the host page to the server. A tools/call that
// the view made (from=app) is refused unless the tool's _meta.ui.visibility
// includes "app" (default ["model","app"]), as APPS-R11 requires of hosts.
func (h *host) rpc(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		From   string          `json:"from"`
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if req.From == "app" && req.Method == "tools/call" {
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(req.Params, &p)
		if err := h.appMayCall(ctx, p.Name); err != nil {
			h.mu.Lock()
			h.refused = append(h.refused, p.Name)
			h.mu.Unlock()
			json.NewEncoder(w).Encode(map[string]any{"error": rpcError{Code: -32602, Message: err.Error()}})
			return
		}
		h.mu.Lock()
		h.appCalled = append(h.appCalled, p.Name)
		h.mu.Unlock()
	}
	res, err := h.srv.raw(ctx, req.Method, req.Params)
	var re *rpcError
	switch {
	case errors.As(err, &re):
		json.NewEncoder(w).Encode(map[string]any{"error": re})
	case err != nil:
		json.NewEncoder(w).Encode(map[string]any{"error": rpcError{Code: -32603, Message: err.Error()}})
	default:
		json.NewEncoder(w).Encode(map[string]any{"result": res})
	}
}

// toolInfo is the part of a tools/list entry the host reads.
type toolInfo struct {
	Name string `json:"name"`
	Meta struct {
		UI *struct {
			ResourceURI string   `json:"resourceUri"`
			Visibility  []string `json:"visibility"`
		} `json:"ui"`
		FlatURI string `json:"ui/resourceUri"`
	} `json:"_meta"`
}

func (ti toolInfo) visibility() []string {
	if ti.Meta.UI == nil || ti.Meta.UI.Visibility == nil {
		return []string{"model", "app"}
	}
	return ti.Meta.UI.Visibility
}

// backend is the MCP server behind the host: the real binary (*mcpServer).
type backend interface {
	raw(ctx context.Context, method string, params any) (json.RawMessage, error)
}

func listTools(ctx context.Context, b backend) ([]toolInfo, error) {
	raw, err := b.raw(ctx, "tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var res struct {
		Tools []toolInfo `json:"tools"`
	}
	err = json.Unmarshal(raw, &res)
	return res.Tools, err
}

func (h *host) appMayCall(ctx context.Context, name string) error {
	tools, err := listTools(ctx, h.srv)
	if err != nil {
		return err
	}
	for _, ti := range tools {
		if ti.Name == name {
			if slices.Contains(ti.visibility(), "app") {
				return nil
			}
			return fmt.Errorf("host refused: tool %q is not visible to apps (visibility %v)", name, ti.visibility())
		}
	}
	return fmt.Errorf("host refused: no tool %q on this server", name)
}

// newBrowser starts headless Chromium for the test; CHROMIUM overrides the
// executable (default /usr/bin/chromium, the Debian package).
func newBrowser(t testing.TB) context.Context {
	t.Helper()
	exe := os.Getenv("CHROMIUM")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("no Chromium at %s: run test/browser/run.sh, which installs Debian's chromium (%v)", exe, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.WindowSize(1000, 1200),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its own sandbox as root
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return ctx
}
