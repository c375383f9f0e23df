// Command benchcompare measures skilljack-mcp against a reference MCP skills
// server (the TypeScript SDK's ext/skills loader) over stdio, with one
// low-overhead client for both: raw newline-delimited JSON-RPC lines, each
// request timed from the write to the arrival of its response's newline and
// decoded only after the timestamp is taken. It alternates the servers
// (ours, reference, ours, reference, …) for -rounds rounds on one corpus and
// prints a plain text table: per row the median and min–max over the rounds
// for both servers and the ratio reference/ours of the medians (above 1:
// ours is faster or smaller). test/outside/bench-compare.sh drives it; see
// the README there for what each row measures.
//
//	benchcompare -corpus DIR -ours BIN -ours-home DIR -ref-cmd 'node server.mjs' -rounds 5
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

type config struct {
	corpus    string
	label     string
	rounds    int
	edits     int
	warmPages int
	walks     int
	ours      string
	oursHome  string
	refCmd    []string
	logs      string
	initWait  time.Duration
	exitWait  time.Duration
	noFirst   bool
	idle      time.Duration
	self      string // this program, the echo server of our floor
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-echo-server" {
		echoServer(os.Args[2])
		return
	}
	var c config
	var refCmd string
	flag.StringVar(&c.corpus, "corpus", "", "skills folder both servers serve (required); edits touch one file in it and restore it")
	flag.StringVar(&c.label, "label", "", "corpus name in the report (default: the folder name)")
	flag.IntVar(&c.rounds, "rounds", 5, "rounds; each runs ours, then the reference")
	flag.IntVar(&c.edits, "edits", 20, "timed edits per session, where the server declares resources.subscribe")
	flag.IntVar(&c.warmPages, "warm-pages", 20, "repeated first skills/list pages per session (the warm row is their median)")
	flag.IntVar(&c.walks, "walks", 20, "full skills/list walks per session (the row is their median; a walk of a small corpus takes a tenth of a millisecond, so a few would show the machine's noise more than the walk)")
	flag.StringVar(&c.ours, "ours", "", "our binary (required)")
	flag.StringVar(&c.oursHome, "ours-home", "", "HOME of our server, kept over the rounds so that its caches are warm (required); first-start sessions get fresh ones beside it")
	flag.StringVar(&refCmd, "ref-cmd", "", "reference server command, space-separated; the corpus folder is appended (required)")
	flag.StringVar(&c.logs, "logs", "", "folder for each server's stderr (default: <ours-home>-logs)")
	flag.DurationVar(&c.initWait, "init-timeout", 10*time.Minute, "longest wait for an initialize result")
	flag.DurationVar(&c.exitWait, "exit-timeout", 3*time.Minute, "longest wait for an exit after stdin closes (then the server is killed)")
	flag.BoolVar(&c.noFirst, "no-first-start", false, "skip the first-start (empty caches) sessions of our server")
	flag.DurationVar(&c.idle, "idle", 8*time.Second, "wait of the idle session after initialize (0: no idle sessions)")
	flag.Parse()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
	c.self = self
	c.refCmd = strings.Fields(refCmd)
	if c.corpus == "" || c.ours == "" || c.oursHome == "" || len(c.refCmd) == 0 || c.rounds < 1 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if c.label == "" {
		c.label = filepath.Base(c.corpus)
	}
	if c.logs == "" {
		c.logs = c.oursHome + "-logs"
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "benchcompare:", err)
		os.Exit(1)
	}
}

// A server is how to start one of the two.
type server struct {
	name string
	argv []string
	env  []string
}

// cleanEnv is the environment without anything that could make our server
// serve more than the corpus (SKILLS_DIR, SKILLJACK_*, config via HOME) or
// put its caches elsewhere (XDG_*).
func cleanEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "SKILLS_DIR" || strings.HasPrefix(k, "SKILLJACK_") || strings.HasPrefix(k, "XDG_") ||
			k == "GITHUB_REPOS" || strings.HasPrefix(k, "WELL_KNOWN_") || k == "MAX_SKILL_MD_MB" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home)
}

