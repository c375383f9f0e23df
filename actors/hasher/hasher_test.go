package hasher_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

func newTestHasher(opts *hasher.Options) *hasher.Hasher {
	return hasher.New(hasher.Inboxes{Configured: make(chan *message.Message)}, eventstest.NewPublisher(), opts)
}

func localSource(root string) events.Source {
	return events.Source{ID: "0", Kind: events.SourceLocal, Location: root, Root: root, Prefix: filepath.Base(root)}
}

// manifest maps RelDir to the manifest paths, in order.
func manifest(scan events.SourceScanned) map[string][]string {
	out := map[string][]string{}
	for _, s := range scan.Skills {
		var paths []string
		for _, f := range s.Files {
			p := f.Path
			if f.DiskName != "" {
				p += "=" + f.DiskName
			}
			paths = append(paths, p)
		}
		out[s.RelDir] = paths
	}
	return out
}

func relDirs(scan events.SourceScanned) []string {
	var out []string
	for _, s := range scan.Skills {
		out = append(out, s.RelDir)
	}
	return out
}

// TestScanDiscovery pins which folders are skills and what their manifests
// hold (DESIGN "Where skills come from"; BR-17, BR-18, BR-20, SEP2640-R25).
func TestScanDiscovery(t *testing.T) {
	md := skilltest.SkillMD("x", "d")
	tests := []struct {
		name      string
		files     map[string]string
		want      map[string][]string
		wantOrder []string
		wantDiags []string // substrings, one diagnostic each, in order
	}{
		{
			name: "depth limit 6",
			files: map[string]string{
				"a/b/c/d/e/f/SKILL.md":   md,
				"p/q/r/s/t/u/v/SKILL.md": md,
			},
			want: map[string][]string{"a/b/c/d/e/f": {"SKILL.md"}},
			// Issue 13 item 10: the skill past the limit is named.
			wantDiags: []string{"p/q/r/s/t/u/v/SKILL.md is not served as a skill: its folder is 7 levels below the source root, past the discovery depth of 6"},
		},
		{
			// Issue 13 item 1 (a deliberate change: the root was not a
			// skill before): a root holding SKILL.md is a skill, RelDir its
			// folder name; nested skills are found below it.
			name:  "SKILL.md directly in the root makes the root a skill",
			files: map[string]string{"SKILL.md": md, "loose.md": "x", "one/SKILL.md": md},
			want: map[string][]string{
				"skills":     {"SKILL.md", "loose.md", "one/SKILL.md"},
				"skills/one": {"SKILL.md"},
			},
		},
		{
			// Both x folders are scanned; the catalog builder picks one
			// (TestValidateBrokenDoesNotShadow).
			name: "BR-17 containers; skills/ and .claude/skills collapse",
			files: map[string]string{
				"acme/billing/refunds/SKILL.md":           md,
				"acme/billing/refunds/templates/email.md": "Dear customer,\n",
				"x/SKILL.md":                     md,
				"skills/x/SKILL.md":              md,
				"skills/y/SKILL.md":              md,
				".claude/skills/z/SKILL.md":      md,
				".claude/skills/team/w/SKILL.md": md,
			},
			want: map[string][]string{
				"acme/billing/refunds": {"SKILL.md", "templates/email.md"},
				"x":                    {"SKILL.md"},
				"y":                    {"SKILL.md"},
				"z":                    {"SKILL.md"},
				"team/w":               {"SKILL.md"},
			},
			wantOrder: []string{"acme/billing/refunds", "x", "team/w", "z", "x", "y"},
		},
		{
			// Issue 13 item 2 (a deliberate change: hidden folders were not
			// descended into before): hidden collection folders are, tool
			// folders are not; hidden folders inside a skill stay unserved.
			name: "hidden folders are descended into, tool folders and node_modules are not, with a hint",
			files: map[string]string{
				".curated/h/SKILL.md":         md,
				".curated/h/.private/x.md":    "x",
				".curated/h/.nested/SKILL.md": md,
				".git/config":                 "x",
				".git/s/SKILL.md":             md,
				".github/SKILL.md":            md,
				".vscode/v/SKILL.md":          md,
				"node_modules/SKILL.md":       md,
				"node_modules/n/SKILL.md":     md,
				"ok/SKILL.md":                 md,
			},
			want: map[string][]string{".curated/h": {"SKILL.md"}, "ok": {"SKILL.md"}},
			wantDiags: []string{
				".curated/h/.nested/SKILL.md is inside .nested",
				".github/SKILL.md is inside .github",
				"node_modules/SKILL.md is inside node_modules",
			},
		},
		{
			name: "BR-18 nested skill: own entry, parent manifest complete",
			files: map[string]string{
				"outer/SKILL.md":           md,
				"outer/guide.md":           "Outer guide.\n",
				"outer/inner/SKILL.md":     md,
				"outer/inner/refs/note.md": "Inner note.\n",
				"outer/plain/SKILL.md":     "# no frontmatter\n",
			},
			want: map[string][]string{
				"outer":       {"SKILL.md", "guide.md", "inner/SKILL.md", "inner/refs/note.md", "plain/SKILL.md"},
				"outer/inner": {"SKILL.md", "refs/note.md"},
				"outer/plain": {"SKILL.md"},
			},
			wantOrder: []string{"outer", "outer/inner", "outer/plain"},
		},
		{
			name: "hidden files, hidden dirs and node_modules inside a skill are never listed",
			files: map[string]string{
				"s/SKILL.md":                  md,
				"s/.env":                      "SECRET=1",
				"s/.secrets/x":                "x",
				"s/node_modules/pkg/index.js": "x",
				"s/scripts/run.sh":            "echo",
				"s/scripts/.cache":            "x",
			},
			want: map[string][]string{"s": {"SKILL.md", "scripts/run.sh"}},
		},
		{
			name:  "BR-20 lower-case skill.md is one manifest element",
			files: map[string]string{"lower/skill.md": md, "lower/a.txt": "a"},
			want:  map[string][]string{"lower": {"SKILL.md=skill.md", "a.txt"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "skills")
			skilltest.WriteTree(t, root, tc.files)
			scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, manifest(scan)); diff != "" {
				t.Errorf("manifests mismatch (-want +got):\n%s", diff)
			}
			if tc.wantOrder != nil {
				if diff := cmp.Diff(tc.wantOrder, relDirs(scan)); diff != "" {
					t.Errorf("walk order mismatch (-want +got):\n%s", diff)
				}
			}
			if len(scan.Diagnostics) != len(tc.wantDiags) {
				t.Fatalf("Diagnostics = %+v, want %d", scan.Diagnostics, len(tc.wantDiags))
			}
			for i, sub := range tc.wantDiags {
				if !strings.Contains(scan.Diagnostics[i].Message, sub) {
					t.Errorf("Diagnostics[%d] = %q, want it to contain %q", i, scan.Diagnostics[i].Message, sub)
				}
			}
			for _, s := range scan.Skills {
				if !strings.HasPrefix(s.Dir, root) || !filepath.IsAbs(s.Dir) {
					t.Errorf("Dir = %q, want absolute below %q", s.Dir, root)
				}
				rel := strings.TrimPrefix(strings.TrimPrefix(s.Dir, root), string(filepath.Separator))
				want := tc.files[path.Join(filepath.ToSlash(rel), s.Files[0].OnDisk())]
				if string(s.SkillMD) != want || s.Files[0].Digest != skilltest.Digest(want) || s.Files[0].Size != int64(len(want)) {
					t.Errorf("%s: SkillMD, digest, size do not describe the file", s.RelDir)
				}
			}
		})
	}
}

