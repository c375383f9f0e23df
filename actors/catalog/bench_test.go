package catalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors/catalog"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// benchScan returns a scan of n generated skills of four files each, the
// shape of test/gencorpus's corpus, without touching the disk.
func benchScan(n int) (events.SourcesConfigured, events.SourceScanned) {
	src := events.Source{ID: "0", Kind: events.SourceLocal, Location: "/corpus/skills", Root: "/corpus/skills", Prefix: "skills"}
	scan := events.SourceScanned{Seq: 1, ConfigSeq: 1, Source: src, Skills: make([]events.ScannedSkill, n)}
	mod := time.Unix(1700000000, 0)
	for i := range n {
		scan.Skills[i] = benchSkill(src, i, 0, mod)
	}
	return events.SourcesConfigured{Seq: 1, Sources: []events.Source{src}}, scan
}

// benchSkill is generated skill i at edit number edit.
func benchSkill(src events.Source, i, edit int, mod time.Time) events.ScannedSkill {
	name := fmt.Sprintf("skill-%05d", i)
	rel := fmt.Sprintf("group-%03d/%s", i/100, name)
	md := fmt.Sprintf("---\nname: %s\ndescription: Generated skill %d for benchmarks (edit %d).\nmetadata:\n  author: bench\n---\n\n# %s\n\nBody.\n", name, i, edit, name)
	files := []events.File{{Path: "SKILL.md", Digest: skilltest.Digest(md), Size: int64(len(md)), ModTime: mod, MIME: "text/markdown", Text: true}}
	for _, p := range []string{"references/guide.md", "scripts/run.py", "assets/data.txt"} {
		files = append(files, events.File{Path: p, Digest: skilltest.Digest(rel + p), Size: 100, ModTime: mod, MIME: "text/plain", Text: true})
	}
	return events.ScannedSkill{Dir: src.Root + "/" + rel, RelDir: rel, RealDir: src.Root + "/" + rel,
		DirID: events.FolderID{Dev: 1, Ino: uint64(i + 10)}, SkillMD: []byte(md), Files: files}
}

// BenchmarkBuild measures building a whole catalog from scratch.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{131, 10000} {
		cfg, scan := benchScan(n)
		scans := map[string]events.SourceScanned{"0": scan}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				catalog.Build(1, cfg, scans, nil)
			}
		})
	}
}

// BenchmarkBuilderEdit measures the catalog builder's handling of a new
// scan of a 10,000-skill source (without publishing it): one-skill, a
// scan in which one SKILL.md changed; no-change, a scan equal to the last
// one (a reconcile tick or a no-op rescan), which builds no version. Each
// scan is a fresh value, as the hasher publishes one per rescan.
func BenchmarkBuilderEdit(b *testing.B) {
	for _, mode := range []string{"one-skill", "no-change"} {
		b.Run(mode, func(b *testing.B) {
			cfg, scan := benchScan(10000)
			bl := catalog.NewBenchBuilder(cfg)
			if bl.Scan(scan) == nil {
				b.Fatal("no first catalog")
			}
			mod := time.Unix(1700000000, 0)
			built := 0
			b.ReportAllocs()
			for b.Loop() {
				scan.Seq++
				skills := append([]events.ScannedSkill(nil), scan.Skills...)
				if mode == "one-skill" {
					skills[4242] = benchSkill(scan.Source, 4242, int(scan.Seq), mod)
				}
				scan.Skills = skills
				if bl.Scan(scan) != nil {
					built++
				}
			}
			b.ReportMetric(float64(built)/float64(b.N), "versions/op")
		})
	}
}
