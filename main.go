// Command skilljack-mcp serves Agent Skills — folders holding a SKILL.md with
// YAML frontmatter and supporting files — to any MCP client over stdio.
//
// Usage:
//
//	skilljack-mcp [flags] [source ...]
//	skilljack-mcp validate [source ...]
//
// A source is a skill folder, a GitHub repository
// (github.com/owner/repo[/subpath][@ref]) or a publisher URL
// (https://host/.well-known/agent-skills/).
//
// It is wiring only: it calls [config.Load] for the configuration (every
// flag, variable and config-file key is a row of [config.SettingsTable]),
// builds the stderr logger and the bus, subscribes every inbox, starts the
// actors (config, watcher, remote fetchers, hasher, catalog builder,
// notifier) and the MCP facade in one errgroup with the chosen transport,
// and shuts them down together when stdin closes or a signal arrives. See
// README.md for every flag and environment variable.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/watch"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// version is the release version of this build, reported as
// serverInfo.version; -ldflags "-X main.version=..." overrides it.
var version = "0.1.0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "skilljack-mcp:", err)
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		os.Exit(code)
	}
}

// exitError is an error with its own exit code: validate exits 2 on a
// usage or I/O problem and 1 on findings (issue 13 item 7).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// validateFlags takes the validate subcommand's own flag, --strict, out of
// args (before "--"): it is no server setting, so no row of the settings
// table.
func validateFlags(args []string) (rest []string, validating, strict bool) {
	if len(args) == 0 || args[0] != "validate" {
		return args, false, false
	}
	rest = []string{"validate"}
	for i, a := range args[1:] {
		if a == "--" {
			rest = append(rest, args[1+i:]...)
			break
		}
		if a == "--strict" {
			strict = true
			continue
		}
		rest = append(rest, a)
	}
	return rest, true, strict
}

// errDone is returned by the server goroutine when the client went away
// (stdin EOF), so that the errgroup cancels the actors; run filters it.
var errDone = errors.New("stdio session ended")

// usageFormat is the --help text; %s is the flags part, generated from
// the settings table by [config.FlagsUsage].
const usageFormat = `skilljack-mcp serves Agent Skills to MCP clients over stdio or HTTP.

Usage:
  skilljack-mcp [flags] [source ...]        serve skills (stdin/stdout speak MCP)
  skilljack-mcp validate [--strict] [source ...]
                                            report what is off in the skills, then exit:
                                            0 clean, 1 something is not served as written
                                            (--strict: any warning), 2 usage or I/O error

A source is a skill folder, a GitHub repository (github.com/owner/repo[/subpath][@ref];
allowlist its owner with GITHUB_ALLOWED_ORGS or GITHUB_ALLOWED_USERS) or a publisher
(https://host/.well-known/agent-skills/; allowlist its origin with WELL_KNOWN_ALLOWED_ORIGINS).
name=source fixes the source's prefix in qualified names (team=~/skills serves team__...).

Flags:
%s  --                                        every later argument is a skill directory

See README.md for every environment variable and the config file.
`

// run is the whole program; main only maps its error to the exit code.
func run(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer, getenv func(string) string) (err error) {
	// No secret in the error main prints (issue 10: secrets).
	red := newRedactor(getenv("GITHUB_TOKEN"))
	defer func() {
		if err != nil {
			err = redactedError{err, red}
		}
	}()
	args, validating, strict := validateFlags(args)
	loadOpts := config.LoadOptions{Args: args, Getenv: getenv, Home: getenv("HOME")}
	set, warnings, err := config.Load(loadOpts)
	if err != nil {
		err = fmt.Errorf("loading configuration: %w", err)
		if validating {
			return &exitError{2, err}
		}
		return err
	}
	// --help and --version answer a person at a terminal, not an MCP client,
	// so they go to stdout like any other command's.
	switch {
	case set.Help:
		fmt.Fprintf(stdout, usageFormat, config.FlagsUsage())
		return nil
	case set.Version:
		fmt.Fprintln(stdout, "skilljack-mcp", buildVersion())
		return nil
	}
	// Every warning also reaches the client as an MCP log message (issue 13
	// item 8): hosts hide stderr, but show those.
	warned := &warnLog{}
	// Redaction is outermost: stderr and the warnings sent to clients see
	// records without secrets (issue 10: secrets).
	red = newRedactor(getenv("GITHUB_TOKEN"), set.Config.GitHub.Token)
	log := slog.New(redactHandler{warnTee{slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: set.LogLevel}), warned, nil}, red})
	clog := log.With("actor", "config")
	for _, w := range warnings {
		clog.Warn(w.Message, w.Args...)
	}
	if set.Validate {
		return validate(ctx, set, strict, stdout, log)
	}
	// The config file is watched and config commands applied while
	// running: each change works the configuration out again as here.
	reload := func() (config.Config, error) {
		s, warnings, err := config.Load(loadOpts)
		for _, w := range warnings {
			clog.Warn(w.Message, w.Args...)
		}
		return s.Config, err
	}
	return serve(ctx, set, args, reload, stdin, stdout, log, warned.list)
}