// TestScanDigests checks exact digests and sizes of raw bytes (SEP2640-R40).
func TestScanDigests(t *testing.T) {
	root := t.TempDir()
	md := "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\n"
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": md, "a/f.bin": "\x00\x01\x02"})
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	var got []events.File
	for _, f := range scan.Skills[0].Files {
		// MIME and Text are pinned by TestScanRecordsContent.
		f.ModTime, f.MIME, f.Text = time.Time{}, "", false
		got = append(got, f)
	}
	want := []events.File{
		{Path: "SKILL.md", Digest: skilltest.Digest(md), Size: int64(len(md))},
		{Path: "f.bin", Digest: "sha256:ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc", Size: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Files mismatch (-want +got):\n%s", diff)
	}
}

// TestScanRecordsContent is issue 11 item 6: the hasher records, from the
// bytes it hashes, each file's MIME type and text flag and the SKILL.md
// bytes, for local and bundled sources alike; a rescan served from the
// digest cache (nothing read) gives the same; the catalog builder carries
// the SKILL.md bytes into the catalog, so nobody reads a file to serve the
// SKILL.md or to type a file.
func TestScanRecordsContent(t *testing.T) {
	md := skilltest.SkillMD("a", "d")
	tree := map[string]string{
		"a/SKILL.md":          md,
		"a/notes.unknownext":  "plain words\n",
		"a/blob.weird":        "\xff\xfe\xfd",
		"a/assets/logo.png":   "\x89PNG",
		"a/latin1.txt":        "caf\xe9",
		"a/data.JSON":         "{}",
		"a/long":              strings.Repeat("z", 9000) + "\xff",
		"a/nested/b/SKILL.md": skilltest.SkillMD("b", "d"),
	}
	type rec struct {
		MIME string
		Text bool
	}
	want := map[string]rec{
		"SKILL.md":          {"text/markdown", true},
		"notes.unknownext":  {"text/plain", true},
		"blob.weird":        {"application/octet-stream", false},
		"assets/logo.png":   {"image/png", false},
		"latin1.txt":        {"text/plain", false},
		"data.JSON":         {"application/json", true},
		"long":              {"text/plain", false}, // sniffed from its first 8192 bytes; not UTF-8 throughout
		"nested/b/SKILL.md": {"text/markdown", true},
	}
	check := func(t *testing.T, scan events.SourceScanned, carried bool) {
		t.Helper()
		i := slices.IndexFunc(scan.Skills, func(s events.ScannedSkill) bool { return s.RelDir == "a" })
		if i < 0 {
			t.Fatalf("no skill a in %v", relDirs(scan))
		}
		sk := scan.Skills[i]
		got := map[string]rec{}
		for _, f := range sk.Files {
			got[f.Path] = rec{f.MIME, f.Text}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("MIME types and text flags mismatch (-want +got):\n%s", diff)
		}
		if sk.Files[0].Digest != skilltest.Digest(md) || carried && string(sk.SkillMD) != md || !carried && sk.SkillMD != nil {
			t.Errorf("SkillMD = %q (carried: want %v), want the bytes Files[0] describes", sk.SkillMD, carried)
		}
	}

	root := t.TempDir()
	skilltest.WriteTree(t, root, tree)
	h := newTestHasher(nil)
	src := localSource(root)
	first, err := h.Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	check(t, first, true)
	cached, err := h.Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if cached.Hashed != 0 {
		t.Errorf("second scan Hashed = %d, want 0", cached.Hashed)
	}
	check(t, cached, false) // issue 12: a cached SKILL.md is not read again

	fsys := fstest.MapFS{}
	for p, body := range tree {
		fsys[p] = &fstest.MapFile{Data: []byte(body)}
	}
	bsrc := events.Source{ID: config.BundledSourceID, Kind: events.SourceBundled, Location: "bundled", Root: "."}
	bundled, err := newTestHasher(&hasher.Options{Bundled: fsys}).Scan(t.Context(), bsrc)
	if err != nil {
		t.Fatal(err)
	}
	check(t, bundled, true)

	cfg := events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}}
	cat := catalog.Build(1, cfg, map[string]events.SourceScanned{src.ID: cached}, nil)
	sk := cat.SkillByName(filepath.Base(root) + "__a")
	if sk == nil {
		t.Fatalf("catalog has no skill a: %+v", cat.Skills)
	}
	// The builder read the SKILL.md the cached scan did not carry (its
	// name and description are the file's) and keeps no bytes (issue 12).
	if sk.SkillMD != nil || sk.Description != "d" || sk.Files[len(sk.Files)-1].MIME == "" {
		t.Errorf("catalog skill SkillMD = %q, description %q, files %+v; want no bytes, the file's description and typed files", sk.SkillMD, sk.Description, sk.Files)
	}
}