func run(c config) error {
	corpus, err := filepath.Abs(c.corpus)
	if err != nil {
		return err
	}
	c.corpus = corpus
	for _, d := range []string{c.oursHome, c.logs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	ours := server{name: "ours", argv: []string{c.ours, corpus}, env: cleanEnv(c.oursHome)}
	ref := server{name: "reference", argv: append(slices.Clone(c.refCmd), corpus), env: cleanEnv(c.oursHome + "-reference")}

	// An interrupt must not leave an edited file behind.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		restoreEdit()
		fmt.Fprintln(os.Stderr, "benchcompare: interrupted; the edited file (if any) is restored")
		signal.Stop(sigs)
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Signal(s)
	}()

	progress("%s: warm-up (one start of each, not measured)", c.label)
	for _, s := range []server{ours, ref} {
		if err := warmUp(c, s); err != nil {
			return fmt.Errorf("%s warm-up: %w", s.name, err)
		}
	}

	res := map[string]*results{"ours": newResults(), "reference": newResults()}
	for r := 1; r <= c.rounds; r++ {
		d, err := readEverySkillMD(c.corpus)
		if err != nil {
			return fmt.Errorf("round %d reading every SKILL.md: %w", r, err)
		}
		res["ours"].add(rowReadMD, ms(d))
		res["reference"].notes[rowReadMD] = "– (the same files)"
		if !c.noFirst {
			home := fmt.Sprintf("%s-first-%d", c.oursHome, r)
			first := server{name: "ours", argv: ours.argv, env: cleanEnv(home)}
			d, err := firstStart(c, first, home, r)
			if err != nil {
				return fmt.Errorf("round %d ours first start: %w", r, err)
			}
			res["ours"].add(rowFirst, ms(d))
			progress("%s round %d/%d ours first start (empty HOME): %s", c.label, r, c.rounds, fmtDur(d))
		}
		for _, s := range []server{ours, ref} {
			if err := session(c, s, r, res[s.name]); err != nil {
				return fmt.Errorf("round %d %s: %w", r, s.name, err)
			}
		}
		for _, s := range []server{ours, ref} {
			if err := idle(c, s, r, res[s.name]); err != nil {
				return fmt.Errorf("round %d %s idle: %w", r, s.name, err)
			}
		}
	}
	// The reference keeps no cache between starts: its first start is any start.
	res["reference"].samples[rowFirst] = res["reference"].samples[rowInit]
	report(os.Stdout, c, res)
	return nil
}

// readEverySkillMD times reading every SKILL.md under corpus once (the
// first-start goal's yardstick: a first start should cost at most twice
// this), walking the tree as discovery would, without following links.
func readEverySkillMD(corpus string) (time.Duration, error) {
	t := time.Now()
	// The corpus may be given through a link: walk the folder it names.
	if real, err := filepath.EvalSymlinks(corpus); err == nil {
		corpus = real
	}
	err := filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && d.Name() == "SKILL.md" {
			_, err = os.ReadFile(p)
		}
		return err
	})
	return time.Since(t), err
}

func progress(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// ---------------------------------------------------------------------------
// A process and its JSON-RPC lines.

type line struct {
	b  []byte
	at time.Time
}

type proc struct {
	cmd     *exec.Cmd
	in      *os.File // our end of its stdin
	out     *lineReader
	nextID  int
	started time.Time
	// lastWrite is when call last wrote a request.
	lastWrite time.Time
	exited    chan error
	// lastLen is the length of the last response line call returned.
	lastLen int
	// env is the envelope call decodes into, reused: a response's result
	// is copied into the same buffer each time instead of into a new one,
	// so that the client makes little garbage while it times (its garbage
	// collector ran beside the timed calls and made a page's time jumpy).
	env envelope
	// pages holds the results of the last walk, reused by the next, and
	// pageLens the length of each page's line.
	pages    [][]byte
	pageLens []int
}

// start runs s with its stdin and stdout on pipes handed straight to the
// process (no copying goroutines in between) and stderr into logFile. Its
// stdout is read by the goroutine that times the calls (see lineReader).
func start(s server, logFile string) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errF, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = s.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errF
	p := &proc{cmd: cmd, in: inW, out: newLineReader(outR), nextID: 1, exited: make(chan error, 1)}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	inR.Close()
	outW.Close()
	errF.Close()
	go func() { p.exited <- cmd.Wait() }()
	return p, nil
}

// kill kills the server and reads its stdout to the end.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	p.in.Close()
	<-p.exited
	p.out.discard()
}

// lineReader reads a server's stdout line by line in the goroutine that
// times the calls, straight from the pipe into one buffer that grows to the
// longest line: no goroutine and channel hop per line (which cost more than
// the pipe itself for a 150 KB skills/list page), no copy of a line before
// it is timed. A read waits until the deadline given; a timeout keeps what
// was read for the next call.
type lineReader struct {
	f        *os.File
	buf      []byte
	r, w     int // buf[r:w] is read and not yet returned
	scan     int // buf[r:scan] holds no newline
	at       time.Time
	deadline time.Time // the read deadline set on f
	err      error     // the error that ended f (io.EOF)
}

func newLineReader(f *os.File) *lineReader {
	return &lineReader{f: f, buf: make([]byte, 1<<20)}
}

// next returns the next line, newline included, valid until the next call,
// and when the read that delivered its newline returned; errTimeout when
// none is complete by deadline (zero: no deadline).
func (lr *lineReader) next(deadline time.Time) ([]byte, time.Time, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.w], '\n'); i >= 0 {
			end := lr.scan + i + 1
			line := lr.buf[lr.r:end]
			lr.r, lr.scan = end, end
			return line, lr.at, nil
		}
		lr.scan = lr.w
		if lr.err != nil {
			return nil, time.Time{}, lr.err
		}
		lr.makeRoom()
		if !deadline.Equal(lr.deadline) {
			if err := lr.f.SetReadDeadline(deadline); err != nil {
				return nil, time.Time{}, err
			}
			lr.deadline = deadline
		}
		n, err := lr.f.Read(lr.buf[lr.w:])
		lr.at = time.Now()
		lr.w += n
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, time.Time{}, errTimeout
		case err != nil:
			lr.err = err
		}
	}
}

