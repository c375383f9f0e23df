package test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// sharedDir is the workplace's shared folder beside the repository; a user's
// fresh clone does not have it.
const sharedDir = "../../shared"

// corpusSkill is one skill of a corpus as this test reads it on its own,
// without the server's code.
type corpusSkill struct {
	name string
	dir  string
	// strict reports that a strict SEP-2640 client accepts its entry: a
	// description of at most 1,024 characters (ASF-R11) and string metadata
	// values (ASF-R14). Only such skills are listed (issue 13 item 4).
	strict bool
}

var validName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// scanCorpus finds every folder directly below root with a SKILL.md whose
// frontmatter is a YAML mapping with string name and description: the
// skills a user expects to see listed.
func scanCorpus(t *testing.T, root string) map[string]corpusSkill {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	skills := map[string]corpusSkill{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil {
			continue
		}
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
		parts := strings.SplitN(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n---", 2)
		if !strings.HasPrefix(parts[0], "---") || len(parts) < 2 {
			continue
		}
		var fm map[string]any
		if err := yaml.Unmarshal([]byte(strings.TrimPrefix(parts[0], "---")), &fm); err != nil {
			continue
		}
		name, ok1 := fm["name"].(string)
		desc, ok2 := fm["description"].(string)
		if !ok1 || !ok2 || strings.TrimSpace(desc) == "" || !validName.MatchString(name) || len(name) > 64 {
			continue
		}
		strict := utf8.RuneCountInString(desc) <= 1024
		if md, ok := fm["metadata"].(map[string]any); ok {
			for _, v := range md {
				if _, isStr := v.(string); !isStr {
					strict = false
				}
			}
		}
		skills[name] = corpusSkill{name: name, dir: dir, strict: strict}
	}
	return skills
}

// TestCorpora serves each real corpus with the built binary over stdio on
// both protocol eras and checks the whole manifest against the disk:
// every usable skill a strict client accepts listed (SEP2640-R46), every
// digest and size equal to the file's SHA-256 and length (SEP2640-R37,
// R40), and every resources/read returning exactly those bytes
// (SEP2640-R41, R60). Issue 13 item 4 changed what is listed: a skill whose
// entry a strict client would reject (claude-api and database-lookup: a
// description over 1,024 characters; markdown-mermaid-writing and rowan:
// list values under metadata) is no longer listed, but its SKILL.md is
// still read through resources/read and load-skill, with one warning.
func TestCorpora(t *testing.T) {
	for _, corpus := range []string{"anthropics-skills", "scientific-skills"} {
		root, err := filepath.Abs(filepath.Join(sharedDir, "corpora", corpus))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(root); err != nil {
			t.Skipf("corpus %s not present (%v): ../shared is only in the workplace checkout, not in a fresh clone", corpus, err)
		}
		want := scanCorpus(t, root)
		if len(want) == 0 {
			t.Fatalf("no usable skills found in %s by the test's own scan", root)
		}
		for _, era := range eras {
			t.Run(corpus+"/"+era, func(t *testing.T) {
				s := startServer(t, era, t.TempDir(), nil, "--tools=always", root)
				entries := s.listAll()
				prefix := "skill://" + corpus + "/"
				got := map[string]skillEntry{}
				for _, e := range entries {
					if strings.HasPrefix(e.URI, prefix) {
						name := strings.TrimSuffix(strings.TrimPrefix(e.URI, prefix), "/SKILL.md")
						got[name] = e
					}
				}
				strict := 0
				for _, cs := range want {
					if cs.strict {
						strict++
					}
				}
				if len(got) != strict {
					t.Errorf("skills/list has %d skills of %s, want %d (from the files)", len(got), corpus, strict)
				}
				files := 0
				stderr := ""
				for name, cs := range want {
					e, ok := got[name]
					if !cs.strict {
						// issue 13 item 4: left out, still served.
						if ok {
							t.Errorf("skill %s is listed, but a strict client rejects its entry", name)
						}
						uri := prefix + name + "/SKILL.md"
						disk, _ := os.ReadFile(filepath.Join(cs.dir, "SKILL.md"))
						if b, _, err := s.readBytes(uri); err != nil || !bytes.Equal(b, disk) {
							t.Errorf("resources/read %s: %v, want the file", uri, err)
						}
						if res := s.callTool("load-skill", map[string]any{"name": corpus + "__" + name}); res.IsError {
							t.Errorf("load-skill %s: %s", name, textOf(res))
						}
						if stderr == "" {
							stderr = s.stderr.String()
						}
						if n := len(stderrLines(stderr, warnLevels, filepath.Join(name, "SKILL.md"), "left out of skills/list")); n != 1 {
							t.Errorf("%d warnings say %s is left out of skills/list, want 1:\n%s", n, name, stderr)
						}
						continue
					}
					if !ok {
						t.Errorf("skill %s (%s) missing from skills/list", name, cs.dir)
						continue
					}
					base := prefix + name + "/"
					if len(e.Resources) == 0 || e.Resources[0].URI != e.URI {
						t.Errorf("%s: resources[0] is not the SKILL.md element (SEP2640-R35)", e.URI)
					}
					for _, r := range e.Resources {
						rel := strings.TrimPrefix(r.URI, base)
						disk, err := os.ReadFile(filepath.Join(cs.dir, filepath.FromSlash(rel)))
						if err != nil {
							t.Errorf("%s: manifest file not on disk: %v", r.URI, err)
							continue
						}
						if r.Digest != digestOf(disk) || r.Size != int64(len(disk)) {
							t.Errorf("%s: manifest says %s/%d, disk has %s/%d", r.URI, r.Digest, r.Size, digestOf(disk), len(disk))
						}
						b, _, err := s.readBytes(r.URI)
						if err != nil {
							t.Errorf("resources/read %s: %v", r.URI, err)
							continue
						}
						if digestOf(b) != r.Digest {
							t.Errorf("resources/read %s: bytes hash to %s, manifest says %s", r.URI, digestOf(b), r.Digest)
						}
						files++
					}
				}
				t.Logf("%s on %s: %d skills, %d files verified", corpus, era, len(got), files)
			})
		}
	}
}
