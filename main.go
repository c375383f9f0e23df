// Command skilljack-mcp serves Agent Skills — folders holding a SKILL.md with
// YAML frontmatter and supporting files — to any MCP client over stdio.
//
// Usage:
//
//	skilljack-mcp [flags] [source ...]
//	skilljack-mcp validate [--strict] [--json] [source ...]
//	skilljack-mcp list [--json] [source ...]
//	skilljack-mcp --version
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
	"encoding/json"
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

// command is a one-shot subcommand and its own flags, which are no server
// settings, so no rows of the settings table.
type command struct {
	// name is "validate", "list" or "" (serve).
	name string
	// strict is validate's --strict; json is --json of validate and list.
	strict, json bool
}

// commandFlags takes the subcommand (validate or list) and its own flags
// (--strict, --json) out of args, before "--". validate stays the first
// argument, as config.Load reads it; list goes, so that it is no source.
func commandFlags(args []string) (rest []string, cmd command) {
	if len(args) == 0 || (args[0] != "validate" && args[0] != "list") {
		return args, cmd
	}
	cmd.name = args[0]
	if cmd.name == "validate" {
		rest = []string{"validate"}
	}
	for i, a := range args[1:] {
		switch {
		case a == "--":
			return append(rest, args[1+i:]...), cmd
		case a == "--strict" && cmd.name == "validate":
			cmd.strict = true
		case a == "--json":
			cmd.json = true
		default:
			rest = append(rest, a)
		}
	}
	return rest, cmd
}

// unknownFlag returns a usage error (exit 2) for the first unknown flag
// given to validate or list: a one-shot command's mistake is the person's
// at the terminal, who should see it, not a warning with a default.
func unknownFlag(cmd command, warnings []config.Warning) error {
	if cmd.name == "" {
		return nil
	}
	for _, w := range warnings {
		if w.UnknownFlag != "" {
			usage := "[--json] [source ...]"
			if cmd.name == "validate" {
				usage = "[--strict] " + usage
			}
			return &exitError{2, fmt.Errorf("%s: unknown flag %q (usage: skilljack-mcp %s %s; skilljack-mcp --help lists every flag)", cmd.name, w.UnknownFlag, cmd.name, usage)}
		}
	}
	return nil
}

// errDone is returned by the server goroutine when the client went away
// (stdin EOF), so that the errgroup cancels the actors; run filters it.
var errDone = errors.New("stdio session ended")

