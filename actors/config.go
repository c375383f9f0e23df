package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// ConfigOptions are the inputs of [LoadConfig]. The zero value reads the
// process environment, home and working directory.
type ConfigOptions struct {
	// Args are the positional command-line arguments; each may be a
	// comma-separated list. If empty, SKILLS_DIR and then the config file
	// are used.
	Args []string
	// Getenv reads an environment variable. If nil, defaults to os.Getenv.
	Getenv func(string) string
	// Home is the home directory; the config file is
	// Home/.skilljack/config.json and "~/" in paths expands to it. If empty,
	// defaults to $HOME (through Getenv), then os.UserHomeDir.
	Home string
	// Static reports that --static was given.
	Static bool
	// Cwd resolves relative paths. If empty, defaults to os.Getwd.
	Cwd string
	// Logger receives the warnings about the configuration. If nil, they are
	// discarded.
	Logger *slog.Logger
}

// Config is the effective configuration of one start (reference §2).
type Config struct {
	// Sources are the configured sources in priority order, the bundled
	// source last (ID "bundled", Kind bundled, Root ".", Prefix "").
	Sources []events.Source
	// Static is true when the skill set is fixed at startup: --static, else
	// SKILLJACK_STATIC (true, 1 or yes, case-insensitive) when set, else
	// the config file's staticMode.
	Static bool
	// Overrides are the config file's skillInvocationOverrides, keyed by
	// qualified name; only boolean assistant/user values are kept and empty
	// overrides are dropped.
	Overrides map[string]events.Override
	// ActiveSource names the list the sources came from: "cli", "env",
	// "config" or "none".
	ActiveSource string
	// ConfigPath is the config file's path, whether it exists or not.
	ConfigPath string
}

// Source list origins for [Config.ActiveSource].
const (
	activeCLI    = "cli"
	activeEnv    = "env"
	activeConfig = "config"
	activeNone   = "none"
)

// BundledSourceID is the [events.Source.ID] of the skills embedded in the
// binary.
const BundledSourceID = "bundled"

// configFile is the part of ~/.skilljack/config.json this release reads.
// Fields are decoded loosely so that one wrong value does not void the rest.
type configFile struct {
	SkillDirectories         []any                     `json:"skillDirectories"`
	StaticMode               any                       `json:"staticMode"`
	SkillInvocationOverrides map[string]map[string]any `json:"skillInvocationOverrides"`
}

// LoadConfig works out the configuration from arguments, environment and the
// config file. The source list is the first non-empty of: the positional
// arguments, SKILLS_DIR (comma list), the config file's skillDirectories
// (exclusive, not merged). A missing config file means defaults; an
// unparseable one too, with a warning. Local paths are made absolute
// ("~/" expanded) and de-duplicated; a missing one is kept with a warning.
// GitHub and well-known entries are kept (Root "") with a warning that this
// release does not serve them. It only reads; it never writes the config
// file. It fails only when the working or home directory cannot be found.
func LoadConfig(opts ConfigOptions) (Config, error) {
	log := ensureLogger(opts.Logger)
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home := opts.Home
	if home == "" {
		home = getenv("HOME")
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Config{}, fmt.Errorf("finding home directory: %w", err)
		}
		home = h
	}
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Config{}, fmt.Errorf("finding working directory: %w", err)
		}
		cwd = wd
	}
	cfg := Config{ConfigPath: filepath.Join(home, ".skilljack", "config.json"), Overrides: map[string]events.Override{}}
	file := readConfigFile(cfg.ConfigPath, log)

	var entries []string
	switch {
	case len(splitList(opts.Args...)) > 0:
		entries, cfg.ActiveSource = splitList(opts.Args...), activeCLI
	case len(splitList(getenv("SKILLS_DIR"))) > 0:
		entries, cfg.ActiveSource = splitList(getenv("SKILLS_DIR")), activeEnv
	default:
		var dirs []string
		for _, d := range file.SkillDirectories {
			if s, ok := d.(string); ok && strings.TrimSpace(s) != "" {
				dirs = append(dirs, strings.TrimSpace(s))
			}
		}
		entries, cfg.ActiveSource = dirs, activeConfig
		if len(dirs) == 0 {
			cfg.ActiveSource = activeNone
		}
	}
	cfg.Sources = buildSources(entries, home, cwd, log)

	switch env := strings.TrimSpace(getenv("SKILLJACK_STATIC")); {
	case opts.Static:
		cfg.Static = true
	case env != "":
		cfg.Static = isTruthy(env)
	default:
		b, _ := file.StaticMode.(bool)
		cfg.Static = b
	}

	for name, o := range file.SkillInvocationOverrides {
		var ov events.Override
		if b, ok := o["assistant"].(bool); ok {
			ov.Assistant = &b
		}
		if b, ok := o["user"].(bool); ok {
			ov.User = &b
		}
		if ov.Assistant != nil || ov.User != nil {
			cfg.Overrides[name] = ov
		}
	}
	return cfg, nil
}

// readConfigFile returns the parsed config file, or the zero value when it
// is missing or cannot be read or parsed (then with a warning).
func readConfigFile(path string, log *slog.Logger) configFile {
	var f configFile
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("cannot read config file; using defaults", "path", path, "error", err)
		}
		return f
	}
	if err := json.Unmarshal(b, &f); err != nil {
		log.Warn("cannot parse config file; using defaults", "path", path, "error", err)
		return configFile{}
	}
	return f
}

