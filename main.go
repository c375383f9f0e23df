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
// It is wiring only: it parses flags and environment, builds the stderr
// logger and the bus, subscribes every inbox, starts the actors (config,
// watcher, remote fetchers, hasher, catalog builder, notifier) and the MCP
// facade in one errgroup, and
// shuts them down together when stdin closes or a signal arrives. See
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
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"golang.org/x/sync/errgroup"

	"github.com/skilljack/skilljack-mcp/actors"
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
		os.Exit(1)
	}
}

// errDone is returned by the server goroutine when the client went away
// (stdin EOF), so that the errgroup cancels the actors; run filters it.
var errDone = errors.New("stdio session ended")

// settings is everything the command line and environment decide.
type settings struct {
	validate    bool
	dirs        []string
	static      *bool // --static; nil when not given
	tools       string
	catalogMode string
	trace       string
	maxFileSize int64
	maxSkillMD  int64         // cap of a SKILL.md, bytes
	reconcile   time.Duration // watcher's periodic rescan; negative disables
	http        bool          // serve stateless Streamable HTTP instead of stdio
	httpPort    int           // 0 picks a free port
	httpHost    string
	httpOrigins []string // extra allowed Origins
	httpMaxConc int      // requests handled at once; 0 means mcpface.DefaultMaxConcurrent
	logLevel    slog.Level
	showVersion bool
	showHelp    bool
}

// Defaults, as in the TypeScript reference.
const (
	defaultTools       = "auto"
	defaultCatalogMode = "instructions"
	defaultMaxFileMB   = 1
	defaultMaxSkillMB  = actors.DefaultMaxSkillMDSize >> 20
	// defaultReconcileMS is the watcher's safety-net rescan period
	// (actors.DefaultReconcile): file events can be dropped, a rescan with a
	// warm digest cache costs a directory walk.
	defaultReconcileMS = 60000
	defaultHTTPPort    = 3000
	defaultHTTPHost    = "127.0.0.1"
)

