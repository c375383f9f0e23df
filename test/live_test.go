package test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/watch"
)

// Live skills: the real binary with its real watcher, files changed under
// it, a go-sdk client waiting on the notifications (never on sleeps). The
// periodic reconcile is off unless a test says otherwise, so every change
// must come through the watcher's own events.

var noReconcile = []string{"SKILLJACK_RECONCILE_INTERVAL_MS=0"}

func writeFile(tb testing.TB, path, body string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func skillBody(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n"
}

// eventually checks cond now and after every notification the client gets,
// until it holds or notifyTimeout passes.
func (s *server) eventually(what string, cond func() bool) {
	s.t.Helper()
	deadline := time.After(notifyTimeout)
	for !cond() {
		select {
		case <-s.notes.resources:
		case <-s.notes.prompts:
		case <-s.notes.tools:
		case <-s.notes.updated:
		case <-deadline:
			s.t.Fatalf("%s: not so within %v; stderr:\n%s", what, notifyTimeout, s.stderr.String())
		}
	}
}

func (s *server) entry(uri string) *skillEntry {
	for _, e := range s.listAll() {
		if e.URI == uri {
			return &e
		}
	}
	return nil
}

func hexDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestLiveNewSkill is BR-28: a skill folder created after start is picked
// up — root empty at start, root missing at start, skill moved in with one
// rename — with list_changed notifications; then an editor-style save of
// its SKILL.md notifies its subscriber.
func TestLiveNewSkill(t *testing.T) {
	const body = "---\nname: new-skill\ndescription: Created after start.\n---\n\n# New\n"
	for _, era := range eras {
		for _, mode := range []string{"empty", "missing", "mv"} {
			t.Run(era+"/"+mode, func(t *testing.T) {
				base := t.TempDir()
				root := filepath.Join(base, "root")
				if mode != "missing" {
					os.MkdirAll(root, 0o755)
				}
				n := newNotes()
				s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", root)
				if e := s.entry("skill://root/new-skill/SKILL.md"); e != nil {
					t.Fatal("skill served before it exists")
				}
				switch mode {
				case "mv":
					stage := filepath.Join(base, "root.staging", "new-skill")
					writeFile(t, filepath.Join(stage, "SKILL.md"), body)
					os.MkdirAll(root, 0o755)
					if err := os.Rename(stage, filepath.Join(root, "new-skill")); err != nil {
						t.Fatal(err)
					}
				default:
					writeFile(t, filepath.Join(root, "new-skill", "SKILL.md"), body)
				}
				wait(t, n.resources, "notifications/resources/list_changed", s.stderr)
				wait(t, n.prompts, "notifications/prompts/list_changed", s.stderr)
				s.checkEntriesPrefix("skill://root/", `{"uri": "skill://root/new-skill/SKILL.md",
				 "frontmatter": {"name": "new-skill", "description": "Created after start."},
				 "resources": [{"uri": "skill://root/new-skill/SKILL.md",
				                "digest": "sha256:a13b5ec15172dd365cf4f06bb450573e4b6d0f68d2cd90f88edaf74fa093c704",
				                "size": 65}]}`)
				if s.resource("skill://root/new-skill/SKILL.md") == nil {
					t.Error("resources/list lacks the new SKILL.md")
				}
				if !s.hasPrompt("root__new-skill") {
					t.Error("prompts/list lacks root__new-skill")
				}
				if res := s.callTool("load-skill", map[string]any{"name": "root__new-skill"}); res.IsError || textOf(res) != body {
					t.Errorf("load-skill root__new-skill = %q (isError %v)", textOf(res), res.IsError)
				}

				// Editor-style save: write elsewhere, rename over SKILL.md.
				uri := "skill://root/new-skill/SKILL.md"
				s.subscribe(uri)
				v2 := "---\nname: new-skill\ndescription: Saved by an editor.\n---\n\n# New, v2\n"
				tmp := filepath.Join(base, "editor-tmp")
				writeFile(t, tmp, v2)
				if err := os.Rename(tmp, filepath.Join(root, "new-skill", "SKILL.md")); err != nil {
					t.Fatal(err)
				}
				for got := ""; got != uri; {
					got = wait(t, n.updated, "notifications/resources/updated for "+uri, s.stderr)
				}
				e := s.entry(uri)
				if e == nil || e.Resources[0].Digest != hexDigest([]byte(v2)) || e.Resources[0].Size != int64(len(v2)) ||
					!strings.Contains(string(e.Frontmatter), "Saved by an editor.") {
					t.Errorf("skills/list after the save = %+v, want the new digest, size and frontmatter", e)
				}
				if b, _, err := s.readBytes(uri); err != nil || string(b) != v2 {
					t.Errorf("resources/read after the notification = %q, %v; want the new bytes", b, err)
				}
			})
		}
	}
}

// checkEntriesPrefix compares the skills/list entries under prefix with want.
func (s *server) checkEntriesPrefix(prefix string, want ...string) {
	s.t.Helper()
	var g, w []normalEntry
	for _, e := range s.listAll() {
		if strings.HasPrefix(e.URI, prefix) {
			g = append(g, normEntry(s.t, e))
		}
	}
	for _, e := range want {
		w = append(w, normEntry(s.t, entryJSON(s.t, e)))
	}
	if diff := cmp.Diff(w, g); diff != "" {
		s.t.Errorf("skills/list entries under %s mismatch (-want +got):\n%s", prefix, diff)
	}
}

// TestLiveDeleteRename: a skill folder deleted is gone from every surface; a
// folder renamed takes its skill with it (old gone, new present).
func TestLiveDeleteRename(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "lib")
			writeFile(t, filepath.Join(root, "doomed", "SKILL.md"), skillBody("doomed", "Will be deleted."))
			writeFile(t, filepath.Join(root, "doomed", "notes.md"), "notes\n")
			writeFile(t, filepath.Join(root, "mover", "SKILL.md"), skillBody("mover", "Will be renamed."))
			n := newNotes()
			s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", root)

			if err := os.RemoveAll(filepath.Join(root, "doomed")); err != nil {
				t.Fatal(err)
			}
			wait(t, n.resources, "resources/list_changed after a delete", s.stderr)
			s.eventually("doomed gone", func() bool { return s.entry("skill://lib/doomed/SKILL.md") == nil })
			for _, r := range s.resources() {
				if strings.HasPrefix(r.URI, "skill://lib/doomed/") {
					t.Errorf("resources/list still has %s", r.URI)
				}
			}
			if s.hasPrompt("lib__doomed") {
				t.Error("prompt lib__doomed still listed")
			}
			if !s.callTool("load-skill", map[string]any{"name": "lib__doomed"}).IsError {
				t.Error("load-skill lib__doomed still works")
			}
			if _, _, err := s.readBytes("skill://lib/doomed/notes.md"); rpcCode(err) != codeInvalidParams {
				t.Errorf("resources/read of a deleted file: %v, want -32602", err)
			}

			// A renamed folder whose name no longer matches keeps its
			// frontmatter name, so rename to a new skill name too.
			if err := os.Rename(filepath.Join(root, "mover"), filepath.Join(root, "moved")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(root, "moved", "SKILL.md"), skillBody("moved", "Was renamed."))
			s.eventually("mover renamed to moved", func() bool {
				return s.entry("skill://lib/mover/SKILL.md") == nil && s.entry("skill://lib/moved/SKILL.md") != nil
			})
			if !s.hasPrompt("lib__moved") || s.hasPrompt("lib__mover") {
				t.Error("prompts do not follow the rename")
			}
		})
	}
}