// TestScanSymlinks pins BR-15: a symlinked skill folder in a source root is
// followed, even outside the root; a dangling link is ignored with one
// warning; symlinks inside a skill are never listed. A linked container
// (skills/acme -> ../team) is not followed, with one warning (CONTAINMENT).
func TestScanSymlinks(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "skills")
	skilltest.WriteTree(t, dir, map[string]string{
		"shared/wrap-up/SKILL.md": skilltest.SkillMD("wrap-up", "Summarise the session."),
		"shared/secret.txt":       "secret",
		"skills/own/SKILL.md":     skilltest.SkillMD("own", "d"),
		"skills/own/real.md":      "real",
		"team/grouped/SKILL.md":   skilltest.SkillMD("grouped", "d"),
	})
	links := map[string]string{
		"skills/wrap-up":      "../shared/wrap-up",
		"skills/dangling":     "../shared/missing",
		"skills/acme":         "../team",
		"skills/own/link.txt": "../../shared/secret.txt",
		"skills/own/linkdir":  "../../shared",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(l))); err != nil {
			t.Skipf("cannot create symlinks: %v", err)
		}
	}
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"own":     {"SKILL.md", "real.md"},
		"wrap-up": {"SKILL.md"},
	}
	if diff := cmp.Diff(want, manifest(scan)); diff != "" {
		t.Errorf("manifests mismatch (-want +got):\n%s", diff)
	}
	wantDiags := []string{
		"symbolic link not followed: " + filepath.Join(root, "acme"),
		"broken symbolic link ignored: " + filepath.Join(root, "dangling"),
		// Issue 13 item 10: links inside a skill are named, still not served.
		filepath.Join(root, "own", "link.txt") + " is a symbolic link inside a skill",
		filepath.Join(root, "own", "linkdir") + " is a symbolic link inside a skill",
	}
	if diff := cmp.Diff(wantDiags, diagPrefixes(scan.Diagnostics, wantDiags)); diff != "" {
		t.Errorf("Diagnostics mismatch (-want +got):\n%s\n%+v", diff, scan.Diagnostics)
	}
	for _, s := range scan.Skills {
		if s.RelDir == "wrap-up" && s.Dir != filepath.Join(root, "wrap-up") {
			t.Errorf("Dir = %q, want the link path", s.Dir)
		}
	}
}

// diagPrefixes returns each diagnostic's message cut to the length of the
// matching want entry when it starts with it, else whole, for cmp.Diff.
func diagPrefixes(diags []events.Diagnostic, want []string) []string {
	var out []string
	for i, d := range diags {
		m := d.Message
		if i < len(want) && strings.HasPrefix(m, want[i]) {
			m = want[i]
		}
		out = append(out, m)
	}
	return out
}

