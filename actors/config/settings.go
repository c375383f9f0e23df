package config

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of the local serving settings. The hasher and the watcher
// take theirs from here ([hasher.DefaultMaxFileSize] and
// [watch.DefaultReconcile] are these constants), so the settings table and
// the actors cannot disagree.
const (
	// DefaultMaxFileSize is the reference server's MAX_FILE_SIZE_MB default
	// (1 MiB): the largest supporting file served, so the largest hashed.
	DefaultMaxFileSize = 1 << 20
	// DefaultMaxSkillMDSize caps a SKILL.md (MAX_SKILL_MD_MB). Its bytes are
	// kept in memory by the scan and the catalog and sent whole by
	// load-skill; real ones are a few KiB, the specification recommends
	// under 500 lines, so 4 MiB leaves ample room and bounds memory.
	DefaultMaxSkillMDSize = 4 << 20
	// DefaultReconcile is the period of the watcher's safety-net rescan of
	// every watched root (SKILLJACK_RECONCILE_INTERVAL_MS). Events are
	// lost when inotify's kernel queue overflows (the watcher rescans
	// then, but notify outside Linux drops such losses silently) and when
	// a registration's channel is full; a rescan a minute costs a
	// directory walk and a stat per file (the hasher's digest cache skips
	// unchanged files), which is cheap at that period.
	DefaultReconcile = 60 * time.Second
)

// Settings is the effective configuration of one start: the command line,
// the environment and the config file, each setting read through the one
// table [SettingsTable].
type Settings struct {
	// Validate is true for the validate subcommand.
	Validate bool
	// Help and Version are --help/-h and --version (-v is --verbose: it
	// must not make a server exit under a host, issue 13 item 8).
	Help, Version bool
	// Tools is --tools / SKILLJACK_TOOLS: auto, always or never.
	Tools string
	// Catalog is --catalog / SKILLJACK_CATALOG: instructions or
	// tool-description.
	Catalog string
	// CatalogBudget is --catalog-budget / SKILLJACK_CATALOG_BUDGET: the
	// most characters of the <available_skills> list (issue 13 item 6).
	CatalogBudget int
	// Roots is --roots / SKILLJACK_ROOTS: auto or off (issue 13 item 14).
	Roots string
	// Trace is --trace / SKILLJACK_TRACE; "" records nothing.
	Trace string
	// TraceMCP is --trace-mcp / SKILLJACK_TRACE_MCP: the trace also records
	// every MCP request (issue 13 item 13).
	TraceMCP bool
	// MaxFileSize caps a supporting file, in bytes (MAX_FILE_SIZE_MB).
	MaxFileSize int64
	// MaxSkillMDSize caps a SKILL.md, in bytes (--max-skill-md-mb,
	// MAX_SKILL_MD_MB).
	MaxSkillMDSize int64
	// Reconcile is the watcher's periodic rescan
	// (--reconcile-interval-ms); negative disables it.
	Reconcile time.Duration
	// HTTP is true when stateless HTTP is served instead of stdio: --http,
	// SKILLJACK_HTTP_PORT or SKILLJACK_HTTP.
	HTTP bool
	// HTTPPort is the port to bind; 0 picks a free one.
	HTTPPort int
	// HTTPHost is the address to bind.
	HTTPHost string
	// HTTPOrigins are browser Origins allowed besides localhost.
	HTTPOrigins []string
	// HTTPMaxConcurrent bounds the requests handled at once; 0 means the
	// facade's default.
	HTTPMaxConcurrent int
	// LogLevel is the stderr log level.
	LogLevel slog.Level
	// Cluster is the cluster mode (issue 16); its zero URL is off.
	Cluster Cluster
	// Config is what the actors need: sources, static mode, overrides and
	// the remote settings.
	Config Config

	// The raw values the derived parts of Config are built from.
	dirs         []string
	activeSource string
	httpEnv      bool
	httpPort     int
	httpPortSet  bool
	static       bool
	ghOrgs       []string
	ghUsers      []string
	wkOrigins    []string
	cacheDir     string
}

// Warning is one problem with the configuration, logged by the caller as
// Warn(Message, Args...). Args never hold a secret.
type Warning struct {
	Message string
	Args    []any
	// Source is the source entry as written that the warning is about, ""
	// when it is about no one source.
	Source string
	// Rule is the project rule ID the warning cites ([events.Rules]), ""
	// for none. A warning citing [events.RuleSourceRefused] refuses Source.
	Rule string
	// UnknownFlag is the flag the warning says is unknown, "" otherwise:
	// validate and list refuse it as a usage error.
	UnknownFlag string
	// Refuse is set when the value is of a [Setting.Refuse] setting: the
	// server does not start (exit 2) rather than use the default.
	Refuse bool
}

// Tables of the README a [Setting] is listed in.
const (
	TableServe  = "serve"  // "Configuration": flags and their variables
	TableRemote = "remote" // "Remote sources": variables and config keys
)