// TestLiveSubscribedEdit: editing a subscribed supporting file sends exactly
// one resources/updated for it, and re-reading it gives bytes that hash to
// the digest skills/list now shows (issue: consistency).
func TestLiveSubscribedEdit(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "lib")
			writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Has a template."))
			file := filepath.Join(root, "s", "templates", "t.md")
			writeFile(t, file, "v1\n")
			n := newNotes()
			s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", root)
			uri := "skill://lib/s/templates/t.md"
			s.subscribe(uri)

			start := time.Now()
			writeFile(t, file, "version two\n")
			got := wait(t, n.updated, "resources/updated for "+uri, s.stderr)
			t.Logf("edit to notification: %v", time.Since(start))
			if got != uri {
				t.Fatalf("resources/updated for %q, want %q", got, uri)
			}
			b, _, err := s.readBytes(uri)
			e := s.entry("skill://lib/s/SKILL.md")
			var want string
			for _, r := range e.Resources {
				if r.URI == uri {
					want = r.Digest
				}
			}
			if err != nil || hexDigest(b) != want || string(b) != "version two\n" {
				t.Errorf("re-read = %q (%s), %v; manifest digest %s", b, hexDigest(b), err, want)
			}

			// Exactly one: a later, unrelated change is announced after any
			// duplicate would have been, so draining up to it counts them.
			writeFile(t, filepath.Join(root, "marker", "SKILL.md"), skillBody("marker", "Sentinel."))
			wait(t, n.resources, "resources/list_changed for the sentinel skill", s.stderr)
			for {
				select {
				case u := <-n.updated:
					if u == uri {
						t.Errorf("a second resources/updated for %s", uri)
					}
					continue
				default:
				}
				break
			}
		})
	}
}