// splitList splits each of vs at commas, trims the parts and drops empty
// ones.
func splitList(vs ...string) []string {
	var out []string
	for _, v := range vs {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func isTruthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}

// buildSources classifies, resolves, de-duplicates and prefixes entries and
// appends the bundled source.
func buildSources(entries []string, home, cwd string, log *slog.Logger) []events.Source {
	var out []events.Source
	seen := map[string]bool{}
	prefixes := map[string]bool{}
	for _, e := range entries {
		src := events.Source{Location: e}
		lower := strings.ToLower(e)
		switch {
		case strings.Contains(lower, "github.com"):
			src.Kind = events.SourceGitHub
			src.Prefix = githubPrefix(e)
		case strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
			src.Kind = events.SourceWellKnown
			src.Prefix = hostPrefix(e)
		default:
			src.Kind = events.SourceLocal
			src.Root = resolvePath(e, home, cwd)
			src.Prefix = filepath.Base(src.Root)
			if src.Prefix == string(filepath.Separator) || src.Prefix == "." || src.Prefix == "" {
				src.Prefix = "root"
			}
		}
		key := string(src.Kind) + "\x00" + src.Root
		if src.Kind != events.SourceLocal {
			key = string(src.Kind) + "\x00" + e
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		switch src.Kind {
		case events.SourceLocal:
			if fi, err := os.Stat(src.Root); err != nil {
				log.Warn("skill directory not found: "+src.Root, "path", src.Root, "error", err)
			} else if !fi.IsDir() {
				log.Warn("skill directory is not a directory: "+src.Root, "path", src.Root)
			}
		default:
			log.Warn("remote sources are not served by this release yet: "+e, "source", e, "kind", string(src.Kind))
		}
		if prefixes[src.Prefix] {
			base := src.Prefix
			n := 2
			for prefixes[base+"-"+strconv.Itoa(n)] {
				n++
			}
			src.Prefix = base + "-" + strconv.Itoa(n)
			log.Warn("two sources with the same prefix: disambiguated, never shadowed silently",
				"source", e, "prefix", base, "new_prefix", src.Prefix)
		}
		prefixes[src.Prefix] = true
		src.ID = strconv.Itoa(len(out))
		out = append(out, src)
	}
	return append(out, events.Source{
		ID: BundledSourceID, Kind: events.SourceBundled, Location: BundledSourceID, Root: ".",
	})
}

// resolvePath expands "~" and "~/" with home and makes p absolute against
// cwd.
func resolvePath(p, home, cwd string) string {
	switch {
	case p == "~":
		p = home
	case strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "~"+string(filepath.Separator)):
		p = filepath.Join(home, p[2:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// githubPrefix returns "owner-repo" for a GitHub entry, best effort.
func githubPrefix(e string) string {
	s := e
	if i := strings.Index(strings.ToLower(s), "github.com"); i >= 0 {
		s = s[i+len("github.com"):]
	}
	s, _, _ = strings.Cut(s, "@")
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == ':' })
	if len(parts) >= 2 {
		return parts[0] + "-" + strings.TrimSuffix(parts[1], ".git")
	}
	return "github"
}

// hostPrefix returns a slug of the URL's host for a well-known entry.
func hostPrefix(e string) string {
	u, err := url.Parse(e)
	if err != nil || u.Hostname() == "" {
		return "well-known"
	}
	return strings.ReplaceAll(u.Hostname(), ".", "-")
}

// ensureLogger returns log, or a logger that discards everything when nil.
func ensureLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// ConfigActor publishes the configuration of one start on the bus.
type ConfigActor struct {
	cfg Config
	pub message.Publisher
	log *slog.Logger
}

// NewConfigActor returns an actor publishing cfg through pub. It panics if
// pub is nil. cfg is copied; a nil log discards.
func NewConfigActor(cfg Config, pub message.Publisher, log *slog.Logger) *ConfigActor {
	if pub == nil {
		panic("actors.NewConfigActor: nil publisher")
	}
	cfg.Sources = append([]events.Source(nil), cfg.Sources...)
	ov := make(map[string]events.Override, len(cfg.Overrides))
	for k, v := range cfg.Overrides {
		ov[k] = v
	}
	cfg.Overrides = ov
	return &ConfigActor{cfg: cfg, pub: pub, log: ensureLogger(log)}
}

// Run publishes [events.OverridesChanged] and then [events.SourcesConfigured]
// (both Seq 1); each publish blocks until the bus hands the event over (on
// [events.NewBus]: until every subscriber acked it). Then Run blocks until
// ctx is done and returns nil. It returns an error only when a publish
// fails. Call it once.
func (a *ConfigActor) Run(ctx context.Context) error {
	a.log.Debug("configuration", "active_source", a.cfg.ActiveSource, "sources", len(a.cfg.Sources),
		"static", a.cfg.Static, "overrides", len(a.cfg.Overrides), "config_path", a.cfg.ConfigPath)
	if err := events.Publish(a.pub, events.OverridesChanged{Seq: 1, Overrides: a.cfg.Overrides}); err != nil {
		return fmt.Errorf("publishing invocation overrides: %w", err)
	}
	if err := events.Publish(a.pub, events.SourcesConfigured{Seq: 1, Sources: a.cfg.Sources, Static: a.cfg.Static}); err != nil {
		return fmt.Errorf("publishing configured sources: %w", err)
	}
	<-ctx.Done()
	return nil
}
