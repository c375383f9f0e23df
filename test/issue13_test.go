package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests of issue 13 ("first contact") items 3, 4, 6, 9 and 11 on
// the built binary, over stdio (and HTTP for item 11), on both protocol eras.

// logSink collects the notifications/message a client receives.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logSink) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, s)
}

func (l *logSink) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// startSkillsClient runs the binary with args and connects a client that
// declares the skills extension, as the MCP Inspector does, and records log
// messages into sink.
func startSkillsClient(t *testing.T, version string, sink *logSink, args ...string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension("io.modelcontextprotocol/skills", nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "inspector-like", Version: "v0"}, &mcp.ClientOptions{
		Capabilities: caps,
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

// TestIssue13HiddenToolsNotice is issue 13 item 3: with --tools=auto a
// client that declares the skills extension gets no load-skill and
// skill-resource; the server says so once per session, on stderr and in one
// MCP notifications/message once the client accepts log messages
// (logging/setLevel on 2025-11-25, the per-request logLevel on 2026-07-28).
// A client without the extension hears nothing.
func TestIssue13HiddenToolsNotice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(dir, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	const notice = "hides the load-skill and skill-resource tools"
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			sink := &logSink{}
			cs, stderr := startSkillsClient(t, era, sink, dir)
			ctx := t.Context()
			var params *mcp.ListToolsParams
			if era == legacyVersion {
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			} else {
				params = &mcp.ListToolsParams{Meta: mcp.Meta{"io.modelcontextprotocol/logLevel": "info"}}
			}
			for range 3 {
				tools, err := cs.ListTools(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				if len(loadingTools(tools)) != 0 {
					t.Errorf("tools/list = %v, want no skill-loading tool for a skills-extension client", loadingTools(tools))
				}
			}
			deadline := time.Now().Add(notifyTimeout)
			for len(sink.all()) == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			msgs := sink.all()
			if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "notice ") || !strings.Contains(msgs[0], notice) ||
				!strings.Contains(msgs[0], "--tools=always") || !strings.Contains(msgs[0], `"inspector-like"`) {
				t.Errorf("log messages = %q, want one notice naming the client, the hidden tools and --tools=always", msgs)
			}
			cs.Close()
			if n := strings.Count(stderr.String(), notice); n != 1 {
				t.Errorf("stderr has the notice %d times, want once per session:\n%s", n, stderr.String())
			}
		})
	}
	// A plain client sees the tools, and nothing is said.
	for _, era := range eras {
		s := startServer(t, era, t.TempDir(), nil, dir)
		tools, err := s.cs.ListTools(t.Context(), nil)
		if err != nil || len(loadingTools(tools)) != 2 {
			t.Errorf("%s plain client: tools/list = %v, %v; want load-skill and skill-resource", era, tools, err)
		}
		if out := s.close(); strings.Contains(out, notice) {
			t.Errorf("%s plain client: stderr has the notice:\n%s", era, out)
		}
	}
	// --tools=always: nothing hidden, nothing said.
	sink := &logSink{}
	cs, stderr := startSkillsClient(t, legacyVersion, sink, "--tools=always", dir)
	if tools, err := cs.ListTools(t.Context(), nil); err != nil || len(loadingTools(tools)) != 2 {
		t.Errorf("--tools=always: tools/list = %v, %v", tools, err)
	}
	cs.Close()
	if strings.Contains(stderr.String(), notice) {
		t.Errorf("--tools=always: stderr has the notice:\n%s", stderr.String())
	}
}