// TestLiveInvalidThenFixed: a SKILL.md made invalid drops its skill with a
// warning; fixed, the skill comes back.
func TestLiveInvalidThenFixed(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "lib")
			md := filepath.Join(root, "flaky", "SKILL.md")
			writeFile(t, md, skillBody("flaky", "Sometimes broken."))
			writeFile(t, filepath.Join(root, "steady", "SKILL.md"), skillBody("steady", "Always fine."))
			n := newNotes()
			s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", root)
			writeFile(t, md, "# no frontmatter any more\n")
			s.eventually("flaky dropped", func() bool { return s.entry("skill://lib/flaky/SKILL.md") == nil })
			if s.entry("skill://lib/steady/SKILL.md") == nil {
				t.Error("a broken skill hid its sibling")
			}
			writeFile(t, md, skillBody("flaky", "Fixed again."))
			s.eventually("flaky back", func() bool {
				e := s.entry("skill://lib/flaky/SKILL.md")
				return e != nil && strings.Contains(string(e.Frontmatter), "Fixed again.")
			})
			stderr := s.close()
			if l := stderrLines(stderr, skipLevels, filepath.Join("flaky", "SKILL.md")); len(l) != 1 {
				t.Errorf("%d lines name the broken flaky/SKILL.md, want 1:\n%s", len(l), stderr)
			}
		})
	}
}

// TestLiveStatic: with --static a new skill folder does not appear, while a
// subscribed file's edit still notifies (reference §6).
func TestLiveStatic(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "lib")
			writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Static."))
			file := filepath.Join(root, "s", "ref.md")
			writeFile(t, file, "v1\n")
			n := newNotes()
			s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", "--static", root)
			caps := s.cs.InitializeResult().Capabilities
			if caps.Tools.ListChanged || caps.Prompts.ListChanged {
				t.Errorf("static: tools/prompts listChanged = %v/%v, want false", caps.Tools.ListChanged, caps.Prompts.ListChanged)
			}
			uri := "skill://lib/s/ref.md"
			s.subscribe(uri)
			// One burst: a new skill and an edit of the subscribed file.
			writeFile(t, filepath.Join(root, "late", "SKILL.md"), skillBody("late", "Too late."))
			writeFile(t, file, "v2\n")
			for got := ""; got != uri; {
				got = wait(t, n.updated, "resources/updated for "+uri, s.stderr)
			}
			if s.entry("skill://lib/late/SKILL.md") != nil || s.hasPrompt("lib__late") {
				t.Error("static: a skill created after start appeared")
			}
			if b, _, err := s.readBytes(uri); err != nil || string(b) != "v2\n" {
				t.Errorf("static: re-read %s = %q, %v; want v2", uri, b, err)
			}
			// A deleted skill keeps its (fixed) prompt, which now says the
			// skill is gone instead of failing.
			if err := os.RemoveAll(filepath.Join(root, "s")); err != nil {
				t.Fatal(err)
			}
			s.eventually("s gone from skills/list", func() bool { return s.entry("skill://lib/s/SKILL.md") == nil })
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			pr, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "lib__s"})
			if err != nil || len(pr.Messages) != 1 || !strings.Contains(fmt.Sprint(pr.Messages[0].Content.(*mcp.TextContent).Text), "removed") {
				t.Errorf("static: prompt of a deleted skill = %+v, %v; want a message saying it was removed", pr, err)
			}
		})
	}
}

// TestLiveStress: 1,000 random create/edit/delete/rename operations across
// 50 skills as fast as the test can issue them; once the server is quiet
// its skills/list equals that of a fresh server started on the same disk.
func TestLiveStress(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) { liveStress(t, era) })
	}
}