// TestScanSymlinkContainment pins the CONTAINMENT finding: a symbolic link
// is followed only when it sits directly in a source root (or in the
// collapsed skills/ and .claude/skills roots) and points to a skill folder.
// Before the fix, src1/container/deeplink -> ../../outside served a file
// outside the source, src1/loop -> .. repeated the catalog and served the
// parent folder, and src1/rootlink -> / walked the whole file system.
func TestScanSymlinkContainment(t *testing.T) {
	md := skilltest.SkillMD("x", "d")
	tests := []struct {
		name  string
		files map[string]string // below the test folder; the source is src1
		links map[string]string // link (below the test folder) -> target
		want  map[string][]string
		// wantDiags are message prefixes, one diagnostic each, in order;
		// "@" stands for the source root.
		wantDiags []string
	}{
		{
			name: "link deep in a container is not followed",
			files: map[string]string{
				"src1/container/real/SKILL.md": md,
				"outside/SKILL.md":             md,
				"outside/secret.txt":           "secret",
			},
			links:     map[string]string{"src1/container/deeplink": "../../outside"},
			want:      map[string][]string{"container/real": {"SKILL.md"}},
			wantDiags: []string{"symbolic link not followed: @/container/deeplink: it is not directly in a source root"},
		},
		{
			name:      "link to the parent folder is not followed",
			files:     map[string]string{"src1/one/SKILL.md": md},
			links:     map[string]string{"src1/loop": ".."},
			want:      map[string][]string{"one": {"SKILL.md"}},
			wantDiags: []string{"symbolic link not followed: @/loop: its target holds no SKILL.md"},
		},
		{
			name:      "link to a parent that is a skill folder is not followed either",
			files:     map[string]string{"src1/one/SKILL.md": md, "SKILL.md": md},
			links:     map[string]string{"src1/loop": ".."},
			want:      map[string][]string{"one": {"SKILL.md"}},
			wantDiags: []string{"symbolic link not followed: @/loop: its target is the source root or a folder above it"},
		},
		{
			name:      "link to / is not followed",
			files:     map[string]string{"src1/one/SKILL.md": md},
			links:     map[string]string{"src1/rootlink": "/"},
			want:      map[string][]string{"one": {"SKILL.md"}},
			wantDiags: []string{"symbolic link not followed: @/rootlink: its target holds no SKILL.md"},
		},
		{
			name: "linked collapsed roots are linked containers",
			files: map[string]string{
				"elsewhere/a/SKILL.md":  md,
				"src1/one/SKILL.md":     md,
				"src1/.claude/keep.txt": "x",
			},
			links: map[string]string{"src1/skills": "../elsewhere", "src1/.claude/skills": "../../elsewhere"},
			want:  map[string][]string{"one": {"SKILL.md"}},
			wantDiags: []string{
				"symbolic link not followed: @/.claude/skills: it is a linked container folder",
				"symbolic link not followed: @/skills: its target holds no SKILL.md",
			},
		},
		{
			name: "links inside a followed skill are not followed for nested skills",
			files: map[string]string{
				"shared/wrap-up/SKILL.md": md,
				"other/SKILL.md":          md,
				"src1/skills/.keep":       "",
			},
			links: map[string]string{"src1/skills/wrap-up": "../../shared/wrap-up", "shared/wrap-up/nested": "../other"},
			want:  map[string][]string{"wrap-up": {"SKILL.md"}},
			// Issue 13 item 10: the link is named, not followed.
			wantDiags: []string{"@/skills/wrap-up/nested is a symbolic link inside a skill"},
		},
		{
			name:  "two links to one skill folder: entered once",
			files: map[string]string{"shared/s/SKILL.md": md, "src1/skills/.keep": ""},
			links: map[string]string{"src1/skills/a": "../../shared/s", "src1/skills/b": "../../shared/s"},
			want:  map[string][]string{"a": {"SKILL.md"}},
			wantDiags: []string{
				"@/skills/b is the same folder as @/skills/a, already scanned; skipped",
			},
		},
		{
			name:      "link cycle back to the root is cut",
			files:     map[string]string{"SKILL.md": md, "src1/one/SKILL.md": md},
			links:     map[string]string{"src1/up": ".."},
			want:      map[string][]string{"one": {"SKILL.md"}},
			wantDiags: []string{"symbolic link not followed: @/up: its target is the source root or a folder above it"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			skilltest.WriteTree(t, dir, tc.files)
			for l, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(l))); err != nil {
					t.Skipf("cannot create symlinks: %v", err)
				}
			}
			root := filepath.Join(dir, "src1")
			scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, manifest(scan)); diff != "" {
				t.Errorf("manifests mismatch (-want +got):\n%s", diff)
			}
			var want []string
			for _, w := range tc.wantDiags {
				want = append(want, strings.ReplaceAll(w, "@", root))
			}
			if diff := cmp.Diff(want, diagPrefixes(scan.Diagnostics, want)); diff != "" {
				t.Errorf("Diagnostics mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScanCache pins BR-35's hashing work: an unchanged file is never read
// again; a changed one is.
func TestScanCache(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d")}
	for i := range 20 {
		files[fmt.Sprintf("a/assets/%02d.bin", i)] = strings.Repeat("x", i)
	}
	skilltest.WriteTree(t, root, files)
	h := newTestHasher(&hasher.Options{Workers: 3})
	src := localSource(root)
	first, err := h.Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if first.Hashed != 21 {
		t.Errorf("first scan Hashed = %d, want 21", first.Hashed)
	}
	second, err := h.Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if second.Hashed != 0 {
		t.Errorf("second scan Hashed = %d, want 0", second.Hashed)
	}
	if second.Skills[0].SkillMD != nil {
		t.Errorf("second scan carries the cached SKILL.md's bytes; want none (issue 12)")
	}
	if diff := cmp.Diff(first.Skills, second.Skills, ignoreScanMeta); diff != "" {
		t.Errorf("rescan differs (-first +second):\n%s", diff)
	}

	changed := filepath.Join(root, "a", "assets", "03.bin")
	if err := os.WriteFile(changed, []byte("changed!"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(changed, later, later); err != nil {
		t.Fatal(err)
	}
	third, err := h.Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if third.Hashed != 1 {
		t.Errorf("scan after a change Hashed = %d, want 1", third.Hashed)
	}
	for _, f := range third.Skills[0].Files {
		if f.Path == "assets/03.bin" && f.Digest != skilltest.Digest("changed!") {
			t.Errorf("changed file digest = %s, want %s", f.Digest, skilltest.Digest("changed!"))
		}
	}
}

// TestScanUnreadableFile checks that an unreadable file is left out with a
// warning and does not drop the skill or the source.
func TestScanUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	root := t.TempDir()
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d"), "a/locked.txt": "x", "a/ok.txt": "y"})
	if err := os.Chmod(filepath.Join(root, "a", "locked.txt"), 0); err != nil {
		t.Fatal(err)
	}
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"a": {"SKILL.md", "ok.txt"}}, manifest(scan)); diff != "" {
		t.Errorf("manifest mismatch (-want +got):\n%s", diff)
	}
	if len(scan.Diagnostics) != 1 || !strings.Contains(scan.Diagnostics[0].Message, "locked.txt") {
		t.Errorf("Diagnostics = %+v, want one naming locked.txt", scan.Diagnostics)
	}
}

// TestScanMissingRoot checks that a missing root gives no skills and one
// diagnostic, not an error.
func TestScanMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "nope")
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Skills) != 0 || len(scan.Diagnostics) != 1 || !strings.Contains(scan.Diagnostics[0].Message, "skill directory not found") {
		t.Errorf("scan = %d skills, %+v; want none and one not-found diagnostic", len(scan.Skills), scan.Diagnostics)
	}
}