// TestIssue13StrictListing is issue 13 item 4: a skill whose skills/list
// entry a strict client would reject — a description over 1,024 characters
// (ASF-R11), non-string metadata values (ASF-R14), a name breaking the rules
// (SEP2640-R14) — is left out of skills/list and skill://index.json
// (skills/get answers -32602, SEP2640-R55) and still served through the
// catalog, load-skill, prompts, resources/list and resources/read, with one
// warning each; validate prints the same warnings.
func TestIssue13StrictListing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib")
	long := strings.Repeat("Long description. ", 62) // 1,116 characters
	writeFile(t, filepath.Join(dir, "good", "SKILL.md"), skillBody("good", "A fine skill."))
	writeFile(t, filepath.Join(dir, "wordy", "SKILL.md"), skillBody("wordy", long))
	writeFile(t, filepath.Join(dir, "wordy", "notes.md"), "notes\n")
	writeFile(t, filepath.Join(dir, "typed", "SKILL.md"), "---\nname: typed\ndescription: Typed metadata.\nmetadata:\n  tags: [a, b]\n---\n# typed\n")
	writeFile(t, filepath.Join(dir, "Upper", "SKILL.md"), skillBody("Upper", "Breaks the name rules."))
	unlisted := map[string]string{"wordy": "ASF-R11", "typed": "ASF-R14", "Upper": "ASF-R06"}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, era, t.TempDir(), nil, "--tools=always", dir)
			listed := map[string]bool{}
			for _, e := range s.listAll() {
				listed[e.URI] = true
			}
			if !listed["skill://lib/good/SKILL.md"] {
				t.Error("good is not listed")
			}
			index, _, err := s.readBytes("skill://index.json")
			if err != nil {
				t.Fatal(err)
			}
			resources := map[string]bool{}
			for _, r := range s.resources() {
				resources[r.URI] = true
			}
			instr := s.cs.InitializeResult().Instructions
			prompts, err := s.cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for name := range unlisted {
				uri := "skill://lib/" + name + "/SKILL.md"
				if listed[uri] || strings.Contains(string(index), uri) {
					t.Errorf("%s is in skills/list or skill://index.json", uri)
				}
				if _, err := s.custom("skills/get", &skillsParams{URI: uri}); rpcCode(err) != -32602 {
					t.Errorf("skills/get %s = %v, want -32602", uri, err)
				}
				if b, _, err := s.readBytes(uri); err != nil || !strings.Contains(string(b), "name: "+name) {
					t.Errorf("resources/read %s: %v", uri, err)
				}
				if !resources[uri] {
					t.Errorf("%s is not in resources/list", uri)
				}
				if res := s.callTool("load-skill", map[string]any{"name": "lib__" + name}); res.IsError {
					t.Errorf("load-skill lib__%s: %s", name, textOf(res))
				}
				if !strings.Contains(instr, "<uri>"+uri+"</uri>") {
					t.Errorf("the catalog lacks %s", name)
				}
				found := false
				for _, p := range prompts.Prompts {
					found = found || p.Name == "lib__"+name
				}
				if !found {
					t.Errorf("no prompt lib__%s", name)
				}
			}
			if b, _, err := s.readBytes("skill://lib/wordy/notes.md"); err != nil || string(b) != "notes\n" {
				t.Errorf("resources/read of an unlisted skill's file: %q, %v", b, err)
			}
			stderr := s.close()
			for name, rule := range unlisted {
				if n := len(stderrLines(stderr, warnLevels, filepath.Join(name, "SKILL.md"), "left out of skills/list", rule)); n != 1 {
					t.Errorf("%d warnings say %s is left out (%s), want 1:\n%s", n, name, rule, stderr)
				}
			}
		})
	}
	out, _, _ := runRaw(t, "", nil, "validate", dir)
	for name := range unlisted {
		if !strings.Contains(out, filepath.Join(name, "SKILL.md")) || strings.Count(out, "left out of skills/list") != len(unlisted) {
			t.Errorf("validate does not report %s as left out of skills/list:\n%s", name, out)
		}
	}
}

