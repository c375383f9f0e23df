//go:build unix

package mcpface_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// The per-request benchmarks (issue 12) serve a generated catalog of n
// skills, each a SKILL.md and three supporting files on disk (8 KiB,
// 1 KiB and 2 KiB of text, about the 8.5 KiB mean of test/gencorpus), over
// the stdio transport and a pair of OS pipes with a raw JSON-RPC client that
// writes one line and reads one line per call, as test/benchcompare does;
// each through the fast lane ("fast") and through the SDK's path ("sdk"),
// with BenchmarkPipeFloor as the floor under both:
//
//	go test ./mcpface -run '^$' -bench 'Skills|Resources|Ping|PipeFloor' -benchmem
//
// The tree is written once per size under the system temp folder and
// reused by later runs.
var benchSizes = []int{131, 10000}

var benchCatalogs sync.Map // n → *benchCatalog

type benchCatalog struct {
	once  sync.Once
	cat   *events.Catalog
	gets  []string // SKILL.md URIs
	reads []string // 8 KiB supporting file URIs
}

func benchFileBytes(seed, size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "Line %d of file %d: some \"quoted\" words, a tab\tand plain text.\n", i, seed)
	}
	return b.Bytes()[:size]
}

// loadBenchCatalog returns the catalog of n generated skills.
func loadBenchCatalog(b *testing.B, n int) *benchCatalog {
	v, _ := benchCatalogs.LoadOrStore(n, &benchCatalog{})
	bc := v.(*benchCatalog)
	bc.once.Do(func() {
		root := filepath.Join(os.TempDir(), "skilljack-mcpface-bench-"+strconv.Itoa(n))
		stamp := filepath.Join(root, ".complete")
		write := true
		if _, err := os.Stat(stamp); err == nil {
			write = false
		} else {
			os.RemoveAll(root)
		}
		skills := make([]*events.Skill, 0, n)
		for i := range n {
			name := fmt.Sprintf("skill-%05d", i)
			spec := skillSpec{dir: name, name: name, desc: fmt.Sprintf("Generated skill %d: does thing %d when asked.", i, i), files: map[string][]byte{
				"references/guide.md": benchFileBytes(i, 8<<10),
				"scripts/run.sh":      benchFileBytes(i+1, 1<<10),
				"assets/notes.txt":    benchFileBytes(i+2, 2<<10),
			}}
			s := makeSkill(b, root, spec, write)
			skills = append(skills, s)
			bc.gets = append(bc.gets, s.URI)
			bc.reads = append(bc.reads, s.FileURI("references/guide.md"))
		}
		if write {
			if err := os.WriteFile(stamp, nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		bc.cat = events.NewCatalog(1, false, skills, nil)
	})
	if bc.cat == nil {
		b.Fatal("no bench catalog")
	}
	return bc
}

// benchSession is a raw JSON-RPC client on a stdio server session, over a
// pair of operating-system pipes as a real stdio server has.
type benchSession struct {
	in  io.Writer
	out *bufio.Reader
	id  int
	buf []byte
}

// benchLanes are the two paths a request can take: the stdio fast lane
// (fastlane.go) and the SDK's own (the fast lane off).
var benchLanes = []string{"fast", "sdk"}

// benchPipes returns the two pipes of a stdio session: the server reads
// inR and writes outW; the client writes inW and reads outR.
func benchPipes(b *testing.B) (inR, inW, outR, outW *os.File) {
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err = os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	return inR, inW, outR, outW
}

func newBenchSession(b *testing.B, cat *events.Catalog, lane string) *benchSession {
	f := mcpface.New(&mcpface.Options{Version: "1.2.3"})
	mcpface.SetFastLane(f, lane == "fast")
	if !f.SetCatalog(cat) {
		b.Fatal("SetCatalog = false")
	}
	return newBenchSessionOf(b, f)
}

// newBenchSessionOf starts a stdio session of f, which holds a catalog.
func newBenchSessionOf(b *testing.B, f *mcpface.Facade) *benchSession {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := f.Server(ctx)
	if err != nil {
		b.Fatal(err)
	}
	inR, inW, outR, outW := benchPipes(b)
	ss, err := srv.Connect(ctx, f.StdioTransport(inR, outW, nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := &benchSession{in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	b.Cleanup(func() {
		inW.Close()
		ss.Wait()
		outR.Close()
		cancel()
	})
	s.call(b, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/skills":{}}},"clientInfo":{"name":"bench","version":"0"}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	// Never in the fast lane: settles the hidden-tools notice.
	s.call(b, "tools/list", `{}`)
	return s
}

// call sends one request and returns its response line.
func (s *benchSession) call(b *testing.B, method, params string) []byte {
	s.id++
	s.buf = append(s.buf[:0], `{"jsonrpc":"2.0","id":`...)
	s.buf = strconv.AppendInt(s.buf, int64(s.id), 10)
	s.buf = append(s.buf, `,"method":"`...)
	s.buf = append(s.buf, method...)
	s.buf = append(s.buf, `","params":`...)
	s.buf = append(s.buf, params...)
	s.buf = append(s.buf, "}\n"...)
	if _, err := s.in.Write(s.buf); err != nil {
		b.Fatal(err)
	}
	line, err := s.out.ReadSlice('\n')
	// A notification (a list_changed after a new catalog version) is not
	// the response.
	for err == nil && bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method":`)) {
		line, err = s.out.ReadSlice('\n')
	}
	if err != nil {
		b.Fatal(err)
	}
	if bytes.Contains(line[:min(len(line), 64)], []byte(`"error"`)) {
		b.Fatalf("%s %s: %s", method, params, line)
	}
	return line
}

func uriParams(uri string) string {
	p, _ := json.Marshal(map[string]string{"uri": uri})
	return string(p)
}

func BenchmarkSkillsGet(b *testing.B) {
	for _, n := range benchSizes {
		for _, lane := range benchLanes {
			b.Run("skills="+strconv.Itoa(n)+"/"+lane, func(b *testing.B) {
				bc := loadBenchCatalog(b, n)
				s := newBenchSession(b, bc.cat, lane)
				params := make([]string, len(bc.gets))
				for i, u := range bc.gets {
					params[i] = uriParams(u)
				}
				cpu := startCPU(b)
				for i := 0; b.Loop(); i++ {
					s.call(b, "skills/get", params[i%len(params)])
				}
				cpu.report(b)
			})
		}
	}
}

func BenchmarkResourcesRead(b *testing.B) {
	for _, n := range benchSizes {
		for _, kind := range []string{"SKILL.md", "file"} {
			for _, lane := range benchLanes {
				b.Run("skills="+strconv.Itoa(n)+"/"+kind+"/"+lane, func(b *testing.B) {
					bc := loadBenchCatalog(b, n)
					s := newBenchSession(b, bc.cat, lane)
					uris := bc.reads
					if kind == "SKILL.md" {
						uris = bc.gets
					}
					params := make([]string, len(uris))
					for i, u := range uris {
						params[i] = uriParams(u)
					}
					cpu := startCPU(b)
					for i := 0; b.Loop(); i++ {
						s.call(b, "resources/read", params[i%len(params)])
					}
					cpu.report(b)
				})
			}
		}
	}
}

func BenchmarkSkillsListPage(b *testing.B) {
	for _, n := range benchSizes {
		for _, lane := range benchLanes {
			b.Run("skills="+strconv.Itoa(n)+"/"+lane, func(b *testing.B) {
				bc := loadBenchCatalog(b, n)
				s := newBenchSession(b, bc.cat, lane)
				// The first page, and a page in the middle (a cursor to decode).
				line := s.call(b, "skills/list", `{}`)
				var res struct {
					Result struct {
						NextCursor string `json:"nextCursor"`
					} `json:"result"`
				}
				if err := json.Unmarshal(line, &res); err != nil {
					b.Fatal(err)
				}
				first, next := `{}`, `{"cursor":"`+res.Result.NextCursor+`"}`
				if res.Result.NextCursor == "" {
					next = first
				}
				cpu := startCPU(b)
				for i := 0; b.Loop(); i++ {
					if i%2 == 0 {
						s.call(b, "skills/list", first)
					} else {
						s.call(b, "skills/list", next)
					}
				}
				cpu.report(b)
			})
		}
	}
}

// BenchmarkResourcesListPage is a resources/list page (500 entries, made
// on demand from the snapshot's URI-ordered index since issue 12): the
// first page and one in the middle (a cursor to decode), alternately. The
// SDK answers it on either lane.
func BenchmarkResourcesListPage(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("skills="+strconv.Itoa(n), func(b *testing.B) {
			bc := loadBenchCatalog(b, n)
			s := newBenchSession(b, bc.cat, "sdk")
			line := s.call(b, "resources/list", `{}`)
			var res struct {
				Result struct {
					NextCursor string `json:"nextCursor"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &res); err != nil {
				b.Fatal(err)
			}
			first, next := `{}`, `{"cursor":"`+res.Result.NextCursor+`"}`
			if res.Result.NextCursor == "" {
				next = first
			}
			cpu := startCPU(b)
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					s.call(b, "resources/list", first)
				} else {
					s.call(b, "resources/list", next)
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkPing is the smallest request a session answers: what a round
// trip through each lane costs on top of the pipes.
func BenchmarkPing(b *testing.B) {
	bc := loadBenchCatalog(b, benchSizes[0])
	for _, lane := range benchLanes {
		b.Run(lane, func(b *testing.B) {
			s := newBenchSession(b, bc.cat, lane)
			cpu := startCPU(b)
			for b.Loop() {
				s.call(b, "ping", `{}`)
			}
			cpu.report(b)
		})
	}
}

// BenchmarkPipeFloor is the floor under every per-request number above:
// the same client and pipes, and a server that is a plain Go loop reading
// one line and writing one constant response line, with nothing decoded.
// It answers with a line of size bytes: that of a ping answer, of a
// skills/get answer, and of a skills/list page of 100 entries.
func BenchmarkPipeFloor(b *testing.B) {
	for _, size := range []int{38, 1 << 10, 64 << 10} {
		b.Run("bytes="+strconv.Itoa(size), func(b *testing.B) { benchPipeFloor(b, size) })
	}
}

func benchPipeFloor(b *testing.B, size int) {
	inR, inW, outR, outW := benchPipes(b)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := bufio.NewReader(inR)
		resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("x", max(size-48, 0)) + `"}}` + "\n")
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				return
			}
			if _, err := outW.Write(resp); err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() {
		inW.Close()
		<-done
		outW.Close()
		outR.Close()
		inR.Close()
	})
	s := &benchSession{in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	cpu := startCPU(b)
	for b.Loop() {
		s.call(b, "ping", `{}`)
	}
	cpu.report(b)
}

// cpuClock measures the CPU time of the whole process (every goroutine,
// the garbage collector included), which a loaded machine inflates far
// less than wall time: the benchmarks report it as cpu-µs/op.
type cpuClock struct{ start time.Duration }

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuClock {
	runtime.GC()
	b.ResetTimer()
	return cpuClock{processCPU(b)}
}

func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU(b)-c.start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

// BenchmarkSkillsListFirstPageCold is the first skills/list page of a new
// catalog version: every entry of the page is encoded on this request
// (the snapshot encodes entries on first use), through the fast lane.
func BenchmarkSkillsListFirstPageCold(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("skills="+strconv.Itoa(n), func(b *testing.B) {
			bc := loadBenchCatalog(b, n)
			f := mcpface.New(&mcpface.Options{Version: "1.2.3"})
			f.SetCatalog(bc.cat)
			s := newBenchSessionOf(b, f)
			version := bc.cat.Version
			// No cpu-µs/op: the process clock would count the SetCatalog
			// of every iteration, which the timer leaves out.
			for b.Loop() {
				b.StopTimer()
				version++
				if !f.SetCatalog(events.NewCatalog(version, false, bc.cat.Skills, nil)) {
					b.Fatal("SetCatalog = false")
				}
				b.StartTimer()
				s.call(b, "skills/list", `{}`)
			}
		})
	}
}

// BenchmarkSetCatalogEdit is the facade's part of a one-file edit (issue
// 12: edit latency, CPU proportional to the change): SetCatalog of a new
// catalog version that differs from the served one in one supporting file
// of one skill, every other skill the very same value (its manifest
// shared), as the catalog builder's incremental path makes it. The server
// is built and one stdio session is connected, so the registrations are
// brought up to date as in the process; after the swap one skills/get of
// the changed skill and the first skills/list page are served, as a
// client that heard of the change asks.
//
//	go test ./mcpface -run '^$' -bench SetCatalogEdit -benchmem
func BenchmarkSetCatalogEdit(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("skills="+strconv.Itoa(n), func(b *testing.B) {
			bc := loadBenchCatalog(b, n)
			f := mcpface.New(&mcpface.Options{Version: "1.2.3"})
			f.SetCatalog(bc.cat)
			s := newBenchSessionOf(b, f)
			s.call(b, "skills/list", `{}`)
			mid := n / 2
			get := uriParams(bc.gets[mid])
			s.call(b, "skills/get", get)
			// Two versions of the skill in the middle, alternated: its
			// third file's digest and size change, its manifest is new.
			variants := [2][]*events.Skill{bc.cat.Skills, slices.Clone(bc.cat.Skills)}
			sk := new(events.Skill)
			*sk = *variants[1][mid]
			variants[1][mid] = sk
			sk.Files = slices.Clone(sk.Files)
			sk.Files[2].Digest = strings.Repeat("ab", 32)
			sk.Files[2].Size++
			version := bc.cat.Version
			// No cpu-µs/op: the process clock would count the catalogs
			// made with the timer stopped.
			for i := 0; b.Loop(); i++ {
				version++
				// What the builder pays (the lookup index), not the facade.
				b.StopTimer()
				skills := slices.Clone(bc.cat.Skills)
				skills[mid] = variants[i%2][mid]
				cat := events.NewCatalog(version, false, skills, nil)
				b.StartTimer()
				if !f.SetCatalog(cat) {
					b.Fatal("SetCatalog = false")
				}
				s.call(b, "skills/get", get)
				s.call(b, "skills/list", `{}`)
			}
		})
	}
}
