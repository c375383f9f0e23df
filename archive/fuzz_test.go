package archive

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

const fuzzMaxBytes = 1 << 16

// seedEntries are the archives of the seed corpus, valid and hostile.
var seedEntries = [][]ent{
	{f("SKILL.md", "---\nname: x\n---\n"), dir("scripts/"), {name: "scripts/run.sh", body: "#!/bin/sh\n", kind: 'x'}, f("empty", "")},
	{{name: "pax_global_header", kind: 'g'}, dir("o-r-sha/"), f("o-r-sha/SKILL.md", "s"), f("o-r-sha/a/b.md", "b")},
	{f("evil-skill/SKILL.md", "x"), f("evil-skill/../../escaped.md", "x"), sym("evil-skill/passwd", "/etc/passwd")},
	{f("../../escaped.md", "x")},
	{f("/absolute.md", "x")},
	{sym("link", "SKILL.md")},
	{f("A.md", "1"), f("a.md", "2")},
	{f("d", "1"), f("d/x", "2")},
	{f("big", string(make([]byte, fuzzMaxBytes+1)))},
}

func fuzzSeeds(f *testing.F, fm Format, file string) {
	for _, ents := range seedEntries {
		f.Add(build(f, fm, ents...), false, false)
		f.Add(build(f, fm, ents...), true, true)
	}
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, false, false)
	f.Add(data, true, true)
}

// fuzzExtract checks the properties that hold for any input: no panic;
// nothing outside the root; only regular files and folders; at most
// MaxBytes on disk; errors are *EntryError or ErrFormat; on success the
// result matches the disk.
func fuzzExtract(t *testing.T, fm Format, data []byte, strip, requireSkill bool) {
	tmp, stageDir, root := stage(t)
	opts := &Options{MaxBytes: fuzzMaxBytes, MaxEntries: 64, StripTopFolder: strip, RequireSkillMD: requireSkill}
	res, err := Extract(fm, data, root, opts)
	total := checkContained(t, tmp)
	if total > fuzzMaxBytes {
		t.Errorf("%d bytes on disk, over MaxBytes", total)
	}
	if res.Bytes != total {
		t.Errorf("Result.Bytes = %d, %d on disk", res.Bytes, total)
	}
	if err != nil {
		var ee *EntryError
		if !errors.As(err, &ee) && !errors.Is(err, ErrFormat) {
			t.Errorf("err = %v (%T), want *EntryError or ErrFormat", err, err)
		}
		return
	}
	for _, p := range res.Files {
		fi, err := os.Lstat(filepath.Join(stageDir, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("Result.Files has %q: %v", p, err)
		}
	}
	if requireSkill {
		if fi, err := os.Lstat(filepath.Join(stageDir, "SKILL.md")); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("RequireSkillMD passed without SKILL.md: %v", err)
		}
	}
}

func FuzzExtractTarGz(f *testing.F) {
	fuzzSeeds(f, TarGz, "evil-skill.tar.gz")
	f.Fuzz(func(t *testing.T, data []byte, strip, requireSkill bool) {
		fuzzExtract(t, TarGz, data, strip, requireSkill)
	})
}

func FuzzExtractZip(f *testing.F) {
	fuzzSeeds(f, Zip, "evil-skill.zip")
	f.Fuzz(func(t *testing.T, data []byte, strip, requireSkill bool) {
		fuzzExtract(t, Zip, data, strip, requireSkill)
	})
}
