package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests of the command line: flags, environment variables, the validate
// command, raw stdio framing and shutdown. They run the built binary.

// runRaw runs the binary with args and env (HOME is an empty temp folder),
// feeds it stdin and returns stdout and stderr once it exits.
func runRaw(t *testing.T, stdin string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// rawReply is one JSON-RPC message read from stdout.
type rawReply struct {
	ID     json.RawMessage            `json:"id"`
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func replies(t *testing.T, stdout string) map[string]rawReply {
	t.Helper()
	out := map[string]rawReply{}
	for line := range strings.Lines(stdout) {
		var r rawReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("stdout line is not JSON-RPC (BASE-R58): %q", line)
			continue
		}
		out[string(r.ID)] = r
	}
	return out
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestFlagsAndEnv pins the flag and environment rules of the reference
// (skilljack-ts.md §1.1, §1.2, §2.2): the flag beats the env var, values are
// case-insensitive, unknown values warn on stderr and fall back.
func TestFlagsAndEnv(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		args      []string
		env       []string
		wantTools bool   // load-skill offered to a plain client
		wantInstr bool   // catalog in instructions
		wantWarn  string // a WARN line containing this, or "" for no WARN line
		wantList  bool   // tools.listChanged
	}{
		{name: "defaults", wantTools: true, wantInstr: true, wantList: true},
		{name: "tools never", args: []string{"--tools=never"}, wantInstr: true, wantList: true},
		{name: "env case-insensitive", env: []string{"SKILLJACK_TOOLS=NEVER"}, wantInstr: true, wantList: true},
		{name: "flag beats env", args: []string{"--tools=always"}, env: []string{"SKILLJACK_TOOLS=never"}, wantTools: true, wantInstr: true, wantList: true},
		{name: "unknown tools value falls back to auto", args: []string{"--tools=sometimes"}, wantTools: true, wantInstr: true, wantWarn: "--tools", wantList: true},
		{name: "flag without value", args: []string{"--tools"}, wantTools: true, wantInstr: true, wantWarn: "needs a value", wantList: true},
		{name: "catalog in tool description", env: []string{"SKILLJACK_CATALOG=Tool-Description"}, wantTools: true, wantWarn: "tool-description", wantList: true},
		{name: "unknown catalog value", env: []string{"SKILLJACK_CATALOG=both"}, wantTools: true, wantInstr: true, wantWarn: "SKILLJACK_CATALOG", wantList: true},
		{name: "static", args: []string{"--static"}, wantTools: true, wantInstr: true},
		{name: "static env", env: []string{"SKILLJACK_STATIC=Yes"}, wantTools: true, wantInstr: true},
		{name: "static=false", args: []string{"--static=false"}, wantTools: true, wantInstr: true, wantList: true},
		{name: "static=false beats env", args: []string{"--static=false"}, env: []string{"SKILLJACK_STATIC=1"}, wantTools: true, wantInstr: true, wantList: true},
		{name: "unknown flag", args: []string{"--frobnicate"}, wantTools: true, wantInstr: true, wantWarn: "--frobnicate", wantList: true},
		{name: "bad MAX_FILE_SIZE_MB", env: []string{"MAX_FILE_SIZE_MB=lots"}, wantTools: true, wantInstr: true, wantWarn: "MAX_FILE_SIZE_MB", wantList: true},
		// issue 10 F3: the HTTP concurrency bound is a whole number > 0.
		{name: "bad SKILLJACK_HTTP_MAX_CONCURRENT", env: []string{"SKILLJACK_HTTP_MAX_CONCURRENT=lots"}, wantTools: true, wantInstr: true, wantWarn: "SKILLJACK_HTTP_MAX_CONCURRENT", wantList: true},
		{name: "bad --http-max-concurrent", args: []string{"--http-max-concurrent=0"}, wantTools: true, wantInstr: true, wantWarn: "--http-max-concurrent", wantList: true},
		{name: "good --http-max-concurrent", args: []string{"--http-max-concurrent=3"}, wantTools: true, wantInstr: true, wantList: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, legacyVersion, dir, tc.env, tc.args...)
			init := s.cs.InitializeResult()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			tools, err := s.cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			hasLoad, loadDesc := false, ""
			for _, tl := range tools.Tools {
				if tl.Name == "load-skill" {
					hasLoad, loadDesc = true, tl.Description
				}
			}
			if hasLoad != tc.wantTools {
				t.Errorf("load-skill offered = %v, want %v", hasLoad, tc.wantTools)
			}
			inInstr := strings.Contains(init.Instructions, "<available_skills>\n")
			inTool := strings.Contains(loadDesc, "<available_skills>\n")
			if inInstr != tc.wantInstr || (hasLoad && inTool == tc.wantInstr) {
				t.Errorf("catalog in instructions %v, in load-skill %v; want exactly one channel, instructions=%v", inInstr, inTool, tc.wantInstr)
			}
			if got := init.Capabilities.Tools != nil && init.Capabilities.Tools.ListChanged; got != tc.wantList {
				t.Errorf("tools.listChanged = %v, want %v", got, tc.wantList)
			}
			stderr := s.close()
			warns := stderrLines(stderr, warnLevels)
			if tc.wantWarn == "" && len(warns) > 0 {
				t.Errorf("unexpected warnings: %q", warns)
			}
			if tc.wantWarn != "" && len(stderrLines(stderr, warnLevels, tc.wantWarn)) == 0 {
				t.Errorf("no warning containing %q; stderr:\n%s", tc.wantWarn, stderr)
			}
		})
	}
}