// makeRoom moves the unreturned bytes to the front of the buffer, or
// doubles it when they fill it.
func (lr *lineReader) makeRoom() {
	if lr.r == lr.w {
		lr.r, lr.w, lr.scan = 0, 0, 0
		return
	}
	if lr.w < len(lr.buf) {
		return
	}
	if lr.r > 0 {
		n := copy(lr.buf, lr.buf[lr.r:lr.w])
		lr.scan -= lr.r
		lr.r, lr.w = 0, n
		return
	}
	lr.buf = append(lr.buf, make([]byte, len(lr.buf))...)
}

// discard reads to the end of the stream, with no deadline.
func (lr *lineReader) discard() {
	_ = lr.f.SetReadDeadline(time.Time{})
	_, _ = io.Copy(io.Discard, lr.f)
	lr.f.Close()
	lr.r, lr.w, lr.scan = 0, 0, 0
}

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// encode builds a request line; the caller sends it with call.
func (p *proc) encode(method string, params any) ([]byte, string) {
	id := strconv.Itoa(p.nextID)
	p.nextID++
	req := map[string]any{"jsonrpc": "2.0", "id": p.nextID - 1, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	return append(b, '\n'), id
}

var errTimeout = errors.New("timed out")

// call writes one request line and waits for the line answering it. The
// duration runs from just before the write to the arrival of the response's
// newline; the line is decoded after that. Notifications that arrive
// meanwhile go to notes. The envelope returned is valid until the next
// call.
func (p *proc) call(req []byte, id string, timeout time.Duration, notes *[]line) (time.Duration, *envelope, error) {
	deadline := time.Now().Add(timeout)
	t0 := time.Now()
	p.lastWrite = t0
	if _, err := p.in.Write(req); err != nil {
		return 0, nil, err
	}
	for {
		b, at, err := p.out.next(deadline)
		if errors.Is(err, errTimeout) {
			return 0, nil, err
		}
		if err != nil {
			return 0, nil, errors.New("the server closed its stdout")
		}
		d := at.Sub(t0)
		e := &p.env
		e.ID, e.Method, e.Params, e.Result, e.Error = e.ID[:0], "", e.Params[:0], e.Result[:0], nil
		if err := json.Unmarshal(b, e); err != nil {
			return 0, nil, fmt.Errorf("undecodable line %q: %w", trunc(b), err)
		}
		if string(e.ID) == id && e.Method == "" {
			p.lastLen = len(b)
			return d, e, nil
		}
		p.other(line{b, at}, e, notes)
	}
}

// other handles a line that is not the awaited response: a notification is
// kept, a request from the server is declined.
func (p *proc) other(l line, e *envelope, notes *[]line) {
	switch {
	case e.Method != "" && len(e.ID) > 0:
		fmt.Fprintf(p.in, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not supported by benchcompare"}}`+"\n", e.ID)
	case e.Method != "" && notes != nil:
		*notes = append(*notes, line{bytes.Clone(l.b), l.at})
	}
}

func (p *proc) notify(method string) error {
	_, err := fmt.Fprintf(p.in, `{"jsonrpc":"2.0","method":%q}`+"\n", method)
	return err
}

func trunc(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// /proc readings.

// vmHWM is the peak resident set size of pid in bytes.
func vmHWM(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmHWM in /proc/pid/status")
}

// cpu is the user + system CPU time pid has used so far, all threads.
func cpu(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("odd /proc/pid/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc/pid/stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64) // field 14, utime
	s, err2 := strconv.ParseInt(f[12], 10, 64) // field 15, stime
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// ---------------------------------------------------------------------------
// Rows and results.

const (
	rowInit = iota
	rowFirst
	rowReadMD
	rowRSS
	rowRSSIdle
	rowPageCold
	rowPageWarm
	rowWalk
	rowWalkFloor
	rowGet
	rowGetFloor
	rowRead
	rowEditMed
	rowEditP99
	rowEditCPU
	rowExit
	rowCPUInit
	rowCPU
	rowRSSEnd
	nRows
)

var rows = [nRows]struct{ label, unit string }{
	rowInit:      {"spawn → initialize result, warm cache", "ms"},
	rowFirst:     {"spawn → initialize result, first start (empty HOME)", "ms"},
	rowReadMD:    {"yardstick: read every SKILL.md once (warm page cache)", "ms"},
	rowRSS:       {"peak RSS at initialize (VmHWM)", "MiB"},
	rowRSSIdle:   {"peak RSS by the end of an idle wait after initialize", "MiB"},
	rowPageCold:  {"first skills/list page, cold (1st after initialize)", "ms"},
	rowPageWarm:  {"first skills/list page, warm (median of repeats)", "ms"},
	rowWalk:      {"full skills/list walk, all pages (median of walks)", "ms"},
	rowWalkFloor: {"floor: echo of the walk's page lines (no server)", "ms"},
	rowGet:       {"skills/get per call (median, every skill)", "ms"},
	rowGetFloor:  {"floor: echo of a skills/get-sized line (no server)", "ms"},
	rowRead:      {"resources/read per call (median, every file)", "ms"},
	rowEditMed:   {"edit → notifications/resources/updated, median", "ms"},
	rowEditP99:   {"edit → notifications/resources/updated, p99", "ms"},
	rowEditCPU:   {"CPU (user+sys) per edit, over the edit loop", "ms"},
	rowExit:      {"exit after stdin closes", "ms"},
	rowCPUInit:   {"CPU (user+sys) spawn → initialize result", "s"},
	rowCPU:       {"CPU (user+sys) whole session: init, list, get, read all", "s"},
	rowRSSEnd:    {"peak RSS after that session (VmHWM)", "MiB"},
}

type results struct {
	samples map[int][]float64
	notes   map[int]string
	info    string
}

func newResults() *results {
	return &results{samples: map[int][]float64{}, notes: map[int]string{}}
}

func (r *results) add(row int, v float64) { r.samples[row] = append(r.samples[row], v) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fmtDur(d time.Duration) string { return fmtNum(ms(d)) + " ms" }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// p99 is the nearest-rank 99th percentile: with fewer than 100 samples, the
// largest.
func p99(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(math.Ceil(0.99*float64(len(s))))-1]
}

func durs(ds []time.Duration) []float64 {
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = ms(d)
	}
	return v
}

// ---------------------------------------------------------------------------
// Sessions.

var initParams = map[string]any{
	"protocolVersion": "2025-11-25",
	"capabilities":    map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/skills": map[string]any{}}},
	"clientInfo":      map[string]any{"name": "skilljack-benchcompare", "version": "1"},
}

// initialize sends initialize to a started process and returns the time from
// just before the process was started to the result's newline.
func (p *proc) initialize(c config) (time.Duration, *envelope, error) {
	req, id := p.encode("initialize", initParams)
	d, e, err := p.call(req, id, c.initWait, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("initialize: %w", err)
	}
	if e.Error != nil {
		return 0, nil, fmt.Errorf("initialize: error %d %s", e.Error.Code, e.Error.Message)
	}
	return d + p.lastWrite.Sub(p.started), e, nil
}

func warmUp(c config, s server) error {
	logf := filepath.Join(c.logs, s.name+"-warmup.stderr")
	p, err := start(s, logf)
	if err != nil {
		return err
	}
	d, _, err := p.initialize(c)
	if err != nil {
		p.kill()
		return fmt.Errorf("%w (stderr in %s)", err, logf)
	}
	progress("%s %s warm-up: spawn → initialize %s", c.label, s.name, fmtDur(d))
	// One full walk before the exit: a first start answers skills/list
	// once every file is hashed and its caches are written, so that the
	// first measured "warm" start is warm (a warm-up that left right after
	// initialize left no persisted catalog behind).
	if _, _, err := p.walk(); err != nil {
		p.kill()
		return fmt.Errorf("warm-up walk: %w (stderr in %s)", err, logf)
	}
	_, err = stop(c, p)
	return err
}

// stop closes stdin and waits for the exit, killing the server after
// exitWait; it returns the time from closing stdin to the exit.
func stop(c config, p *proc) (time.Duration, error) {
	// What the server still writes is read meanwhile: a full pipe must
	// not hold up its exit.
	drained := make(chan struct{})
	go func() {
		p.out.discard()
		close(drained)
	}()
	defer func() { <-drained }()
	t0 := time.Now()
	p.in.Close()
	timer := time.NewTimer(c.exitWait)
	defer timer.Stop()
	select {
	case <-p.exited:
		return time.Since(t0), nil
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
		return 0, fmt.Errorf("no exit within %s of closing stdin; killed", c.exitWait)
	}
}

// firstStart times spawn → initialize with an empty HOME, then kills the
// server and removes that HOME.
func firstStart(c config, s server, home string, round int) (time.Duration, error) {
	if err := os.RemoveAll(home); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return 0, err
	}
	defer os.RemoveAll(home)
	logf := filepath.Join(c.logs, fmt.Sprintf("ours-first-%d.stderr", round))
	p, err := start(s, logf)
	if err != nil {
		return 0, err
	}
	d, _, err := p.initialize(c)
	p.kill()
	if err != nil {
		return 0, fmt.Errorf("%w (stderr in %s)", err, logf)
	}
	return d, nil
}

// idle starts s (ours with its warm HOME), initializes it, sends
// notifications/initialized and then sends nothing for c.idle, and records
// the server's peak RSS (VmHWM) at the end of that wait: for ours, what
// the background revalidation of a warm start costs in memory, which the
// RSS row at initialize does not see. Then it kills the server.
func idle(c config, s server, round int, res *results) error {
	if c.idle <= 0 {
		return nil
	}
	logf := filepath.Join(c.logs, fmt.Sprintf("%s-idle-%d.stderr", s.name, round))
	p, err := start(s, logf)
	if err != nil {
		return err
	}
	defer p.kill()
	if _, _, err := p.initialize(c); err != nil {
		return fmt.Errorf("%w (stderr in %s)", err, logf)
	}
	if err := p.notify("notifications/initialized"); err != nil {
		return err
	}
	time.Sleep(c.idle)
	hwm, err := vmHWM(p.cmd.Process.Pid)
	if err != nil {
		return err
	}
	res.add(rowRSSIdle, hwm/(1<<20))
	progress("%s round %d/%d %s idle: peak RSS %.0f MiB %s after initialize", c.label, round, c.rounds, s.name, hwm/(1<<20), c.idle)
	return nil
}

type listResult struct {
	Skills []struct {
		URI       string `json:"uri"`
		Resources []struct {
			URI string `json:"uri"`
		} `json:"resources"`
	} `json:"skills"`
}

// request sends one request and returns its round trip and result; a
// JSON-RPC error is an error.
func (p *proc) request(method string, params any, out any) (time.Duration, error) {
	req, id := p.encode(method, params)
	d, e, err := p.call(req, id, time.Minute, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", method, err)
	}
	if e.Error != nil {
		return d, fmt.Errorf("%s %s: error %d %s", method, trunc(req), e.Error.Code, e.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(e.Result, out); err != nil {
			return d, fmt.Errorf("%s: %w", method, err)
		}
	}
	return d, nil
}

// walk lists every page and returns the sum of the pages' round trips and
// the pages' results, valid until the next walk (decode them with
// decodePages). Between pages the client reads only the cursor.
func (p *proc) walk() (time.Duration, [][]byte, error) {
	var total time.Duration
	params := map[string]any{}
	for n := 0; ; n++ {
		var page struct {
			NextCursor *string `json:"nextCursor"`
		}
		req, id := p.encode("skills/list", params)
		d, e, err := p.call(req, id, time.Minute, nil)
		if err != nil {
			return 0, nil, fmt.Errorf("skills/list: %w", err)
		}
		if e.Error != nil {
			return 0, nil, fmt.Errorf("skills/list %s: error %d %s", trunc(req), e.Error.Code, e.Error.Message)
		}
		if err := json.Unmarshal(e.Result, &page); err != nil {
			return 0, nil, fmt.Errorf("skills/list: %w", err)
		}
		total += d
		p.pageLens = append(p.pageLens[:n], p.lastLen)
		if n == len(p.pages) {
			p.pages = append(p.pages, nil)
		}
		p.pages[n] = append(p.pages[n][:0], e.Result...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return total, p.pages[:n+1], nil
		}
		if n >= 100000 {
			return 0, nil, errors.New("skills/list: more than 100,000 pages")
		}
		params = map[string]any{"cursor": *page.NextCursor}
	}
}

// decodePages returns the skill URIs and each skill's file URIs of a
// walk's pages.
func decodePages(pages [][]byte) ([]string, [][]string, error) {
	var skills []string
	var files [][]string
	for _, raw := range pages {
		var lr listResult
		if err := json.Unmarshal(raw, &lr); err != nil {
			return nil, nil, fmt.Errorf("skills/list: %w", err)
		}
		for _, s := range lr.Skills {
			skills = append(skills, s.URI)
			var fs []string
			for _, r := range s.Resources {
				fs = append(fs, r.URI)
			}
			files = append(files, fs)
		}
	}
	return skills, files, nil
}

// session runs one round against s: initialize, the first page cold and
// warm, full walks, skills/get of every skill and resources/read of every
// file, the edits and the exit, each step adding its rows to res.
func session(c config, s server, round int, res *results) error {
	logf := filepath.Join(c.logs, fmt.Sprintf("%s-%d.stderr", s.name, round))
	p, err := start(s, logf)
	if err != nil {
		return err
	}
	r := &sessionRun{c: c, s: s, round: round, res: res, p: p, pid: p.cmd.Process.Pid}
	steps := []func() error{r.initialize, r.firstPage, r.walkAll, r.getAll, r.readAll, r.endStats, r.edit}
	for _, step := range steps {
		if err := step(); err != nil {
			p.kill()
			return fmt.Errorf("%w (stderr in %s)", err, logf)
		}
	}
	dExit, err := stop(c, p)
	if err != nil {
		return fmt.Errorf("%w (stderr in %s)", err, logf)
	}
	res.add(rowExit, ms(dExit))
	if err := r.floor(); err != nil {
		return fmt.Errorf("%s echo floor: %w", s.name, err)
	}
	progress("%s round %d/%d %s: init %s, RSS %.0f MiB, walk %s, get %s, read %s, CPU %.2f s, exit %s",
		c.label, round, c.rounds, s.name, fmtDur(r.dInit), r.hwm/(1<<20), fmtDur(median2(r.walks)),
		fmtDur(median2(r.gets)), fmtDur(median2(r.reads)), r.cpuAll.Seconds(), fmtDur(dExit))
	return nil
}

// sessionRun is one round's state, carried from step to step of session.
type sessionRun struct {
	getBytes []float64 // the length of each skills/get answer line
	c        config
	s        server
	round    int
	res      *results
	p        *proc
	pid      int

	subscribe   bool // the server declared resources.subscribe
	dInit       time.Duration
	hwm         float64 // VmHWM after initialize, bytes
	walks       []time.Duration
	skills      []string
	files       [][]string
	pages       int
	gets, reads []time.Duration
	getErrs     int
	readErrs    int
	nFiles      int
	cpuAll      time.Duration
}

// initialize times initialize, checks the answer's protocol version and
// capabilities, sends notifications/initialized and records the start-up
// memory and CPU.
func (r *sessionRun) initialize() error {
	dInit, e, err := r.p.initialize(r.c)
	if err != nil {
		return err
	}
	r.dInit = dInit
	hwm, err1 := vmHWM(r.pid)
	cpuInit, err2 := cpu(r.pid)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	r.hwm = hwm
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Resources *struct {
				Subscribe bool `json:"subscribe"`
			} `json:"resources"`
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(e.Result, &ir); err != nil {
		return err
	}
	if ir.ProtocolVersion != "2025-11-25" {
		progress("WARNING: %s answered protocolVersion %q", r.s.name, ir.ProtocolVersion)
	}
	if _, ok := ir.Capabilities.Extensions["io.modelcontextprotocol/skills"]; !ok {
		progress("WARNING: %s does not declare io.modelcontextprotocol/skills", r.s.name)
	}
	r.subscribe = ir.Capabilities.Resources != nil && ir.Capabilities.Resources.Subscribe
	if err := r.p.notify("notifications/initialized"); err != nil {
		return err
	}
	r.res.add(rowInit, ms(dInit))
	r.res.add(rowRSS, hwm/(1<<20))
	r.res.add(rowCPUInit, cpuInit.Seconds())
	return nil
}

// firstPage times the first page of skills/list cold, then warm.
func (r *sessionRun) firstPage() error {
	dCold, err := r.p.request("skills/list", map[string]any{}, nil)
	if err != nil {
		return err
	}
	r.res.add(rowPageCold, ms(dCold))
	var warm []time.Duration
	for range r.c.warmPages {
		d, err := r.p.request("skills/list", map[string]any{}, nil)
		if err != nil {
			return err
		}
		warm = append(warm, d)
	}
	if len(warm) > 0 {
		r.res.add(rowPageWarm, median(durs(warm)))
	}
	return nil
}

// walkAll times full walks of the listing and keeps the last one's skills
// and files for the steps after it.
func (r *sessionRun) walkAll() error {
	var pages [][]byte
	for range max(1, r.c.walks) {
		d, ps, err := r.p.walk()
		if err != nil {
			return err
		}
		r.walks = append(r.walks, d)
		pages = ps
	}
	r.res.add(rowWalk, median(durs(r.walks)))
	var err error
	r.skills, r.files, err = decodePages(pages)
	r.pages = len(pages)
	return err
}

// echoScript is the reference's floor: a Node process that answers each
// line on stdin with a line of the next size in its argument (a
// comma-separated list, taken in turn), as the TypeScript
// SDK's stdio transport reads (stdin data events, split at newlines) and
// writes (process.stdout.write), and does nothing else.
const echoScript = `const ns=process.argv[1].split(',').map(Number);let k=0;let buf='';process.stdin.setEncoding('utf8');` +
	`process.stdin.on('data',d=>{buf+=d;let i;while((i=buf.indexOf('\n'))>=0){const l=buf.slice(0,i);buf=buf.slice(i+1);` +
	`const n=ns[k++%ns.length];const id=(/"id":(\d+)/.exec(l)||[,'null'])[1];const head='{"jsonrpc":"2.0","id":'+id+',"result":{"pad":"';` +
	`process.stdout.write(head+'x'.repeat(Math.max(n-head.length-5,0))+'"}}\n');}});`

// floorCalls is how many skills/get-shaped requests the floor times.
const floorCalls = 2000

// floor times requests against an echo server of the session's kind —
// this program itself for ours (a plain Go loop: one line read, one
// written), Node running echoScript for the reference — that answers
// with lines of the sizes the session's server answered: what the pipes,
// the wake-ups and the runtime's I/O cost, under any server work. Two
// rows: skills/get-shaped calls (the session's own URIs) answered with
// the median skills/get line, and walks answered with the last walk's
// page lines (the walk row's floor).
func (r *sessionRun) floor() error {
	if len(r.skills) == 0 || len(r.getBytes) == 0 {
		return nil
	}
	d, err := r.echo([]int{int(median(r.getBytes))}, floorCalls, 1)
	if err != nil {
		return err
	}
	r.res.add(rowGetFloor, ms(d))
	if len(r.p.pageLens) == 0 {
		return nil
	}
	d, err = r.echo(r.p.pageLens, max(1, r.c.walks), len(r.p.pageLens))
	if err != nil {
		return err
	}
	r.res.add(rowWalkFloor, ms(d))
	return nil
}

// echo starts an echo server answering with lines of sizes in turn, times
// n rounds of k requests each (after 100 untimed requests that warm it
// up) and returns the median round.
func (r *sessionRun) echo(sizes []int, n, k int) (time.Duration, error) {
	arg := make([]string, len(sizes))
	for i, sz := range sizes {
		arg[i] = strconv.Itoa(sz)
	}
	argv := []string{r.c.self, "-echo-server", strings.Join(arg, ",")}
	if r.s.name != "ours" {
		argv = []string{r.c.refCmd[0], "-e", echoScript, strings.Join(arg, ",")}
	}
	p, err := start(server{name: r.s.name + "-echo", argv: argv, env: r.s.env}, os.DevNull)
	if err != nil {
		return 0, err
	}
	defer p.kill()
	call := func(i int) (time.Duration, error) {
		return p.request("skills/get", map[string]any{"uri": r.skills[i%len(r.skills)]}, nil)
	}
	for i := range 100 - 100%k { // whole rounds, so that the timed ones start at sizes[0]
		if _, err := call(i); err != nil {
			return 0, err
		}
	}
	ds := make([]time.Duration, 0, n)
	for range n {
		var total time.Duration
		for i := range k {
			d, err := call(i)
			if err != nil {
				return 0, err
			}
			total += d
		}
		ds = append(ds, total)
	}
	return median2(ds), nil
}

// echoServer is ours's floor (see floor): it answers each line on stdin
// with one line holding the request's id, of the next of the sizes in
// sizesArg (comma-separated, taken in turn), and exits at the end of
// stdin.
func echoServer(sizesArg string) {
	var sizes []int
	for _, a := range strings.Split(sizesArg, ",") {
		size, err := strconv.Atoi(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchcompare -echo-server SIZE[,SIZE...]:", err)
			os.Exit(2)
		}
		sizes = append(sizes, size)
	}
	// As our server does (mcpface growPipe): a page is written in one go.
	// F_SETPIPE_SZ, 1031 on every Linux architecture.
	syscall.Syscall(syscall.SYS_FCNTL, os.Stdout.Fd(), 1031, 1<<20)
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var out, padding []byte
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			return
		}
		id := []byte("null")
		if i := bytes.Index(line, []byte(`"id":`)); i >= 0 {
			j := i + len(`"id":`)
			k := j
			for k < len(line) && line[k] >= '0' && line[k] <= '9' {
				k++
			}
			id = line[j:k]
		}
		out = append(append(append(out[:0], `{"jsonrpc":"2.0","id":`...), id...), `,"result":{"pad":"`...)
		size := sizes[0]
		sizes = append(sizes[1:], size)
		if pad := size - len(out) - len("\"}}\n"); pad > 0 {
			for len(padding) < pad {
				padding = append(padding, 'x')
			}
			out = append(out, padding[:pad]...)
		}
		out = append(out, "\"}}\n"...)
		if _, err := os.Stdout.Write(out); err != nil {
			return
		}
	}
}

// getAll times skills/get of every skill. An error answer is counted (the
// first one logged) and timed; a failed round trip ends the session.
func (r *sessionRun) getAll() error {
	for _, u := range r.skills {
		d, err := r.p.request("skills/get", map[string]any{"uri": u}, nil)
		r.getBytes = append(r.getBytes, float64(r.p.lastLen))
		if err != nil {
			if d == 0 {
				return err
			}
			if r.getErrs == 0 {
				progress("%s: %v", r.s.name, err)
			}
			r.getErrs++
		}
		r.gets = append(r.gets, d)
	}
	return nil
}

// readAll times resources/read of every file in the manifests, with
// errors handled as in getAll.
func (r *sessionRun) readAll() error {
	for _, fs := range r.files {
		for _, u := range fs {
			r.nFiles++
			d, err := r.p.request("resources/read", map[string]any{"uri": u}, nil)
			if err != nil {
				if d == 0 {
					return err
				}
				if r.readErrs == 0 {
					progress("%s: %v", r.s.name, err)
				}
				r.readErrs++
			}
			r.reads = append(r.reads, d)
		}
	}
	return nil
}

// endStats records the get and read medians, the CPU and memory after the
// reads, and the corpus description (with this round's error counts).
func (r *sessionRun) endStats() error {
	res := r.res
	if len(r.gets) > 0 {
		res.add(rowGet, median(durs(r.gets)))
	}
	if len(r.reads) > 0 {
		res.add(rowRead, median(durs(r.reads)))
	}
	cpuAll, err1 := cpu(r.pid)
	hwmEnd, err2 := vmHWM(r.pid)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	r.cpuAll = cpuAll
	res.add(rowCPU, cpuAll.Seconds())
	res.add(rowRSSEnd, hwmEnd/(1<<20))
	if res.info == "" {
		res.info = fmt.Sprintf("lists %d skills in %d pages, %d files in their manifests", len(r.skills), r.pages, r.nFiles)
	}
	if r.getErrs+r.readErrs > 0 {
		res.info += fmt.Sprintf("; round %d: %d skills/get and %d resources/read errors (first one in the progress log)", r.round, r.getErrs, r.readErrs)
	}
	return nil
}

// edit times the edits when they are asked for and the server can
// subscribe, and notes why not otherwise.
func (r *sessionRun) edit() error {
	var editNote string
	switch {
	case r.c.edits <= 0:
		editNote = "– (not run: -edits 0)"
	case !r.subscribe:
		editNote = "– (no resources.subscribe)"
	default:
		before, err := cpu(r.pid)
		if err != nil {
			return err
		}
		lat, err := edits(r.c, r.p, r.files)
		if err != nil {
			return err
		}
		after, err := cpu(r.pid)
		if err != nil {
			return err
		}
		r.res.add(rowEditMed, median(durs(lat)))
		r.res.add(rowEditP99, p99(durs(lat)))
		r.res.add(rowEditCPU, ms(after-before)/float64(len(lat)))
		editNote = fmt.Sprintf("(%d edits per round)", len(lat))
	}
	r.res.notes[rowEditMed], r.res.notes[rowEditP99], r.res.notes[rowEditCPU] = editNote, editNote, editNote
	return nil
}

func median2(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return time.Duration(median(durs(d)) * float64(time.Millisecond))
}

// The edited file and its original bytes, restored on an interrupt.
var edited struct {
	path string
	orig []byte
}

func restoreEdit() {
	if edited.path != "" {
		_ = os.WriteFile(edited.path, edited.orig, 0o644)
	}
}

// edits subscribes to one supporting file of a skill in the middle of the
// listing, changes its bytes c.edits times and times each change to the
// notifications/resources/updated for its URI; then it writes the original
// bytes back and waits for that notification too (not timed).
func edits(c config, p *proc, files [][]string) ([]time.Duration, error) {
	prefix := "skill://" + filepath.Base(c.corpus) + "/"
	var uri string
	for i := range files {
		fs := files[(len(files)/2+i)%len(files)]
		for _, u := range fs {
			if strings.HasPrefix(u, prefix) && !strings.HasSuffix(u, "/SKILL.md") {
				uri = u
				break
			}
		}
		if uri != "" {
			break
		}
	}
	if uri == "" {
		return nil, fmt.Errorf("no supporting file under %s to edit", prefix)
	}
	path := filepath.Join(c.corpus, filepath.FromSlash(strings.TrimPrefix(uri, prefix)))
	orig, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if _, err := p.request("resources/subscribe", map[string]any{"uri": uri}, nil); err != nil {
		return nil, err
	}
	edited.path, edited.orig = path, orig
	defer func() { edited.path = "" }()
	var lat []time.Duration
	for i := 1; i <= c.edits+1; i++ {
		time.Sleep(300 * time.Millisecond)
		p.drain()
		content := orig
		if i <= c.edits {
			content = fmt.Appendf(slices.Clip(orig), "\n<!-- benchcompare edit %d -->\n", i)
		}
		t0 := time.Now()
		if err := os.WriteFile(path, content, 0o644); err != nil {
			restoreEdit()
			return nil, err
		}
		at, err := p.await("notifications/resources/updated", uri, time.Minute)
		if err != nil {
			restoreEdit()
			return nil, fmt.Errorf("edit %d of %s: %w", i, path, err)
		}
		if i <= c.edits {
			lat = append(lat, at.Sub(t0))
		}
	}
	return lat, nil
}

// drain discards the lines that have arrived (waiting a millisecond for
// more), answering requests from the server as call does.
func (p *proc) drain() {
	deadline := time.Now().Add(time.Millisecond)
	for {
		b, at, err := p.out.next(deadline)
		if err != nil {
			return
		}
		var e envelope
		if json.Unmarshal(b, &e) == nil {
			p.other(line{b, at}, &e, nil)
		}
	}
}

// await waits for a notification method whose params.uri is uri and
// returns when its line arrived.
func (p *proc) await(method, uri string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		b, at, err := p.out.next(deadline)
		if errors.Is(err, errTimeout) {
			return time.Time{}, fmt.Errorf("no %s for %s within %s", method, uri, timeout)
		}
		if err != nil {
			return time.Time{}, errors.New("the server closed its stdout")
		}
		var e envelope
		if err := json.Unmarshal(b, &e); err != nil {
			return time.Time{}, err
		}
		if e.Method == method && len(e.ID) == 0 {
			var pr struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(e.Params, &pr) == nil && pr.URI == uri {
				return at, nil
			}
		}
		p.other(line{b, at}, &e, nil)
	}
}

// ---------------------------------------------------------------------------
// Report.

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "?"
	case v < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatFloat(v, 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func cell(r *results, row int) (string, float64) {
	v := r.samples[row]
	if len(v) == 0 {
		if n := r.notes[row]; n != "" {
			return n, math.NaN()
		}
		return "–", math.NaN()
	}
	med := median(v)
	s := fmtNum(med) + " " + rows[row].unit
	if len(v) > 1 {
		s += " (" + fmtNum(slices.Min(v)) + "–" + fmtNum(slices.Max(v)) + ")"
	}
	return s, med
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

var startLoad = loadavg()

func version(argv ...string) string {
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func report(w io.Writer, c config, res map[string]*results) {
	ours, ref := res["ours"], res["reference"]
	fmt.Fprintf(w, "\n== %s (%s): %d rounds alternating ours/reference; median (min–max) over rounds; ref/ours > 1 = ours faster/smaller ==\n",
		c.label, c.corpus, c.rounds)
	fmt.Fprintf(w, "ours:      %s (%s); %s\n", filepath.Base(c.ours), version(c.ours, "--version"), ours.info)
	fmt.Fprintf(w, "reference: %s on node %s; %s\n", strings.Join(c.refCmd[1:], " "), version(c.refCmd[0], "--version"), ref.info)
	fmt.Fprintf(w, "load average: %s at start, %s at end (%d CPUs)\n\n", startLoad, loadavg(), runtime.NumCPU())
	const lw, vw = 57, 32
	fmt.Fprintf(w, "%-*s %-*s %-*s %s\n", lw, "measure", vw, "ours", vw, "reference", "ref/ours")
	fmt.Fprintf(w, "%s\n", strings.Repeat("-", lw+2*vw+11))
	for row := range nRows {
		o, om := cell(ours, row)
		r, rm := cell(ref, row)
		if row == rowFirst && len(ref.samples[row]) > 0 {
			r += " *"
		}
		ratio := "–"
		if !math.IsNaN(om) && !math.IsNaN(rm) && om > 0 {
			ratio = strconv.FormatFloat(rm/om, 'f', 2, 64) + "×"
		}
		fmt.Fprintf(w, "%-*s %-*s %-*s %s\n", lw, rows[row].label, vw, o, vw, r, ratio)
	}
	fmt.Fprintln(w, "\n* the reference keeps no cache between starts: its first start is any start (the warm-cache samples).")
}