// isTrue reads the reference's boolean env values: true, 1 or yes, in any
// case.
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// parseArgs reads args and the environment. It never fails: unknown flags and
// values are reported in warnings and fall back to defaults, as in the
// reference. Flags are one token (--tools=never); any argument not starting
// with "-" is a skill directory (comma lists allowed).
func parseArgs(args []string, getenv func(string) string) (settings, []string) {
	s := settings{logLevel: slog.LevelInfo}
	var warnings []string
	var toolsFlag, catalogFlag, traceFlag, reconcileFlag, httpFlag, hostFlag, originsFlag, skillMDFlag, maxConcFlag string
	httpGiven := false
	if len(args) > 0 && args[0] == "validate" {
		s.validate = true
		args = args[1:]
	}
	flagsDone := false
	for _, a := range args {
		name, value, hasValue := strings.Cut(a, "=")
		switch {
		case flagsDone || !strings.HasPrefix(a, "-"):
			s.dirs = append(s.dirs, a)
		case a == "--":
			flagsDone = true // everything after it is a skill directory
		case name == "--static":
			if !hasValue {
				on := true
				s.static = &on
				break
			}
			b, err := strconv.ParseBool(value)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: want true or false; ignored", a))
				break
			}
			s.static = &b
		case name == "--tools" || name == "--catalog" || name == "--trace":
			if !hasValue || value == "" {
				warnings = append(warnings, fmt.Sprintf("flag %s needs a value in the same argument (%s=VALUE); ignored", name, name))
				break
			}
			switch name {
			case "--tools":
				toolsFlag = value
			case "--catalog":
				catalogFlag = value
			case "--trace":
				traceFlag = value
			}
		case name == "--version" || name == "-v":
			s.showVersion = true
		case name == "--help" || name == "-h":
			s.showHelp = true
		case name == "--reconcile-interval-ms":
			reconcileFlag = value
			if !hasValue || value == "" {
				warnings = append(warnings, fmt.Sprintf("flag %s needs a value in the same argument (%s=MS); ignored", name, name))
			}
		case name == "--max-skill-md-mb":
			skillMDFlag = value
			if !hasValue || value == "" {
				warnings = append(warnings, fmt.Sprintf("flag %s needs a value in the same argument (%s=MB); ignored", name, name))
			}
		case name == "--verbose" && !hasValue:
			s.logLevel = slog.LevelDebug
		case name == "--http":
			httpGiven, httpFlag = true, value
			if hasValue && value == "" {
				warnings = append(warnings, "flag --http= needs a port (--http=3000, --http=0 for a free one); using the default")
			}
		case name == "--http-host" && hasValue:
			hostFlag = value
		case name == "--http-allowed-origins" && hasValue:
			originsFlag = value
		case name == "--http-max-concurrent" && hasValue:
			maxConcFlag = value
		default:
			warnings = append(warnings, fmt.Sprintf("unknown flag %q ignored", a))
		}
	}

	s.tools = pickEnum("--tools", toolsFlag, "SKILLJACK_TOOLS", getenv("SKILLJACK_TOOLS"), defaultTools,
		[]string{"auto", "always", "never"}, &warnings)
	s.catalogMode = pickEnum("--catalog", catalogFlag, "SKILLJACK_CATALOG", getenv("SKILLJACK_CATALOG"), defaultCatalogMode,
		[]string{"instructions", "tool-description"}, &warnings)
	if s.catalogMode == "tool-description" {
		warnings = append(warnings, "--catalog=tool-description is the legacy catalog channel: clients with tool search may never see the catalog; the default is instructions")
	}
	s.trace = traceFlag
	if s.trace == "" {
		s.trace = getenv("SKILLJACK_TRACE")
	}

	s.maxFileSize = megabytesSetting("MAX_FILE_SIZE_MB", getenv("MAX_FILE_SIZE_MB"), defaultMaxFileMB, &warnings)
	s.maxSkillMD = megabytesSetting("MAX_SKILL_MD_MB", getenv("MAX_SKILL_MD_MB"), defaultMaxSkillMB, &warnings)
	if skillMDFlag != "" {
		s.maxSkillMD = megabytesSetting("--max-skill-md-mb", skillMDFlag, defaultMaxSkillMB, &warnings)
	}
	s.reconcile = time.Duration(defaultReconcileMS) * time.Millisecond
	for _, c := range []struct{ name, val string }{{"--reconcile-interval-ms", reconcileFlag}, {"SKILLJACK_RECONCILE_INTERVAL_MS", getenv("SKILLJACK_RECONCILE_INTERVAL_MS")}} {
		v := strings.TrimSpace(c.val)
		if v == "" {
			continue
		}
		ms, err := strconv.Atoi(v)
		switch {
		case err != nil || ms < 0:
			warnings = append(warnings, fmt.Sprintf("%s=%q is not a number of milliseconds >= 0; using %d", c.name, c.val, defaultReconcileMS))
		case ms == 0:
			s.reconcile = -1 // disabled
		default:
			s.reconcile = time.Duration(ms) * time.Millisecond
		}
		break
	}
	// HTTP: --http[=port] > SKILLJACK_HTTP_PORT > SKILLJACK_HTTP=true (port
	// 3000), as in the reference.
	s.httpPort = defaultHTTPPort
	envPort := strings.TrimSpace(getenv("SKILLJACK_HTTP_PORT"))
	switch {
	case httpGiven && httpFlag != "":
		p, err := strconv.Atoi(httpFlag)
		if err != nil || p < 0 || p > 65535 {
			warnings = append(warnings, fmt.Sprintf("--http=%s is not a port number; using %d", httpFlag, defaultHTTPPort))
		} else {
			s.httpPort = p
		}
		s.http = true
	case envPort != "":
		p, err := strconv.Atoi(envPort)
		if err != nil || p <= 0 || p > 65535 {
			warnings = append(warnings, fmt.Sprintf("SKILLJACK_HTTP_PORT=%q is not a port number > 0; using %d", envPort, defaultHTTPPort))
		} else {
			s.httpPort = p
		}
		s.http = true
	case httpGiven || isTrue(getenv("SKILLJACK_HTTP")):
		s.http = true
	}
	s.httpHost = defaultHTTPHost
	for _, h := range []string{hostFlag, getenv("SKILLJACK_HTTP_HOST")} {
		if h = strings.TrimSpace(h); h != "" {
			s.httpHost = h
			break
		}
	}
	origins := originsFlag
	if origins == "" {
		origins = getenv("SKILLJACK_HTTP_ALLOWED_ORIGINS")
	}
	for _, o := range strings.Split(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			s.httpOrigins = append(s.httpOrigins, o)
		}
	}
	s.httpMaxConc = pickMaxConcurrent(maxConcFlag, getenv("SKILLJACK_HTTP_MAX_CONCURRENT"), &warnings)
	if v := getenv("SKILLJACK_LOG_LEVEL"); v != "" {
		if err := s.logLevel.UnmarshalText([]byte(v)); err != nil {
			warnings = append(warnings, fmt.Sprintf("SKILLJACK_LOG_LEVEL=%q is not debug, info, warn or error; using info", v))
			s.logLevel = slog.LevelInfo
		}
	}
	return s, warnings
}

