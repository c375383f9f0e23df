// Command gencorpus writes a deterministic corpus of synthetic Agent Skills
// for benchmarks (test/outside/bench-compare.sh):
//
//	go run ./test/gencorpus -skills 10000 -files 4 -out .tools/corpora/gen-10000
//
// Every skill is a folder <out>/<name> holding a SKILL.md with valid
// frontmatter (name = folder name, a description) and files-1 supporting
// files spread over references/, scripts/ and assets/ (or the skill folder
// itself). File sizes are drawn around -kb KiB on average (SKILL.md
// included), so 10,000 skills × 4 files × 8.5 KiB ≈ 340 MB, the size issue
// 12 measured. The same flags always give the same bytes (a fixed seed, no
// clock, no map order).
//
// A stamp file <out>.stamp records the parameters; when it matches and <out>
// exists, nothing is written ("up to date"). Otherwise <out> is removed and
// written anew, and the stamp is written last, so an interrupted run is
// redone next time.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// version changes whenever the output for the same flags changes.
const version = 1

type params struct {
	Version int     `json:"version"`
	Skills  int     `json:"skills"`
	Files   int     `json:"files"`
	KiB     float64 `json:"kib"`
	Seed    uint64  `json:"seed"`
}

func main() {
	var p params
	out := flag.String("out", "", "folder to write the corpus into (required); <out>.stamp records the parameters")
	flag.IntVar(&p.Skills, "skills", 10000, "number of skills")
	flag.IntVar(&p.Files, "files", 4, "files per skill, SKILL.md included (at least 1)")
	flag.Float64Var(&p.KiB, "kb", 8.5, "mean file size in KiB")
	flag.Uint64Var(&p.Seed, "seed", 12, "random seed")
	force := flag.Bool("force", false, "write even when the stamp says the corpus is up to date")
	flag.Parse()
	if *out == "" || p.Skills < 1 || p.Files < 1 || p.KiB <= 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	p.Version = version
	if err := run(*out, p, *force); err != nil {
		fmt.Fprintln(os.Stderr, "gencorpus:", err)
		os.Exit(1)
	}
}

func run(out string, p params, force bool) error {
	out = filepath.Clean(out)
	stamp := out + ".stamp"
	want, err := json.Marshal(p)
	if err != nil {
		return err
	}
	want = append(want, '\n')
	if !force {
		if have, err := os.ReadFile(stamp); err == nil && bytes.Equal(have, want) {
			if fi, err := os.Stat(out); err == nil && fi.IsDir() {
				fmt.Printf("gencorpus: %s is up to date (%s)\n", out, strings.TrimSpace(string(want)))
				return nil
			}
		}
	}
	start := time.Now()
	if err := os.Remove(stamp); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	files, bytes, err := generate(out, p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(stamp, want, 0o644); err != nil {
		return err
	}
	fmt.Printf("gencorpus: wrote %d skills, %d files, %.1f MB into %s in %s\n",
		p.Skills, files, float64(bytes)/1e6, out, time.Since(start).Round(time.Millisecond))
	return nil
}

// words is the vocabulary of the generated prose. Lower-case letters only,
// so every name built from it is a valid Agent Skills name.
var words = strings.Fields(`
analysis assay batch buffer catalog cluster column compute curve data
dataset deploy design digest document enzyme estimate experiment export
feature field filter format genome graph index input kernel label layer
library matrix measure merge metric model module network normal object
output panel parse pipeline plot policy protein query ratio record region
report request result review sample scale schema score sequence series
signal source spectrum stage table target tensor test token trace train
update vector weight window workflow yield`)

var subdirs = []string{"references", "scripts", "assets", ""}

// generate writes every skill and returns the number of files and bytes.
func generate(out string, p params) (files, total int, err error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(p.Seed, uint64(p.Skills)<<20|uint64(p.Files)))
	var buf bytes.Buffer
	width := len(fmt.Sprint(p.Skills))
	for i := 1; i <= p.Skills; i++ {
		name := fmt.Sprintf("s%0*d-%s-%s", width, i, pick(rng), pick(rng))
		dir := filepath.Join(out, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return files, total, err
		}
		// SKILL.md
		buf.Reset()
		fmt.Fprintf(&buf, "---\nname: %s\ndescription: %s\nlicense: MIT\nmetadata:\n  generator: gencorpus v%d\n---\n\n# %s\n\n",
			name, description(rng), version, name)
		prose(&buf, rng, size(rng, p.KiB)-buf.Len())
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), buf.Bytes(), 0o644); err != nil {
			return files, total, err
		}
		files++
		total += buf.Len()
		// Supporting files.
		for f := 1; f < p.Files; f++ {
			sub := subdirs[rng.IntN(len(subdirs))]
			var rel string
			buf.Reset()
			switch sub {
			case "scripts":
				rel = fmt.Sprintf("%s/%s_%d.py", sub, pick(rng), f)
				buf.WriteString("# Generated by gencorpus: not meant to run.\n\n")
			case "assets":
				rel = fmt.Sprintf("%s/%s-%d.txt", sub, pick(rng), f)
			default:
				rel = fmt.Sprintf("%s-%d.md", pick(rng), f)
				if sub != "" {
					rel = sub + "/" + rel
				}
				fmt.Fprintf(&buf, "# %s\n\n", strings.TrimSuffix(filepath.Base(rel), ".md"))
			}
			prose(&buf, rng, size(rng, p.KiB)-buf.Len())
			path := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return files, total, err
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return files, total, err
			}
			files++
			total += buf.Len()
		}
	}
	return files, total, nil
}

func pick(rng *rand.Rand) string { return words[rng.IntN(len(words))] }

// size draws a file size in bytes, log-normal around a mean of kib KiB
// (σ = 0.8: most files 2–20 KiB, a few larger), at least 256 bytes.
func size(rng *rand.Rand, kib float64) int {
	const sigma = 0.8
	mu := math.Log(kib*1024) - sigma*sigma/2
	return max(256, int(math.Exp(mu+sigma*rng.NormFloat64())))
}

// description is one sentence of 12–40 words (well under 1,024 characters).
func description(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("Use this skill to")
	for range 12 + rng.IntN(29) {
		b.WriteByte(' ')
		b.WriteString(pick(rng))
	}
	b.WriteByte('.')
	return b.String()
}

// prose appends about n bytes of lines of words, ending with a newline.
func prose(buf *bytes.Buffer, rng *rand.Rand, n int) {
	w := bufio.NewWriter(buf)
	written, line := 0, 0
	for written < n {
		s := pick(rng)
		if line > 0 {
			w.WriteByte(' ')
			written++
		}
		w.WriteString(s)
		written += len(s)
		line += len(s) + 1
		if line > 72 {
			w.WriteByte('\n')
			written++
			line = 0
		}
	}
	if line > 0 {
		w.WriteByte('\n')
	}
	w.Flush()
}