// TestMaxFileSize: MAX_FILE_SIZE_MB caps supporting files; a file over the
// cap is never listed (issue 10 F4, "never list what is not served"), so
// resources/read answers -32602 and skill-resource an error, where before
// it was listed and its read failed with -32603 "too large". SKILL.md has
// its own cap (MAX_SKILL_MD_MB, 4 MiB), far above this one.
func TestMaxFileSize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skills")
	skill := filepath.Join(dir, "big")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: big\ndescription: Big files.\n---\n" + strings.Repeat("x", 4096) + "\n"
	os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(body), 0o644)
	os.WriteFile(filepath.Join(skill, "data.txt"), bytes.Repeat([]byte("y"), 3000), 0o644)
	s := startServer(t, legacyVersion, t.TempDir(), []string{"MAX_FILE_SIZE_MB=0.001"}, "--tools=always", dir)
	if _, _, err := s.readBytes("skill://skills/big/data.txt"); rpcCode(err) != -32602 {
		t.Errorf("resources/read of a file over the cap: %v, want -32602 (not listed)", err)
	}
	if res := s.callTool("skill-resource", map[string]any{"skill": "skills__big", "path": "data.txt"}); !res.IsError {
		t.Errorf("skill-resource over the cap = %q (isError %v), want an error", textOf(res), res.IsError)
	}
	if e := s.entry("skill://skills/big/SKILL.md"); e == nil || len(e.Resources) != 1 {
		t.Errorf("skills/list entry = %+v, want the SKILL.md only", e)
	}
	if b, _, err := s.readBytes("skill://skills/big/SKILL.md"); err != nil || string(b) != body {
		t.Errorf("SKILL.md over the cap: %v, want it served whole", err)
	}
}

