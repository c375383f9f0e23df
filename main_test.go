package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestParseArgs pins the flag and environment rules of the reference
// (skilljack-ts.md §1.1, §1.2, §2): the flag beats the env var, values are
// case-insensitive, unknown values warn and fall back to the default.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name         string
		args         []string
		env          map[string]string
		wantTools    string
		wantCatalog  string
		wantDirs     []string
		wantMax      int64
		wantWarnings int
		wantStatic   bool
		wantValidate bool
	}{
		{name: "defaults", wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20},
		{name: "flag beats env", args: []string{"--tools=never"}, env: map[string]string{"SKILLJACK_TOOLS": "always"}, wantTools: "never", wantCatalog: "instructions", wantMax: 1 << 20},
		{name: "env used", env: map[string]string{"SKILLJACK_TOOLS": "ALWAYS", "SKILLJACK_CATALOG": "Tool-Description"}, wantTools: "always", wantCatalog: "tool-description", wantMax: 1 << 20, wantWarnings: 1},
		{name: "unknown tools value warns, falls back to auto", args: []string{"--tools=sometimes"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20, wantWarnings: 1},
		{name: "unknown catalog env warns", env: map[string]string{"SKILLJACK_CATALOG": "both"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20, wantWarnings: 1},
		{name: "positional dirs and static", args: []string{"a", "--static", "b,c"}, wantDirs: []string{"a", "b,c"}, wantStatic: true, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20},
		{name: "unknown flag warns", args: []string{"--frobnicate"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20, wantWarnings: 1},
		{name: "max file size", env: map[string]string{"MAX_FILE_SIZE_MB": "3"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 3 << 20},
		{name: "bad max file size falls back to 1", env: map[string]string{"MAX_FILE_SIZE_MB": "lots"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20, wantWarnings: 1},
		{name: "static=false", args: []string{"--static=false"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20},
		{name: "static=bogus warns", args: []string{"--static=maybe"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20, wantWarnings: 1},
		{name: "flag without value warns", args: []string{"--tools", "--catalog="}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20, wantWarnings: 2},
		{name: "double dash ends flags", args: []string{"--", "-odd-dir"}, wantDirs: []string{"-odd-dir"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20},
		{name: "validate subcommand", args: []string{"validate", "x"}, wantValidate: true, wantDirs: []string{"x"}, wantTools: "auto", wantCatalog: "instructions", wantMax: 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, warnings := parseArgs(tc.args, envOf(tc.env))
			if s.tools != tc.wantTools || s.catalogMode != tc.wantCatalog || s.maxFileSize != tc.wantMax || s.static != tc.wantStatic || s.validate != tc.wantValidate {
				t.Errorf("parseArgs(%q) = tools %q catalog %q max %d static %v validate %v; want %q %q %d %v %v",
					tc.args, s.tools, s.catalogMode, s.maxFileSize, s.static, s.validate, tc.wantTools, tc.wantCatalog, tc.wantMax, tc.wantStatic, tc.wantValidate)
			}
			if diff := cmp.Diff(tc.wantDirs, s.dirs); diff != "" {
				t.Errorf("dirs mismatch (-want +got):\n%s", diff)
			}
			if len(warnings) != tc.wantWarnings {
				t.Errorf("warnings = %q, want %d", warnings, tc.wantWarnings)
			}
		})
	}
}

// TestRunStopsOnStdinEOF: the whole pipeline stops cleanly when the client
// closes stdin, and stdout carries only JSON-RPC (BASE-R58).
func TestRunStopsOnStdinEOF(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	env := envOf(map[string]string{"HOME": t.TempDir()})
	t.Setenv("HOME", env("HOME"))
	done := make(chan error, 1)
	go func() { done <- run(t.Context(), nil, inR, outW, &stderr, env) }()

	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	select {
	case l := <-lines:
		if !strings.HasPrefix(l, `{"jsonrpc":"2.0","id":1,"result":`) || !strings.Contains(l, "skilljack-docs") {
			t.Errorf("initialize answer = %.200s…, want a result naming the bundled skill", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no initialize answer")
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after stdin EOF = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after stdin EOF")
	}
	outW.Close()
	for l := range lines {
		t.Errorf("unexpected stdout after EOF: %q", l)
	}
	if !strings.Contains(stderr.String(), `msg="serving skills over stdio" skills=1`) {
		t.Errorf("stderr lacks the startup line:\n%s", stderr.String())
	}
}

// TestRunStopsOnCancel: a signal (ctx cancel) stops run with no error.
func TestRunStopsOnCancel(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	t.Setenv("HOME", t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, inR, nopWriteCloser{io.Discard}, io.Discard, os.Getenv) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestValidateCommand: `validate` reports a skipped skill with its file and
// reason and fails; a clean folder passes (BR-07).
func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	write := func(rel, body string) {
		p := filepath.Join(dir, "skills", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok/SKILL.md", "---\nname: ok\ndescription: Fine.\n---\n")
	var out bytes.Buffer
	err := run(t.Context(), []string{"validate", filepath.Join(dir, "skills")}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, io.Discard, os.Getenv)
	if err != nil {
		t.Errorf("validate of a clean folder = %v\n%s", err, out.String())
	}
	// A folder that does not exist, or none at all, fails.
	if err := run(t.Context(), []string{"validate", filepath.Join(dir, "nope")}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, io.Discard, os.Getenv); err == nil {
		t.Error("validate of a missing folder succeeded")
	}
	if err := run(t.Context(), []string{"validate"}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, io.Discard, os.Getenv); err == nil {
		t.Error("validate with no folder succeeded")
	}
	write("bad/SKILL.md", "# no frontmatter\n")
	out.Reset()
	err = run(t.Context(), []string{"validate", filepath.Join(dir, "skills")}, io.NopCloser(strings.NewReader("")), nopWriteCloser{&out}, io.Discard, os.Getenv)
	if err == nil || !strings.Contains(out.String(), filepath.Join("bad", "SKILL.md")) || !strings.Contains(strings.ToLower(out.String()), "frontmatter") {
		t.Errorf("validate with a bad skill = %v, output:\n%s\nwant an error and a line naming bad/SKILL.md and its reason", err, out.String())
	}
}

// TestModernWireResultType drives run over raw stdio with 2026-07-28
// requests (no initialize; _meta per request, BASE-R08, R12) and checks the
// JSON on the wire: every result carries resultType "complete" (BASE-R03),
// and skills/list and skills/get carry ttlMs and cacheScope (SEP2640-R47,
// R54).
func TestModernWireResultType(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Setenv("HOME", t.TempDir())
	done := make(chan error, 1)
	go func() { done <- run(t.Context(), nil, inR, outW, io.Discard, os.Getenv) }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	reqs := []struct {
		method, params string
		wantKeys       []string
	}{
		{"server/discover", `{` + meta + `}`, []string{"capabilities", "supportedVersions"}},
		{"resources/read", `{"uri":"skill://skilljack-docs/SKILL.md",` + meta + `}`, []string{"contents"}},
		{"skills/list", `{` + meta + `}`, []string{"skills", "ttlMs", "cacheScope"}},
		{"skills/get", `{"uri":"skill://skilljack-docs/SKILL.md",` + meta + `}`, []string{"skill", "ttlMs", "cacheScope"}},
		{"tools/list", `{` + meta + `}`, []string{"tools"}},
		{"prompts/get", `{"name":"skill","arguments":{"name":"skilljack-docs"},` + meta + `}`, []string{"messages"}},
	}
	for i, r := range reqs {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"`+r.method+`","params":`+r.params+"}\n")
		var l string
		select {
		case l = <-lines:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer", r.method)
		}
		var msg struct {
			ID     int                        `json:"id"`
			Result map[string]json.RawMessage `json:"result"`
			Error  json.RawMessage            `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &msg); err != nil || msg.Error != nil || msg.ID != i+1 {
			t.Fatalf("%s: answer %.300s (%v)", r.method, l, err)
		}
		if got := string(msg.Result["resultType"]); got != `"complete"` {
			t.Errorf("%s: resultType = %s, want \"complete\"", r.method, got)
		}
		for _, k := range r.wantKeys {
			if _, ok := msg.Result[k]; !ok {
				t.Errorf("%s: result lacks %q: %.300s", r.method, k, l)
			}
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("run = %v", err)
	}
	outW.Close()
}

// TestRunSurvivesBadLinesAndDrains: a malformed line gets -32700 and the
// session goes on; requests written just before stdin closes are all
// answered before run returns (BASE-R02, R58).
func TestRunSurvivesBadLinesAndDrains(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	in := strings.Join([]string{
		`this is not json`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://skilljack-docs/SKILL.md"}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := run(t.Context(), nil, io.NopCloser(strings.NewReader(in)), nopWriteCloser{&out}, io.Discard, os.Getenv); err != nil {
		t.Fatalf("run = %v", err)
	}
	ids := map[string]bool{}
	parseErr := false
	for line := range strings.Lines(out.String()) {
		var msg struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Errorf("stdout line is not JSON: %q", line)
			continue
		}
		if msg.Error != nil && msg.Error.Code == -32700 {
			parseErr = true
			continue
		}
		if msg.Error != nil {
			t.Errorf("unexpected error reply: %s", line)
		}
		ids[string(msg.ID)] = true
	}
	if !parseErr {
		t.Error("no -32700 reply to the malformed line")
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if !ids[id] {
			t.Errorf("no reply to request %s before exit; stdout:\n%s", id, out.String())
		}
	}
}
