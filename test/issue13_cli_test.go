package test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests of issue 13 items 8 (mistakes are caught where they are
// made, and said where a host shows them) and 9 (name=source fixes a
// source's prefix) on the built binary, on both protocol eras.

// startLogClient runs the binary with args in a clean environment plus env
// and connects a plain client that records log messages into sink.
func startLogClient(t *testing.T, version string, env []string, sink *logSink, args ...string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "host-like", Version: "v0"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			if s, ok := r.Params.Data.(string); ok {
				sink.add(string(r.Params.Level) + " " + s)
			}
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// skillURIs returns the skill URIs of skills/list.
func (s *server) skillURIs() map[string]bool {
	out := map[string]bool{}
	for _, e := range s.listAll() {
		out[e.URI] = true
	}
	return out
}

// TestIssue13SplitFlagValues is issue 13 item 8: a value given as the next
// argument (as a host's args list makes easy) is read as meant —
// "--tools never", "--catalog instructions", "--http PORT" — and never
// becomes a missing skill folder; a value the flag cannot take is refused
// with "did you mean"; -v is --verbose and never exits.
func TestIssue13SplitFlagValues(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(lib, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	const uri = "skill://lib/pdf-summary/SKILL.md"
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			// --tools never ... --catalog instructions: both read as meant,
			// neither a source.
			s := startServer(t, era, t.TempDir(), nil, "--tools", "never", lib, "--catalog", "instructions")
			if tools, err := s.cs.ListTools(t.Context(), nil); err != nil || len(loadingTools(tools)) != 0 {
				t.Errorf("--tools never: tools/list = %v, %v; want none", tools, err)
			}
			if !s.skillURIs()[uri] {
				t.Errorf("--tools never %s: %s not served", lib, uri)
			}
			stderr := s.close()
			if w := stderrLines(stderr, skipLevels); len(w) > 0 {
				t.Errorf("--tools never: warnings or errors (a missing folder \"never\"?): %q", w)
			}

			// --tools nevr: refused with "did you mean", nevr stays a source.
			s = startServer(t, era, t.TempDir(), nil, "--tools", "nevr", lib)
			if tools, err := s.cs.ListTools(t.Context(), nil); err != nil || len(loadingTools(tools)) != 2 {
				t.Errorf("--tools nevr: tools/list = %v, %v; want the default (auto: both tools)", tools, err)
			}
			stderr = s.close()
			if len(stderrLines(stderr, warnLevels, "did you mean --tools=nevr?")) != 1 {
				t.Errorf("--tools nevr: no \"did you mean --tools=nevr?\" warning:\n%s", stderr)
			}

			// -v is --verbose: the server serves and logs at debug level.
			s = startServer(t, era, t.TempDir(), nil, "-v", lib)
			if !s.skillURIs()[uri] {
				t.Errorf("-v %s: %s not served", lib, uri)
			}
			stderr = s.close()
			if !strings.Contains(stderr, "level=DEBUG") || len(stderrLines(stderr, skipLevels)) > 0 {
				t.Errorf("-v: want debug logging and no warning:\n%s", stderr)
			}

			// --http PORT, as two arguments: HTTP on that port, lib served.
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			ln.Close()
			h := startHTTP(t, nil, "--http", port, lib)
			if !strings.HasSuffix(h.url, ":"+port+"/mcp") {
				t.Fatalf("--http %s listens at %s", port, h.url)
			}
			var notified atomic.Int64
			cs := h.client(t, era, &notified)
			if !strings.Contains(cs.InitializeResult().Instructions, uri) {
				t.Errorf("--http %s %s: %s not in the catalog", port, lib, uri)
			}
			cs.Close()
			if w := stderrLines(h.stderr.String(), skipLevels); len(w) > 0 {
				t.Errorf("--http %s: warnings or errors (a missing folder %q?): %q", port, port, w)
			}
		})
	}
	// -v never prints the version and exits: with stdin closed at once the
	// server ends as a served session does, and stdout holds no version.
	out, _, err := runRaw(t, "", nil, "-v")
	if err != nil || strings.Contains(out, "skilljack-mcp ") {
		t.Errorf("-v = %q, %v; want no version on stdout", out, err)
	}
}