// TestSizeCapsHugeFiles is issue 10 F4 end to end: a 256 MiB SKILL.md
// and a 2 GiB supporting file (sparse) are never read: initialize answers,
// the huge skill and the huge file are in no list, one line names each with
// its size and cap, and validate reports them too.
func TestSizeCapsHugeFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(dir, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	writeFile(t, filepath.Join(dir, "ok", "small.md"), "small\n")
	writeFile(t, filepath.Join(dir, "huge", "ref.md"), "never read\n")
	for _, f := range []struct {
		path string
		size int64
	}{{filepath.Join(dir, "huge", "SKILL.md"), 256 << 20}, {filepath.Join(dir, "ok", "big.bin"), 2 << 30}} {
		fh, err := os.Create(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := fh.Truncate(f.size); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	// Issue 13 item 5: a file over a cap is listed nowhere, on either era,
	// and validate reports it.
	for _, era := range eras {
		checkCapsServed(t, era, dir)
	}
	out, _, err := runRaw(t, "", nil, "validate", dir)

	if err == nil || !strings.Contains(out, "big.bin: 2048.00 MiB") || !strings.Contains(out, "huge/SKILL.md: skipped: it is 256.00 MiB") {
		t.Errorf("validate = %v:\n%s\nwant big.bin and huge/SKILL.md reported, and an error", err, out)
	}
	// The flag beats the default: a 10-byte cap skips every skill.
	out, _, _ = runRaw(t, "", nil, "validate", "--max-skill-md-mb=0.00001", dir)
	if !strings.Contains(out, "ok/SKILL.md: skipped: it is") || !strings.Contains(out, "over the 10 bytes cap") {
		t.Errorf("validate --max-skill-md-mb=0.00001:\n%s\nwant ok/SKILL.md skipped over the 10 bytes cap", out)
	}
}

// checkCapsServed serves dir (see TestSizeCapsHugeFiles) on era and checks
// that neither over-cap file is listed by skills/list or resources/list and
// that stderr names each once.
func checkCapsServed(t *testing.T, era, dir string) {
	t.Helper()
	s := startServer(t, era, t.TempDir(), nil, "--tools=always", dir)
	var uris []string
	for _, e := range s.listAll() {
		for _, r := range e.Resources {
			uris = append(uris, r.URI)
		}
	}
	for _, r := range s.resources() {
		uris = append(uris, r.URI)
	}
	for _, u := range uris {
		if strings.Contains(u, "huge") || strings.Contains(u, "big.bin") {
			t.Errorf("%s: %s is listed", era, u)
		}
	}
	if e := s.entry("skill://lib/ok/SKILL.md"); e == nil || len(e.Resources) != 2 {
		t.Errorf("%s: skill ok = %+v, want SKILL.md and small.md", era, e)
	}
	stderr := s.close()
	for _, want := range []string{"huge/SKILL.md: it is 256.00 MiB, over the 4.00 MiB cap", "big.bin: 2048.00 MiB, over the 1.00 MiB cap"} {
		if strings.Count(stderr, want) != 1 {
			t.Errorf("%s: stderr has %d lines with %q, want 1:\n%s", era, strings.Count(stderr, want), want, stderr)
		}
	}
}

// TestDoubleDashAndVersion: arguments after -- are directories even with a
// leading dash; --version prints to stdout and exits.
func TestDoubleDashAndVersion(t *testing.T) {
	root := t.TempDir()
	odd := filepath.Join(root, "-odd")
	os.MkdirAll(filepath.Join(odd, "x"), 0o755)
	os.WriteFile(filepath.Join(odd, "x", "SKILL.md"), []byte("---\nname: x\ndescription: X.\n---\n"), 0o644)
	s := startServer(t, legacyVersion, root, nil, "--tools=always", "--", "-odd")
	found := false
	for _, e := range s.listAll() {
		found = found || e.URI == "skill://-odd/x/SKILL.md"
	}
	if !found {
		t.Error("skill under -odd not served after --")
	}
	out, _, err := runRaw(t, "", nil, "--version")
	if err != nil || !strings.HasPrefix(out, "skilljack-mcp ") {
		t.Errorf("--version = %q, %v", out, err)
	}
}

// TestValidateCommand: `validate` reports findings with file and reason and
// fails on a skipped skill, a missing folder, or no folder (BR-07).
func TestValidateCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skills")
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok/SKILL.md", "---\nname: ok\ndescription: Fine.\n---\n")
	if out, stderr, err := runRaw(t, "", nil, "validate", dir); err != nil {
		t.Errorf("validate of a clean folder = %v\n%s%s", err, out, stderr)
	}
	if _, _, err := runRaw(t, "", nil, "validate", filepath.Join(dir, "nope")); err == nil {
		t.Error("validate of a missing folder succeeded")
	}
	if _, _, err := runRaw(t, "", nil, "validate"); err == nil {
		t.Error("validate with no folder succeeded")
	}
	write("bad/SKILL.md", "# no frontmatter\n")
	out, _, err := runRaw(t, "", nil, "validate", dir)
	if err == nil || !strings.Contains(out, filepath.Join("bad", "SKILL.md")) || !strings.Contains(strings.ToLower(out), "frontmatter") {
		t.Errorf("validate with a bad skill = %v, output:\n%s\nwant an error and a line naming bad/SKILL.md and its reason", err, out)
	}
}

// TestStdioFraming: a malformed line gets -32700 and the session goes on;
// requests written just before stdin closes are all answered before the
// process exits, and stdout carries only JSON-RPC (BASE-R02, R58).
func TestStdioFraming(t *testing.T) {
	in := strings.Join([]string{
		`this is not json`,
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"skills/list","params":{}}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://skilljack-docs/SKILL.md"}}`,
	}, "\n") + "\n"
	stdout, stderr, err := runRaw(t, in, nil)
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr)
	}
	rs := replies(t, stdout)
	if r, ok := rs["null"]; !ok || r.Error == nil || r.Error.Code != -32700 {
		t.Errorf("no -32700 reply to the malformed line; stdout:\n%s", stdout)
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if r, ok := rs[id]; !ok || r.Error != nil {
			t.Errorf("request %s: reply %+v, want a result before exit", id, r)
		}
	}
	if !strings.Contains(stderr, `msg="serving skills over stdio" skills=1`) {
		t.Errorf("stderr lacks the one startup line:\n%s", stderr)
	}
}