// serve runs the bus, the actors, the facade and the chosen transport
// until ctx is done, the stdio client goes away or one of them fails. args
// are the command line, for the trace's first line; warnings returns the
// warnings logged so far, for MCP clients.
func serve(ctx context.Context, set config.Settings, args []string, reload func() (config.Config, error), stdin io.ReadCloser, stdout io.WriteCloser, log *slog.Logger, warnings func() []string) error {
	bus := events.NewBus(log)
	defer bus.Close()
	pub, rec, closeTrace, err := tracePublisher(bus, set, args, log)
	if err != nil {
		return err
	}
	defer closeTrace()

	g, gctx := errgroup.WithContext(ctx)
	// Every inbox exists before anything publishes: the bus is not
	// persistent. The subscriptions end with gctx, so that a publish blocked
	// on a subscriber that has stopped returns at shutdown.
	subCtx, cancelSubs := context.WithCancel(gctx)
	defer cancelSubs()
	facadeCatalogs, err := bus.Subscribe(subCtx, events.TopicCatalogChanged)
	if err != nil {
		return fmt.Errorf("subscribing the facade: %w", err)
	}
	facadeUpdates, err := bus.Subscribe(subCtx, events.TopicResourcesUpdated)
	if err != nil {
		return fmt.Errorf("subscribing the facade: %w", err)
	}
	bundled := actors.Bundled()
	pipeline, err := actors.NewPipeline(subCtx, bus, pub, set.Config, &actors.PipelineOptions{
		Bundled: bundled,
		Watch:   true,
		Watcher: watch.Options{Reconcile: set.Reconcile},
		Logger:  log,
		Reload:  reload,
		// Files over the caps are never read, hashed or listed (issue 10 F4).
		MaxFileSize:    set.MaxFileSize,
		MaxSkillMDSize: set.MaxSkillMDSize,
		DigestCache:    digestCacheDir(set.Config),
	})
	if err != nil {
		return err
	}
	if set.HTTP {
		// Stateless HTTP pushes nothing: stderr alone carries the warnings.
		warnings = nil
	}
	facade := mcpface.New(&mcpface.Options{
		Version:       buildVersion(),
		Tools:         set.Tools,
		CatalogMode:   set.Catalog,
		CatalogBudget: set.CatalogBudget,
		Static:        set.Config.Static,
		MaxFileSize:   set.MaxFileSize,
		Bundled:       bundled,
		Logger:        log,
		Warnings:      warnings,
		Trace:         rec,
		TraceRequests: set.TraceMCP,
		Roots:         set.Roots,
		Publisher:     pub,
	})

	g.Go(func() error { return facade.Run(gctx, facadeCatalogs, facadeUpdates) })
	g.Go(func() error { return pipeline.Run(gctx) })
	if set.HTTP {
		g.Go(func() error { return serveHTTP(gctx, facade, set, log) })
	} else {
		g.Go(func() error { return serveStdio(gctx, facade, set, stdin, stdout, log) })
	}
	err = g.Wait()
	if errors.Is(err, errDone) || (err == nil && ctx.Err() != nil) {
		return nil
	}
	return err
}

// maxWarnings bounds the warnings kept for MCP clients: enough for any
// real mistake, while a folder of thousands of broken skills does not flood
// a client; one more line says how many were left out.
const maxWarnings = 50

// warnLog keeps the text of the first [maxWarnings] warnings logged, for
// the facade to send to each session ([mcpface.Options.Warnings]).
type warnLog struct {
	mu   sync.Mutex
	msgs []string
	more int
}

// list returns the warnings kept so far.
func (w *warnLog) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.msgs)
	if w.more > 0 {
		out = append(out, fmt.Sprintf("%d more warnings on the server's stderr", w.more))
	}
	return out
}

// warnTee is a slog.Handler that passes every record on and keeps the text
// of each warning (or error) in w: the message, then its attributes as
// key=value.
type warnTee struct {
	slog.Handler
	w     *warnLog
	attrs []slog.Attr
}