// Setting is one row of [SettingsTable]: where a value may come from, its
// default, how it is read, and its documentation. A value is taken from
// the first place that sets it: the flag, then each variable of Env in
// order, then the config file's key, then Default. A value that cannot be
// read warns and means the default (or, with fallThrough, the next place).
type Setting struct {
	// Flag is the command-line flag ("--tools"), "" for none. Flags are one
	// token: --tools=never.
	Flag string
	// Alias is a short form of Flag ("-h"), "" for none.
	Alias string
	// Arg names the flag's value in docs ("auto|always|never"); "" for a
	// flag without a value.
	Arg string
	// Optional flags may be given without "=VALUE"; the bare flag means
	// Implied (--static means "true", --verbose "debug").
	Optional bool
	// Implied is the value of the bare flag.
	Implied string
	// Env are the environment variables, in priority order.
	Env []string
	// FileKey is the key in ~/.skilljack/config.json, "" for none.
	FileKey string
	// Default is the value when nothing sets it, in the setting's own
	// syntax; it is read with the same parser as any other value.
	Default string
	// DefaultDoc is the README's default, when it is not Default itself.
	DefaultDoc string
	// FlagDoc and EnvDoc are the README's flag and variable cells, when
	// they are not derived from Flag/Arg and Env.
	FlagDoc, EnvDoc string
	// Doc is the README's meaning column.
	Doc string
	// Usage is the --help line; "" leaves the flag out of --help.
	Usage string
	// Table names the README table listing the setting; "" for none.
	Table string
	// Secret values are never quoted in a warning.
	Secret bool
	// Refuse makes an unusable value a refusal to start ([Warning.Refuse])
	// instead of the default: where a default would quietly do harm (a
	// mistyped --cluster-name joining the default cluster, issue 16).
	Refuse bool

	parse       parser
	set         func(*Settings, any, origin)
	fallThrough bool // an unreadable value falls through to the next place
	positional  bool // the positional arguments are this setting's flag
}

// origin is where a value came from.
type origin int

const (
	fromDefault origin = iota
	fromFlag
	fromEnv
	fromFile
)

// raw is one candidate value of a setting.
type raw struct {
	name   string   // "--tools", "SKILLJACK_TOOLS", "staticMode"
	text   string   // as given
	list   []string // positional arguments or a config file list
	origin origin
}

// parser reads a raw value; problem is a phrase ("is not a number of
// milliseconds >= 0") when it cannot, and then v is ignored. A parser may
// return a value and a problem (a value clamped to its minimum).
type parser interface {
	parse(r raw) (v any, problem string)
	// empty reports whether r sets nothing (a blank variable).
	empty(r raw) bool
}

// SettingsTable returns every setting skilljack reads, in README order.
// The caller owns the slice.
func SettingsTable() []Setting {
	return slices.Concat(sourceSettings(), serverSettings(), clusterSettings(), remoteSettings())
}

// sourceSettings are the settings of what is served and how it is shown:
// sources, static mode, tools, catalog, client roots.
func sourceSettings() []Setting {
	return []Setting{
		{positional: true, FlagDoc: "`[dir ...]` (positional; comma lists allowed)", Env: []string{"SKILLS_DIR"}, EnvDoc: "`SKILLS_DIR` (comma list)",
			FileKey: "skillDirectories", DefaultDoc: "config `skillDirectories`, else none", Table: TableServe,
			Doc:   "skill folders (or GitHub repositories, publishers) to serve, each optionally `name=source` to fix its prefix; the bundled skill is always added",
			parse: listParser{}, set: setDirs},
		{Flag: "--static", Optional: true, Implied: "true", FlagDoc: "`--static` (or `--static=false`)", Env: []string{"SKILLJACK_STATIC"}, EnvDoc: "`SKILLJACK_STATIC=true\\|1\\|yes`",
			FileKey: "staticMode", Default: "false", DefaultDoc: "config `staticMode`, else off", Table: TableServe,
			Doc:   "fix the skill set at startup; `tools`/`prompts` `listChanged` become false",
			Usage: "fix the skill set at startup",
			parse: boolParser{}, set: to(func(s *Settings) *bool { return &s.static })},
		{Flag: "--tools", Arg: "auto|always|never", Env: []string{"SKILLJACK_TOOLS"}, Default: "auto", Table: TableServe,
			Doc:   "offer `load-skill` and `skill-resource`; `auto` hides them from clients that declare the skills extension",
			Usage: "offer load-skill/skill-resource",
			parse: enumParser{"auto", "always", "never"}, set: to(func(s *Settings) *string { return &s.Tools })},
		{Flag: "--catalog", Arg: "instructions|tool-description", Env: []string{"SKILLJACK_CATALOG"}, Default: "instructions", Table: TableServe,
			Doc:   "where the `<available_skills>` catalog goes: server `instructions`, or the `load-skill` description (legacy) — never both",
			Usage: "where the skill catalog goes",
			parse: enumParser{"instructions", "tool-description"}, set: to(func(s *Settings) *string { return &s.Catalog })},
		{Flag: "--catalog-budget", Arg: "CHARS", Env: []string{"SKILLJACK_CATALOG_BUDGET"}, Default: "16000", Table: TableServe,
			Doc:   "most characters of the `<available_skills>` list in `instructions` and in the `skill` prompt's (or `load-skill`'s) description: over it, descriptions are shortened, then only names are listed, with one line saying where to see the rest, and one warning",
			Usage: "most characters of the skill catalog",
			parse: countParser{}, set: to(func(s *Settings) *int { return &s.CatalogBudget })},
		{Flag: "--roots", Arg: "auto|off", Env: []string{"SKILLJACK_ROOTS"}, Default: RootsAuto, Table: TableServe,
			Doc: "stdio only: ask a client that declares `roots` for its workspace roots and serve each root's `.claude/skills`, `.agents/skills` and `skills` beside the configured sources, " +
				"prefixed by the root's folder name, re-read on `notifications/roots/list_changed` (on 2026-07-28, asked with the first `tools/call`, `prompts/get` or `resources/read` after a change); never saved; off with `--static`",
			Usage: "serve the skill folders of the client's workspace roots",
			parse: enumParser{RootsAuto, RootsOff}, set: to(func(s *Settings) *string { return &s.Roots })},
	}
}

