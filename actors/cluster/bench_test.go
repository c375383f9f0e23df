package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/events"
)

// bigCatalog returns a catalog of n skills without files, one description
// changed by tag.
func bigCatalog(n int, tag string) *events.Catalog {
	skills := make([]*events.Skill, n)
	for i := range skills {
		name := fmt.Sprintf("s%05d", i)
		desc := fmt.Sprintf("Skill %s does a thing described at some length so that the element is of realistic size %0400d", name, i)
		if i == n/2 {
			desc += tag
		}
		skills[i] = &events.Skill{QualifiedName: "x__" + name, Name: name, Description: desc, SkillPath: "x/" + name,
			URI: "skill://x/" + name + "/SKILL.md", Frontmatter: []byte(`{"name":"` + name + `"}`)}
	}
	return events.NewCatalog(1, false, skills, nil)
}

// BenchmarkSnapshotExportImport reports, for catalogs of 1,000 and 10,000
// skills without files on an embedded nats-server: the time to export the
// catalog (export-ms) and to import it on a fresh replica (import-ms), and
// for a one-skill change the time from export to imported (change-ms) and
// the bytes stored (change-bytes).
func BenchmarkSnapshotExportImport(b *testing.B) {
	for _, size := range []int{1000, 10000} {
		b.Run(fmt.Sprint(size), func(b *testing.B) { benchExportImport(b, size) })
	}
}

func benchExportImport(b *testing.B, size int) {
	first, second := bigCatalog(size, ""), bigCatalog(size, " changed")
	for b.Loop() {
		b.StopTimer()
		n, res := openTestB(b)
		ctx := b.Context()
		exp := exporter(b, n, res, 1, "l")
		if err := exp.claim(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := exp.export(ctx, first); err != nil {
			b.Fatal(err)
		}
		exported := time.Since(start)
		im := &Importer{res: res, pub: events.NewBus(nil), log: n.log}
		p, _, _ := lastPointer(ctx, res.pointer, n.n.pointer)
		start = time.Now()
		if err := im.apply(ctx, p); err != nil {
			b.Fatal(err)
		}
		imported := time.Since(start)
		start = time.Now()
		if err := exp.export(ctx, second); err != nil {
			b.Fatal(err)
		}
		p, _, _ = lastPointer(ctx, res.pointer, n.n.pointer)
		if err := im.apply(ctx, p); err != nil {
			b.Fatal(err)
		}
		changed := time.Since(start)
		b.ReportMetric(exported.Seconds()*1000, "export-ms")
		b.ReportMetric(imported.Seconds()*1000, "import-ms")
		b.ReportMetric(changed.Seconds()*1000, "change-ms")
		b.ReportMetric(float64(exp.moved), "change-bytes")
	}
}