// megabytesSetting reads a size in MiB (fractions allowed) given as name=v
// and returns it in bytes; empty means def, and anything but a positive
// number warns and means def.
func megabytesSetting(name, v string, def int64, warnings *[]string) int64 {
	v = strings.TrimSpace(v)
	if v == "" {
		return def << 20
	}
	mb, err := strconv.ParseFloat(v, 64)
	if err != nil || mb <= 0 || mb >= 1<<40 {
		*warnings = append(*warnings, fmt.Sprintf("%s=%q is not a positive number; using %d", name, v, def))
		return def << 20
	}
	return max(int64(mb*(1<<20)), 1)
}

// pickMaxConcurrent returns the flag value, else the env value, of the HTTP
// concurrency bound: a whole number > 0. A bad value warns and falls through
// to the next choice; 0 means the default.
func pickMaxConcurrent(flagVal, envVal string, warnings *[]string) int {
	for _, c := range []struct{ name, val string }{{"--http-max-concurrent", flagVal}, {"SKILLJACK_HTTP_MAX_CONCURRENT", envVal}} {
		v := strings.TrimSpace(c.val)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			*warnings = append(*warnings, fmt.Sprintf("%s=%q is not a whole number > 0; using %d (4 per CPU)", c.name, c.val, mcpface.DefaultMaxConcurrent()))
			continue
		}
		return n
	}
	return 0
}

// pickEnum returns the flag value, else the env value, else def, each
// compared case-insensitively against allowed; an unknown value warns and
// falls through to the next choice.
func pickEnum(flagName, flagVal, envName, envVal, def string, allowed []string, warnings *[]string) string {
	for _, c := range []struct{ name, val string }{{flagName, flagVal}, {envName, envVal}} {
		v := strings.ToLower(strings.TrimSpace(c.val))
		if v == "" {
			continue
		}
		for _, a := range allowed {
			if v == a {
				return a
			}
		}
		*warnings = append(*warnings, fmt.Sprintf("%s=%q is not one of %s; using %s", c.name, c.val, strings.Join(allowed, ", "), def))
		return def
	}
	return def
}