// serverSettings are the settings of the transport, tracing, size caps and
// logging.
func serverSettings() []Setting {
	return []Setting{
		{Flag: "--http", Arg: "PORT", Optional: true, FlagDoc: "`--http[=PORT]`", Env: []string{"SKILLJACK_HTTP_PORT"}, EnvDoc: "`SKILLJACK_HTTP_PORT=PORT`",
			Default: strconv.Itoa(DefaultHTTPPort), DefaultDoc: "off (stdio); port 3000", Table: TableServe,
			Doc:   "serve stateless HTTP at `POST /mcp` instead of stdio; `--http=0` picks a free port. Port priority: `--http=PORT` > `SKILLJACK_HTTP_PORT` > 3000",
			Usage: "serve stateless HTTP at POST /mcp instead of stdio; 0 = free port, SKILLJACK_HTTP=true means 3000",
			parse: portParser{}, set: setHTTPPort},
		{Env: []string{"SKILLJACK_HTTP"}, EnvDoc: "`SKILLJACK_HTTP=true\\|1\\|yes`", Default: "false", DefaultDoc: "off", Table: TableServe,
			Doc:   "serve HTTP on port 3000 (`--http=PORT` and `SKILLJACK_HTTP_PORT` choose another)",
			parse: boolParser{}, set: to(func(s *Settings) *bool { return &s.httpEnv })},
		{Flag: "--http-host", Arg: "HOST", Env: []string{"SKILLJACK_HTTP_HOST"}, Default: DefaultHTTPHost, Table: TableServe,
			Doc:   "address to bind; a non-loopback one logs a warning",
			Usage: "address to bind",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.HTTPHost })},
		{Flag: "--http-allowed-origins", Arg: "O1,O2", Env: []string{"SKILLJACK_HTTP_ALLOWED_ORIGINS"}, DefaultDoc: "none", Table: TableServe,
			Doc:   "browser `Origin`s allowed besides localhost",
			Usage: "browser Origins allowed besides localhost",
			parse: listParser{}, set: to(func(s *Settings) *[]string { return &s.HTTPOrigins })},
		{Flag: "--http-max-concurrent", Arg: "N", Env: []string{"SKILLJACK_HTTP_MAX_CONCURRENT"}, DefaultDoc: "4 × CPUs (`GOMAXPROCS`)", Table: TableServe,
			Doc:   "HTTP requests handled at once; more wait (up to 64 per slot, 10 s) or get `503` with `Retry-After: 1`",
			Usage: "HTTP requests handled at once, more wait or get 503; default 4 per CPU",
			parse: countParser{}, set: to(func(s *Settings) *int { return &s.HTTPMaxConcurrent }), fallThrough: true},
		{Flag: "--reconcile-interval-ms", Arg: "MS", Env: []string{"SKILLJACK_RECONCILE_INTERVAL_MS"}, Default: msDefault(DefaultReconcile), Table: TableServe,
			Doc:   "period of the full rescan behind the file watcher (a safety net for dropped file events); `0` turns it off",
			Usage: "rescan period behind the file watcher, 0 = off",
			parse: msParser{zero: -1}, set: to(func(s *Settings) *time.Duration { return &s.Reconcile })},
		{Flag: "--trace", Arg: "FILE", Env: []string{"SKILLJACK_TRACE"}, EnvDoc: "`SKILLJACK_TRACE=FILE`", DefaultDoc: "off", Table: TableServe,
			Doc: "write a trace: the server version and arguments, each client's `initialize` and every internal event, one JSON line each — full skill contents included (see \"Traces\" before attaching one to a bug report). The file is created new (mode `0600`, under a temporary name in the same folder, then renamed); an earlier trace at FILE is replaced. " +
				"A symbolic link, anything but a regular file, and a non-empty file whose first line is not a trace line are refused (\"FILE exists and is not a skilljack trace; choose another file\") and left untouched",
			Usage: "record every bus event as JSON lines",
			parse: textParser{}, set: to(func(s *Settings) *string { return &s.Trace })},
		{Flag: "--trace-mcp", Optional: true, Implied: "true", FlagDoc: "`--trace-mcp`", Env: []string{"SKILLJACK_TRACE_MCP"}, EnvDoc: "`SKILLJACK_TRACE_MCP=true\\|1\\|yes`", Default: "false", DefaultDoc: "off", Table: TableServe,
			Doc:   "with `--trace`, also record every MCP request the server answers: method, tool/prompt/URI, duration and error",
			Usage: "with --trace, also record every MCP request",
			parse: boolParser{}, set: to(func(s *Settings) *bool { return &s.TraceMCP })},
		{Env: []string{"MAX_FILE_SIZE_MB"}, Default: mibDefault(DefaultMaxFileSize), Table: TableServe,
			Doc:   "largest supporting file hashed, listed and served; a larger one is left out of every manifest (`skills/list`, `resources/list`, `skill://index.json`) with one warning naming it, and never read",
			parse: mibParser{min: 1}, set: to(func(s *Settings) *int64 { return &s.MaxFileSize })},
		{Flag: "--max-skill-md-mb", Arg: "MB", Env: []string{"MAX_SKILL_MD_MB"}, Default: mibDefault(DefaultMaxSkillMDSize), Table: TableServe,
			Doc:   "largest `SKILL.md` read; a skill whose `SKILL.md` is larger is skipped with one error line (also in `validate`) and its files are never read",
			Usage: "largest SKILL.md read; a larger one skips its skill",
			parse: mibParser{min: 1}, set: to(func(s *Settings) *int64 { return &s.MaxSkillMDSize })},
		{Flag: "--verbose", Alias: "-v", Optional: true, Implied: "debug", FlagDoc: "`--verbose`, `-v`", Env: []string{"SKILLJACK_LOG_LEVEL"}, EnvDoc: "`SKILLJACK_LOG_LEVEL=debug\\|info\\|warn\\|error`",
			Default: "info", Table: TableServe,
			Doc:   "stderr log level (`--verbose` and `-v` are `debug`; `-v` never prints the version, so a host that passes it does not see the server exit)",
			Usage: "debug logging",
			parse: levelParser{}, set: to(func(s *Settings) *slog.Level { return &s.LogLevel })},
		{Flag: "--version", Optional: true, Implied: "true", Default: "false", DefaultDoc: "—", Table: TableServe, Doc: "print the version and exit",
			Usage: "print the version and exit", parse: boolParser{}, set: to(func(s *Settings) *bool { return &s.Version })},
		{Flag: "--help", Alias: "-h", Optional: true, Implied: "true", Default: "false", DefaultDoc: "—", Table: TableServe, Doc: "print this help and exit",
			Usage: "print this help and exit", parse: boolParser{}, set: to(func(s *Settings) *bool { return &s.Help })},
	}
}