// TestScanBundled checks the embedded skilljack-docs skill and an fs.FS
// bundle walked like a local root.
func TestScanBundled(t *testing.T) {
	src := events.Source{ID: config.BundledSourceID, Kind: events.SourceBundled, Location: "bundled", Root: "."}
	scan, err := newTestHasher(&hasher.Options{Bundled: actors.Bundled()}).Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"skilljack-docs"}, relDirs(scan)); diff != "" {
		t.Fatalf("bundled skills mismatch (-want +got):\n%s", diff)
	}
	cat := catalog.Build(1, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}}, map[string]events.SourceScanned{src.ID: scan}, nil)
	if len(cat.Skills) != 1 || len(cat.Diagnostics) != 0 {
		t.Fatalf("catalog = %+v; diagnostics %+v", cat.Skills, cat.Diagnostics)
	}
	s := cat.Skills[0]
	if s.URI != "skill://skilljack-docs/SKILL.md" || s.QualifiedName != "skilljack-docs" || !s.Listed || s.Dir != "skilljack-docs" {
		t.Errorf("bundled skill = %s %s listed=%v dir=%s", s.URI, s.QualifiedName, s.Listed, s.Dir)
	}

	fsys := fstest.MapFS{
		"one/SKILL.md":        {Data: []byte(skilltest.SkillMD("one", "d"))},
		"one/ref.md":          {Data: []byte("r")},
		"one/.hidden":         {Data: []byte("h")},
		"skills/two/SKILL.md": {Data: []byte(skilltest.SkillMD("two", "d"))},
	}
	scan, err = newTestHasher(&hasher.Options{Bundled: fsys}).Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"one": {"SKILL.md", "ref.md"}, "two": {"SKILL.md"}}
	if diff := cmp.Diff(want, manifest(scan)); diff != "" {
		t.Errorf("fs.FS manifests mismatch (-want +got):\n%s", diff)
	}

	scan, err = newTestHasher(nil).Scan(t.Context(), src)
	if err != nil || len(scan.Skills) != 0 {
		t.Errorf("Scan without a bundle = %d skills, %v; want none", len(scan.Skills), err)
	}
}

// TestScanRemoteKind checks that Scan refuses kinds it does not serve.
func TestScanRemoteKind(t *testing.T) {
	// A remote source is scanned in its cache folder; before its first sync
	// the folder is missing, which gives no skills and no diagnostic (the
	// fetcher reports), unlike a missing local folder.
	cache := filepath.Join(t.TempDir(), "github-cache", "a", "b")
	src := events.Source{ID: "0", Kind: events.SourceGitHub, Location: "github.com/a/b", Root: cache, Prefix: "a-b"}
	h := newTestHasher(nil)
	scan, err := h.Scan(t.Context(), src)
	if err != nil || len(scan.Skills) != 0 || len(scan.Diagnostics) != 0 {
		t.Fatalf("Scan(unsynced github) = %d skills, %v, %v; want none, no diagnostics, nil", len(scan.Skills), scan.Diagnostics, err)
	}
	skilltest.WriteTree(t, cache, map[string]string{"x/SKILL.md": skilltest.SkillMD("x", "d")})
	scan, err = h.Scan(t.Context(), src)
	if err != nil || len(scan.Skills) != 1 || scan.Skills[0].RelDir != "x" {
		t.Fatalf("Scan(synced github) = %+v, %v; want skill x", scan.Skills, err)
	}
}

