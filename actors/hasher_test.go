package actors_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/events"
)

func newTestHasher(opts *actors.HasherOptions) *actors.Hasher {
	return actors.NewHasher(make(chan *message.Message), newRecordingPublisher(), opts)
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
	md := skillMD("x", "d")
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
		},
		{
			name:  "SKILL.md directly in the root is not a skill",
			files: map[string]string{"SKILL.md": md, "loose.md": "x", "one/SKILL.md": md},
			want:  map[string][]string{"one": {"SKILL.md"}},
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
			name: "hidden folders and node_modules are not descended into, with a hint",
			files: map[string]string{
				".curated/h/SKILL.md":     md,
				".git/config":             "x",
				"node_modules/SKILL.md":   md,
				"node_modules/n/SKILL.md": md,
				"ok/SKILL.md":             md,
			},
			want:      map[string][]string{"ok": {"SKILL.md"}},
			wantDiags: []string{".curated/h/SKILL.md is inside .curated", "node_modules/SKILL.md is inside node_modules"},
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
			writeTree(t, root, tc.files)
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
				want := tc.files[filepath.ToSlash(strings.TrimPrefix(s.Dir, root+"/"))+"/"+s.Files[0].OnDisk()]
				if string(s.SkillMD) != want || s.Files[0].Digest != digest(want) || s.Files[0].Size != int64(len(want)) {
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
	writeTree(t, root, map[string]string{"a/SKILL.md": md, "a/f.bin": "\x00\x01\x02"})
	scan, err := newTestHasher(nil).Scan(t.Context(), localSource(root))
	if err != nil {
		t.Fatal(err)
	}
	var got []events.File
	for _, f := range scan.Skills[0].Files {
		f.ModTime = time.Time{}
		got = append(got, f)
	}
	want := []events.File{
		{Path: "SKILL.md", Digest: digest(md), Size: int64(len(md))},
		{Path: "f.bin", Digest: "sha256:ae4b3280e56e2faf83f414a6e3dabe9d5fbe18976544c05fed121accb85b53fc", Size: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Files mismatch (-want +got):\n%s", diff)
	}
}

// TestScanSymlinks pins BR-15: a symlinked skill folder in a source root is
// followed, even outside the root; a dangling link is ignored with one
// warning; symlinks inside a skill are never listed. A linked container
// (skills/acme -> ../team) is not followed, with one warning (CONTAINMENT).
func TestScanSymlinks(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "skills")
	writeTree(t, dir, map[string]string{
		"shared/wrap-up/SKILL.md": skillMD("wrap-up", "Summarise the session."),
		"shared/secret.txt":       "secret",
		"skills/own/SKILL.md":     skillMD("own", "d"),
		"skills/own/real.md":      "real",
		"team/grouped/SKILL.md":   skillMD("grouped", "d"),
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
	md := skillMD("x", "d")
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
			files:     map[string]string{"src1/SKILL.md": md, "src1/one/SKILL.md": md},
			links:     map[string]string{"src1/self": "."},
			want:      map[string][]string{"one": {"SKILL.md"}},
			wantDiags: []string{"symbolic link not followed: @/self: its target is the source root or a folder above it"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.files)
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
	files := map[string]string{"a/SKILL.md": skillMD("a", "d")}
	for i := range 20 {
		files[fmt.Sprintf("a/assets/%02d.bin", i)] = strings.Repeat("x", i)
	}
	writeTree(t, root, files)
	h := newTestHasher(&actors.HasherOptions{Workers: 3})
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
	if diff := cmp.Diff(first.Skills, second.Skills); diff != "" {
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
		if f.Path == "assets/03.bin" && f.Digest != digest("changed!") {
			t.Errorf("changed file digest = %s, want %s", f.Digest, digest("changed!"))
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
	writeTree(t, root, map[string]string{"a/SKILL.md": skillMD("a", "d"), "a/locked.txt": "x", "a/ok.txt": "y"})
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
	src := events.Source{ID: actors.BundledSourceID, Kind: events.SourceBundled, Location: "bundled", Root: "."}
	scan, err := newTestHasher(&actors.HasherOptions{Bundled: actors.Bundled()}).Scan(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"skilljack-docs"}, relDirs(scan)); diff != "" {
		t.Fatalf("bundled skills mismatch (-want +got):\n%s", diff)
	}
	cat := actors.BuildCatalog(1, events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}}, map[string]events.SourceScanned{src.ID: scan}, nil)
	if len(cat.Skills) != 1 || len(cat.Diagnostics) != 0 {
		t.Fatalf("catalog = %+v; diagnostics %+v", cat.Skills, cat.Diagnostics)
	}
	s := cat.Skills[0]
	if s.URI != "skill://skilljack-docs/SKILL.md" || s.QualifiedName != "skilljack-docs" || !s.Listed || s.Dir != "skilljack-docs" {
		t.Errorf("bundled skill = %s %s listed=%v dir=%s", s.URI, s.QualifiedName, s.Listed, s.Dir)
	}

	fsys := fstest.MapFS{
		"one/SKILL.md":        {Data: []byte(skillMD("one", "d"))},
		"one/ref.md":          {Data: []byte("r")},
		"one/.hidden":         {Data: []byte("h")},
		"skills/two/SKILL.md": {Data: []byte(skillMD("two", "d"))},
	}
	scan, err = newTestHasher(&actors.HasherOptions{Bundled: fsys}).Scan(t.Context(), src)
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
	_, err := newTestHasher(nil).Scan(t.Context(), events.Source{ID: "0", Kind: events.SourceGitHub, Location: "github.com/a/b"})
	if err == nil {
		t.Error("Scan(github) = nil error, want one")
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
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skillMD(fmt.Sprintf("skill-%02d", i), "d")), 0o644); err != nil {
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