func (t warnTee) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Message)
		add := func(a slog.Attr) bool {
			if a.Key != "actor" {
				fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.String())
			}
			return true
		}
		for _, a := range t.attrs {
			add(a)
		}
		r.Attrs(add)
		t.w.mu.Lock()
		if len(t.w.msgs) < maxWarnings {
			t.w.msgs = append(t.w.msgs, b.String())
		} else {
			t.w.more++
		}
		t.w.mu.Unlock()
	}
	return t.Handler.Handle(ctx, r)
}

func (t warnTee) WithAttrs(as []slog.Attr) slog.Handler {
	return warnTee{t.Handler.WithAttrs(as), t.w, append(slices.Clip(t.attrs), as...)}
}

// WithGroup keeps the group's attributes unqualified in the kept text; no
// warning uses a group.
func (t warnTee) WithGroup(name string) slog.Handler {
	return warnTee{t.Handler.WithGroup(name), t.w, t.attrs}
}

// tracePublisher returns bus, or a publisher recording every message to
// the trace file set.Trace when one is set, whose first line is what ran
// ([traceStarted]); then also the recorder of the MCP sessions (nil when
// not tracing), and the function that closes the trace.
func tracePublisher(bus message.Publisher, set config.Settings, args []string, log *slog.Logger) (message.Publisher, mcpface.Recorder, func(), error) {
	if set.Trace == "" {
		if set.TraceMCP {
			log.Warn("--trace-mcp records nothing without --trace=FILE")
		}
		return bus, nil, func() {}, nil
	}
	f, err := events.CreateTraceFile(set.Trace)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening trace file: %w", err)
	}
	tp := events.NewTracePublisher(bus, f, events.TraceRedact(newRedactor(set.Config.GitHub.Token).bytes))
	if err := tp.Record(traceStarted(set, args)); err != nil {
		log.Warn("writing the trace", "error", err)
	}
	return tp, tp, func() { tp.Close(); f.Close() }, nil
}

// serveStdio serves one MCP session over stdin/stdout once the first
// catalog is in; it returns errDone when the client went away.
func serveStdio(ctx context.Context, facade *mcpface.Facade, set config.Settings, stdin io.ReadCloser, stdout io.WriteCloser, log *slog.Logger) error {
	srv, err := facade.Server(ctx)
	if err != nil {
		return nil // cancelled before the first catalog
	}
	logStart(log, facade.Catalog(), set, "stdio", "add to a client as a stdio server, e.g. claude mcp add skilljack -- skilljack-mcp <skill-dir> (see README)")
	t := facade.StdioTransport(stdin, stdout, log)
	if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !mcpface.PeerGone(err) {
		return fmt.Errorf("serving stdio: %w", err)
	}
	return errDone
}

// logStart writes the one startup line: how many skills from where, the
// effective configuration, and how to connect.
func logStart(log *slog.Logger, cat *events.Catalog, set config.Settings, transport, connect string) {
	n := 0
	if cat != nil {
		n = len(cat.Skills)
	}
	var from []string
	for _, s := range set.Config.Sources {
		from = append(from, s.Location)
	}
	log.Info("serving skills over "+transport,
		"skills", n,
		"served", actors.Counts(cat, set.Config.Sources),
		"sources", strings.Join(from, ","),
		"version", buildVersion(),
		"tools", set.Tools,
		"catalog", set.Catalog,
		"static", set.Config.Static,
		"connect", connect)
}

// HTTP server limits. Requests are small JSON-RPC messages answered from
// memory, so generous bounds only guard against slow or stuck peers.
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpReadTimeout       = 30 * time.Second
	httpWriteTimeout      = 60 * time.Second
	httpIdleTimeout       = 120 * time.Second
	httpMaxHeaderBytes    = 64 << 10
	// httpShutdownGrace is how long in-flight requests get to finish after
	// SIGTERM before connections are closed.
	httpShutdownGrace = 10 * time.Second
)

// serveHTTP serves the stateless Streamable HTTP transport until ctx is
// done, then shuts down gracefully: the listener closes at once and
// in-flight requests get httpShutdownGrace to finish.
func serveHTTP(ctx context.Context, facade *mcpface.Facade, set config.Settings, log *slog.Logger) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(set.HTTPHost, strconv.Itoa(set.HTTPPort)))
	if err != nil {
		return fmt.Errorf("listening for HTTP: %w", err)
	}
	loopback := isLoopbackHost(set.HTTPHost)
	if !loopback {
		log.Warn("HTTP is bound to a non-loopback address: anyone who can reach it can read every served skill; put it behind authentication", "host", set.HTTPHost)
	}
	srv := &http.Server{
		Handler: facade.HTTPHandler(&mcpface.HTTPOptions{
			Loopback:       loopback,
			AllowedOrigins: set.HTTPOrigins,
			MaxConcurrent:  set.HTTPMaxConcurrent,
		}),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-facade.Ready():
		logStart(log, facade.Catalog(), set, "http", "POST MCP requests to "+url)
		log.Info("listening", "url", url)
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("HTTP shutdown did not finish in time", "error", err)
		srv.Close()
	}
	<-served
	return nil
}