const usage = `skilljack-mcp serves Agent Skills to MCP clients over stdio or HTTP.

Usage:
  skilljack-mcp [flags] [source ...]        serve skills (stdin/stdout speak MCP)
  skilljack-mcp validate [source ...]       report what is off in the skills, then exit

A source is a skill folder, a GitHub repository (github.com/owner/repo[/subpath][@ref];
allowlist its owner with GITHUB_ALLOWED_ORGS or GITHUB_ALLOWED_USERS) or a publisher
(https://host/.well-known/agent-skills/; allowlist its origin with WELL_KNOWN_ALLOWED_ORIGINS).

Flags:
  --tools=auto|always|never                 offer load-skill/skill-resource (env SKILLJACK_TOOLS)
  --catalog=instructions|tool-description   where the skill catalog goes (env SKILLJACK_CATALOG)
  --static                                  fix the skill set at startup (env SKILLJACK_STATIC)
  --http[=PORT]                             serve stateless HTTP at POST /mcp instead of stdio; 0 = free port
                                            (env SKILLJACK_HTTP_PORT, SKILLJACK_HTTP=true for port 3000)
  --http-host=HOST                          address to bind (default 127.0.0.1; env SKILLJACK_HTTP_HOST)
  --http-allowed-origins=O1,O2              browser Origins allowed besides localhost (env SKILLJACK_HTTP_ALLOWED_ORIGINS)
  --http-max-concurrent=N                   HTTP requests handled at once, more wait or get 503 (default 4 per CPU;
                                            env SKILLJACK_HTTP_MAX_CONCURRENT)
  --trace=FILE                              record every bus event as JSON lines (env SKILLJACK_TRACE)
  --reconcile-interval-ms=MS                rescan period behind the file watcher, 0 = off (env SKILLJACK_RECONCILE_INTERVAL_MS)
  --max-skill-md-mb=MB                      largest SKILL.md read; a larger one skips its skill (default 4; env MAX_SKILL_MD_MB)
  --verbose                                 debug logging (env SKILLJACK_LOG_LEVEL)
  --                                        every later argument is a skill directory
  --version, --help

See README.md for every environment variable and the config file.
`

// run is the whole program; main only maps its error to the exit code.
func run(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer, getenv func(string) string) error {
	set, warnings := parseArgs(args, getenv)
	// --help and --version answer a person at a terminal, not an MCP client,
	// so they go to stdout like any other command's.
	if set.showHelp {
		fmt.Fprint(stdout, usage)
		return nil
	}
	if set.showVersion {
		fmt.Fprintln(stdout, "skilljack-mcp", buildVersion())
		return nil
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: set.logLevel}))
	for _, w := range warnings {
		log.Warn(w)
	}

	cfgOpts := actors.ConfigOptions{
		Args:   set.dirs,
		Getenv: getenv,
		Home:   getenv("HOME"),
		Static: set.static,
		Logger: log.With("actor", "config"),
	}
	cfg, err := actors.LoadConfig(cfgOpts)
	if err != nil {
		return fmt.Errorf("loading configuration: %w", err)
	}
	bundled := actors.Bundled()
	if set.validate {
		return validate(ctx, cfg, set, stdout, log)
	}

	bus := events.NewBus(log)
	defer bus.Close()
	var pub message.Publisher = bus
	if set.trace != "" {
		f, err := events.CreateTraceFile(set.trace)
		if err != nil {
			return fmt.Errorf("opening trace file: %w", err)
		}
		tp := events.NewTracePublisher(bus, f)
		defer f.Close()
		defer tp.Close()
		pub = tp
	}

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
	pipeline, err := actors.NewPipeline(subCtx, bus, pub, cfg, &actors.PipelineOptions{
		Bundled: bundled,
		Watch:   true,
		Watcher: actors.WatcherOptions{Reconcile: set.reconcile},
		Logger:  log,
		// The config file is watched and config commands applied while
		// running: each change works the configuration out again as here.
		Reload: func() (actors.Config, error) { return actors.LoadConfig(cfgOpts) },
		// Files over the caps are never read, hashed or listed (issue 10 F4).
		MaxFileSize:    set.maxFileSize,
		MaxSkillMDSize: set.maxSkillMD,
	})
	if err != nil {
		return err
	}
	facade := mcpface.New(&mcpface.Options{
		Version:     buildVersion(),
		Tools:       set.tools,
		CatalogMode: set.catalogMode,
		Static:      cfg.Static,
		MaxFileSize: set.maxFileSize,
		Bundled:     bundled,
		Logger:      log,
	})

	g.Go(func() error { return facade.Run(gctx, facadeCatalogs, facadeUpdates) })
	g.Go(func() error { return pipeline.Run(gctx) })
	if set.http {
		g.Go(func() error { return serveHTTP(gctx, facade, cfg, set, log) })
	} else {
		g.Go(func() error {
			srv, err := facade.Server(gctx)
			if err != nil {
				return nil // cancelled before the first catalog
			}
			logStart(log, facade.Catalog(), cfg, set, "stdio", "add to a client as a stdio server, e.g. claude mcp add skilljack -- skilljack-mcp <skill-dir> (see README)")
			t := mcpface.NewStdioTransport(stdin, stdout, log)
			if err := srv.Run(gctx, t); err != nil && gctx.Err() == nil {
				return fmt.Errorf("serving stdio: %w", err)
			}
			return errDone
		})
	}
	err = g.Wait()
	if errors.Is(err, errDone) || (err == nil && ctx.Err() != nil) {
		return nil
	}
	return err
}

