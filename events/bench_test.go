package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// benchSkills is the corpus size of the publish benchmarks: the 10,000
// skills of the issue 12 corpus.
const benchSkills = 10_000

// benchScan returns a scan of n generated skills of 4 files each, with a
// SKILL.md of about 1.5 KiB, the shape the hasher publishes.
func benchScan(n int) events.SourceScanned {
	src := events.Source{ID: "0", Kind: events.SourceLocal, Location: "/c", Root: "/c", Prefix: "c"}
	body := strings.Repeat("Some prose about what the skill does and when to use it. ", 26)
	now := time.Unix(1_700_000_000, 0)
	scan := events.SourceScanned{Seq: 1, ConfigSeq: 1, Source: src, ScannedAt: now}
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		md := []byte("---\nname: " + name + "\ndescription: Generated skill number " + name + ".\n---\n" + body)
		files := []events.File{{Path: "SKILL.md", Size: int64(len(md)), ModTime: now, MIME: "text/markdown", Text: true}}
		for _, f := range []string{"reference.md", "scripts/run.py", "templates/out.txt"} {
			files = append(files, events.File{Path: f, Size: 8704, ModTime: now, MIME: "text/plain", Text: true})
		}
		for j := range files {
			files[j].Digest = fmt.Sprintf("sha256:%064x", i*4+j)
		}
		scan.Skills = append(scan.Skills, events.ScannedSkill{
			Dir: "/c/" + name, RelDir: name, RealDir: "/c/" + name,
			DirID: events.FolderID{Dev: 1, Ino: uint64(i)}, SkillMD: md, Files: files,
		})
	}
	return scan
}

// benchCatalog returns the catalog of scan as the builder would make it.
func benchCatalog(version uint64, scan events.SourceScanned) *events.Catalog {
	skills := make([]*events.Skill, 0, len(scan.Skills))
	for _, ss := range scan.Skills {
		fm, _ := json.Marshal(map[string]string{"name": ss.RelDir, "description": "Generated skill number " + ss.RelDir + "."})
		skills = append(skills, &events.Skill{
			QualifiedName: "c__" + ss.RelDir, Name: ss.RelDir, Description: "Generated skill number " + ss.RelDir + ".",
			SkillPath: "c/" + ss.RelDir, URI: "skill://c/" + ss.RelDir + "/SKILL.md", Source: scan.Source,
			Dir: ss.Dir, RealDir: ss.RealDir, DirID: ss.DirID, Frontmatter: fm,
			Listed: true, ModelInvocable: true, UserInvocable: true, Files: ss.Files, SkillMD: ss.SkillMD,
		})
	}
	return events.NewCatalog(version, false, skills, nil)
}

// deliver publishes ev through pub (publishing on bus) to subs subscribers
// of topic, each of which decodes it with [events.Receive], and waits until
// every one has.
func benchDeliver[T any](b *testing.B, bus *events.Bus, pub message.Publisher, topic string, subs int, evs func(i int) any) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	got := make(chan T, subs)
	for range subs {
		in, err := bus.Subscribe(ctx, topic)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for m := range in {
				if ev, ok := events.Receive[T](nil, m); ok {
					got <- ev
				}
			}
		}()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := events.Publish(pub, evs(i)); err != nil {
			b.Fatal(err)
		}
		for range subs {
			<-got
		}
	}
}

// BenchmarkPublishCatalog10k publishes one 10,000-skill catalog version to
// three subscribers (the notifier, the facade, a trace-less third) and waits
// until each decoded it.
func BenchmarkPublishCatalog10k(b *testing.B) {
	cat := benchCatalog(1, benchScan(benchSkills))
	bus := events.NewBus(nil)
	defer bus.Close()
	benchDeliver[events.CatalogChanged](b, bus, bus, events.TopicCatalogChanged, 3,
		func(int) any { return events.CatalogChanged{Catalog: cat} })
}

// BenchmarkPublishScan10k publishes one scan of a 10,000-skill source to
// one subscriber (the catalog builder) and waits until it decoded it.
func BenchmarkPublishScan10k(b *testing.B) {
	scan := benchScan(benchSkills)
	bus := events.NewBus(nil)
	defer bus.Close()
	benchDeliver[events.SourceScanned](b, bus, bus, events.TopicSourceScanned, 1,
		func(int) any { return scan })
}

// BenchmarkTraceCatalog10k publishes 10,000-skill catalog versions that
// differ in one skill each through a trace publisher, and reports the
// trace bytes written for the first version and per later version (run it
// with -benchtime of at least 2x).
func BenchmarkTraceCatalog10k(b *testing.B) {
	scan := benchScan(benchSkills)
	bus := events.NewBus(nil)
	defer bus.Close()
	var w countWriter
	tp := events.NewTracePublisher(bus, &w)
	var first int64
	benchDeliver[events.CatalogChanged](b, bus, tp, events.TopicCatalogChanged, 1, func(i int) any {
		if i == 1 {
			first = w.n
		}
		s := scan
		s.Skills = append([]events.ScannedSkill(nil), scan.Skills...)
		md := []byte(fmt.Sprintf("%s\nedit %d\n", s.Skills[i%len(s.Skills)].SkillMD, i))
		s.Skills[i%len(s.Skills)].SkillMD = md
		return events.CatalogChanged{Catalog: benchCatalog(uint64(i+1), s)}
	})
	if b.N > 1 {
		b.ReportMetric(float64(first), "trace-B/first")
		b.ReportMetric(float64(w.n-first)/float64(b.N-1), "trace-B/version")
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