// isLoopbackHost reports whether host names the loopback interface.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// validate scans every source once and prints one line per finding to out,
// then a summary. It returns an [exitError] with code 2 when no skill folder
// was given or a local source does not exist, and with code 1 when
// something the sources hold is not served as written (an error, or a
// warning marked Unserved) or, with strict, on any warning; notes never
// fail (issue 13 items 7 and 10).
func validate(ctx context.Context, set config.Settings, strict bool, out io.Writer, log *slog.Logger) error {
	cfg := set.Config
	var missing []string
	given := 0
	for _, src := range cfg.Sources {
		if src.Kind == events.SourceBundled {
			continue
		}
		given++
		if src.Kind != events.SourceLocal {
			continue
		}
		if fi, err := os.Stat(src.Root); err != nil || !fi.IsDir() {
			missing = append(missing, src.Root)
		}
	}
	if given == 0 {
		if cfg.ActiveSource != "none" {
			return &exitError{2, errors.New("validate: no usable source: every source given was skipped (see the warnings above)")}
		}
		return &exitError{2, fmt.Errorf("validate: no skill folder given (pass one or more, set SKILLS_DIR, or list skillDirectories in %s)", cfg.ConfigPath)}
	}
	cat, err := actors.Validate(ctx, cfg, &hasher.Options{Bundled: actors.Bundled(), Logger: log,
		MaxFileSize: set.MaxFileSize, MaxSkillMDSize: set.MaxSkillMDSize})
	if err != nil {
		return &exitError{2, err}
	}
	var skipped, unserved, warns, notes int
	for _, d := range cat.Diagnostics {
		rule := ""
		if d.Rule != "" {
			rule = " [" + d.Rule + "]"
		}
		// Messages usually begin with the file already; print it once.
		msg := strings.TrimPrefix(strings.TrimPrefix(d.Message, d.File+": "), "skipped "+d.File+": ")
		if msg != d.Message && strings.HasPrefix(d.Message, "skipped ") {
			msg = "skipped: " + msg
		}
		if msg == d.Message {
			msg = strings.TrimPrefix(msg, d.File+" ")
		}
		fmt.Fprintf(out, "%s %s: %s%s\n", strings.ToUpper(d.Level), d.File, msg, rule)
		switch {
		case d.Level == events.LevelError:
			skipped++
			unserved++
		case d.Level == events.LevelNote:
			notes++
		default:
			warns++
			if d.Unserved {
				unserved++
			}
		}
	}
	fmt.Fprintf(out, "%s served (%s), %s (%d not served as written), %d skipped, %s\n", plural(len(cat.Skills), "skill"),
		actors.Counts(cat, cfg.Sources), plural(len(cat.Diagnostics)-notes, "finding"), unserved, skipped, plural(notes, "note"))
	switch {
	case len(missing) > 0:
		return &exitError{2, fmt.Errorf("validate: not a skill folder: %s", strings.Join(missing, ", "))}
	case skipped > 0:
		return &exitError{1, fmt.Errorf("validate: %d skill(s) skipped; %d finding(s) in all mean something is not served as written", skipped, unserved)}
	case unserved > 0:
		return &exitError{1, fmt.Errorf("validate: %d finding(s) mean something is not served as written", unserved)}
	case strict && warns > 0:
		return &exitError{1, fmt.Errorf("validate --strict: %s", plural(warns, "warning"))}
	}
	return nil
}

// plural writes n and word, with an "s" unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// buildVersion returns the release version, with the VCS revision appended
// when the build recorded one ("0.1.0+1a2b3c4d").
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	for _, kv := range bi.Settings {
		if kv.Key == "vcs.revision" && len(kv.Value) >= 8 {
			return version + "+" + kv.Value[:8]
		}
	}
	return version
}

// digestCacheDir is the folder of the hasher's persistent digest cache
// (issue 12): beside the remote caches, in $SKILLJACK_CACHE_DIR/.digests or
// ~/.skilljack/.digests — a dot folder, so never a GitHub owner's folder
// and never scanned. It is "" (digests in memory only) when the
// configuration names no cache folder.
func digestCacheDir(cfg config.Config) string {
	if cfg.WellKnown.CacheDir == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(cfg.WellKnown.CacheDir), ".digests")
}