// remoteSettings are the settings of publishers and GitHub repositories
// (README "Remote sources"), then the config-file-only keys.
func remoteSettings() []Setting {
	return []Setting{
		{Env: []string{"WELL_KNOWN_ALLOWED_ORIGINS"}, FileKey: "wellKnownAllowedOrigins", DefaultDoc: "none (deny)", Table: TableRemote,
			Doc:   "comma list of publisher origins (`https://host[:port]`); exact match, case-insensitive host, port significant, no subdomains. The variable replaces the config list when set",
			parse: listParser{}, set: to(func(s *Settings) *[]string { return &s.wkOrigins })},
		{Env: []string{"WELL_KNOWN_POLL_INTERVAL_MS"}, Default: msDefault(DefaultPollInterval), Table: TableRemote,
			Doc:   "how often each publisher is checked; `0` syncs once at startup only; values under `10000` are raised to it",
			parse: msParser{min: MinPollInterval}, set: to(func(s *Settings) *time.Duration { return &s.Config.WellKnown.PollInterval })},
		{Env: []string{"WELL_KNOWN_MAX_ARTIFACT_MB"}, Default: mibDefault(DefaultMaxArtifactBytes), Table: TableRemote,
			Doc:   "largest index or artifact download",
			parse: mibParser{min: 1 << 20}, set: to(func(s *Settings) *int64 { return &s.Config.WellKnown.MaxArtifactBytes })},
		{Env: []string{"WELL_KNOWN_MAX_UNPACKED_MB"}, Default: mibDefault(DefaultMaxUnpackedBytes), Table: TableRemote,
			Doc:   "largest unpacked archive (bytes actually written)",
			parse: mibParser{min: 1 << 20}, set: to(func(s *Settings) *int64 { return &s.Config.WellKnown.MaxUnpackedBytes })},
		{Env: []string{"WELL_KNOWN_MAX_SKILLS"}, Default: strconv.Itoa(DefaultWellKnownMaxSkills), Table: TableRemote,
			Doc:   "most skills served from one publisher: the first ones of its index; more are left out with a warning",
			parse: countParser{}, set: to(func(s *Settings) *int { return &s.Config.WellKnown.MaxSkills })},
		{Env: []string{"WELL_KNOWN_MAX_CACHE_MB"}, Default: mibDefault(DefaultWellKnownMaxCacheBytes), Table: TableRemote,
			Doc:   "most bytes cached for one publisher; once spent, a sync stops downloading (with a warning) and keeps what is cached",
			parse: mibParser{min: 1 << 20}, set: to(func(s *Settings) *int64 { return &s.Config.WellKnown.MaxCacheBytes })},
		{Env: []string{"WELL_KNOWN_ALLOW_HTTP"}, Default: "false", DefaultDoc: "off", Table: TableRemote,
			Doc:   "`1`/`true`/`yes` also fetches `http://` publishers (development only)",
			parse: boolParser{}, set: to(func(s *Settings) *bool { return &s.Config.WellKnown.AllowHTTP })},
		{Env: []string{"GITHUB_ALLOWED_ORGS"}, FileKey: "githubAllowedOrgs", DefaultDoc: "none (deny)", Table: TableRemote,
			Doc:   "comma list of organisations allowed (case-insensitive); the variable replaces its config list when set",
			parse: listParser{}, set: to(func(s *Settings) *[]string { return &s.ghOrgs })},
		{Env: []string{"GITHUB_ALLOWED_USERS"}, FileKey: "githubAllowedUsers", DefaultDoc: "none (deny)", Table: TableRemote,
			Doc:   "comma list of users allowed (case-insensitive); the variable replaces its config list when set",
			parse: listParser{}, set: to(func(s *Settings) *[]string { return &s.ghUsers })},
		{Env: []string{"GITHUB_TOKEN"}, DefaultDoc: "none", Table: TableRemote, Secret: true,
			Doc:   "bearer token for private repositories and higher rate limits; never logged",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.Config.GitHub.Token })},
		{Env: []string{"GITHUB_API_URL"}, Default: DefaultGitHubAPIURL, Table: TableRemote,
			Doc:   "API base, for GitHub Enterprise (`https://ghe.example/api/v3`)",
			parse: textParser{trim: true, trimRight: "/"}, set: to(func(s *Settings) *string { return &s.Config.GitHub.APIURL })},
		{Env: []string{"GITHUB_POLL_INTERVAL_MS"}, Default: msDefault(DefaultPollInterval), Table: TableRemote,
			Doc:   "how often each unpinned repository is checked; `0` syncs once at startup only; values under `10000` are raised to it",
			parse: msParser{min: MinPollInterval}, set: to(func(s *Settings) *time.Duration { return &s.Config.GitHub.PollInterval })},
		{Env: []string{"GITHUB_MAX_TARBALL_MB"}, Default: mibDefault(DefaultGitHubMaxTarballBytes), Table: TableRemote,
			Doc:   "largest tarball download",
			parse: mibParser{min: 1 << 20}, set: to(func(s *Settings) *int64 { return &s.Config.GitHub.MaxTarballBytes })},
		{Env: []string{"GITHUB_MAX_UNPACKED_MB"}, Default: mibDefault(DefaultGitHubMaxUnpackedBytes), Table: TableRemote,
			Doc:   "largest unpacked tarball (bytes actually written)",
			parse: mibParser{min: 1 << 20}, set: to(func(s *Settings) *int64 { return &s.Config.GitHub.MaxUnpackedBytes })},
		{Env: []string{"SKILLJACK_CACHE_DIR"}, DefaultDoc: "`~/.skilljack/github-cache` and `~/.skilljack/well-known-cache`", Table: TableRemote,
			Doc: "cache base: GitHub repositories go to `<dir>/<owner>/<repo>`, publishers to `<dir>/well-known/<host>` (plus `_<path>-<hash>` for a publisher with a path or on `http`). " +
				"Cache folders are watched like skill folders, so a change made by another process sharing the cache is served within a second. " +
				"The fetchers touch only folders they created (marked `.skilljack-cache`); an existing folder in the way is refused, never replaced (see \"What the caches may touch\")",
			parse: textParser{trim: true}, set: to(func(s *Settings) *string { return &s.cacheDir })},

		// Read by readConfigFile, which checks each override on its own.
		{FileKey: "skillInvocationOverrides", Doc: "per-skill assistant/user invocation overrides, keyed by qualified name"},
	}
}