// logStart writes the one startup line: how many skills from where, the
// effective configuration, and how to connect.
func logStart(log *slog.Logger, cat *events.Catalog, cfg actors.Config, set settings, transport, connect string) {
	n := 0
	if cat != nil {
		n = len(cat.Skills)
	}
	var from []string
	for _, s := range cfg.Sources {
		from = append(from, s.Location)
	}
	log.Info("serving skills over "+transport,
		"skills", n,
		"sources", strings.Join(from, ","),
		"version", buildVersion(),
		"tools", set.tools,
		"catalog", set.catalogMode,
		"static", cfg.Static,
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
func serveHTTP(ctx context.Context, facade *mcpface.Facade, cfg actors.Config, set settings, log *slog.Logger) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(set.httpHost, strconv.Itoa(set.httpPort)))
	if err != nil {
		return fmt.Errorf("listening for HTTP: %w", err)
	}
	loopback := isLoopbackHost(set.httpHost)
	if !loopback {
		log.Warn("HTTP is bound to a non-loopback address: anyone who can reach it can read every served skill; put it behind authentication", "host", set.httpHost)
	}
	srv := &http.Server{
		Handler: facade.HTTPHandler(&mcpface.HTTPOptions{
			Loopback:       loopback,
			AllowedOrigins: set.httpOrigins,
			MaxConcurrent:  set.httpMaxConc,
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
		logStart(log, facade.Catalog(), cfg, set, "http", "POST MCP requests to "+url)
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

// validate scans every source once and prints one line per finding to out.
// It returns an error when no skill folder was given, when a local source
// does not exist, or when some skill was skipped.
func validate(ctx context.Context, cfg actors.Config, set settings, out io.Writer, log *slog.Logger) error {
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
			return errors.New("validate: no usable source: every source given was skipped (see the warnings above)")
		}
		return errors.New("validate: no skill folder given (pass one or more, or set SKILLS_DIR)")
	}
	cat, err := actors.Validate(ctx, cfg, &actors.HasherOptions{Bundled: actors.Bundled(), Logger: log,
		MaxFileSize: set.maxFileSize, MaxSkillMDSize: set.maxSkillMD})
	if err != nil {
		return err
	}
	skipped := 0
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
		fmt.Fprintf(out, "%s %s: %s%s\n", strings.ToUpper(d.Level), d.File, msg, rule)
		if d.Level == events.LevelError {
			skipped++
		}
	}
	fmt.Fprintf(out, "%s served, %s, %d skipped\n", plural(len(cat.Skills), "skill"), plural(len(cat.Diagnostics), "finding"), skipped)
	switch {
	case len(missing) > 0:
		return fmt.Errorf("validate: not a skill folder: %s", strings.Join(missing, ", "))
	case skipped > 0:
		return fmt.Errorf("%d skill(s) skipped", skipped)
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