// TestIssue13CatalogBudget is issue 13 item 6: the <available_skills> list
// in instructions and in the skill prompt's description is kept within the
// catalog budget (default 16,000 characters; --catalog-budget,
// SKILLJACK_CATALOG_BUDGET): descriptions are cut first, then only names are
// listed, then only the first names; one line says so and where to see the
// rest; one warning per process.
func TestIssue13CatalogBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "many")
	desc := strings.Repeat("Does a specific scientific task well. ", 10) // 380 characters
	for i := range 40 {
		name := "skill-" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		writeFile(t, filepath.Join(dir, name, "SKILL.md"), skillBody(name, desc))
	}
	block := func(text string) string {
		i := strings.Index(text, "<available_skills>")
		j := strings.LastIndex(text, "</available_skills>")
		if i < 0 || j < 0 {
			t.Fatalf("no <available_skills> in %.300q", text)
		}
		return text[i : j+len("</available_skills>")]
	}
	for _, era := range eras {
		for _, tc := range []struct {
			name      string
			args, env []string
			budget    int
			want      string // in the note line
		}{
			{"default 16000", nil, nil, 16000, "descriptions longer than"},
			{"flag 4000", []string{"--catalog-budget=4000"}, nil, 4000, "only the names of the 41 skills"},
			{"env 1000", nil, []string{"SKILLJACK_CATALOG_BUDGET=1000"}, 1000, "only the names of the first"},
		} {
			t.Run(era+"/"+tc.name, func(t *testing.T) {
				s := startServer(t, era, t.TempDir(), tc.env, append(tc.args, dir)...)
				instr := s.cs.InitializeResult().Instructions
				prompts, err := s.cs.ListPrompts(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				var promptDesc string
				for _, p := range prompts.Prompts {
					if p.Name == "skill" {
						promptDesc = p.Description
					}
				}
				for what, text := range map[string]string{"instructions": instr, "skill prompt": promptDesc} {
					if n := len([]rune(block(text))); n > tc.budget {
						t.Errorf("%s: <available_skills> is %d characters, over the budget %d", what, n, tc.budget)
					}
					if !strings.Contains(text, "shortened to fit the catalog budget of") || !strings.Contains(text, tc.want) ||
						!strings.Contains(text, "skills/list and the `skill` prompt") {
						t.Errorf("%s lacks the note %q:\n%.600s", what, tc.want, text)
					}
				}
				stderr := s.close()
				if n := len(stderrLines(stderr, warnLevels, "over its budget")); n != 1 {
					t.Errorf("%d budget warnings, want 1:\n%s", n, stderr)
				}
			})
		}
	}
	// A budget too small for even an empty list serves no name, and the
	// server answers (an adversarial pass crashed it with budgets 1 to 37).
	for _, b := range []string{"1", "37"} {
		s := startServer(t, legacyVersion, t.TempDir(), []string{"SKILLJACK_CATALOG_BUDGET=" + b}, dir)
		if instr := s.cs.InitializeResult().Instructions; !strings.Contains(instr, "only the names of the first 0 of 41 skills") {
			t.Errorf("budget %s: instructions:\n%.600s", b, instr)
		}
		if stderr := s.close(); strings.Contains(stderr, "panic") {
			t.Errorf("budget %s: %s", b, stderr)
		}
	}
	// Under the budget nothing changes and nothing is said.
	s := startServer(t, legacyVersion, t.TempDir(), nil, "--catalog-budget=100000", dir)
	if instr := s.cs.InitializeResult().Instructions; strings.Contains(instr, "shortened") || !strings.Contains(instr, strings.TrimSpace(desc)) {
		t.Errorf("instructions under the budget are shortened:\n%.600s", instr)
	}
	if stderr := s.close(); strings.Contains(stderr, "over its budget") {
		t.Errorf("a warning under the budget:\n%s", stderr)
	}
}