// Defaults of the settings read by main (reference §2.2 for the ones the
// reference has).
const (
	// DefaultHTTPPort is the port of --http and SKILLJACK_HTTP.
	DefaultHTTPPort = 3000
	// DefaultHTTPHost binds HTTP to loopback only.
	DefaultHTTPHost = "127.0.0.1"
)

// to returns a setter storing a parsed value of type T in the field dst
// points to.
func to[T any](dst func(*Settings) *T) func(*Settings, any, origin) {
	return func(s *Settings, v any, _ origin) { *dst(s) = v.(T) }
}

func setDirs(s *Settings, v any, o origin) {
	s.dirs = v.([]string)
	switch o {
	case fromFlag:
		s.activeSource = activeCLI
	case fromEnv:
		s.activeSource = activeEnv
	case fromFile:
		s.activeSource = activeConfig
	default:
		s.activeSource = activeNone
	}
}

func setHTTPPort(s *Settings, v any, o origin) {
	s.httpPort = v.(int)
	s.httpPortSet = o != fromDefault
}

// mibDefault and msDefault write a default in the syntax of its setting.
func mibDefault(bytes int64) string { return strconv.FormatInt(bytes>>20, 10) }

func msDefault(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// The one boolean dialect (reference §2.2): true, 1 and yes are true, in
// any case; false, 0, no and "" are false; anything else is false with a
// warning.
type boolParser struct{}

func (boolParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (boolParser) parse(r raw) (any, string) {
	switch strings.ToLower(strings.TrimSpace(r.text)) {
	case "true", "1", "yes":
		return true, ""
	case "false", "0", "no", "":
		return false, ""
	}
	return false, "is not one of true, 1, yes, false, 0, no; read as false"
}

// mibParser reads a size in MiB, fractions allowed, as bytes; min is the
// smallest size accepted, in bytes.
type mibParser struct{ min int64 }

func (mibParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (p mibParser) parse(r raw) (any, string) {
	mb, err := strconv.ParseFloat(strings.TrimSpace(r.text), 64)
	if err != nil || math.IsNaN(mb) || mb <= 0 || mb >= 1<<40 {
		return nil, "is not a positive number of MiB"
	}
	n := max(int64(mb*(1<<20)), 1)
	if n < p.min {
		return nil, fmt.Sprintf("is below the minimum of %s MiB", strconv.FormatFloat(float64(p.min)/(1<<20), 'f', -1, 64))
	}
	return n, ""
}

// msParser reads a whole number of milliseconds >= 0. Zero means zero (a
// disabled period); a smaller non-zero value than min is raised to it with
// a warning.
type msParser struct{ min, zero time.Duration }

func (msParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (p msParser) parse(r raw) (any, string) {
	n, err := strconv.ParseInt(strings.TrimSpace(r.text), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/int64(time.Millisecond) {
		return nil, "is not a number of milliseconds >= 0"
	}
	d := time.Duration(n) * time.Millisecond
	switch {
	case d == 0:
		return p.zero, ""
	case d < p.min:
		return p.min, fmt.Sprintf("is below the minimum of %d ms (it is in milliseconds); using the minimum", p.min.Milliseconds())
	}
	return d, ""
}

// countParser reads a whole number of at least 1.
type countParser struct{}

func (countParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (countParser) parse(r raw) (any, string) {
	n, err := strconv.Atoi(strings.TrimSpace(r.text))
	if err != nil || n < 1 {
		return nil, "is not a whole number > 0"
	}
	return n, ""
}

// portParser reads a TCP port; 0 (a free port) only from the flag.
type portParser struct{}

func (portParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" && r.origin != fromFlag }

func (portParser) parse(r raw) (any, string) {
	v := strings.TrimSpace(r.text)
	if v == "" { // bare --http
		return DefaultHTTPPort, ""
	}
	low := 1
	if r.origin == fromFlag {
		low = 0
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < low || p > 65535 {
		return nil, fmt.Sprintf("is not a port number >= %d", low)
	}
	return p, ""
}

// enumParser reads one of its values, case-insensitively.
type enumParser []string

func (enumParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (p enumParser) parse(r raw) (any, string) {
	v := strings.ToLower(strings.TrimSpace(r.text))
	if slices.Contains(p, v) {
		return v, ""
	}
	return nil, "is not one of " + strings.Join(p, ", ")
}

// listParser reads a comma list (trimmed, empty entries dropped), or the
// arguments or config file list as they are.
type listParser struct{}

func (p listParser) empty(r raw) bool { v, _ := p.parse(r); return len(v.([]string)) == 0 }

func (listParser) parse(r raw) (any, string) {
	if r.list != nil {
		if r.origin == fromFile {
			return r.list, ""
		}
		return splitList(r.list...), ""
	}
	return splitList(r.text), ""
}

// textParser reads a string as given, or trimmed.
type textParser struct {
	trim      bool
	trimRight string
}

func (textParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (p textParser) parse(r raw) (any, string) {
	v := r.text
	if p.trim {
		v = strings.TrimSpace(v)
	}
	return strings.TrimRight(v, p.trimRight), ""
}

// levelParser reads a slog level name.
type levelParser struct{}

func (levelParser) empty(r raw) bool { return strings.TrimSpace(r.text) == "" }

func (levelParser) parse(r raw) (any, string) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(r.text))); err != nil {
		return nil, "is not debug, info, warn or error"
	}
	return l, ""
}

// LoadOptions are the inputs of [Load].
type LoadOptions struct {
	// Args are the command-line arguments after the program name: an
	// optional "validate" subcommand, flags (one token each, --tools=never),
	// "--", and sources (comma lists allowed).
	Args []string
	// Getenv reads an environment variable. If nil, defaults to os.Getenv.
	Getenv func(string) string
	// Home is the home directory (the config file is
	// Home/.skilljack/config.json). If empty, defaults to $HOME, then
	// os.UserHomeDir.
	Home string
	// Cwd resolves relative paths. If empty, defaults to os.Getwd.
	Cwd string
}

// Load works out the effective configuration from the command line, the
// environment and the config file, every setting through
// [SettingsTable]. It never fails on a value: an unknown flag or an
// unreadable value is reported in the warnings and means the default, as in
// the reference. It fails only when the working or home directory cannot
// be found. It only reads; the config file is never written.
func Load(opts LoadOptions) (Settings, []Warning, error) {
	table := SettingsTable()
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home, cwd, err := homeAndCwd(opts.Home, opts.Cwd, getenv)
	if err != nil {
		return Settings{}, nil, err
	}
	exists := func(p string) bool {
		_, err := os.Stat(resolvePath(p, home, cwd))
		return err == nil
	}
	args, placeholders := dropPlaceholderArgs(opts.Args)
	cl, warnings := parseCommandLine(args, table, exists)
	warnings = append(placeholders, warnings...)
	st, more, err := load(table, cl, ResolveOptions{Getenv: opts.Getenv, Home: opts.Home, Cwd: opts.Cwd})
	return st, append(warnings, more...), err
}

// commandLine is the command line split into flag values and positional
// arguments.
type commandLine struct {
	validate   bool
	flags      map[string]raw // by Setting.Flag; the last one given wins
	positional []string
}

// parseCommandLine splits args into flags and positional arguments. A flag
// takes its value in the same argument (--tools=never); any argument not
// starting with "-", and every argument after "--", is positional.
//
// A value given as the next argument (--tools never, --http 8080) is read
// as meant when it is one the flag takes (issue 13 item 8): a host's args
// list makes that mistake easy, and the value must not become a missing
// skill folder. For a flag that needs a value, the next argument is taken
// when its setting reads it without a problem; otherwise the flag is
// refused with "did you mean --tools=VALUE" and the argument stays a
// source. For a flag whose value is optional (--http, --static, --verbose),
// a bare flag is normal use, so the next argument is taken only when the
// setting reads it and no file or folder of that name exists (exists
// reports that); when one does, it stays a source and a warning asks
// whether the flag's value was meant.
func parseCommandLine(args []string, table []Setting, exists func(string) bool) (commandLine, []Warning) {
	cl := commandLine{flags: map[string]raw{}}
	var warnings []Warning
	if len(args) > 0 && args[0] == "validate" {
		cl.validate = true
		args = args[1:]
	}
	flagsDone := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if flagsDone || !strings.HasPrefix(a, "-") {
			cl.positional = append(cl.positional, a)
			continue
		}
		if a == "--" {
			flagsDone = true
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		j := slices.IndexFunc(table, func(s Setting) bool { return s.Flag != "" && (s.Flag == name || s.Alias == name) })
		if j < 0 {
			// Only the name: the value may be a secret (issue 10: secrets).
			warnings = append(warnings, Warning{Message: fmt.Sprintf("unknown flag %q ignored", name), UnknownFlag: name})
			continue
		}
		s := table[j]
		next, hasNext := "", false
		if !hasValue && s.Arg != "" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && !flagsDone {
			next, hasNext = args[i+1], true
		}
		reads := func(v string) bool {
			r := raw{name: s.Flag, text: v, origin: fromFlag}
			if s.parse.empty(r) {
				return false
			}
			_, problem := s.parse.parse(r)
			return problem == ""
		}
		switch {
		case hasNext && !s.Optional && reads(next):
			// --tools never: read as meant.
			value, i = next, i+1
		case hasNext && !s.Optional:
			warnings = append(warnings, Warning{Message: fmt.Sprintf("flag %s needs its value in the same argument: did you mean %s=%s? (%s=%s); %s ignored, %q read as a source",
				a, s.Flag, next, s.Flag, flagArg(s), a, next)})
			continue
		case hasNext && reads(next) && !exists(next):
			// --http 8080: read as meant.
			value, i = next, i+1
		case hasNext && reads(next):
			warnings = append(warnings, Warning{Message: fmt.Sprintf("%s %s: %q is served as a source, as a file or folder of that name exists; did you mean %s=%s?",
				a, next, next, s.Flag, next)})
			value = s.Implied
		case !hasValue && s.Optional:
			value = s.Implied
		case hasValue && value == "" && s.Optional:
			warnings = append(warnings, Warning{Message: fmt.Sprintf("flag %s= needs a value in the same argument (%s=%s); using the default", s.Flag, s.Flag, flagArg(s))})
		case !hasValue || value == "":
			verdict := "ignored"
			if s.Refuse {
				verdict = "refusing to start"
			}
			warnings = append(warnings, Warning{Message: fmt.Sprintf("flag %s needs a value in the same argument (%s=%s); %s", s.Flag, s.Flag, flagArg(s), verdict), Refuse: s.Refuse})
			continue
		}
		cl.flags[s.Flag] = raw{name: s.Flag, text: value, origin: fromFlag}
	}
	return cl, warnings
}

// flagArg is the placeholder of s's value in messages.
func flagArg(s Setting) string {
	if s.Arg != "" {
		return s.Arg
	}
	return "VALUE"
}

// load resolves every setting of table from cl, the environment and the
// config file, then derives the sources and the remote settings.
func load(table []Setting, cl commandLine, opts ResolveOptions) (Settings, []Warning, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home, cwd, err := homeAndCwd(opts.Home, opts.Cwd, getenv)
	if err != nil {
		return Settings{}, nil, err
	}
	var warnings []Warning
	// An empty variable is unset (each parser's empty), and so is one
	// holding a literal ${...} placeholder, with a warning (issue 15).
	var placeholders []Warning
	getenv = placeholderEnv(getenv, &placeholders)
	st := Settings{Validate: cl.validate}
	st.Config.ConfigPath = filepath.Join(home, ".skilljack", "config.json")
	file := readConfigFile(st.Config.ConfigPath, slog.New(warningHandler{&warnings}))
	for _, s := range table {
		if s.parse != nil {
			warnings = append(warnings, resolveSetting(&st, s, candidates(s, cl, getenv, file))...)
		}
	}
	warnings = append(warnings, placeholders...)
	warnings = append(warnings, derive(&st, file, home, cwd)...)
	st.Config.Listing = newListing(cl, getenv, file, home, cwd)
	return st, warnings, nil
}

// candidates returns the places that may set s, in priority order.
func candidates(s Setting, cl commandLine, getenv func(string) string, file configFile) []raw {
	var out []raw
	if s.positional && len(cl.positional) > 0 {
		out = append(out, raw{name: "arguments", list: cl.positional, origin: fromFlag})
	}
	if r, ok := cl.flags[s.Flag]; ok && s.Flag != "" {
		out = append(out, r)
	}
	for _, e := range s.Env {
		out = append(out, raw{name: e, text: getenv(e), origin: fromEnv})
	}
	if r, ok := file.value(s.FileKey); ok {
		out = append(out, r)
	}
	return out
}

// resolveSetting stores the first usable candidate of s in st, else s's
// default, and returns the warnings about unusable ones.
func resolveSetting(st *Settings, s Setting, cands []raw) []Warning {
	var warnings []Warning
	for _, c := range cands {
		if s.parse.empty(c) {
			continue
		}
		v, problem := s.parse.parse(c)
		if problem != "" {
			warnings = append(warnings, settingWarning(s, c, problem, v != nil))
		}
		if v != nil {
			s.set(st, v, c.origin)
			return warnings
		}
		if !s.fallThrough {
			setDefault(st, s, c.origin)
			return warnings
		}
	}
	setDefault(st, s, fromDefault)
	return warnings
}

// setDefault stores s's default in st, if it has one; o says which place
// asked for it (an unusable --http=x still turns HTTP on).
func setDefault(st *Settings, s Setting, o origin) {
	if s.Default == "" {
		return
	}
	v, problem := s.parse.parse(raw{text: s.Default, origin: fromDefault})
	if problem != "" {
		panic(fmt.Sprintf("actors: default %q of %s: %s", s.Default, settingName(s), problem))
	}
	s.set(st, v, o)
}

// settingWarning words problem with the value c of s.
func settingWarning(s Setting, c raw, problem string, kept bool) Warning {
	msg := c.name + " " + problem
	switch {
	case kept || strings.Contains(problem, "; "):
	case s.fallThrough:
		msg += "; ignored"
	case s.Refuse:
		msg += "; refusing to start"
	case s.Default != "":
		msg += "; using the default (" + s.Default + ")"
	default:
		msg += "; using the default"
	}
	w := Warning{Message: msg, Refuse: s.Refuse && !kept}
	if !s.Secret {
		v := c.text
		if c.list != nil {
			v = strings.Join(c.list, ",")
		}
		w.Args = []any{"value", v}
	}
	return w
}

// settingName names s for messages and docs: its flag, else its first
// variable, else its config file key.
func settingName(s Setting) string {
	switch {
	case s.Flag != "":
		return s.Flag
	case len(s.Env) > 0:
		return s.Env[0]
	case s.positional:
		return "arguments"
	}
	return s.FileKey
}

// homeAndCwd fills in the home and working directories.
func homeAndCwd(home, cwd string, getenv func(string) string) (string, string, error) {
	if home == "" {
		home = getenv("HOME")
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", "", fmt.Errorf("finding home directory: %w", err)
		}
		home = h
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", "", fmt.Errorf("finding working directory: %w", err)
		}
		cwd = wd
	}
	return home, cwd, nil
}

// value returns the config file's value for key as a candidate, if the
// file sets it.
func (f configFile) value(key string) (raw, bool) {
	r := raw{name: key, origin: fromFile}
	switch key {
	case "skillDirectories":
		r.list = f.dirs
	case "githubAllowedOrgs":
		r.list = f.ghOrgs
	case "githubAllowedUsers":
		r.list = f.ghUsers
	case "wellKnownAllowedOrigins":
		r.list = f.wkOrigins
	case "staticMode":
		if f.static == nil {
			return r, false
		}
		r.text = strconv.FormatBool(*f.static)
		return r, true
	}
	return r, len(r.list) > 0
}

// warningHandler is a slog.Handler that collects Warn records as
// [Warning]s, so that the config checks that log can report to [Load]'s
// caller, who owns the logger.
type warningHandler struct{ out *[]Warning }

func (h warningHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h warningHandler) Handle(_ context.Context, r slog.Record) error {
	w := Warning{Message: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		w.Args = append(w.Args, a.Key, a.Value.Any())
		switch a.Key {
		case "source":
			w.Source = a.Value.String()
		case "rule":
			w.Rule = a.Value.String()
		}
		return true
	})
	*h.out = append(*h.out, w)
	return nil
}

// WithAttrs and WithGroup are not used by the config checks.
func (h warningHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h warningHandler) WithGroup(string) slog.Handler      { return h }