// TestIssue13BrokenConfigAndLogMessages is issue 13 item 8: a config.json
// with a trailing comma keeps the command-line sources served, and one
// warning names the file, the line, the trailing comma, the keys ignored
// and where the sources come from; every startup warning also reaches the
// client as an MCP log message (level warning), once per session, after
// the client set a level (logging/setLevel on 2025-11-25, the per-request
// logLevel on 2026-07-28). A client that never sets one gets nothing.
func TestIssue13BrokenConfigAndLogMessages(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(lib, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	home := t.TempDir()
	cfg := filepath.Join(home, ".skilljack", "config.json")
	writeFile(t, cfg, "{\n  \"skillDirectories\": [\"/nowhere\"],\n  \"skillInvocationOverrides\": {\"lib__pdf-summary\": {\"user\": false}},\n}\n")
	env := []string{"HOME=" + home}
	wantConfig := []string{"config file " + cfg + " is not valid JSON (line 4, column 1", "trailing comma", "ignored: skillDirectories, skillInvocationOverrides",
		"serving the sources given on the command line"}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			sink := &logSink{}
			cs, stderr := startLogClient(t, era, env, sink, "--tools", "nevr", lib)
			ctx := t.Context()
			var params *mcp.ListPromptsParams
			if era == legacyVersion {
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
					t.Fatal(err)
				}
			} else {
				params = &mcp.ListPromptsParams{Meta: mcp.Meta{"io.modelcontextprotocol/logLevel": "warning"}}
			}
			for range 3 {
				prompts, err := cs.ListPrompts(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, p := range prompts.Prompts {
					found = found || p.Name == "lib__pdf-summary"
				}
				if !found {
					t.Errorf("prompt lib__pdf-summary missing: the command-line source is not served, or the broken file's override applied")
				}
			}
			deadline := time.Now().Add(notifyTimeout)
			for len(sink.all()) < 2 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // nothing more may come
			msgs := sink.all()
			var config, flag int
			for _, m := range msgs {
				if !strings.HasPrefix(m, "warning ") {
					t.Errorf("log message %q is not at level warning", m)
				}
				if containsAll(m, wantConfig...) {
					config++
				}
				if strings.Contains(m, "did you mean --tools=nevr?") {
					flag++
				}
			}
			if config != 1 || flag != 1 {
				t.Errorf("log messages = %q\nwant the config warning (%q) and the flag warning once each", msgs, wantConfig)
			}
			cs.Close()
			if len(stderrLines(stderr.String(), warnLevels, wantConfig...)) != 1 {
				t.Errorf("stderr lacks the config warning %q:\n%s", wantConfig, stderr)
			}
		})
	}
	// A client that never sets a level gets no log message (go-sdk sends
	// none before logging/setLevel).
	sink := &logSink{}
	cs, _ := startLogClient(t, legacyVersion, env, sink, "--tools", "nevr", lib)
	if _, err := cs.ListPrompts(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if msgs := sink.all(); len(msgs) != 0 {
		t.Errorf("log messages without a level set: %q", msgs)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestIssue13NamedSources is issue 13 item 9: name=source fixes a source's
// prefix whatever the folder's name and the order of the sources, so an
// override keyed by it survives a reorder; in the arguments, SKILLS_DIR and
// the config file's skillDirectories. An invalid or repeated name refuses
// its source with a warning.
func TestIssue13NamedSources(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a", "skills"), filepath.Join(root, "b", "skills")
	writeFile(t, filepath.Join(a, "review", "SKILL.md"), skillBody("review", "Reviews code."))
	writeFile(t, filepath.Join(b, "review", "SKILL.md"), skillBody("review", "Reviews prose."))
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".skilljack", "config.json"),
		`{"skillInvocationOverrides": {"team__review": {"user": false}}}`)
	// The prompts served, and the description of each skill's prompt.
	prompts := func(s *server) map[string]string {
		res, err := s.cs.ListPrompts(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range res.Prompts {
			out[p.Name] = p.Description
		}
		return out
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				env  []string
				args []string
			}{
				{"arguments", nil, []string{"team=" + a, "mine=" + b}},
				{"arguments reordered", nil, []string{"mine=" + b, "team=" + a}},
				{"SKILLS_DIR", []string{"SKILLS_DIR=mine=" + b + ",team=" + a}, nil},
			} {
				s := startServer(t, era, root, append([]string{"HOME=" + home}, tc.env...), tc.args...)
				ps := prompts(s)
				if _, ok := ps["team__review"]; ok {
					t.Errorf("%s: prompt team__review is served; its override (user: false) did not apply", tc.name)
				}
				if !strings.Contains(ps["mine__review"], "prose") {
					t.Errorf("%s: prompt mine__review = %q, want b's skill; prompts %v", tc.name, ps["mine__review"], ps)
				}
				uris := s.skillURIs()
				if !uris["skill://team/review/SKILL.md"] || !uris["skill://mine/review/SKILL.md"] {
					t.Errorf("%s: skills/list = %v, want skill://team/… and skill://mine/…", tc.name, uris)
				}
				if stderr := s.close(); strings.Contains(stderr, "names no served skill") || strings.Contains(stderr, "same prefix") {
					t.Errorf("%s: stderr:\n%s", tc.name, stderr)
				}
			}
			// The config file's skillDirectories, with a reserved name: the
			// unnamed folder "skills" listed first becomes skills-2.
			cfgHome := t.TempDir()
			writeFile(t, filepath.Join(cfgHome, ".skilljack", "config.json"),
				`{"skillDirectories": ["`+b+`", "skills=`+a+`", "bad__name=`+a+`", "skills=`+b+`"]}`)
			s := startServer(t, era, root, []string{"HOME=" + cfgHome})
			uris := s.skillURIs()
			if !uris["skill://skills/review/SKILL.md"] || !uris["skill://skills-2/review/SKILL.md"] {
				t.Errorf("config skillDirectories: skills/list = %v", uris)
			}
			if res := s.callTool("load-skill", map[string]any{"name": "skills__review"}); res.IsError || !strings.Contains(textOf(res), "Reviews code.") {
				t.Errorf("load-skill skills__review = %q, want a's skill (the named one)", textOf(res))
			}
			stderr := s.close()
			for _, want := range []string{`\"bad__name\" is not a valid source name`, `the name \"skills\" is already the source skills=` + a} {
				if len(stderrLines(stderr, warnLevels, want)) != 1 {
					t.Errorf("no warning %q:\n%s", want, stderr)
				}
			}
		})
	}
}
