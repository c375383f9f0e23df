package mcpface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
	"github.com/skilljack/skilljack-mcp/mcpface"
	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// rawSession is a raw JSON-RPC client of one stdio session served by
// [mcpface.Facade.StdioTransport], as test/benchcompare talks to the
// server: one line out, one line back.
type rawSession struct {
	in  io.Writer
	out *bufio.Reader
	id  int
}

func newRawSession(t *testing.T, f *mcpface.Facade) *rawSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := f.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(ctx, f.StdioTransport(inR, outW, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		ss.Wait()
		cancel()
	})
	return &rawSession{in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
}

// call sends one request (params "" for none) and returns its response
// line, skipping notifications.
func (s *rawSession) call(t *testing.T, method, params string) []byte {
	t.Helper()
	s.id++
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, s.id, method)
	if params != "" {
		line += `,"params":` + params
	}
	if _, err := io.WriteString(s.in, line+"}\n"); err != nil {
		t.Fatal(err)
	}
	for {
		b, err := s.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: reading the response: %v", method, err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: response not JSON: %q", method, b)
		}
		if m.Method == "" || len(m.ID) > 0 && m.Method == "" {
			return b
		}
	}
}

func (s *rawSession) notify(t *testing.T, method string) {
	t.Helper()
	if _, err := fmt.Fprintf(s.in, `{"jsonrpc":"2.0","method":%q}`+"\n", method); err != nil {
		t.Fatal(err)
	}
}

// The _meta of a 2026-07-28 request of a client declaring the skills
// extension, and the capabilities of a 2025-11-25 one.
const (
	fastModernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
	fastInitParams = `{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}},"clientInfo":{"name":"raw","version":"0"}}`
)

// twin is one catalog served twice, each by its own facade over its own
// stdio session: fast with the fast lane, sdk with it off. Every request
// goes to both.
type twin struct {
	era        string
	fast, sdk  *rawSession
	fastFacade *mcpface.Facade
	sent, hits int
}

func newTwin(t *testing.T, cat *events.Catalog, opts mcpface.Options, era string) *twin {
	t.Helper()
	tw := &twin{era: era}
	for _, on := range []bool{true, false} {
		o := opts
		f := mcpface.New(&o)
		mcpface.SetFastLane(f, on)
		if !f.SetCatalog(cat) {
			t.Fatal("SetCatalog = false")
		}
		s := newRawSession(t, f)
		if on {
			tw.fast, tw.fastFacade = s, f
		} else {
			tw.sdk = s
		}
	}
	// The session's start goes through the SDK: initialize on 2025-11-25,
	// the first request on 2026-07-28; tools/list (never in the fast lane)
	// then settles the hidden-tools notice on both.
	if era == legacy {
		tw.compare(t, "initialize", fastInitParams, false)
		tw.fast.notify(t, "notifications/initialized")
		tw.sdk.notify(t, "notifications/initialized")
	}
	tw.compare(t, "tools/list", tw.params(""), false)
	return tw
}

// params returns a params object holding fields (JSON members, "" for
// none) and, on 2026-07-28, the era's _meta.
func (tw *twin) params(fields string) string {
	if tw.era == modern {
		if fields != "" {
			fields += ","
		}
		fields += fastModernMeta
	}
	return "{" + fields + "}"
}

// compare sends one request to both sessions and fails unless the answers
// are equal as JSON and byte for byte, and unless the fast lane answered
// it exactly when wantFast. It returns the answer, decoded.
func (tw *twin) compare(t *testing.T, method, params string, wantFast bool) map[string]any {
	t.Helper()
	before := mcpface.FastAnswers(tw.fastFacade)
	got := tw.fast.call(t, method, params)
	want := tw.sdk.call(t, method, params)
	fast := mcpface.FastAnswers(tw.fastFacade) - before
	tw.sent++
	tw.hits += int(fast)
	req := fmt.Sprintf("%s %s %s", tw.era, method, clipTest(params))
	if wantFast != (fast == 1) {
		t.Errorf("%s: answered by the fast lane %d times, want fast %v", req, fast, wantFast)
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: fast answer not JSON: %v", req, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: SDK answer not JSON: %v", req, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\nfast lane: %s\nSDK path:  %s", req, clipTest(string(got)), clipTest(string(want)))
	} else if !bytes.Equal(got, want) {
		t.Errorf("%s: equal as JSON but not byte for byte:\nfast lane: %s\nSDK path:  %s", req, clipTest(string(got)), clipTest(string(want)))
	}
	return g
}