// TestModernWire drives the binary over raw stdio with 2026-07-28 requests
// (no initialize; _meta on every request, BASE-R08, R12): every result
// carries resultType "complete" (BASE-R03), and skills/list and skills/get
// carry ttlMs and cacheScope (SEP2640-R47, R54).
func TestModernWire(t *testing.T) {
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
		{"resources/directory/read", `{"uri":"skill://skilljack-docs",` + meta + `}`, []string{"resources"}},
	}
	var in strings.Builder
	for i, r := range reqs {
		in.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"` + r.method + `","params":` + r.params + "}\n")
	}
	stdout, stderr, err := runRaw(t, in.String(), nil)
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr)
	}
	rs := replies(t, stdout)
	for i, r := range reqs {
		got, ok := rs[strconv.Itoa(i+1)]
		if !ok || got.Error != nil {
			t.Errorf("%s: reply %+v", r.method, got)
			continue
		}
		if rt := string(got.Result["resultType"]); rt != `"complete"` {
			t.Errorf("%s: resultType = %s, want \"complete\"", r.method, rt)
		}
		for _, k := range r.wantKeys {
			if _, ok := got.Result[k]; !ok {
				t.Errorf("%s: result lacks %q", r.method, k)
			}
		}
	}
}

// TestShutdownOnSignal: SIGTERM stops a serving process cleanly (exit 0).
func TestShutdownOnSignal(t *testing.T) {
	cmd := exec.Command(binPath)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var errb syncBuffer
	cmd.Stderr = &errb
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until it serves: the initialize reply proves the pipeline is up.
	if _, err := stdin.Write([]byte(initLine + "\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := stdout.Read(buf); err != nil {
		t.Fatalf("no initialize reply: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want 0", err)
		}
		if strings.Contains(errb.String(), "level=ERROR") {
			t.Errorf("a clean SIGTERM shutdown logged an error:\n%s", errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit within 30 s of SIGTERM")
	}
}

// TestListenEdges: a 2026-07-28 listen stream open when stdin closes does
// not hold the exit back (BASE-R26), and a 2025-11-25 session gets -32601
// for subscriptions/listen, which its era does not have (BASE-R23).
func TestListenEdges(t *testing.T) {
	cmd := exec.Command(binPath)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var errb syncBuffer
	cmd.Stderr = &errb
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},`+meta+`}}`+"\n")
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || !strings.Contains(sc.Text(), "notifications/subscriptions/acknowledged") {
		t.Fatalf("listen not acknowledged: %q", sc.Text())
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { io.Copy(io.Discard, stdout); done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || strings.Contains(errb.String(), "gave up waiting") {
			t.Errorf("exit with an open listen stream: %v\n%s", err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after stdin closed")
	}

	in := initLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true}}}` + "\n"
	out, _, err := runRaw(t, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := replies(t, out)["2"]; r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("subscriptions/listen on a 2025-11-25 session = %+v, want -32601", r)
	}
}

// TestListenCap: a session cannot park more listen streams than its
// subscription cap (1000), whatever URIs they carry.
func TestListenCap(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	var in strings.Builder
	for i := range 1001 {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},%s}}`+"\n", i+1, meta)
	}
	cmd := exec.Command(binPath)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go io.WriteString(stdin, in.String()) // stdout is read meanwhile: both pipes are bounded
	sc := bufio.NewScanner(stdout)
	acks, refused := 0, 0
	for acks+refused < 1001 && sc.Scan() {
		switch line := sc.Text(); {
		case strings.Contains(line, "subscriptions/acknowledged"):
			acks++
		case strings.Contains(line, "Too many listen streams"):
			refused++
		}
	}
	if acks != 1000 || refused != 1 {
		t.Errorf("1001 listens: %d acknowledged, %d refused; want 1000 and 1", acks, refused)
	}
	stdin.Close()
	cmd.Wait()
}

