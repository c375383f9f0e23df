package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// env is one scenario's world: an isolated HOME (config.json lives in
// $HOME/.skilljack), two skill folders copied from testdata, the built server
// binary, the bundled host script and a fresh headless Chromium.
type env struct {
	t       *testing.T
	home    string
	a, b    string // skills-a (alpha, beta) and skills-b (gamma)
	bin     string
	js      []byte
	browser context.Context
}

var (
	bundleOnce sync.Once
	bundled    []byte
)

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), bin: serverBinary(t)}
	work := t.TempDir()
	for _, name := range []string{"skills-a", "skills-b"} {
		if err := os.CopyFS(filepath.Join(work, name), os.DirFS(filepath.Join("testdata", name))); err != nil {
			t.Fatal(err)
		}
	}
	e.a, e.b = filepath.Join(work, "skills-a"), filepath.Join(work, "skills-b")
	bundleOnce.Do(func() { bundled = bundleHost(t) })
	e.js = bundled
	e.browser = newBrowser(t)
	return e
}

func (e *env) configPath() string { return filepath.Join(e.home, ".skilljack", "config.json") }

func (e *env) writeConfig(cfg map[string]any) {
	e.t.Helper()
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.MkdirAll(filepath.Dir(e.configPath()), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(e.configPath(), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// config reads config.json as the server left it.
func (e *env) config() map[string]any {
	e.t.Helper()
	b, err := os.ReadFile(e.configPath())
	if err != nil {
		e.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		e.t.Fatalf("config.json is not JSON: %v\n%s", err, b)
	}
	return m
}

func strs(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// hasSkill reports whether skills/list of srv lists a URI under the folder
// prefix with the skill name (skill://<prefix>/<name>/SKILL.md).
func hasSkill(t *testing.T, srv *mcpServer, prefix, name string) bool {
	t.Helper()
	uris, err := srv.skillURIs(ctx(t))
	if err != nil {
		t.Fatalf("skills/list: %v", err)
	}
	return slices.Contains(uris, "skill://"+prefix+"/"+name+"/SKILL.md")
}

// themeColors returns the view's computed body background and text colours.
func themeColors(v *view) string {
	return eval[string](v, `(() => { const s = getComputedStyle(document.body); return s.backgroundColor + " / " + s.color; })()`)
}

// switchTheme asks the host to change its theme and waits until the view's
// colours differ from before (host-context-changed restyles the view).
func switchTheme(t *testing.T, v *view, theme string) {
	t.Helper()
	before := themeColors(v)
	evalPage[bool](v, fmt.Sprintf(`(window.setTheme(%s), true)`, jsq(theme)))
	v.wait(fmt.Sprintf(`document.documentElement.dataset.theme === %s`, jsq(theme)), "the view to take the "+theme+" theme")
	after := themeColors(v)
	if after == before {
		t.Fatalf("theme %s: the view's colours did not change (%s)", theme, after)
	}
	t.Logf("theme %s: %s -> %s", theme, before, after)
}

// scenario is what the steps of one app test share: the world, the server
// session the host talks to, the host and the open view.
type scenario struct {
	e   *env
	srv *mcpServer
	h   *host
	v   *view
}

// TestConfigApp drives the config app through the official AppBridge against
// the real binary: add a folder (config.json gains it, the same session's
// skills/list serves its skills), remove it, add an org and an origin, the
// static checkbox; and the sandbox rules: opaque origin, CSP blocks fetch,
// the host refuses a view's call to a tool not visible to apps (APPS-R09, R11).
func TestConfigApp(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(map[string]any{"skillDirectories": []string{e.a}, "keptUnknownKey": map[string]any{"x": 1}})
	srv := startServer(t, e.bin, e.home)
	h := startHost(t, srv, e.js)
	v := openView(t, e.browser, h, "skill-config", "light", "allow-scripts")
	v.wait(`document.querySelector('#dirs li[data-path]')`, "the directory cards")
	sc := &scenario{e: e, srv: srv, h: h, v: v}
	for _, st := range []struct {
		name string
		fn   func(*testing.T, *scenario)
	}{
		{"snapshot", configSnapshot},
		{"opaque origin", configOpaqueOrigin},
		{"CSP blocks fetch", configCSPBlocksFetch},
		{"add directory", configAddDirectory},
		{"add directory refused", configAddDirectoryRefused},
		{"remove directory", configRemoveDirectory},
		{"allowed org and origin", configAllowedOrgAndOrigin},
		{"bad origin", configBadOrigin},
		{"static mode", configStaticMode},
		{"model-only tool refused", configModelOnlyToolRefused},
		{"themes", configThemes},
	} {
		t.Run(st.name, func(t *testing.T) { st.fn(t, sc) })
	}
}

// configSnapshot is the step "snapshot" of TestConfigApp.
func configSnapshot(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	card := fmt.Sprintf(`#dirs li[data-path=%s]`, jsq(e.a))
	if got := v.text(card); !strings.Contains(got, "CONFIG") || !strings.Contains(got, "LOCAL") || !strings.Contains(got, "2 skills") {
		t.Errorf("card of %s = %q, want CONFIG and LOCAL badges and 2 skills", e.a, got)
	}
	if !eval[bool](v, `document.getElementById("override").hidden && !document.getElementById("add").disabled`) {
		t.Error("override banner shown or Add disabled for a config-file source")
	}
	if got := evalPage[string](v, `window.hostState.resourceMimeType`); got != uiMIMEType {
		t.Errorf("resources/read mimeType = %q, want %q (APPS-R05)", got, uiMIMEType)
	}
}

// configOpaqueOrigin is the step "opaque origin" of TestConfigApp.
func configOpaqueOrigin(t *testing.T, s *scenario) {
	v := s.v.in(t)
	if got := eval[string](v, `String(self.origin)`); got != "null" {
		t.Errorf("view origin = %q, want the opaque origin null", got)
	}
	if !eval[bool](v, `(() => { try { localStorage.length; return false } catch (e) { return true } })()`) {
		t.Error("localStorage is reachable: the view is not at an opaque origin")
	}
}

// configCSPBlocksFetch is the step "CSP blocks fetch" of TestConfigApp.
func configCSPBlocksFetch(t *testing.T, s *scenario) {
	h, v := s.h, s.v.in(t)
	got := eval[string](v, fmt.Sprintf(`new Promise((resolve) => {
		let violated = "";
		document.addEventListener("securitypolicyviolation", (ev) => { violated = ev.effectiveDirective; }, { once: true });
		fetch(%s).then(() => resolve("fetched"), (err) => setTimeout(() => resolve("blocked:" + violated), 100));
	})`, jsq(h.hostURL+"/probe")))
	if got != "blocked:connect-src" {
		t.Errorf("fetch from the view: %s, want blocked:connect-src", got)
	}
	if n := h.probes.Load(); n != 0 {
		t.Errorf("the probe endpoint was reached %d times", n)
	}
}

// configAddDirectory is the step "add directory" of TestConfigApp.
func configAddDirectory(t *testing.T, s *scenario) {
	e, srv, v := s.e, s.srv, s.v.in(t)
	// Keyboard only: Enter on the focused Add button opens the dialog with
	// the focus in its field; the path and Enter add it.
	v.do(`document.getElementById("add").focus()`)
	v.keys("\r")
	v.wait(`document.getElementById("add-dialog").open && document.activeElement === document.getElementById("add-input")`, "the add dialog, focused")
	v.keys(e.b + "\r")
	v.wait(fmt.Sprintf(`document.querySelector(%s) && !document.getElementById("add-dialog").open`, jsq(`#dirs li[data-path=`+jsq(e.b)+`]`)), "the new card")
	if dirs := strs(e.config()["skillDirectories"]); !slices.Contains(dirs, e.b) || !slices.Contains(dirs, e.a) {
		t.Errorf("config.json skillDirectories = %v, want %s and %s", dirs, e.a, e.b)
	}
	if _, ok := e.config()["keptUnknownKey"]; !ok {
		t.Error("config.json lost a key the server does not know")
	}
	if !hasSkill(t, srv, "skills-b", "gamma") {
		t.Error("skills/list of the same session does not list skills-b/gamma after the add")
	}
	if got := v.text(fmt.Sprintf(`#dirs li[data-path=%s]`, jsq(e.b))); !strings.Contains(got, "1 skill") {
		t.Errorf("new card = %q, want 1 skill", got)
	}
}

// configAddDirectoryRefused is the step "add directory refused" of TestConfigApp.
func configAddDirectoryRefused(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	v.do(`document.getElementById("add").click()`)
	v.do(fmt.Sprintf(`document.getElementById("add-input").value = %s; document.getElementById("add-ok").click()`, jsq(e.b)))
	v.wait(`document.getElementById("add-err").textContent.length > 0`, "the error in the add dialog")
	if got := v.text("#add-err"); !strings.Contains(got, "Already configured") {
		t.Errorf("adding %s twice: dialog says %q, want Already configured", e.b, got)
	}
	v.keys("\u001b") // Escape closes the dialog
	v.wait(`!document.getElementById("add-dialog").open`, "Escape to close the dialog")
}

// configRemoveDirectory is the step "remove directory" of TestConfigApp.
func configRemoveDirectory(t *testing.T, s *scenario) {
	e, srv, v := s.e, s.srv, s.v.in(t)
	v.do(fmt.Sprintf(`document.querySelector(%s).click()`, jsq(`#dirs li[data-path=`+jsq(e.b)+`] button`)))
	v.wait(`document.getElementById("rm-dialog").open`, "the confirmation")
	v.do(`document.getElementById("rm-ok").click()`)
	v.wait(fmt.Sprintf(`!document.querySelector(%s) && !document.getElementById("rm-dialog").open`, jsq(`#dirs li[data-path=`+jsq(e.b)+`]`)), "the card to go")
	if dirs := strs(e.config()["skillDirectories"]); slices.Contains(dirs, e.b) {
		t.Errorf("config.json skillDirectories = %v, still has %s", dirs, e.b)
	}
	if hasSkill(t, srv, "skills-b", "gamma") {
		t.Error("skills/list still lists skills-b/gamma after the remove")
	}
}

// configAllowedOrgAndOrigin is the step "allowed org and origin" of TestConfigApp.
func configAllowedOrgAndOrigin(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	// Keyboard: focus the field, type, press Enter (real key events).
	v.do(`document.getElementById("org-input").focus()`)
	v.keys("Acme-Skills\r")
	v.wait(`[...document.querySelectorAll("#orgs li")].some((li) => li.textContent.includes("Acme-Skills"))`, "the org chip")
	if orgs := strs(e.config()["githubAllowedOrgs"]); !slices.Contains(orgs, "Acme-Skills") {
		t.Errorf("config.json githubAllowedOrgs = %v", orgs)
	}
	v.do(`document.getElementById("origin-input").value = "https://skills.example.com/.well-known/agent-skills/"; document.getElementById("origin-add").click()`)
	v.wait(`[...document.querySelectorAll("#origins li")].some((li) => li.textContent.includes("https://skills.example.com"))`, "the origin chip")
	if got := strs(e.config()["wellKnownAllowedOrigins"]); !slices.Equal(got, []string{"https://skills.example.com"}) {
		t.Errorf("config.json wellKnownAllowedOrigins = %v, want the origin alone", got)
	}
	v.do(`document.querySelector('#orgs li button').click()`)
	v.wait(`!document.querySelector('#orgs li')`, "the org chip to go")
	if orgs := strs(e.config()["githubAllowedOrgs"]); len(orgs) != 0 {
		t.Errorf("config.json githubAllowedOrgs after remove = %v", orgs)
	}
}

// configBadOrigin is the step "bad origin" of TestConfigApp.
func configBadOrigin(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	v.do(`document.getElementById("origin-input").value = "ftp://nope.example"; document.getElementById("origin-add").click()`)
	v.wait(`!document.getElementById("error").hidden`, "the error banner")
	if got := strs(e.config()["wellKnownAllowedOrigins"]); len(got) != 1 {
		t.Errorf("a refused origin changed wellKnownAllowedOrigins: %v", got)
	}
}

// configStaticMode is the step "static mode" of TestConfigApp.
func configStaticMode(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	v.do(`document.getElementById("static").click()`)
	v.wait(`document.getElementById("toast").textContent.toLowerCase().includes("restart")`, "the restart note")
	if got := e.config()["staticMode"]; got != true {
		t.Errorf("config.json staticMode = %v, want true", got)
	}
	v.do(`document.getElementById("static").click()`)
	v.wait(`!document.getElementById("static").checked && document.getElementById("app").getAttribute("aria-busy") === "false"`, "unchecked")
	time.Sleep(200 * time.Millisecond)
	if got := e.config()["staticMode"]; got != false {
		t.Errorf("config.json staticMode = %v, want false", got)
	}
}

// configModelOnlyToolRefused is the step "model-only tool refused" of TestConfigApp.
func configModelOnlyToolRefused(t *testing.T, s *scenario) {
	srv, h, v := s.srv, s.h, s.v.in(t)
	tools, err := listTools(ctx(t), srv)
	if err != nil {
		t.Fatal(err)
	}
	var modelOnly []string
	for _, ti := range tools {
		if !slices.Contains(ti.visibility(), "app") {
			modelOnly = append(modelOnly, ti.Name)
		}
	}
	// A name the server does not list is refused too; a model-only tool,
	// when the server declares one, must be.
	for _, name := range append(modelOnly, "no-such-tool") {
		got := eval[string](v, fmt.Sprintf(`bridge.request("tools/call", { name: %s, arguments: {} }).then(() => "called", (e) => "refused: " + e.message)`, jsq(name)))
		if !strings.HasPrefix(got, "refused: ") {
			t.Errorf("view call to %s: %s", name, got)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, name := range modelOnly {
		if slices.Contains(h.appCalled, name) {
			t.Errorf("the host passed the view's call to %s to the server", name)
		}
	}
	t.Logf("model-only tools declared by the server: %v", modelOnly)
}

// configThemes is the step "themes" of TestConfigApp.
func configThemes(t *testing.T, s *scenario) {
	v := s.v.in(t)
	v.screenshot("skill-config-light")
	switchTheme(t, v, "dark")
	v.screenshot("skill-config-dark")
}

// TestConfigOverride: with the directories set on the command line the app
// shows the override banner and disables Add; CLI cards have no Remove.
func TestConfigOverride(t *testing.T) {
	e := newEnv(t)
	srv := startServer(t, e.bin, e.home, e.a)
	h := startHost(t, srv, e.js)
	v := openView(t, e.browser, h, "skill-config", "light", "allow-scripts")
	v.wait(`document.querySelector('#dirs li[data-path]')`, "the directory cards")
	if !eval[bool](v, `!document.getElementById("override").hidden`) {
		t.Error("no override banner with a command-line directory")
	}
	if !eval[bool](v, `document.getElementById("add").disabled`) {
		t.Error("Add is enabled while the command line sets the directories")
	}
	card := v.text(fmt.Sprintf(`#dirs li[data-path=%s]`, jsq(e.a)))
	if !strings.Contains(card, "CLI") || strings.Contains(card, "Remove") {
		t.Errorf("CLI card = %q, want a CLI badge and no Remove", card)
	}
	t.Logf("banner: %s", v.text("#override"))

	// A host that sends the theme alone: the view's own dark colours apply.
	plain := openViewQuery(t, e.browser, h, url.Values{"tool": {"skill-config"}, "theme": {"light"}, "inner": {"allow-scripts"}, "vars": {"0"}})
	plain.wait(`document.querySelector('#dirs li[data-path]')`, "the directory cards")
	switchTheme(t, plain, "dark")
}

// alpha is the skill TestDisplayApp toggles; alphaCard selects its card.
const (
	alpha     = "skills-a__alpha"
	alphaCard = `#skills li[data-skill="` + alpha + `"]`
)

// inCatalog reports whether alpha is in the <available_skills> of srv's
// session instructions.
func inCatalog(srv *mcpServer) bool {
	return strings.Contains(srv.instructions, "<name>"+alpha+"</name>")
}

// TestDisplayApp: search with "x of N"; Assistant off takes the skill out of
// the next session's <available_skills>; Reset brings it back.
func TestDisplayApp(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(map[string]any{"skillDirectories": []string{e.a}})
	srv := startServer(t, e.bin, e.home)
	h := startHost(t, srv, e.js)
	v := openView(t, e.browser, h, "skill-display", "dark", "allow-scripts")
	v.wait(`document.querySelector('#skills li[data-skill]')`, "the skill cards")
	if !inCatalog(srv) {
		t.Fatalf("%s is not in the first session's <available_skills>:\n%s", alpha, srv.instructions)
	}

	t.Run("screenshot dark", func(t *testing.T) { v.in(t).screenshot("skill-display-dark") })
	sc := &scenario{e: e, srv: srv, h: h, v: v}
	for _, st := range []struct {
		name string
		fn   func(*testing.T, *scenario)
	}{
		{"search", displaySearch},
		{"assistant off", displayAssistantOff},
		{"reset", displayReset},
		{"themes", displayThemes},
	} {
		t.Run(st.name, func(t *testing.T) { st.fn(t, sc) })
	}
}

// displaySearch is the step "search" of TestDisplayApp.
func displaySearch(t *testing.T, s *scenario) {
	v := s.v.in(t)
	total := eval[int](v, `document.querySelectorAll("#skills li").length`)
	v.do(`const s = document.getElementById("search"); s.value = "CHANGELOG"; s.dispatchEvent(new Event("input"))`)
	if got, want := v.text("#stats"), fmt.Sprintf("1 of %d skills", total); got != want {
		t.Errorf("stats after a description search = %q, want %q", got, want)
	}
	if n := eval[int](v, `document.querySelectorAll("#skills li").length`); n != 1 || !eval[bool](v, `!!document.querySelector(`+jsq(alphaCard)+`)`) {
		t.Errorf("search shows %d cards, want only %s", n, alpha)
	}
	v.do(`const s = document.getElementById("search"); s.value = ""; s.dispatchEvent(new Event("input"))`)
	if got := v.text("#stats"); got != fmt.Sprintf("%d skills available", total) {
		t.Errorf("stats without a search = %q", got)
	}
}

// displayAssistantOff is the step "assistant off" of TestDisplayApp.
func displayAssistantOff(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	v.do(`document.querySelector(` + jsq(alphaCard+` input[id^="t:assistant:"]`) + `).click()`)
	v.wait(`document.querySelector(`+jsq(alphaCard)+`).textContent.includes("Customized")`, "the Customized badge")
	ov, _ := e.config()["skillInvocationOverrides"].(map[string]any)
	if a, _ := ov[alpha].(map[string]any); a["assistant"] != false {
		t.Errorf("config.json skillInvocationOverrides = %v, want %s.assistant false", ov, alpha)
	}
	next := startServer(t, e.bin, e.home)
	if inCatalog(next) {
		t.Errorf("%s is still in the next session's <available_skills>", alpha)
	}
	if !strings.Contains(next.instructions, "<name>skills-a__beta</name>") {
		t.Error("the next session lost skills-a__beta too")
	}
}

// displayReset is the step "reset" of TestDisplayApp.
func displayReset(t *testing.T, s *scenario) {
	e, v := s.e, s.v.in(t)
	v.do(`document.querySelector(` + jsq(alphaCard+` button`) + `).click()`)
	v.wait(`!document.querySelector(`+jsq(alphaCard)+`).textContent.includes("Customized") && document.querySelector(`+jsq(alphaCard+" button")+`).disabled`, "the reset")
	ov, _ := e.config()["skillInvocationOverrides"].(map[string]any)
	if _, ok := ov[alpha]; ok {
		t.Errorf("config.json still has an override for %s: %v", alpha, ov)
	}
	if next := startServer(t, e.bin, e.home); !inCatalog(next) {
		t.Errorf("%s is not back in the next session's <available_skills>", alpha)
	}
}

// displayThemes is the step "themes" of TestDisplayApp.
func displayThemes(t *testing.T, s *scenario) {
	v := s.v.in(t)
	switchTheme(t, v, "light")
	v.screenshot("skill-display-light")
}

// jsq quotes s as a JavaScript string literal.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