// TestIssue13BareNames is issue 13 item 9 (in part): load-skill and the
// skill prompt take an unambiguous bare name ("pdf-summary" for
// "lib__pdf-summary"); an ambiguous one lists the candidates; an override
// for a skill that does not exist is warned about, with a suggestion.
func TestIssue13BareNames(t *testing.T) {
	root := t.TempDir()
	lib, team := filepath.Join(root, "lib"), filepath.Join(root, "team")
	writeFile(t, filepath.Join(lib, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	writeFile(t, filepath.Join(lib, "dup", "SKILL.md"), skillBody("dup", "One."))
	writeFile(t, filepath.Join(team, "dup", "SKILL.md"), skillBody("dup", "Two."))
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".skilljack", "config.json"),
		`{"skillInvocationOverrides": {"pdf-summary": {"user": false}, "nope": {"assistant": false}, "lib__dup": {"user": true}}}`)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, era, root, []string{"HOME=" + home}, "--tools=always", lib, team)
			if res := s.callTool("load-skill", map[string]any{"name": "pdf-summary"}); res.IsError || !strings.Contains(textOf(res), "name: pdf-summary") {
				t.Errorf("load-skill pdf-summary = %q", textOf(res))
			}
			res := s.callTool("load-skill", map[string]any{"name": "dup"})
			if !res.IsError || !strings.Contains(textOf(res), "lib__dup") || !strings.Contains(textOf(res), "team__dup") {
				t.Errorf("load-skill dup (ambiguous) = %q, want an error naming both", textOf(res))
			}
			p, err := s.cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "skill", Arguments: map[string]string{"name": "pdf-summary"}})
			if err != nil || len(p.Messages) != 1 {
				t.Fatalf("prompts/get skill pdf-summary: %v", err)
			}
			if er, ok := p.Messages[0].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != "skill://lib/pdf-summary/SKILL.md" {
				t.Errorf("prompts/get skill pdf-summary = %+v, want the skill's SKILL.md", p.Messages[0].Content)
			}
			stderr := s.close()
			if n := len(stderrLines(stderr, warnLevels, `override \"pdf-summary\" names no served skill`, `did you mean \"lib__pdf-summary\"?`)); n != 1 {
				t.Errorf("%d warnings about the bare-name override, want 1:\n%s", n, stderr)
			}
			if n := len(stderrLines(stderr, warnLevels, `override \"nope\" names no served skill`)); n != 1 {
				t.Errorf("%d warnings about the override of a missing skill, want 1:\n%s", n, stderr)
			}
			if strings.Contains(stderr, `override \"lib__dup\"`) {
				t.Errorf("a warning about an override that matches:\n%s", stderr)
			}
		})
	}
}

// TestIssue13NoServerPathsOverHTTP is issue 13 item 11: over HTTP the
// catalog (instructions, the skill prompt's description, load-skill's
// description in tool-description mode) gives each skill's skill:// URI and
// never a server path; over stdio it keeps the reference's <location>, the
// absolute path of SKILL.md, as a stdio client runs on the server's machine.
func TestIssue13NoServerPathsOverHTTP(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "pdf-summary", "SKILL.md"), skillBody("pdf-summary", "Summarise a PDF."))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			for _, args := range [][]string{{root}, {"--catalog=tool-description", root}} {
				h := startHTTP(t, nil, args...)
				var notified atomic.Int64
				cs := h.client(t, era, &notified)
				texts := map[string]string{"instructions": cs.InitializeResult().Instructions}
				prompts, err := cs.ListPrompts(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range prompts.Prompts {
					texts["prompt "+p.Name] = p.Description
				}
				tools, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tl := range tools.Tools {
					texts["tool "+tl.Name] = tl.Description
				}
				catalogs := 0
				for what, text := range texts {
					if strings.Contains(text, root) || strings.Contains(text, "<location>") {
						t.Errorf("%v: %s shows a server path:\n%s", args, what, text)
					}
					if strings.Contains(text, "<uri>skill://lib/pdf-summary/SKILL.md</uri>") {
						catalogs++
					}
				}
				if catalogs != 2 { // instructions or load-skill, and the skill prompt
					t.Errorf("%v: the skill:// URI is in %d catalogs, want 2", args, catalogs)
				}
			}
			s := startServer(t, era, t.TempDir(), nil, root)
			want := "<location>" + filepath.Join(root, "pdf-summary", "SKILL.md") + "</location>"
			if instr := s.cs.InitializeResult().Instructions; !strings.Contains(instr, want) {
				t.Errorf("stdio instructions lack %s (reference §1.1)", want)
			}
		})
	}
}