// BenchmarkScan measures a rescan of a generated tree (cache warm) and a
// cold scan.
func BenchmarkScan(b *testing.B) {
	root := b.TempDir()
	for i := range 50 {
		dir := filepath.Join(root, fmt.Sprintf("group-%d", i%5), fmt.Sprintf("skill-%02d", i))
		if err := os.MkdirAll(filepath.Join(dir, "refs"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skilltest.SkillMD(fmt.Sprintf("skill-%02d", i), "d")), 0o644); err != nil {
			b.Fatal(err)
		}
		for j := range 20 {
			if err := os.WriteFile(filepath.Join(dir, "refs", fmt.Sprintf("%02d.md", j)), []byte(strings.Repeat("x", 4096)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	src := localSource(root)
	b.Run("warm", func(b *testing.B) {
		h := newTestHasher(nil)
		if _, err := h.Scan(b.Context(), src); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := h.Scan(b.Context(), src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := newTestHasher(nil).Scan(b.Context(), src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// hasherRun runs a hasher with a files.changed inbox inside a synctest
// bubble and hands out its published scans.
type hasherRun struct {
	t       *testing.T
	cfgIn   chan *message.Message
	changes chan *message.Message
	pub     *eventstest.Publisher
	cfg     events.SourcesConfigured
	seq     uint64
	h       *hasher.Hasher
}

func startHasher(t *testing.T, cfg events.SourcesConfigured) *hasherRun {
	t.Helper()
	r := &hasherRun{t: t, cfgIn: make(chan *message.Message), changes: make(chan *message.Message), pub: eventstest.NewPublisher(), cfg: cfg}
	h := hasher.New(hasher.Inboxes{Configured: r.cfgIn, Changes: r.changes}, r.pub, &hasher.Options{Workers: 2})
	r.h = h
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	r.cfgIn <- eventstest.Encode(t, cfg)
	return r
}

// next returns the next published scan.
func (r *hasherRun) next() events.SourceScanned {
	r.t.Helper()
	ev, err := events.Decode[events.SourceScanned](<-r.pub.C)
	if err != nil {
		r.t.Fatal(err)
	}
	return ev
}

// change sends a files.changed for the first source and returns the scan
// it causes.
func (r *hasherRun) change(paths []string, rescan bool) events.SourceScanned {
	r.t.Helper()
	r.seq++
	r.changes <- eventstest.Encode(r.t, events.FilesChanged{Seq: r.seq, ConfigSeq: r.cfg.Seq, Source: r.cfg.Sources[0], Paths: paths, Rescan: rescan})
	return r.next()
}

// changeMatchesFull sends a files.changed for the first source (a whole
// rescan when paths is nil) and returns the scan it causes, failing the
// test (named name) unless it equals a full scan of the disk.
func (r *hasherRun) changeMatchesFull(name string, paths []string) events.SourceScanned {
	r.t.Helper()
	got := r.change(paths, paths == nil)
	want, err := newTestHasher(nil).Scan(r.t.Context(), r.cfg.Sources[0])
	if err != nil {
		r.t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, ignoreScanMeta); diff != "" {
		r.t.Fatalf("%s: rescan differs from a full scan (-full +rescan):\n%s", name, diff)
	}
	return got
}

// ignoreScanMeta leaves out what differs between two scans of one disk:
// also whether a SKILL.md's bytes are carried, which depends on the digest
// cache (issue 12: only a scan that read them carries them); see
// [carriedMatch] for the bytes carried.
var ignoreScanMeta = cmp.Options{
	cmpopts.IgnoreFields(events.SourceScanned{}, "Seq", "ConfigSeq", "ScannedAt", "Hashed"),
	cmpopts.IgnoreFields(events.ScannedSkill{}, "SkillMD"),
}

// carriedMatch checks that every SKILL.md's bytes a scan carries are the
// bytes its Files[0] describes (digest and size).
func carriedMatch(t *testing.T, scan events.SourceScanned) {
	t.Helper()
	for _, s := range scan.Skills {
		if s.SkillMD != nil && (s.Files[0].Digest != skilltest.Digest(string(s.SkillMD)) || s.Files[0].Size != int64(len(s.SkillMD))) {
			t.Errorf("%s: carried SKILL.md bytes do not match Files[0] %+v", s.RelDir, s.Files[0])
		}
	}
}

// fsOps makes random changes below a root and records the paths a watcher
// would report.
type fsOps struct {
	t     *testing.T
	root  string
	rnd   *rand.Rand
	clock time.Time
	n     int
	paths []string
}

func (o *fsOps) write(rel, content string) {
	full := filepath.Join(o.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		o.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		o.t.Fatal(err)
	}
	// Every write gets its own mtime, so the digest cache is never fooled
	// by two versions of one size within one clock tick.
	o.clock = o.clock.Add(time.Second)
	if err := os.Chtimes(full, o.clock, o.clock); err != nil {
		o.t.Fatal(err)
	}
}

func (o *fsOps) report(rel string) {
	o.paths = append(o.paths, filepath.Join(o.root, filepath.FromSlash(rel)))
}

// list returns the folders (without the root) and regular files below the
// root, without following links.
func (o *fsOps) list() (dirs, files []string) {
	filepath.WalkDir(o.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == o.root {
			return nil
		}
		rel, _ := filepath.Rel(o.root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			dirs = append(dirs, rel)
		case d.Type().IsRegular():
			files = append(files, rel)
		}
		return nil
	})
	return dirs, files
}

func (o *fsOps) pick(s []string) (string, bool) {
	if len(s) == 0 {
		return "", false
	}
	return s[o.rnd.IntN(len(s))], true
}

// op makes one random change.
func (o *fsOps) op() {
	o.n++
	dirs, files := o.list()
	content := func() string { return strings.Repeat("v", o.rnd.IntN(40)) + fmt.Sprint(o.n) }
	switch o.rnd.IntN(10) {
	case 0, 1: // a new skill somewhere
		parents := []string{"", "", "acme", "acme/billing", "skills", ".claude/skills", ".hidden", "node_modules", "a/b/c/d/e"}
		parents = append(parents, dirs...)
		parent, _ := o.pick(parents)
		dir := path.Join(parent, fmt.Sprintf("s%d", o.n))
		md := "SKILL.md"
		if o.rnd.IntN(6) == 0 {
			md = "skill.md"
		}
		o.write(path.Join(dir, md), skilltest.SkillMD(path.Base(dir), "d"+content()))
		extra := []string{"ref.md", "scripts/run.sh", ".env", "node_modules/x.js", "deep/er/note.txt"}
		for range o.rnd.IntN(4) {
			f, _ := o.pick(extra)
			o.write(path.Join(dir, f), content())
		}
		switch o.rnd.IntN(3) {
		case 0:
			o.report(dir)
		case 1:
			o.report(path.Join(dir, md)) // only the file: its new folders go unreported
		default:
			top := dir
			for d := path.Dir(dir); d != "." && !slices.Contains(dirs, d); d = path.Dir(d) {
				top = d
			}
			o.report(top)
		}
	case 2, 3: // edit a file
		if f, ok := o.pick(files); ok {
			o.write(f, content())
			o.report(f)
		}
	case 4: // break or fix a SKILL.md
		if f, ok := o.pick(files); ok && strings.EqualFold(path.Base(f), "skill.md") {
			if o.rnd.IntN(2) == 0 {
				o.write(f, "# no frontmatter "+content())
			} else {
				o.write(f, skilltest.SkillMD(path.Base(path.Dir(f)), "fixed"+content()))
			}
			o.report(f)
		}
	case 5: // delete a file
		if f, ok := o.pick(files); ok {
			os.Remove(filepath.Join(o.root, filepath.FromSlash(f)))
			o.report(f)
		}
	case 6: // delete a folder
		if d, ok := o.pick(dirs); ok {
			os.RemoveAll(filepath.Join(o.root, filepath.FromSlash(d)))
			o.report(d)
		}
	case 7, 8: // rename a folder, maybe into another one
		d, ok := o.pick(dirs)
		if !ok {
			return
		}
		parent, _ := o.pick(append([]string{"", ""}, dirs...))
		if parent == d || strings.HasPrefix(parent, d+"/") {
			parent = ""
		}
		to := path.Join(parent, fmt.Sprintf("r%d", o.n))
		if err := os.Rename(filepath.Join(o.root, filepath.FromSlash(d)), filepath.Join(o.root, filepath.FromSlash(to))); err != nil {
			o.t.Fatal(err)
		}
		o.report(d)
		o.report(to)
	case 9: // a link in the root to a folder (followed when it is a skill folder)
		if d, ok := o.pick(dirs); ok {
			link := fmt.Sprintf("link%d", o.n)
			if err := os.Symlink(filepath.Join(o.root, filepath.FromSlash(d)), filepath.Join(o.root, link)); err != nil {
				o.t.Fatal(err)
			}
			o.report(link)
		}
	}
}

// TestRescanMatchesFullScan is the property incremental rescans rest on:
// after any sequence of changes, reported as a watcher reports them, the
// rescan publishes what a fresh full scan of the disk finds.
func TestRescanMatchesFullScan(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "skills")
			o := &fsOps{t: t, root: root, rnd: rand.New(rand.NewPCG(seed, 7)), clock: time.Now().Add(-time.Hour)}
			for range 20 {
				o.op()
				if o.rnd.IntN(3) == 0 {
					o.n++
					o.write(fmt.Sprintf("acme/team%d/s%d/SKILL.md", o.n%3, o.n), skilltest.SkillMD(fmt.Sprintf("s%d", o.n), "d"))
				}
			}
			src := localSource(root)
			synctest.Test(t, func(t *testing.T) {
				r := startHasher(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
				r.next()
				for batch := range 40 {
					o.paths = nil
					for range 1 + o.rnd.IntN(4) {
						o.op()
					}
					got := r.change(o.paths, false)
					want, err := newTestHasher(nil).Scan(t.Context(), src)
					if err != nil {
						t.Fatal(err)
					}
					carriedMatch(t, got)
					carriedMatch(t, want)
					if diff := cmp.Diff(want, got, ignoreScanMeta); diff != "" {
						t.Fatalf("batch %d (changed %q): rescan differs from a full scan (-full +rescan):\n%s", batch, o.paths, diff)
					}
				}
				t.Logf("%d of 40 rescans replayed the walk before", r.h.Replays())
			})
		})
	}
}

// writeSkills writes n skills of a few files each below root, in ten
// container folders, and returns the path of one supporting file.
func writeSkills(tb testing.TB, root string, n int) string {
	tb.Helper()
	var one string
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("team-%d", i%10), fmt.Sprintf("skill-%04d", i))
		if err := os.MkdirAll(filepath.Join(dir, "refs"), 0o755); err != nil {
			tb.Fatal(err)
		}
		files := map[string]string{
			"SKILL.md":      skilltest.SkillMD(fmt.Sprintf("skill-%04d", i), "d"),
			"refs/guide.md": strings.Repeat("g", 2048),
			"refs/api.md":   strings.Repeat("a", 4096),
			"run.sh":        "echo hi\n",
		}
		for name, c := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(c), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		if i == n/2 {
			one = filepath.Join(dir, "refs", "guide.md")
		}
	}
	return one
}

// TestRescanOneFile checks that a one-file edit in a 1,000-skill tree
// hashes exactly that file, keeps every other skill, and that a Rescan
// (reconcile tick) afterwards hashes nothing.
func TestRescanOneFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	edited := writeSkills(t, root, 1000)
	src := localSource(root)
	synctest.Test(t, func(t *testing.T) {
		r := startHasher(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
		first := r.next()
		if len(first.Skills) != 1000 || first.Hashed != 4000 {
			t.Fatalf("first scan: %d skills, Hashed %d; want 1000, 4000", len(first.Skills), first.Hashed)
		}
		if err := os.WriteFile(edited, []byte("edited"), 0o644); err != nil {
			t.Fatal(err)
		}
		got := r.change([]string{edited}, false)
		if got.Hashed != 1 {
			t.Errorf("rescan after one edit: Hashed = %d, want 1", got.Hashed)
		}
		var found bool
		for _, s := range got.Skills {
			for _, f := range s.Files {
				if filepath.Join(s.Dir, filepath.FromSlash(f.Path)) == edited {
					found = f.Digest == skilltest.Digest("edited")
				}
			}
		}
		if !found || len(got.Skills) != 1000 {
			t.Errorf("rescan: %d skills, edited digest seen %v; want 1000, true", len(got.Skills), found)
		}
		if again := r.change(nil, true); again.Hashed != 0 {
			t.Errorf("whole-root rescan: Hashed = %d, want 0", again.Hashed)
		}
	})
}

// TestRescanReusesUntouchedSkills checks that an incremental rescan walks
// again only the skill folders a change touched (issue 12: the cost of an
// edit follows the change): every other skill is the very value of the
// scan before — its manifest shared, no SKILL.md bytes carried — so the
// catalog builder's memo and the pointer-equality shortcuts downstream
// apply; a nested skill goes with the skill that holds it; a skill folder
// added or removed changes only itself; a whole rescan that finds nothing
// changed changes nothing. Each result is also what a full scan finds.
func TestRescanReusesUntouchedSkills(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	skilltest.WriteTree(t, root, map[string]string{
		"skills/a/SKILL.md":       skilltest.SkillMD("a", "d"),
		"skills/a/ref.md":         "ref",
		"skills/a/inner/SKILL.md": skilltest.SkillMD("inner", "d"),
		"team/b/SKILL.md":         skilltest.SkillMD("b", "d"),
		"team/b/x.md":             "x",
		"team/c/SKILL.md":         skilltest.SkillMD("c", "d"),
		"d/SKILL.md":              skilltest.SkillMD("d", "d"),
	})
	src := localSource(root)
	at := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	synctest.Test(t, func(t *testing.T) {
		r := startHasher(t, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}})
		prev := r.next()
		step := func(name string, paths []string, walked ...string) {
			t.Helper()
			got := r.changeMatchesFull(name, paths)
			old := map[string]*events.File{}
			for _, s := range prev.Skills {
				old[s.Dir] = &s.Files[0]
			}
			for _, s := range got.Skills {
				rel, _ := filepath.Rel(root, s.Dir)
				rel = filepath.ToSlash(rel)
				shared := old[s.Dir] == &s.Files[0]
				if fresh := slices.Contains(walked, rel); shared == fresh {
					t.Errorf("%s: skill %s shares its manifest with the scan before: %v, want %v", name, rel, shared, !fresh)
				}
				if shared && s.SkillMD != nil {
					t.Errorf("%s: reused skill %s carries SKILL.md bytes", name, rel)
				}
			}
			prev = got
		}
		skilltest.WriteTree(t, root, map[string]string{"team/b/x.md": "x2"})
		step("edit in b", []string{at("team/b/x.md")}, "team/b")
		skilltest.WriteTree(t, root, map[string]string{"skills/a/inner/SKILL.md": skilltest.SkillMD("inner", "d2")})
		step("edit in a nested skill", []string{at("skills/a/inner/SKILL.md")}, "skills/a", "skills/a/inner")
		skilltest.WriteTree(t, root, map[string]string{"team/e/SKILL.md": skilltest.SkillMD("e", "d")})
		step("skill added", []string{at("team/e")}, "team/e")
		if err := os.RemoveAll(at("d")); err != nil {
			t.Fatal(err)
		}
		step("skill removed", []string{at("d")})
		skilltest.WriteTree(t, root, map[string]string{"new/deep/f/SKILL.md": skilltest.SkillMD("f", "d")})
		step("skill added, only its file reported", []string{at("new/deep/f/SKILL.md")}, "new/deep/f")
		// A whole rescan (the reconcile tick) reads everything again and
		// publishes what it finds as it was as the very same values; so
		// does a rescan of a folder touched without a change.
		step("whole rescan, nothing changed", nil)
		if err := os.Chtimes(at("team/c/SKILL.md"), time.Time{}, time.Now()); err != nil {
			t.Fatal(err)
		}
		step("SKILL.md touched", []string{at("team/c/SKILL.md")}, "team/c")
		step("reported again, unchanged since", []string{at("team/c/SKILL.md")})
	})
}

// TestRescanIgnoresOtherConfig checks that changes for another
// configuration or an older Seq of a source are dropped, and that a change
// of a root that vanished reports it like a full scan.
func TestRescanIgnoresOtherConfig(t *testing.T) {
	root := filepath.Join(t.TempDir(), "skills")
	skilltest.WriteTree(t, root, map[string]string{"a/SKILL.md": skilltest.SkillMD("a", "d")})
	src := localSource(root)
	synctest.Test(t, func(t *testing.T) {
		r := startHasher(t, events.SourcesConfigured{Seq: 3, Sources: []events.Source{src}})
		r.next()
		r.changes <- eventstest.Encode(t, events.FilesChanged{Seq: 5, ConfigSeq: 2, Source: src, Rescan: true})
		r.changes <- eventstest.Encode(t, events.FilesChanged{Seq: 5, ConfigSeq: 3, Source: events.Source{ID: "9", Root: root}, Rescan: true})
		synctest.Wait()
		if n := len(r.pub.All()); n != 1 {
			t.Fatalf("published %d scans, want 1 (changes for another configuration or source ignored)", n)
		}
		r.seq = 5
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
		got := r.change([]string{root}, true)
		if len(got.Skills) != 0 || len(got.Diagnostics) != 1 || !strings.Contains(got.Diagnostics[0].Message, "not found") {
			t.Errorf("scan of a vanished root: %d skills, diagnostics %v; want none, one 'not found'", len(got.Skills), got.Diagnostics)
		}
		r.changes <- eventstest.Encode(t, events.FilesChanged{Seq: 4, ConfigSeq: 3, Source: src, Rescan: true}) // older Seq
		synctest.Wait()
		if n := len(r.pub.All()); n != 2 {
			t.Errorf("published %d scans, want 2 (stale change ignored)", n)
		}
	})
}