// usageFormat is the --help text; %s is the flags part, generated from
// the settings table by [config.FlagsUsage].
const usageFormat = `skilljack-mcp serves Agent Skills to MCP clients over stdio or HTTP.

Usage:
  skilljack-mcp [flags] [source ...]        serve skills (stdin/stdout speak MCP)
  skilljack-mcp validate [--strict] [--json] [source ...]
                                            report what is off in the skills, then exit:
                                            0 clean, 1 something is not served as written
                                            (--strict: any warning), 2 usage or I/O error
  skilljack-mcp list [--json] [source ...]  list the skills a client would be served: qualified
                                            name, skill path, source, files, bytes, warnings
  skilljack-mcp --version                   print the version
validate and list read GitHub and publisher sources from their caches only; they never fetch.

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
	red := newRedactor(getenv("GITHUB_TOKEN"), getenv("SKILLJACK_CLUSTER_TOKEN"))
	defer func() {
		if err != nil {
			err = redactedError{err, red}
		}
	}()
	args, cmd := commandFlags(args)
	loadOpts := config.LoadOptions{Args: args, Getenv: getenv, Home: getenv("HOME")}
	set, warnings, err := config.Load(loadOpts)
	if err != nil {
		err = fmt.Errorf("loading configuration: %w", err)
		if cmd.name != "" {
			return &exitError{2, err}
		}
		return err
	}
	if err := unknownFlag(cmd, warnings); err != nil {
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
	warned := newWarnLog()
	// Redaction is outermost: stderr and the warnings sent to clients see
	// records without secrets (issue 10: secrets).
	red = newRedactor(getenv("GITHUB_TOKEN"), set.Config.GitHub.Token, getenv("SKILLJACK_CLUSTER_TOKEN"), set.Cluster.Token)
	log := slog.New(redactHandler{warnTee{slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: set.LogLevel}), warned, nil}, red})
	clog := log.With("actor", "config")
	var refused []events.Diagnostic
	if cmd.name != "" {
		// A source's refusal is a finding of validate and list, not a log line.
		refused, warnings = actors.SourceDiagnostics(warnings)
	}
	for _, w := range warnings {
		clog.Warn(w.Message, w.Args...)
	}
	if set.Cluster.URL != "" && !set.HTTP && cmd.name == "" {
		return &exitError{2, errors.New("--cluster (SKILLJACK_CLUSTER_URL) needs the HTTP transport: add --http[=PORT]; a stdio server has one client and no replicas")}
	}
	if err := refusedSetting(warnings, cmd.name == ""); err != nil {
		return err
	}
	switch cmd.name {
	case "validate":
		return validate(ctx, set, refused, cmd, stdout, log)
	case "list":
		return list(ctx, set, refused, cmd, stdout, log)
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
	return serve(ctx, set, args, reload, stdin, stdout, log, warned)
}

// serve runs the bus, the actors, the facade and the chosen transport
// until ctx is done, the stdio client goes away or one of them fails. args
// are the command line, for the trace's first line; warned keeps the
// warnings logged, for MCP clients.
func serve(ctx context.Context, set config.Settings, args []string, reload func() (config.Config, error), stdin io.ReadCloser, stdout io.WriteCloser, log *slog.Logger, warned *warnLog) error {
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
	cl, err := joinCluster(set, log)
	if err != nil {
		return err
	}
	defer cl.close()
	facadeCatalogs, err := bus.Subscribe(subCtx, cl.servedTopic())
	if err != nil {
		return fmt.Errorf("subscribing the facade: %w", err)
	}
	facadeUpdates, err := bus.Subscribe(subCtx, events.TopicResourcesUpdated)
	if err != nil {
		return fmt.Errorf("subscribing the facade: %w", err)
	}
	// The config tools' answers and the configuration they show.
	facadeApplied, err := bus.Subscribe(subCtx, events.TopicConfigApplied)
	if err != nil {
		return fmt.Errorf("subscribing the facade: %w", err)
	}
	facadeViews, err := bus.Subscribe(subCtx, events.TopicConfigView)
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
		Cluster:        cl.pipelineOptions(),
	})
	if err != nil {
		return err
	}
	warnings, warningsAdded := warned.list, (<-chan struct{})(warned.added)
	if set.HTTP {
		// Stateless HTTP pushes nothing: stderr alone carries the warnings.
		warnings, warningsAdded = nil, nil
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
		WarningsAdded: warningsAdded,
		Trace:         rec,
		TraceRequests: set.TraceMCP,
		Roots:         set.Roots,
		Publisher:     pub,
		Files:         cl.fileSource(),
	})

	g.Go(func() error { return facade.Run(gctx, facadeCatalogs, facadeUpdates) })
	g.Go(func() error { return facade.RunConfig(gctx, facadeApplied, facadeViews) })
	g.Go(func() error { return pipeline.Run(gctx) })
	if set.HTTP {
		g.Go(func() error { return serveHTTP(gctx, facade, set, cl.health(), log) })
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
// the facade to send to each session ([mcpface.Options.Warnings]), and
// says on added when there are more ([mcpface.Options.WarningsAdded]).
type warnLog struct {
	mu    sync.Mutex
	msgs  []string
	more  int
	added chan struct{} // buffered 1: one pending signal stands for any number
}

func newWarnLog() *warnLog { return &warnLog{added: make(chan struct{}, 1)} }

// add keeps msg and signals added without blocking: the logger must never
// wait for the facade.
func (w *warnLog) add(msg string) {
	w.mu.Lock()
	if len(w.msgs) < maxWarnings {
		w.msgs = append(w.msgs, msg)
	} else {
		w.more++
	}
	w.mu.Unlock()
	select {
	case w.added <- struct{}{}:
	default:
	}
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
		t.w.add(b.String())
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
	tp := events.NewTracePublisher(bus, f, events.TraceRedact(newRedactor(set.Config.GitHub.Token, set.Cluster.Token).bytes))
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
	log.Info("serving skills over "+transport,
		"skills", n,
		"served", actors.Counts(cat, set.Config.Sources),
		"sources", strings.Join(sourceLocations(set.Config), ","),
		"version", buildVersion(),
		"tools", set.Tools,
		"catalog", set.Catalog,
		"static", set.Config.Static,
		"connect", connect)
}

// sourceLocations are the locations of cfg's sources in priority order,
// as given (the startup line's "sources").
func sourceLocations(cfg config.Config) []string {
	from := []string{}
	for _, s := range cfg.Sources {
		from = append(from, s.Location)
	}
	return from
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

// openNotice is how long serveHTTP waits for the first catalog before it
// says that the port is open but not serving yet (a cluster replica
// waiting for NATS): with --http=0 the port is known only from the log.
const openNotice = time.Second

// awaitFirstCatalog logs the start and "listening" lines once the facade
// serves its first catalog; if that takes over [openNotice], it first logs
// the URL with a line saying nothing is served yet. It returns nil when
// ctx is done first, and the server's error if it stops serving.
func awaitFirstCatalog(ctx context.Context, facade *mcpface.Facade, set config.Settings, url string, served <-chan error, log *slog.Logger) error {
	notice := time.NewTimer(openNotice)
	defer notice.Stop()
	for {
		select {
		case <-facade.Ready():
			logStart(log, facade.Catalog(), set, "http", "POST MCP requests to "+url)
			log.Info("listening", "url", url)
			return nil
		case <-notice.C:
			log.Info("port open; not serving until the first catalog (/healthz answers 503 meanwhile)", "url", url)
		case <-ctx.Done():
			return nil
		case err := <-served:
			return fmt.Errorf("serving HTTP: %w", err)
		}
	}
}

// serveHTTP serves the stateless Streamable HTTP transport until ctx is
// done, then shuts down gracefully: the listener closes at once and
// in-flight requests get httpShutdownGrace to finish.
func serveHTTP(ctx context.Context, facade *mcpface.Facade, set config.Settings, health func() mcpface.ClusterHealth, log *slog.Logger) error {
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
			Cluster:        health,
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
	if err := awaitFirstCatalog(ctx, facade, set, url, served, log); err != nil {
		return err
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

// scanOnce scans every source of set once for validate and list (remote
// ones from their caches). It returns an [exitError] with code 2 when no
// source was given; missing lists the local sources that are not folders
// (the caller reports what it can, then exits 2).
func scanOnce(ctx context.Context, set config.Settings, refused []events.Diagnostic, log *slog.Logger) (cat *events.Catalog, missing []string, err error) {
	cfg := set.Config
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
			return nil, nil, &exitError{2, noUsableSource(refused)}
		}
		return nil, nil, &exitError{2, fmt.Errorf("no skill folder given (pass one or more, set SKILLS_DIR, or list skillDirectories in %s)", cfg.ConfigPath)}
	}
	cat, err = actors.Validate(ctx, cfg, &hasher.Options{Bundled: actors.Bundled(), Logger: log,
		MaxFileSize: set.MaxFileSize, MaxSkillMDSize: set.MaxSkillMDSize})
	if err != nil {
		return nil, nil, &exitError{2, err}
	}
	// The sources refused come first, as the configuration is read first.
	cat = events.NewCatalog(cat.Version, cat.Static, cat.Skills, append(slices.Clone(refused), cat.Diagnostics...))
	return cat, missing, nil
}

// noUsableSource is the error of validate and list when every source
// given was refused: each refusal's reason, as no finding is printed.
func noUsableSource(refused []events.Diagnostic) error {
	if len(refused) == 0 {
		return errors.New("no usable source: every source given was skipped (see the warnings above)")
	}
	reasons := make([]string, len(refused))
	for i, d := range refused {
		reasons[i] = d.Message + " [" + d.Rule + "]"
	}
	return errors.New("no usable source: every source given was skipped: " + strings.Join(reasons, "; "))
}

// validateReport is the output of validate --json (issue 15).
type validateReport struct {
	// Sources are the configured sources, the bundled one last, each with
	// the number of skills it serves.
	Sources []sourceReport `json:"sources"`
	// Findings are every finding, in the order of the text output.
	Findings []actors.Finding `json:"findings"`
	Summary  validateSummary  `json:"summary"`
}

// sourceReport is one source of a [validateReport].
type sourceReport struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Prefix string `json:"prefix"`
	Root   string `json:"root"`
	Skills int    `json:"skills"`
}

// validateSummary counts what validate found, as its last text line does.
type validateSummary struct {
	// Skills are the skills served from the configured sources; Bundled
	// the ones embedded in the binary.
	Skills  int `json:"skills"`
	Bundled int `json:"bundled"`
	// Findings are errors and warnings; Unserved the ones that mean
	// something is not served as written; Skipped the skills skipped
	// (errors); Notes never fail.
	Findings int `json:"findings"`
	Unserved int `json:"unserved"`
	Skipped  int `json:"skipped"`
	Notes    int `json:"notes"`
	// Warnings are the findings that are warnings (--strict fails on one).
	Warnings int `json:"warnings"`
	// ExitCode is the code validate exits with.
	ExitCode int `json:"exit_code"`
}

// validate scans every source once and prints one line per finding to out,
// then a summary, or with --json one [validateReport]. It returns an
// [exitError] with code 2 when no skill folder was given or a local source
// does not exist, and with code 1 when something the sources hold is not
// served as written (an error, or a warning marked Unserved) or, with
// --strict, on any warning; notes never fail (issue 13 items 7 and 10).
func validate(ctx context.Context, set config.Settings, refused []events.Diagnostic, cmd command, out io.Writer, log *slog.Logger) error {
	cat, missing, err := scanOnce(ctx, set, refused, log)
	if err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	rep := validateReport{Findings: []actors.Finding{}, Sources: sourceReports(cat, set.Config.Sources)}
	sum := &rep.Summary
	for _, s := range cat.Skills {
		if s.Source.Kind == events.SourceBundled {
			sum.Bundled++
		} else {
			sum.Skills++
		}
	}
	for _, d := range cat.Diagnostics {
		f := actors.NewFinding(d)
		rep.Findings = append(rep.Findings, f)
		switch {
		case d.Level == events.LevelError:
			sum.Skipped++
		case d.Level == events.LevelNote:
			sum.Notes++
		default:
			sum.Warnings++
		}
		if f.Unserved && d.Level != events.LevelNote {
			sum.Unserved++
		}
	}
	sum.Findings = len(cat.Diagnostics) - sum.Notes
	var exit error
	switch {
	case len(missing) > 0:
		exit = &exitError{2, fmt.Errorf("validate: not a skill folder: %s", strings.Join(missing, ", "))}
	case sum.Skipped > 0:
		exit = &exitError{1, fmt.Errorf("validate: %d skill(s) skipped; %d finding(s) in all mean something is not served as written", sum.Skipped, sum.Unserved)}
	case sum.Unserved > 0:
		exit = &exitError{1, fmt.Errorf("validate: %d finding(s) mean something is not served as written", sum.Unserved)}
	case cmd.strict && sum.Warnings > 0:
		exit = &exitError{1, fmt.Errorf("validate --strict: %s", plural(sum.Warnings, "warning"))}
	}
	if ee, ok := exit.(*exitError); ok {
		sum.ExitCode = ee.code
	}
	if cmd.json {
		return errors.Join(writeJSON(out, rep), exit)
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(out, findingLine(f))
	}
	fmt.Fprintf(out, "%s served (%s), %s (%d not served as written), %d skipped, %s\n", plural(len(cat.Skills), "skill"),
		actors.Counts(cat, set.Config.Sources), plural(sum.Findings, "finding"), sum.Unserved, sum.Skipped, plural(sum.Notes, "note"))
	return exit
}

// sourceReports returns the sources of a report, each with its skill count.
func sourceReports(cat *events.Catalog, sources []events.Source) []sourceReport {
	n := map[string]int{}
	for _, s := range cat.Skills {
		n[s.Source.ID]++
	}
	out := make([]sourceReport, 0, len(sources))
	for _, src := range sources {
		out = append(out, sourceReport{Source: src.Location, Kind: string(src.Kind), Prefix: src.Prefix, Root: src.Root, Skills: n[src.ID]})
	}
	return out
}

// listReport is the output of list --json (issue 15).
type listReport struct {
	// Skills are what a client would be served, in URI (skills/list) order.
	Skills []actors.ListedSkill `json:"skills"`
	// Findings are the findings about no served skill: skipped skills,
	// sources, the configuration.
	Findings []actors.Finding `json:"findings"`
}

// list prints the skills a client would be served (remote sources from
// their caches): a table of qualified name, files, bytes, source and skill
// path, each skill's warnings indented below it, then the findings about
// no served skill; with --json one [listReport]. It exits 0, or 2 (after
// printing) as validate does on a usage or I/O problem; findings do not
// fail (validate is the check).
func list(ctx context.Context, set config.Settings, refused []events.Diagnostic, cmd command, out io.Writer, log *slog.Logger) error {
	cat, missing, err := scanOnce(ctx, set, refused, log)
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	var exit error
	if len(missing) > 0 {
		exit = &exitError{2, fmt.Errorf("list: not a skill folder: %s", strings.Join(missing, ", "))}
	}
	skills, other := actors.List(cat)
	if cmd.json {
		return errors.Join(writeJSON(out, listReport{Skills: skills, Findings: other}), exit)
	}
	// Columns are padded by hand, not with text/tabwriter, so that the
	// warning lines below a skill do not widen them.
	rows := [][]string{{"QUALIFIED NAME", "FILES", "BYTES", "SOURCE", "SKILL PATH"}}
	for _, s := range skills {
		rows = append(rows, []string{s.QualifiedName, strconv.Itoa(s.Files), strconv.FormatInt(s.Bytes, 10), s.Source, s.SkillPath})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	for i, r := range rows {
		fmt.Fprintf(out, "%-*s  %*s  %*s  %-*s  %s\n", width[0], r[0], width[1], r[1], width[2], r[2], width[3], r[3], r[4])
		if i == 0 {
			continue
		}
		for _, f := range skills[i-1].Warnings {
			fmt.Fprintln(out, "    "+findingLine(f))
		}
	}
	for _, f := range other {
		fmt.Fprintln(out, findingLine(f))
	}
	fmt.Fprintf(out, "%s served (%s)\n", plural(len(skills), "skill"), actors.Counts(cat, set.Config.Sources))
	return exit
}

// findingLine is the text line of one finding, as validate and list print
// it: "LEVEL file: reason [rule]".
func findingLine(f actors.Finding) string {
	line := strings.ToUpper(f.Level) + " " + f.File + ": " + f.Reason
	if f.Rule != "" {
		line += " [" + f.Rule + "]"
	}
	return line
}

// writeJSON writes v to out as indented JSON with a final newline, HTML
// characters unescaped.
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return &exitError{2, fmt.Errorf("writing JSON: %w", err)}
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

// refusedSetting returns a usage error (exit 2) for the first warning about
// a setting that refuses an unusable value ([config.Setting.Refuse]: the
// cluster URL, name and lease), when the server is about to serve
// (serving); nil otherwise. A mistyped cluster name must not join the
// default cluster and replace its catalog, nor an empty --cluster= start a
// replica on its own (issue 16).
func refusedSetting(warnings []config.Warning, serving bool) error {
	if !serving {
		return nil
	}
	for _, w := range warnings {
		if w.Refuse {
			return &exitError{2, errors.New(w.Message)}
		}
	}
	return nil
}