func liveStress(t *testing.T, era string) {
	base := t.TempDir()
	root := filepath.Join(base, "lib")
	for i := range 50 {
		writeFile(t, filepath.Join(root, fmt.Sprintf("s%02d", i), "SKILL.md"), skillBody(fmt.Sprintf("s%02d", i), "Initial."))
	}
	n := newNotes()
	s := startServerNotes(t, era, base, noReconcile, n, "--tools=always", root)
	rng := rand.New(rand.NewPCG(1, 2))
	for op := range 1000 {
		i := rng.IntN(50)
		dir := filepath.Join(root, fmt.Sprintf("s%02d", i))
		switch rng.IntN(5) {
		case 0: // create or overwrite a skill
			writeFile(t, filepath.Join(dir, "SKILL.md"), skillBody(fmt.Sprintf("s%02d", i), fmt.Sprintf("Op %d.", op)))
		case 1: // edit or add a supporting file
			writeFile(t, filepath.Join(dir, "refs", fmt.Sprintf("f%d.md", rng.IntN(3))), fmt.Sprintf("op %d\n", op))
		case 2: // delete a skill folder
			os.RemoveAll(dir)
		case 3: // rename a skill folder onto another slot
			j := rng.IntN(50)
			to := filepath.Join(root, fmt.Sprintf("s%02d", j))
			if j != i {
				os.RemoveAll(to)
				os.Rename(dir, to)
			}
		case 4: // break or fix a SKILL.md
			if rng.IntN(2) == 0 {
				writeFile(t, filepath.Join(dir, "SKILL.md"), "broken\n")
			} else {
				writeFile(t, filepath.Join(dir, "SKILL.md"), skillBody(fmt.Sprintf("s%02d", i), "Fixed."))
			}
		}
	}
	fresh := startServer(t, legacyVersion, base, noReconcile, "--tools=always", root)
	want := norm(t, fresh.listAll())
	fresh.close()
	var last []normalEntry
	s.eventually("the served catalog to equal a fresh scan", func() bool {
		last = norm(t, s.listAll())
		return cmp.Equal(want, last)
	})
}

// TestReadDuringRescanWaitsForCatalog: a read of a file that changed on
// disk since it was hashed — the window between a write (or a remote
// swap) and the rescan — waits for the catalog that describes the new
// bytes and returns them, instead of failing (both resources/read and
// load-skill). Bytes are still only served with their own digest.
func TestReadDuringRescanWaitsForCatalog(t *testing.T) {
	root := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Version one."))
	writeFile(t, filepath.Join(root, "s", "f.md"), "v1\n")
	st := startStack(t, &actors.PipelineOptions{Watch: true,
		Watcher: watch.Options{Debounce: 300 * time.Millisecond, Reconcile: -1}}, root)
	defer st.stop(t)
	s := st.connectServer(t, legacyVersion, newNotes(), &syncBuffer{})
	if b, _, err := s.readBytes("skill://lib/s/f.md"); err != nil || string(b) != "v1\n" {
		t.Fatalf("first read = %q, %v", b, err)
	}
	writeFile(t, filepath.Join(root, "s", "f.md"), "version two\n")
	b, _, err := s.readBytes("skill://lib/s/f.md")
	if err != nil || string(b) != "version two\n" {
		t.Errorf("read right after the write = %q, %v; want the new bytes", b, err)
	}
	if e := s.entry("skill://lib/s/SKILL.md"); e == nil {
		t.Fatal("skill s not listed")
	}
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Version two, longer."))
	res := s.callTool("load-skill", map[string]any{"name": "lib__s"})
	if res.IsError || !strings.Contains(textOf(res), "Version two, longer.") {
		t.Errorf("load-skill right after the write = %q (isError %v), want the new SKILL.md", textOf(res), res.IsError)
	}
	writeFile(t, filepath.Join(root, "s", "f.md"), "version three, longer\n")
	res = s.callTool("skill-resource", map[string]any{"skill": "lib__s", "path": "f.md"})
	if res.IsError || textOf(res) != "version three, longer\n" {
		t.Errorf("skill-resource right after the write = %q (isError %v), want the new bytes", textOf(res), res.IsError)
	}
	writeFile(t, filepath.Join(root, "s", "SKILL.md"), skillBody("s", "Version three, longer still."))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pr, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "skill", Arguments: map[string]string{"name": "lib__s"}})
	if err != nil || len(pr.Messages) != 1 {
		t.Fatalf("prompts/get right after the write = %+v, %v", pr, err)
	}
	if er, ok := pr.Messages[0].Content.(*mcp.EmbeddedResource); !ok || !strings.Contains(er.Resource.Text, "Version three, longer still.") {
		t.Errorf("prompts/get right after the write = %#v, want the new SKILL.md", pr.Messages[0].Content)
	}
}
