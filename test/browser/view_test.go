package browser

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// view is one MCP Apps view opened by the test host in its own tab: page runs
// actions in the host page, frame in the view itself (the inner sandboxed
// iframe, an out-of-process target because its origin is opaque).
type view struct {
	t     *testing.T
	h     *host
	page  context.Context
	frame context.Context
}

// openView opens the host page for tool (skill-config or skill-display) with
// the given theme and inner-iframe sandbox flags, and waits until the view has
// initialized and received the tool result.
func openView(t *testing.T, browser context.Context, h *host, tool, theme, sandbox string) *view {
	t.Helper()
	return openViewQuery(t, browser, h, url.Values{"tool": {tool}, "theme": {theme}, "inner": {sandbox}})
}

// openViewQuery is openView with the host page's query given whole (tool,
// theme, inner, and vars=0 for a host without style variables).
func openViewQuery(t *testing.T, browser context.Context, h *host, q url.Values) *view {
	t.Helper()
	before := map[target.ID]bool{}
	infos, err := chromedp.Targets(browser)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		before[in.TargetID] = true
	}
	page, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	q.Set("sandbox", h.sandboxURL+"/sandbox.html")
	if err := chromedp.Do(page, chromedp.Navigate(h.hostURL+"/host.html?"+q.Encode())); err != nil {
		t.Fatal(err)
	}
	v := &view{t: t, h: h, page: page}
	v.waitPage(`window.hostState && window.hostState.initialized === true`, "the view to initialize")
	deadline := time.Now().Add(10 * time.Second)
	for v.frame == nil {
		infos, err := chromedp.Targets(browser)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if in.Type == "iframe" && in.URL == "about:srcdoc" && !before[in.TargetID] {
				fctx, cancel := chromedp.NewContext(browser, chromedp.WithTargetID(in.TargetID))
				t.Cleanup(cancel)
				// The first run attaches; it must not have a timeout (that would
				// detach the target when it expires).
				if err := chromedp.Do(fctx); err != nil {
					t.Fatalf("attaching to the view's iframe: %v", err)
				}
				v.frame = fctx
			}
		}
		if v.frame == nil {
			if time.Now().After(deadline) {
				var b strings.Builder
				for _, in := range infos {
					fmt.Fprintf(&b, "  %s %s\n", in.Type, in.URL)
				}
				t.Fatalf("no out-of-process iframe target for the view; targets:\n%s", b.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return v
}

// in returns v reporting to t (a subtest's).
func (v *view) in(t *testing.T) *view {
	c := *v
	c.t = t
	return &c
}

// eval evaluates js in the view and decodes its value (promises awaited).
func eval[T any](v *view, js string) T {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(v.frame, 20*time.Second)
	defer cancel()
	res, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		v.t.Fatalf("in the view: %s: %v", js, err)
	}
	return res
}

// evalPage evaluates js in the host page.
func evalPage[T any](v *view, js string) T {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(v.page, 20*time.Second)
	defer cancel()
	res, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		v.t.Fatalf("in the host page: %s: %v", js, err)
	}
	return res
}

// wait polls the boolean expression js in the view until it holds (10 s).
func (v *view) wait(js, what string) {
	v.t.Helper()
	v.poll(v.frame, js, what)
}

func (v *view) waitPage(js, what string) {
	v.t.Helper()
	v.poll(v.page, js, what)
}

func (v *view) poll(ctx context.Context, js, what string) {
	v.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool]("!!("+js+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var errs []string
			if v.page != nil {
				c, cancel := context.WithTimeout(v.page, 2*time.Second)
				errs, _ = chromedp.Run(c, chromedp.Evaluate[[]string](`window.hostState ? window.hostState.errors : []`))
				cancel()
			}
			v.t.Fatalf("waiting for %s (%s): err=%v host errors=%v", what, js, err, errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// text returns the trimmed textContent of the first element matching sel.
func (v *view) text(sel string) string {
	v.t.Helper()
	return eval[string](v, `(document.querySelector(`+jsq(sel)+`)?.textContent ?? "<no element>").trim()`)
}

// do runs the statements js in the view for their side effect.
func (v *view) do(js string) {
	v.t.Helper()
	eval[bool](v, "(() => { "+js+" })(), true")
}

// keys types keys into the focused element of the view with real key events
// (Input.dispatchKeyEvent); "\r" is Enter.
func (v *view) keys(keys string) {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(v.frame, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(keys)); err != nil {
		v.t.Fatalf("typing %q: %v", keys, err)
	}
}

// screenshot saves a PNG of the host page (with the view in it) as
// test/browser/out/name.png.
func (v *view) screenshot(name string) {
	v.t.Helper()
	// Let the host apply the view's last size-changed and both documents
	// paint before the capture.
	h := eval[int](v, `Math.ceil(document.documentElement.getBoundingClientRect().height)`)
	v.waitPage(fmt.Sprintf(`window.hostState.height === %d`, h), "the frame to take the view's height")
	eval[bool](v, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
	evalPage[bool](v, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
	time.Sleep(150 * time.Millisecond)
	ctx, cancel := context.WithTimeout(v.page, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#frame")))
	if err != nil {
		v.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll("out", 0o755); err != nil {
		v.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("out", name+".png"), png, 0o644); err != nil {
		v.t.Fatal(err)
	}
}