func clipTest(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fastCorpora are the real skill trees the fast lane is checked on: the
// shared corpora of the workplace (absent from a fresh clone) and those in
// test/testdata.
var fastCorpora = []string{
	"../../shared/corpora/scientific-skills",
	"../../shared/corpora/anthropics-skills",
	"../test/testdata/openai-lookalike",
	"../test/testdata/microsoft-lookalike",
}

// corpusCatalog scans root with the server's own pipeline (config, skill
// discovery, hasher, catalog builder).
func corpusCatalog(t *testing.T, root string) *events.Catalog {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Resolve(config.ResolveOptions{Args: []string{abs}, Home: t.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := actors.Validate(t.Context(), cfg, &hasher.Options{Bundled: actors.Bundled()})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestFastLaneAnswersAsSDK is the fast lane's decisive test (issue 12): for
// every skill and file of real corpora, on both protocol eras, skills/list
// (every page), skills/get, resources/read and ping answered by the fast
// lane equal the SDK path's answers (the same catalog, the fast lane off);
// so do the error answers (unknown skill, bad URI, bad escape, bad cursor,
// over-long URI, a directory read as a file, a missing uri). Requests the
// fast lane must leave to the SDK (unknown params, a progress token, a URI
// not in canonical form, a uri that is not a string, duplicate keys, ping
// on 2026-07-28) are checked to be left to it, and answered alike.
func TestFastLaneAnswersAsSDK(t *testing.T) {
	ran := 0
	for _, root := range fastCorpora {
		if _, err := os.Stat(root); err != nil {
			t.Logf("corpus %s not present: %v", root, err)
			continue
		}
		ran++
		cat := corpusCatalog(t, root)
		opts := mcpface.Options{Version: "1.2.3", Bundled: actors.Bundled(), PageSize: 7,
			Warnings: func() []string { return []string{"a startup warning"} }}
		for _, era := range eras {
			t.Run(filepath.Base(root)+"/"+era, func(t *testing.T) {
				tw := newTwin(t, cat, opts, era)
				checkCorpus(t, tw, cat)
				checkErrors(t, tw, cat)
				t.Logf("%d skills: %d requests, %d answered by the fast lane", len(cat.Skills), tw.sent, tw.hits)
			})
		}
	}
	if ran == 0 {
		t.Fatal("no corpus found")
	}
}

// checkCorpus walks skills/list and gets every skill and reads every file
// of cat.
func checkCorpus(t *testing.T, tw *twin, cat *events.Catalog) {
	t.Helper()
	cursor, pages := "", 0
	for {
		fields := ""
		if cursor != "" {
			fields = `"cursor":` + jsonString(cursor)
		}
		res := tw.compare(t, "skills/list", tw.params(fields), true)
		pages++
		r, _ := res["result"].(map[string]any)
		next, _ := r["nextCursor"].(string)
		if next == "" || pages > len(cat.Skills)+1 {
			break
		}
		cursor = next
	}
	tw.compare(t, "resources/read", tw.params(`"uri":"skill://index.json"`), true)
	for i := range cat.Skills {
		sk := cat.Skills[i]
		tw.compare(t, "skills/get", tw.params(`"uri":`+jsonString(sk.URI)), plainASCII(sk.URI))
		for _, f := range sk.Files {
			uri := sk.FileURI(f.Path)
			tw.compare(t, "resources/read", tw.params(`"uri":`+jsonString(uri)), plainASCII(uri))
		}
	}
}

// plainASCII reports whether s is written in printable ASCII, as the fast
// lane takes a URI.
func plainASCII(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

// checkErrors sends the error cases and the requests left to the SDK.
func checkErrors(t *testing.T, tw *twin, cat *events.Catalog) {
	t.Helper()
	sk := cat.Skills[0]
	long := "skill://" + strings.Repeat("a", mcpface.MaxParamBytes+1)
	badCursor := base64.StdEncoding.EncodeToString([]byte("not json"))
	for _, c := range []struct {
		method, fields string
		fast           bool
	}{
		{"skills/get", `"uri":"skill://no-such-skill/SKILL.md"`, true},
		{"skills/get", ``, true},
		{"skills/get", `"uri":""`, true},
		{"skills/get", `"uri":"https://example.com/SKILL.md"`, true},
		{"skills/get", `"uri":"skill://%zz/SKILL.md"`, true},
		{"skills/get", `"uri":"skill://a/../SKILL.md"`, true},
		{"skills/get", `"uri":"` + long + `"`, true},
		{"skills/get", `"uri":` + jsonString(sk.FileURI(sk.Files[len(sk.Files)-1].Path)), true},
		{"skills/list", `"cursor":"!!!"`, true},
		{"skills/list", `"cursor":"` + badCursor + `"`, true},
		{"resources/read", `"uri":"skill://no-such-skill/SKILL.md"`, true},
		{"resources/read", `"uri":"https://example.com/x"`, false},
		{"resources/read", `"uri":"skill://%zz/x"`, true},
		{"resources/read", `"uri":"` + long + `"`, true},
		{"resources/read", `"uri":` + jsonString(sk.SkillRootURI()), true},
		{"resources/read", ``, true},
		// Left to the SDK.
		{"resources/read", `"uri":` + jsonString(sk.URI) + `,"_meta":` + otherEraMeta(tw), false},
		{"resources/read", `"uri":` + jsonString(strings.Replace(sk.URI, "SKILL.md", "%53KILL.md", 1)), false},
		{"resources/read", `"uri":` + jsonString(sk.URI) + `,"extra":1`, false},
		{"resources/read", `"uri":` + jsonString(sk.URI) + `,"uri":` + jsonString(sk.URI), false},
		{"resources/read", `"uri":7`, false},
		{"skills/get", `"uri":` + jsonString(strings.Replace(sk.URI, "s", `\u0073`, 1)), false},
		{"skills/list", `"cursor":7`, false},
		{"skills/list", `"limit":7`, false},
	} {
		tw.compare(t, c.method, tw.params(c.fields), c.fast)
	}
	// A progress token in _meta is left to the SDK (2025-11-25; on
	// 2026-07-28 too, as an unknown _meta key).
	meta := `"_meta":{"progressToken":"p1"}`
	if tw.era == modern {
		meta = strings.Replace(fastModernMeta, `"_meta":{`, `"_meta":{"progressToken":"p1",`, 1)
	}
	tw.compare(t, "skills/get", `{"uri":`+jsonString(sk.URI)+`,`+meta+`}`, false)
	tw.compare(t, "ping", tw.params(""), tw.era == legacy)
	if tw.era == legacy {
		tw.compare(t, "ping", "", true)
	}
	// Without params: the SDK decides what a missing params object means.
	tw.compare(t, "skills/list", "", false)
}

// TestFastLaneRaceWithSwaps sends skills/list, skills/get and
// resources/read through the fast lane, pipelined, while catalogs are
// swapped: every answer is one a catalog version gives (each version's
// bytes are unique), and a skills/list page never mixes versions. Run with
// -race.
// TestFastLaneLeavesAppViewsToSDK: a ui:// view is a resource registered
// with the SDK, not a file of the catalog; the fast lane leaves its read
// to the SDK, which serves the document (a browser run found the fast lane
// answering "Resource not found").
func TestFastLaneLeavesAppViewsToSDK(t *testing.T) {
	fx := newFixture(t)
	for _, era := range []string{legacy, modern} {
		t.Run(era, func(t *testing.T) {
			tw := newTwin(t, fx.cat, mcpface.Options{Publisher: eventstest.NewPublisher()}, era)
			for _, uri := range []string{apps.ConfigURI, apps.DisplayURI} {
				res := tw.compare(t, "resources/read", tw.params(`"uri":`+jsonString(uri)), false)
				if !strings.Contains(fmt.Sprint(res["result"]), "<!doctype html>") {
					t.Errorf("%s %s: %s, want the view's document", era, uri, clipTest(fmt.Sprint(res)))
				}
			}
		})
	}
}

// TestFastLaneRaceWithSwaps: pipelined skills/list, skills/get and
// resources/read answered by the fast lane while catalogs swap: no answer
// mixes versions, and every read's bytes match its version's digest.
// otherEraMeta is a request _meta of the era tw's connection did not begin
// with: a 2026-07-28 _meta on a 2025-11-25 connection, or an empty one
// (which makes the request 2025-11-25) on a 2026-07-28 connection.
func otherEraMeta(tw *twin) string {
	if tw.era == legacy {
		return `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	return `{}`
}

func TestFastLaneRaceWithSwaps(t *testing.T) {
	skills, vs, next := swapFixture(t)
	f := mcpface.New(&mcpface.Options{PageSize: 2})
	f.SetCatalog(next(1))
	s := newRawSession(t, f)
	s.call(t, "initialize", fastInitParams)
	s.notify(t, "notifications/initialized")
	s.call(t, "tools/list", "{}")

	// The URIs stay the same in every version; skills itself is rewritten
	// by the swaps.
	type target struct{ skill, file string }
	var targets []target
	for _, sk := range skills {
		for _, f := range sk.Files[1:] {
			targets = append(targets, target{sk.URI, sk.FileURI(f.Path)})
		}
	}
	var swaps sync.WaitGroup
	done := make(chan struct{})
	swaps.Go(func() {
		for n := uint64(2); ; n++ {
			select {
			case <-done:
				return
			default:
			}
			f.SetCatalog(next(n))
		}
	})
	const rounds = 300
	for i := range rounds {
		tg := targets[i%len(targets)]
		res := s.call(t, "skills/get", `{"uri":`+jsonString(tg.skill)+`}`)
		checkEntryVersion(t, vs, res, "skill")
		res = s.call(t, "skills/list", `{}`)
		checkEntryVersion(t, vs, res, "skills")
		res = s.call(t, "resources/read", `{"uri":`+jsonString(tg.file)+`}`)
		checkReadLine(t, vs, res)
	}
	close(done)
	swaps.Wait()
	if n := mcpface.FastAnswers(f); n == 0 {
		t.Fatal("the fast lane answered nothing")
	} else {
		t.Logf("%d of %d requests answered by the fast lane", n, 3*rounds)
	}
}

// checkEntryVersion checks that the skills/get or skills/list answer line
// carries digests of one catalog version only.
func checkEntryVersion(t *testing.T, vs *versions, line []byte, field string) {
	t.Helper()
	var r struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  json.RawMessage            `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil || r.Error != nil {
		t.Fatalf("%s: %s", field, line)
	}
	var entries []struct {
		Resources []struct {
			Digest string `json:"digest"`
		} `json:"resources"`
	}
	raw := r.Result[field]
	if field == "skill" {
		raw = append(append([]byte("["), raw...), ']')
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatalf("%s: %v: %s", field, err, line)
	}
	seen := map[uint64]bool{}
	for _, e := range entries {
		for _, res := range e.Resources {
			n, ok := vs.of(res.Digest)
			if !ok {
				t.Fatalf("%s: digest %s of no catalog version", field, res.Digest)
			}
			seen[n] = true
		}
	}
	if len(seen) != 1 {
		t.Errorf("%s: digests of versions %v in one answer", field, seen)
	}
}

// checkReadLine checks a resources/read answer: bytes whose digest a
// catalog version advertises, or the refusal of a file changed on disk.
func checkReadLine(t *testing.T, vs *versions, line []byte) {
	t.Helper()
	var r struct {
		Result struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		} `json:"result"`
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		if r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "changed on disk") {
			t.Errorf("resources/read: %s", line)
		}
		return
	}
	if len(r.Result.Contents) != 1 {
		t.Fatalf("resources/read: %s", line)
	}
	if _, ok := vs.of(digest([]byte(r.Result.Contents[0].Text))); !ok {
		t.Errorf("resources/read: bytes of no catalog version: %s", line)
	}
}

// TestFastLaneGivesNotice: on 2025-11-25 a request for which the
// hidden-tools notice is still due (--tools=auto, a client declaring the
// skills extension, here before any notifications/initialized) is answered
// by the fast lane, which gives the notice first with the middleware's own
// functions: logged once on stderr. The startup warnings a client asks for
// with logging/setLevel come from the SDK's path.
func TestFastLaneGivesNotice(t *testing.T) {
	fx := newFixture(t)
	var logs syncLog
	f := mcpface.New(&mcpface.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Warnings: func() []string { return []string{"a startup warning"} }})
	f.SetCatalog(fx.cat)
	s := newRawSession(t, f)
	s.call(t, "initialize", fastInitParams)
	get := `{"uri":` + jsonString(fx.skills["skills__code-review"].URI) + `}`
	for i := range 2 {
		s.call(t, "skills/get", get)
		if n := mcpface.FastAnswers(f); n != int64(i+1) {
			t.Fatalf("the fast lane answered %d requests, want %d", n, i+1)
		}
		if c := strings.Count(logs.String(), "hides the load-skill and skill-resource tools"); c != 1 {
			t.Fatalf("notice logged %d times, want 1:\n%s", c, logs.String())
		}
	}
	// logging/setLevel goes through the SDK, which sends the warnings.
	lines := s.until(t, `{"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"warning"}}`, `"id":"lvl"`)
	if !bytes.Contains(lines, []byte("a startup warning")) {
		t.Fatalf("no startup warning before the logging/setLevel answer:\n%s", lines)
	}
	s.call(t, "skills/get", get)
	if n := mcpface.FastAnswers(f); n != 3 {
		t.Fatalf("the fast lane answered %d requests after the warnings, want 3", n)
	}
}

// TestFastLaneLeavesModernNoticeToSDK: on 2026-07-28, a request whose
// _meta log level makes the hidden-tools notice or the startup warnings
// due is left to the SDK's path, which sends them; the next such request
// is the fast lane's.
func TestFastLaneLeavesModernNoticeToSDK(t *testing.T) {
	fx := newFixture(t)
	f := mcpface.New(&mcpface.Options{Warnings: func() []string { return []string{"a startup warning"} }})
	f.SetCatalog(fx.cat)
	s := newRawSession(t, f)
	plain := `{"uri":` + jsonString(fx.skills["skills__code-review"].URI) + `,` + fastModernMeta + `}`
	debug := strings.Replace(plain, `"_meta":{`, `"_meta":{"io.modelcontextprotocol/logLevel":"debug",`, 1)
	s.call(t, "skills/get", plain) // the session's first request: the SDK's
	s.call(t, "skills/get", plain)
	if n := mcpface.FastAnswers(f); n != 1 {
		t.Fatalf("the fast lane answered %d requests, want 1", n)
	}
	s.id++
	lines := s.until(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"skills/get","params":%s}`, s.id, debug), fmt.Sprintf(`"id":%d,`, s.id))
	if n := mcpface.FastAnswers(f); n != 1 {
		t.Fatalf("the fast lane answered a request with the notice due (%d answers)", n)
	}
	for _, want := range []string{"a startup warning", "hides the load-skill and skill-resource tools"} {
		if !bytes.Contains(lines, []byte(want)) {
			t.Errorf("no %q before the answer:\n%s", want, lines)
		}
	}
	s.call(t, "skills/get", debug)
	if n := mcpface.FastAnswers(f); n != 2 {
		t.Fatalf("the fast lane answered %d requests, want 2", n)
	}
}

// until writes line and returns every line the server writes up to and
// including the first that contains end.
func (s *rawSession) until(t *testing.T, line, end string) []byte {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	var all []byte
	for {
		b, err := s.out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
		if bytes.Contains(b, []byte(end)) {
			return all
		}
	}
}

// syncLog is a log sink safe for concurrent writes.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFastLaneLeavesChangedFilesToSDK: a supporting file or a SKILL.md
// changed on disk since the snapshot was built is left to the SDK's path,
// which waits for the catalog of the new bytes (here none comes: it
// answers -32603 for the file, the catalog's bytes for the SKILL.md) and
// answers as it did without the fast lane.
func TestFastLaneLeavesChangedFilesToSDK(t *testing.T) {
	fx := newFixture(t)
	sk := fx.skills["skills__code-review"]
	file := "templates/email.md"
	tw := newTwin(t, fx.cat, mcpface.Options{}, legacy)
	read := func(uri string) string { return tw.params(`"uri":` + jsonString(uri)) }
	tw.compare(t, "resources/read", read(sk.FileURI(file)), true)
	tw.compare(t, "resources/read", read(sk.URI), true)
	rewrite(t, sk, file, []byte("Dear reader, changed.\n"))
	rewrite(t, sk, "SKILL.md", append(slices.Clone(sk.SkillMD), "\nChanged.\n"...))
	res := tw.compare(t, "resources/read", read(sk.FileURI(file)), false)
	if e, _ := res["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "changed on disk") {
		t.Errorf("read of a changed file: %v, want -32603 changed on disk", res)
	}
	tw.compare(t, "resources/read", read(sk.URI), false)
	tw.compare(t, "skills/get", tw.params(`"uri":`+jsonString(sk.URI)), true)
}

// TestNullParams: "params": null on skills/list, skills/get or
// resources/directory/read is -32602 on both paths (it was a handler
// panic, answered -32603: adversarial trial).
func TestNullParams(t *testing.T) {
	tw := newTwin(t, newFixture(t).cat, mcpface.Options{}, legacy)
	for _, method := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		res := tw.compare(t, method, "null", false)
		if code := fmt.Sprint(res["error"].(map[string]any)["code"]); code != "-32602" {
			t.Errorf("%s with params null: %v, want -32602", method, res)
		}
	}
}
