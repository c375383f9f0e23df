package mcpface_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// The protocol eras every main test runs on.
const (
	legacy = "2025-11-25"
	modern = "2026-07-28"
)

var eras = []string{legacy, modern}

// skillSpec describes one skill written to disk by writeSkill.
type skillSpec struct {
	dir         string // folder name under the root
	name        string // frontmatter name
	desc        string
	qname       string // qualified name; default "skills__"+name
	unlisted    bool
	noModel     bool
	noUser      bool
	files       map[string][]byte // supporting files, rel path → bytes
	extraOnDisk map[string][]byte // written to disk but not in the manifest
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func skillMD(name, desc string) []byte {
	return []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\nDo the thing.\n")
}

// fileOf returns the manifest entry of the file rel holding b, with the
// MIME type and text flag the hasher records.
func fileOf(rel string, b []byte, mod time.Time) events.File {
	mime, text := skill.Describe(rel, b)
	return events.File{Path: rel, Digest: digest(b), Size: int64(len(b)), ModTime: mod, MIME: mime, Text: text}
}

// writeSkill writes spec below root/skills and returns its catalog entry,
// with real digests, sizes, MIME types and text flags and its SKILL.md
// bytes, as the hasher records them.
func writeSkill(t testing.TB, root string, spec skillSpec) *events.Skill {
	t.Helper()
	return makeSkill(t, root, spec, true)
}

// makeSkill is writeSkill; with onDisk false it writes nothing and only
// stats the files a writeSkill of the same spec wrote before.
func makeSkill(t testing.TB, root string, spec skillSpec, onDisk bool) *events.Skill {
	t.Helper()
	dir := filepath.Join(root, "skills", spec.dir)
	write := func(rel string, b []byte) events.File {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if !onDisk {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			return fileOf(rel, b, fi.ModTime())
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fileOf(rel, b, fi.ModTime())
	}
	md := skillMD(spec.name, spec.desc)
	files := []events.File{write("SKILL.md", md)}
	var rels []string
	for rel := range spec.files {
		rels = append(rels, rel)
	}
	sortStrings(rels)
	for _, rel := range rels {
		files = append(files, write(rel, spec.files[rel]))
	}
	for rel, b := range spec.extraOnDisk {
		write(rel, b)
	}
	skillPath := "skills/" + spec.name
	qname := spec.qname
	if qname == "" {
		qname = "skills__" + spec.name
	}
	fm, _ := json.Marshal(map[string]string{"name": spec.name, "description": spec.desc})
	return &events.Skill{
		QualifiedName:  qname,
		Name:           spec.name,
		Description:    spec.desc,
		SkillPath:      skillPath,
		URI:            "skill://" + events.EncodePath(skillPath) + "/SKILL.md",
		Source:         events.Source{ID: "0", Kind: events.SourceLocal, Location: root, Root: filepath.Join(root, "skills"), Prefix: "skills"},
		Dir:            dir,
		Frontmatter:    fm,
		Listed:         !spec.unlisted,
		ModelInvocable: !spec.noModel,
		UserInvocable:  !spec.noUser,
		Files:          files,
		SkillMD:        md,
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// pngBytes is not valid UTF-8.
var pngBytes = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0xff, 0xfe, 0x00, 0x01}

// fixture is the catalog most tests serve.
type fixture struct {
	root   string
	skills map[string]*events.Skill // by qualified name: copies, not the catalog's
	cat    *events.Catalog
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	many := map[string][]byte{}
	for _, c := range "abcdefghijkl" {
		many["refs/"+string(c)+".md"] = []byte("ref " + string(c) + "\n")
	}
	specs := []skillSpec{
		{dir: "code-review", name: "code-review", desc: "Review a diff.", files: map[string][]byte{
			"templates/email.md":  []byte("Dear customer,\n"),
			"templates/sub/x.txt": []byte("x\n"),
			"assets/logo.png":     pngBytes,
			"notes.unknownext":    []byte("plain words\n"),
			"blob.weird":          {0xff, 0xfe, 0xfd},
			"big.txt":             []byte(strings.Repeat("b", 3000)),
		}, extraOnDisk: map[string][]byte{".env": []byte("SECRET=1\n")}},
		{dir: "my-first-skill", name: "My First Skill", desc: "Display-style name.", qname: "skills__My-First-Skill", unlisted: true},
		{dir: "escape", name: "escape", desc: `Use <b> & "quotes" 'here'`},
		{dir: "quiet", name: "quiet", desc: "Not for the model nor the user.", noModel: true, noUser: true},
		{dir: "many", name: "many", desc: "Twelve references.", files: many},
	}
	fx := &fixture{root: root, skills: map[string]*events.Skill{}}
	var skills []*events.Skill
	for _, sp := range specs {
		s := writeSkill(t, root, sp)
		c := *s
		fx.skills[s.QualifiedName] = &c
		skills = append(skills, s)
	}
	fx.cat = events.NewCatalog(1, false, skills, nil)
	return fx
}

// newFacade returns a facade holding cat, with a 2000-byte file cap.
func newFacade(t *testing.T, cat *events.Catalog, opts *mcpface.Options) *mcpface.Facade {
	t.Helper()
	o := mcpface.Options{Version: "1.2.3", MaxFileSize: 2000}
	if opts != nil {
		o = *opts
		if o.MaxFileSize == 0 {
			o.MaxFileSize = 2000
		}
	}
	f := mcpface.New(&o)
	if !f.SetCatalog(cat) {
		t.Fatal("SetCatalog(first) = false")
	}
	return f
}

// connect serves f to a new go-sdk client speaking version, over in-memory
// transports (server first).
// setup, if given, runs on the client before it connects.
func connect(t *testing.T, f *mcpface.Facade, version string, copts *mcp.ClientOptions, setup ...func(*mcp.Client)) *mcp.ClientSession {
	t.Helper()
	ctx := t.Context()
	srv, err := f.Server(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, copts)
	for _, fn := range setup {
		fn(client)
	}
	for _, m := range []string{"skills/list", "skills/get", "resources/directory/read"} {
		if err := mcp.AddSendingCustomMethod[*rawParams, *rawResult](client, m); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol = %s, want %s", got, version)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// rawParams carries the params of the custom methods.
type rawParams struct {
	mcp.ParamsBase
	URI    string `json:"uri,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// rawResult keeps a custom method's result as raw JSON.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) UnmarshalJSON(b []byte) error {
	r.raw = append(json.RawMessage(nil), b...)
	return nil
}

// call sends a custom method and decodes its result into a map.
func call(t *testing.T, cs *mcp.ClientSession, method string, p *rawParams) (map[string]any, error) {
	t.Helper()
	if p == nil {
		p = &rawParams{}
	}
	res, err := mcp.CallCustomMethod[*rawParams, *rawResult](t.Context(), cs, method, p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(res.raw, &m); err != nil {
		t.Fatalf("%s result %s: %v", method, res.raw, err)
	}
	return m, nil
}

// wireCode returns the JSON-RPC error code inside err, or 0.
func wireCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func wireError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v is not a JSON-RPC error", err)
	}
	return we
}

func textOf(t *testing.T, c mcp.Content) string {
	t.Helper()
	tc, ok := c.(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T, want *mcp.TextContent", c)
	}
	return tc.Text
}

// waitFor waits for one value on ch, failing after a generous timeout.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