// TestTraceFileRefused: --trace (and SKILLJACK_TRACE) refuse a file that is
// not a trace and a symbolic link, leaving them as they were, and the
// process exits with an error saying so (issue 10 F1, trace bullet).
func TestTraceFileRefused(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	writeFile(t, notes, "my notes\n")
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(notes, link); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		env      []string
		wantText string
	}{
		{"flag, not a trace", []string{"--trace=" + notes}, nil, "exists and is not a skilljack trace; choose another file"},
		{"env, not a trace", nil, []string{"SKILLJACK_TRACE=" + notes}, "exists and is not a skilljack trace"},
		{"flag, link", []string{"--trace=" + link}, nil, "is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := runRaw(t, initLine+"\n", tc.env, append(tc.args, dir)...)
			if err == nil || !strings.Contains(stderr, tc.wantText) {
				t.Errorf("run = %v, want an error with %q; stderr:\n%s", err, tc.wantText, stderr)
			}
			if got, _ := os.ReadFile(notes); string(got) != "my notes\n" {
				t.Errorf("notes = %q, want them untouched", got)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("link replaced: %v %v", fi, err)
			}
		})
	}
}

// TestTraceFileReplaced: an existing trace is replaced by the new run's
// trace, as a rerun with the same --trace expects (issue 10 F1).
func TestTraceFileReplaced(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "run.jsonl")
	old := `{"time":"2020-01-02T03:04:05Z","topic":"old.topic","uuid":"old","metadata":{},"payload":{}}` + "\n"
	writeFile(t, trace, old)
	if _, stderr, err := runRaw(t, initLine+"\n", nil, "--trace="+trace, dir); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	got, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "old.topic") || !strings.HasPrefix(string(got), `{"time":"`) {
		t.Errorf("trace after the rerun = %.300s, want only the new run's lines", got)
	}
}
