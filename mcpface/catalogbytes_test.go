package mcpface_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// TestServedFromCatalog is issue 11 item 6: the facade builds its snapshot
// without touching the disk (the MIME types are the ones the hasher
// recorded in the catalog, even for files whose extension does not tell)
// and serves SKILL.md — load-skill, the skill prompts, resources/read —
// from the bytes the catalog carries, whatever happened to the skill
// folder since the scan (a SKILL.md whose size or mtime changed makes a
// read wait for the next catalog, TestReadDuringRescanWaitsForCatalog;
// one whose folder is gone or unreadable, or whose bytes changed behind
// the same size and mtime, is served as the catalog has it). Supporting
// files are still read from disk and checked against their digest, so
// theirs fail cleanly.
func TestServedFromCatalog(t *testing.T) {
	mutations := []struct {
		name   string
		mutate func(t *testing.T, dir string)
	}{
		{"folder gone", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"folder unreadable", func(t *testing.T, dir string) {
			if os.Geteuid() == 0 {
				t.Skip("root reads everything")
			}
			if err := os.Chmod(dir, 0); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
		}},
		{"SKILL.md rewritten", func(t *testing.T, dir string) {
			// Other bytes of the same size and modification time: nothing
			// tells the facade the file changed, so only bytes read from
			// disk could differ from the catalog's.
			p := filepath.Join(dir, "SKILL.md")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Repeat("x", int(fi.Size()))), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			root := t.TempDir()
			sk := writeSkill(t, root, skillSpec{dir: "gone", name: "gone", desc: "Scanned, then changed on disk.", files: map[string][]byte{
				"notes.unknownext": []byte("plain words\n"),
				"blob.weird":       {0xff, 0xfe, 0xfd},
				"logo.png":         pngBytes,
			}})
			m.mutate(t, sk.Dir)
			md := string(sk.SkillMD)

			cat := events.NewCatalog(1, false, []*events.Skill{sk}, nil)
			f := newFacade(t, cat, &mcpface.Options{Tools: "always"})
			for _, era := range eras {
				cs := connect(t, f, era, nil)

				all := listAllResources(t, cs)
				wantMIME := map[string]string{
					"skill://skills/gone/SKILL.md":         "text/markdown",
					"skill://skills/gone/notes.unknownext": "text/plain",
					"skill://skills/gone/blob.weird":       "application/octet-stream",
					"skill://skills/gone/logo.png":         "image/png",
				}
				for uri, want := range wantMIME {
					if r := all[uri]; r == nil || r.MIMEType != want {
						t.Errorf("%s: resources/list entry %s = %+v, want MIME type %s", era, uri, r, want)
					}
				}

				res := callTool(t, cs, "load-skill", map[string]any{"name": "skills__gone"})
				if res.IsError || textOf(t, res.Content[0]) != md {
					t.Errorf("%s: load-skill = %+v, want the catalog's SKILL.md %q", era, res.Content, md)
				}

				rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: sk.URI})
				if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != md || rr.Contents[0].MIMEType != "text/markdown" {
					t.Errorf("%s: resources/read %s = %+v, %v; want the catalog's SKILL.md", era, sk.URI, rr, err)
				}

				for _, get := range []*mcp.GetPromptParams{
					{Name: "skill", Arguments: map[string]string{"name": "skills__gone"}},
					{Name: "skills__gone"},
				} {
					gp, err := cs.GetPrompt(t.Context(), get)
					if err != nil {
						t.Errorf("%s: prompts/get %s: %v", era, get.Name, err)
						continue
					}
					er, ok := gp.Messages[0].Content.(*mcp.EmbeddedResource)
					if !ok || er.Resource.Text != md {
						t.Errorf("%s: prompts/get %s = %+v, want the catalog's SKILL.md embedded", era, get.Name, gp.Messages[0].Content)
					}
				}

				// A supporting file is read from disk: a clean error when the
				// folder is gone or unreadable, its bytes when only SKILL.md
				// changed.
				rr, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "skill://skills/gone/notes.unknownext"})
				switch {
				case m.name == "SKILL.md rewritten":
					if err != nil || rr.Contents[0].Text != "plain words\n" || rr.Contents[0].MIMEType != "text/plain" {
						t.Errorf("%s: resources/read notes.unknownext = %+v, %v; want its text", era, rr, err)
					}
				case err == nil:
					t.Errorf("%s: resources/read of a supporting file whose folder is %s = %+v, want an error", era, m.name, rr)
				case !strings.Contains(err.Error(), "notes.unknownext"):
					t.Errorf("%s: resources/read error %v does not name the file", era, err)
				}
			}
		})
	}
}

// TestSnapshotReadsNoFile is issue 11 item 6: a catalog whose skill folders
// do not exist at all (a replayed trace, a catalog from another machine) is
// served: SetCatalog and resources/list never open a file, and every file
// has the type the catalog records.
func TestSnapshotReadsNoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never-created")
	md := skillMD("ghost", "Never on this disk.")
	files := []events.File{
		fileOf("SKILL.md", md, time.Unix(1700000000, 0)),
		fileOf("words", []byte("sniffed as text by the hasher\n"), time.Unix(1700000000, 0)),
		fileOf("data/raw", []byte{0, 1, 2, 0xff}, time.Unix(1700000000, 0)),
		fileOf("ref.md", []byte("# ref\n"), time.Unix(1700000000, 0)),
	}
	sk := events.Skill{
		QualifiedName: "x__ghost", Name: "ghost", Description: "Never on this disk.", SkillPath: "x/ghost",
		URI:    "skill://x/ghost/SKILL.md",
		Source: events.Source{ID: "0", Kind: events.SourceLocal, Location: dir, Root: dir, Prefix: "x"},
		Dir:    filepath.Join(dir, "ghost"), RealDir: filepath.Join(dir, "ghost"), DirID: events.FolderID{Dev: 1, Ino: 2},
		Frontmatter: []byte(`{"name":"ghost","description":"Never on this disk."}`),
		Listed:      true, ModelInvocable: true, UserInvocable: true,
		Files: files, SkillMD: md,
	}
	f := mcpface.New(&mcpface.Options{Version: "1"})
	if !f.SetCatalog(events.NewCatalog(1, false, []*events.Skill{&sk}, nil)) {
		t.Fatal("SetCatalog = false")
	}
	cs := connect(t, f, modern, nil)
	all := listAllResources(t, cs)
	want := map[string]string{
		"skill://x/ghost/SKILL.md": "text/markdown",
		"skill://x/ghost/words":    "text/plain",
		"skill://x/ghost/data/raw": "application/octet-stream",
		"skill://x/ghost/ref.md":   "text/markdown",
	}
	for uri, mime := range want {
		if r := all[uri]; r == nil || r.MIMEType != mime {
			t.Errorf("resources/list %s = %+v, want MIME type %s", uri, r, mime)
		}
	}
	res := callTool(t, cs, "load-skill", map[string]any{"name": "x__ghost"})
	if res.IsError || textOf(t, res.Content[0]) != string(md) {
		t.Errorf("load-skill = %+v, want the catalog's SKILL.md", res.Content)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stat(%s) = %v; serving the catalog created it", dir, err)
	}
}
