// Package config is the one owner of the configuration (DESIGN
// "Folders"): the settings table of every flag, environment variable and
// config-file key ([SettingsTable], [Load], [Resolve]), the parsers of the
// remote source URLs ([ParseWellKnownURL], [ParseGitHubURL]) and the
// remote settings ([WellKnown], [GitHub]), and the config actor ([New]),
// which watches ~/.skilljack/config.json, applies config commands from the
// bus and publishes each new [events.SourcesConfigured] and
// [events.OverridesChanged]. Actor packages may import its types and
// default constants; it imports no actor package.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

// ResolveOptions are the inputs of [Resolve]. The zero value reads the
// process environment, home and working directory.
type ResolveOptions struct {
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
	// Static is the --static flag: nil when it was not given, else its value
	// (--static or --static=true, --static=false). Given, it beats
	// SKILLJACK_STATIC and the config file's staticMode.
	Static *bool
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
	// SKILLJACK_STATIC when set (true, 1 or yes, case-insensitive; any
	// value other than these and false, 0, no is warned about and read as
	// false), else the config file's staticMode when it is a boolean.
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
	// WellKnown configures the publisher sources and their fetcher.
	WellKnown WellKnown
	// GitHub configures the GitHub sources and their poller.
	GitHub GitHub
	// Listing is what the config tools show besides the sources: every
	// entry of the three source lists, the config file's allowlists and
	// staticMode (view.go).
	Listing Listing
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
// Each key is checked on its own, so that one wrong value voids only itself
// (with a warning), never the rest of the file.
type configFile struct {
	// dirs are the string entries of skillDirectories, trimmed, non-empty.
	dirs []string
	// static is staticMode when it is a boolean.
	static *bool
	// overrides are the usable skillInvocationOverrides entries.
	overrides map[string]events.Override
	// ghOrgs, ghUsers and wkOrigins are githubAllowedOrgs,
	// githubAllowedUsers and wellKnownAllowedOrigins.
	ghOrgs, ghUsers, wkOrigins []string
	// unusable says why the file as a whole was not used ("" when it was,
	// or is missing); unusableKeys are the known keys it seemed to set.
	unusable     string
	unusableKeys []string
}

// Resolve works out the configuration from arguments, environment and the
// config file. The source list is the first non-empty of: the positional
// arguments, SKILLS_DIR (comma list), the config file's skillDirectories
// (exclusive, not merged). A missing config file means defaults; an
// unparseable one too, with a warning. A key, list entry or override flag
// of the wrong type is left out with a warning naming the file and the key;
// the rest of the file is kept. Local paths are made absolute
// ("~/" expanded) and de-duplicated; a missing one is kept without a
// warning here, as the hasher's scan of it reports it.
// GitHub and well-known entries are served from their cache folders (see
// buildSources); the remote settings are in WellKnown and GitHub. It only reads; it never writes the config
// file. It fails only when the working or home directory cannot be found.
func Resolve(opts ResolveOptions) (Config, error) {
	cl := commandLine{positional: opts.Args}
	if opts.Static != nil {
		cl.flags = map[string]raw{"--static": {name: "--static", text: strconv.FormatBool(*opts.Static), origin: fromFlag}}
	}
	st, warnings, err := load(SettingsTable(), cl, opts)
	if err != nil {
		return Config{}, err
	}
	log := ensureLogger(opts.Logger)
	for _, w := range warnings {
		log.Warn(w.Message, w.Args...)
	}
	return st.Config, nil
}

// derive builds what the table's values imply: the source list, static
// mode, overrides and the remote settings (reference §2).
func derive(st *Settings, file configFile, home, cwd string) []Warning {
	var warnings []Warning
	log := slog.New(warningHandler{&warnings})
	if st.Catalog == "tool-description" {
		log.Warn("--catalog=tool-description is the legacy catalog channel: clients with tool search may never see the catalog; the default is instructions")
	}
	st.HTTP = st.httpPortSet || st.httpEnv
	st.HTTPPort = st.httpPort
	cfg := &st.Config
	cfg.ActiveSource = st.activeSource
	if cfg.ActiveSource == "" {
		cfg.ActiveSource = activeNone
	}
	cfg.Static = st.static
	cfg.Overrides = map[string]events.Override{}
	for name, ov := range file.overrides {
		cfg.Overrides[name] = ov
	}
	cfg.WellKnown, cfg.GitHub = remoteConfig(st, home, log)
	cfg.Sources = buildSources(st.dirs, home, cwd, cfg, log)
	warnUnusableFile(st, file, log)
	warnCacheInSource(*cfg, log)
	return warnings
}

// utf8BOM is the byte-order mark some Windows editors write at the start of
// a file; the config file is read without it, as a SKILL.md is.
const utf8BOM = "\uFEFF"

// MaxFileBytes caps the config file. It holds a few lists and flags; a
// megabyte is thousands of entries, and the cap keeps a mistaken link to a
// log or a device from filling memory.
const MaxFileBytes = 1 << 20

// readRegularFile returns the contents of path, without a leading UTF-8
// BOM, if it is a regular file (a link to one is followed) of at most limit
// bytes. A FIFO, device, socket or folder is refused before it is opened
// and again after (a FIFO swapped in between does not block the open), so
// that reading never waits on a writer or reads without end. A missing file
// returns an error matching [fs.ErrNotExist].
func readRegularFile(path string, limit int64) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fileKind(fi.Mode()))
	}
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fileKind(fi.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(fd, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return bytes.TrimPrefix(b, []byte(utf8BOM)), nil
}

// fileKind names the type of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "type " + m.Type().String()
}

// readConfigFile returns the usable parts of the config file: nothing when
// it is missing, or is not a regular file of at most [MaxFileBytes], or
// cannot be read or parsed as a JSON object (then with a warning naming the
// file and the reason). A leading UTF-8 BOM is ignored. A key holding the wrong type, a skillDirectories entry that is
// not a non-empty string and an override flag that is not a boolean are
// each left out with one warning naming the file and the key (reference
// §2.3: only strings and booleans are kept). Keys this release does not
// read are ignored.
func readConfigFile(path string, log *slog.Logger) configFile {
	f := configFile{overrides: map[string]events.Override{}}
	b, err := readRegularFile(path, MaxFileBytes)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			f.unusable = "cannot read config file " + path + " (" + err.Error() + ")"
		}
		return f
	}
	top, problem := parseConfigObject(b)
	if problem != "" {
		f.unusable = "config file " + path + " " + problem
		f.unusableKeys = topKeys(b)
		return f
	}
	r := fileKeys{top: top, path: path, log: log}
	f.dirs = r.stringList("skillDirectories")
	f.ghOrgs = r.stringList("githubAllowedOrgs")
	f.ghUsers = r.stringList("githubAllowedUsers")
	f.wkOrigins = r.stringList("wellKnownAllowedOrigins")
	f.static = r.boolean("staticMode")
	r.overrides(f.overrides)
	return f
}

// parseConfigObject parses b, the config file's content, as the JSON
// object it must be; blank content is an empty object. Otherwise problem
// says why it is not one, in words for the person who edits the file and
// without Go type names: "is not valid JSON (line 4, column 1: …)" or "is
// not a JSON object (it is null)". Startup, the running server and the
// config commands all read the file through it, so they agree.
func parseConfigObject(b []byte) (top map[string]json.RawMessage, problem string) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return map[string]json.RawMessage{}, ""
	}
	err := json.Unmarshal(b, &top)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return nil, "is not a JSON object (it is " + jsonKind(t[0]) + ")"
	case err != nil:
		return nil, "is not valid JSON (" + jsonProblem(b, err) + ")"
	case top == nil:
		return nil, "is not a JSON object (it is null)"
	}
	return top, ""
}

// jsonKind names the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonProblem words err, the failure to parse the config file b, with the
// line and column it happened at and a hint for the usual hand-editing
// mistake, a trailing comma.
func jsonProblem(b []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(b)) {
		return err.Error()
	}
	at := int(se.Offset) - 1 // the offending byte
	line := 1 + bytes.Count(b[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(b[:at], '\n')
	msg := fmt.Sprintf("line %d, column %d: %v", line, col, err)
	if c := b[at]; c == '}' || c == ']' {
		if prev := bytes.TrimRight(b[:at], " \t\r\n"); len(prev) > 0 && prev[len(prev)-1] == ',' {
			msg += fmt.Sprintf("; a trailing comma before %q is not allowed in JSON", c)
		}
	}
	return msg
}

// topKeys returns the top-level keys of the JSON object b that can be read
// before it stops parsing, the ones the reader knows only, so that a
// warning can say what a broken file would have set.
func topKeys(b []byte) []string {
	known := []string{}
	for _, s := range SettingsTable() {
		if s.FileKey != "" {
			known = append(known, s.FileKey)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, ok := t.(string)
		if !ok {
			return keys
		}
		if slices.Contains(known, k) && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
}

// warnUnusableFile says that the config file could not be used, what it
// would have set, and where the sources come from instead (issue 13 item
// 8: a trailing comma once silently served the bundled skill alone).
func warnUnusableFile(st *Settings, file configFile, log *slog.Logger) {
	if file.unusable == "" {
		return
	}
	msg := file.unusable + "; nothing in it is used"
	if len(file.unusableKeys) > 0 {
		msg += " (ignored: " + strings.Join(file.unusableKeys, ", ") + ")"
	}
	switch st.Config.ActiveSource {
	case activeCLI:
		msg += "; serving the sources given on the command line"
	case activeEnv:
		msg += "; serving the sources of SKILLS_DIR"
	default:
		msg += "; only the bundled skill is served"
	}
	if !st.Config.Static {
		msg += "; the file is read again when it is saved"
	}
	log.Warn(msg, "path", st.Config.ConfigPath)
}

// fileKeys reads the keys of a parsed config file one by one, warning
// about each value of the wrong type ([readConfigFile]).
type fileKeys struct {
	top  map[string]json.RawMessage
	path string
	log  *slog.Logger
}

// wrong warns that the value raw of key is not want.
func (r fileKeys) wrong(key, want string, raw json.RawMessage) {
	r.log.Warn("config file value ignored: "+key+" is not "+want, "path", r.path, "key", key, "value", snippet(raw))
}

// stringList returns the non-empty strings of the list at key, trimmed;
// nil when the key is missing, null or not a list.
func (r fileKeys) stringList(key string) []string {
	raw, ok := r.top[key]
	if !ok || isNull(raw) {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		r.wrong(key, "a list of strings", raw)
		return nil
	}
	var out []string
	for i, item := range list {
		var v string
		if json.Unmarshal(item, &v) != nil || strings.TrimSpace(v) == "" {
			r.wrong(fmt.Sprintf("%s[%d]", key, i), "a non-empty string; entry dropped", item)
			continue
		}
		out = append(out, strings.TrimSpace(v))
	}
	return out
}

// boolean returns the boolean at key; nil when it is missing, null or not
// a boolean.
func (r fileKeys) boolean(key string) *bool {
	raw, ok := r.top[key]
	if !ok || isNull(raw) {
		return nil
	}
	var v bool
	if json.Unmarshal(raw, &v) != nil {
		r.wrong(key, "a boolean", raw)
		return nil
	}
	return &v
}

// overrides adds the usable entries of skillInvocationOverrides to dst:
// only boolean assistant/user flags are kept, and empty overrides are
// dropped.
func (r fileKeys) overrides(dst map[string]events.Override) {
	raw, ok := r.top["skillInvocationOverrides"]
	if !ok || isNull(raw) {
		return
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		r.wrong("skillInvocationOverrides", "an object", raw)
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if ov, ok := r.override(name, all[name]); ok {
			dst[name] = ov
		}
	}
}

// override reads the override of skill name, reporting whether it sets a
// flag.
func (r fileKeys) override(name string, rawOv json.RawMessage) (events.Override, bool) {
	key := fmt.Sprintf("skillInvocationOverrides[%q]", name)
	var o map[string]json.RawMessage
	if json.Unmarshal(rawOv, &o) != nil || o == nil {
		r.wrong(key, "an object", rawOv)
		return events.Override{}, false
	}
	var ov events.Override
	for _, fl := range []struct {
		name string
		dst  **bool
	}{{"assistant", &ov.Assistant}, {"user", &ov.User}} {
		rawFlag, ok := o[fl.name]
		if !ok {
			continue
		}
		var v bool
		if json.Unmarshal(rawFlag, &v) != nil || isNull(rawFlag) {
			r.wrong(key+"."+fl.name, "a boolean", rawFlag)
			continue
		}
		*fl.dst = &v
	}
	return ov, ov.Assistant != nil || ov.User != nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// maxSnippet bounds how much of a wrong config value a warning quotes: enough
// to recognise it, not a whole pasted object.
const maxSnippet = 60

// snippet returns raw compacted and cut to [maxSnippet] bytes for a log line.
func snippet(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > maxSnippet {
		cut := maxSnippet
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
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

// buildSources classifies, resolves, de-duplicates and prefixes entries and
// appends the bundled source. GitHub entries (any entry containing
// "github.com", checked first) and publisher URLs (http(s):// otherwise) get
// their cache folder as Root; one that cannot be parsed or whose owner or
// origin is not allowlisted is left out with one warning saying which
// variable to set (default-deny, reference §4, §5).
//
// An entry "name=source" fixes the source's prefix to name (issue 13 item
// 9), so that qualified names, and the overrides keyed by them, do not
// depend on the folder's name or the order of the sources. Names are
// reserved before any prefix is chosen: a source without a name whose
// folder name is taken gets "-2", wherever it is listed. A name that is not
// a valid segment, or is already taken, refuses its entry with a warning.
func buildSources(entries []string, home, cwd string, cfg *Config, log *slog.Logger) []events.Source {
	l := &sourceList{cfg: cfg, home: home, cwd: cwd, log: log,
		seen: map[string]string{}, prefixes: map[string]bool{}, names: map[string]string{},
		githubSeen: map[string]GitHubSpec{}, githubFirst: map[string]string{}, githubRepos: map[string]int{}}
	for _, e := range entries {
		if _, loc, ok := cutSourceName(e); ok && isGitHubSource(loc) {
			if spec, err := ParseGitHubURL(loc); err == nil {
				l.githubRepos[spec.Key()+"@"+spec.Ref]++
			}
		}
	}
	type named struct{ entry, name, loc string }
	var list []named
	for _, e := range entries {
		name, loc, ok := cutSourceName(e)
		if !ok {
			log.Warn(fmt.Sprintf("source %s skipped: %q is not a valid source name: use letters, digits, '.', '_' and '-', starting with a letter or digit, without \"__\" (a folder whose name has \"=\" is written ./%s)", e, name, e), "source", e, "rule", events.RuleSourceRefused)
			continue
		}
		if name != "" {
			if first, dup := l.names[name]; dup {
				log.Warn(fmt.Sprintf("source %s skipped: the name %q is already the source %s; each name once", e, name, first), "source", e, "rule", events.RuleSourceRefused)
				continue
			}
			l.names[name] = e
			l.prefixes[name] = true
		}
		list = append(list, named{e, name, loc})
	}
	for _, n := range list {
		l.add(n.entry, n.name, n.loc)
	}
	return append(l.out, events.Source{
		ID: BundledSourceID, Kind: events.SourceBundled, Location: BundledSourceID, Root: ".",
	})
}

// cutSourceName splits the entry "name=source" into its name and source;
// an entry without a name is returned whole, with name "". The part before
// the first "=" is a name when it holds no path separator or ":" (so
// "./a=b", `C:\a=b` and URLs with "=" stay whole); ok is false when such a
// name is not a valid segment ([validSourceName]).
func cutSourceName(e string) (name, loc string, ok bool) {
	before, after, found := strings.Cut(e, "=")
	if !found || strings.ContainsAny(before, "/\\:") {
		return "", e, true
	}
	name, loc = strings.TrimSpace(before), strings.TrimSpace(after)
	return name, loc, validSourceName(name) && loc != ""
}

// sourceNameRe is a source name: one skill-path segment that
// [skill.SanitizeSegment] keeps as it is, starting with a letter or digit.
var sourceNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validSourceName reports whether name can be a source's prefix: a safe
// segment of skill:// URIs and qualified names, without the "__" that
// joins a qualified name's segments.
func validSourceName(name string) bool {
	return sourceNameRe.MatchString(name) && !strings.Contains(name, "__") &&
		!strings.HasSuffix(name, "-") && skill.SanitizeSegment(name) == name
}

// sourceList is the source list [buildSources] is making.
type sourceList struct {
	cfg       *Config
	home, cwd string
	log       *slog.Logger

	out         []events.Source
	seen        map[string]string     // source key → the entry listed
	prefixes    map[string]bool       // prefixes taken (names reserved first)
	names       map[string]string     // source name → its entry
	githubSeen  map[string]GitHubSpec // repository key → first source's spec
	githubFirst map[string]string     // repository key → first source
	githubRepos map[string]int        // repository key@ref → entries naming it
}

// add appends the source of entry e (location loc, named name unless "")
// unless it is unusable, blocked or a duplicate (each but an unnamed
// duplicate with a warning), with its name as prefix, else a prefix made
// unique.
func (l *sourceList) add(e, name, loc string) {
	var (
		src events.Source
		key string
		ok  bool
	)
	lower := strings.ToLower(loc)
	switch {
	case isGitHubSource(loc):
		src, key, ok = l.gitHub(loc, e)
	case schemeRe.MatchString(lower) && !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://"):
		l.log.Warn(fmt.Sprintf("source skipped: unsupported scheme in %s: a source is a folder, a GitHub repository or an https:// publisher", e), "source", e, "rule", events.RuleSourceRefused)
	case strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
		src, key, ok = l.wellKnown(loc, e)
	default:
		src, key, ok = l.local(loc)
	}
	if !ok {
		return
	}
	if first, dup := l.seen[key]; dup {
		if name != "" {
			l.log.Warn(fmt.Sprintf("source %s skipped: it is the same source as %s (name that entry instead)", e, first), "source", e, "rule", events.RuleSourceRefused)
		}
		return
	}
	l.seen[key] = e
	src.Location = e
	// A missing or unusable local root is reported by the scan of it (one
	// diagnostic, logged by the catalog builder and listed by Validate),
	// not here as well.
	switch {
	case name != "":
		src.Prefix = name
	case l.prefixes[src.Prefix]:
		base := src.Prefix
		n := 2
		for l.prefixes[base+"-"+strconv.Itoa(n)] {
			n++
		}
		src.Prefix = base + "-" + strconv.Itoa(n)
		l.log.Warn("two sources with the same prefix: disambiguated, never shadowed silently; name them (name=source) to fix their prefixes",
			"source", e, "prefix", base, "new_prefix", src.Prefix, "rule", events.RulePrefixRenamed)
	}
	l.prefixes[src.Prefix] = true
	src.ID = strconv.Itoa(len(l.out))
	l.out = append(l.out, src)
}

// gitHub returns the source of the GitHub location e (of entry, as
// written, which its warnings name) and its key; ok is false
// (with a warning) when e does not parse, its owner is not allowlisted,
// its cache folder is the publishers' or its repository is already listed
// at another ref. Several subpaths of one repository at one ref are
// several sources sharing one cache folder, so one download (issue 13
// item 2); when a repository is named more than once at one ref, the prefix of a
// subpath source is "owner-repo/<last subpath folder>", whatever the
// order of the entries.
func (l *sourceList) gitHub(e, entry string) (src events.Source, key string, ok bool) {
	cfg, log := l.cfg, l.log
	spec, err := ParseGitHubURL(e)
	if err != nil {
		log.Warn("GitHub source skipped: "+err.Error(), "source", entry, "rule", events.RuleSourceRefused)
		return src, "", false
	}
	if !slices.Contains(cfg.GitHub.AllowedOwners, strings.ToLower(spec.Owner)) {
		log.Warn(fmt.Sprintf("Blocked: GitHub source %s: owner %q is not allowlisted; set GITHUB_ALLOWED_ORGS or GITHUB_ALLOWED_USERS (or githubAllowedOrgs/githubAllowedUsers in %s) to serve it",
			e, spec.Owner, cfg.ConfigPath), "source", entry, "rule", events.RuleSourceRefused)
		return src, "", false
	}
	if strings.EqualFold(filepath.Join(cfg.GitHub.CacheDir, spec.Owner), cfg.WellKnown.CacheDir) {
		log.Warn("GitHub source skipped: its cache folder "+cfg.WellKnown.CacheDir+" is the publishers' cache (owner \"well-known\" under SKILLJACK_CACHE_DIR); unset SKILLJACK_CACHE_DIR to serve it", "source", entry, "rule", events.RuleSourceRefused)
		return src, "", false
	}
	src = events.Source{Location: e, Kind: events.SourceGitHub, GitHub: spec.ForEvent(), Prefix: skill.SanitizeSegment(spec.Prefix()),
		Root: filepath.Join(cfg.GitHub.CacheDir, spec.Owner, spec.Repo, filepath.FromSlash(spec.Subpath))}
	if l.githubRepos[spec.Key()+"@"+spec.Ref] > 1 && spec.Subpath != "" {
		if sub := skill.SanitizeSegment(path.Base(spec.Subpath)); sub != "" {
			src.Prefix += "/" + sub
		}
	}
	repo := spec.Key()
	if first, dup := l.githubSeen[repo]; dup && first.Ref != spec.Ref {
		log.Warn(fmt.Sprintf("GitHub source %s skipped: repository %s/%s is already the source %s at %s (one ref per repository: its subpaths share one download)",
			e, spec.Owner, spec.Repo, l.githubFirst[repo], refOrDefault(first.Ref)), "source", entry, "rule", events.RuleSourceRefused)
		return src, "", false
	} else if !dup {
		l.githubSeen[repo], l.githubFirst[repo] = spec, e
	}
	return src, "github\x00" + repo + "\x00" + spec.Subpath, true
}

func refOrDefault(ref string) string {
	if ref == "" {
		return "the default branch"
	}
	return ref
}

// wellKnown returns the source of the publisher location e (of entry, as
// written, which its warnings name) and its key; ok is
// false (with a warning) when e does not parse or its origin is not
// allowlisted.
func (l *sourceList) wellKnown(e, entry string) (src events.Source, key string, ok bool) {
	cfg := l.cfg
	spec, err := ParseWellKnownURL(e, cfg.WellKnown.AllowHTTP)
	if err != nil {
		l.log.Warn("publisher source skipped: "+err.Error(), "source", entry, "rule", events.RuleSourceRefused)
		return src, "", false
	}
	if !slices.Contains(cfg.WellKnown.AllowedOrigins, spec.Origin) {
		l.log.Warn(fmt.Sprintf("Blocked: publisher source %s: origin %s is not in WELL_KNOWN_ALLOWED_ORIGINS (or wellKnownAllowedOrigins in %s); add it to serve this publisher",
			e, spec.Origin, cfg.ConfigPath), "source", entry, "rule", events.RuleSourceRefused)
		return src, "", false
	}
	src = events.Source{Location: e, Kind: events.SourceWellKnown, Publisher: spec.ForEvent(), Prefix: spec.Prefix,
		Root: filepath.Join(cfg.WellKnown.CacheDir, spec.Key, "skills")}
	return src, "well-known\x00" + spec.Origin + spec.PathPrefix, true
}

// local returns the source of the folder entry e and its key. Its prefix
// is the folder's name; for a folder that is itself a skill (it holds a
// SKILL.md) it is its parent folder's name, so the skill keeps the skill
// path and qualified name it has when the parent is the source
// (~/my-skills/pdf-summary serves my-skills__pdf-summary; issue 13 item 1).
func (l *sourceList) local(e string) (src events.Source, key string, ok bool) {
	src = events.Source{Location: e, Kind: events.SourceLocal, Root: resolvePath(e, l.home, l.cwd)}
	src.Prefix = filepath.Base(src.Root)
	if skill.HoldsMD(src.Root) {
		src.Prefix = filepath.Base(filepath.Dir(src.Root))
	}
	if src.Prefix == string(filepath.Separator) || src.Prefix == "." || src.Prefix == "" {
		src.Prefix = "root"
	}
	return src, "local\x00" + src.Root, true
}

// schemeRe matches an entry that starts with a URL scheme ("ftp://").
var schemeRe = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`)

// isGitHubSource reports whether the entry e names a GitHub repository:
// its host is exactly github.com (with or without a scheme, "www." or
// "git@"), so a folder path that merely contains "github.com"
// (~/go/src/github.com/acme/skills) stays a local folder, and a host like
// skills.github.com is a publisher.
func isGitHubSource(e string) bool {
	_, ok := cutGitHubHost(strings.TrimSpace(e))
	return ok
}

// warnCacheInSource warns when a remote cache in use lies inside a local
// source folder, not below a folder discovery skips ([skill.ToolFolder]):
// its cached skills would be served twice, once as the folder's.
func warnCacheInSource(cfg Config, log *slog.Logger) {
	for _, src := range cfg.Sources {
		if src.Kind != events.SourceLocal {
			continue
		}
		for _, c := range []struct {
			kind events.SourceKind
			dir  string
		}{{events.SourceWellKnown, cfg.WellKnown.CacheDir}, {events.SourceGitHub, cfg.GitHub.CacheDir}} {
			if !(events.SourcesConfigured{Sources: cfg.Sources}).Has(c.kind) {
				continue
			}
			rel, err := filepath.Rel(src.Root, c.dir)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				continue
			}
			skipped := false
			for seg := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
				skipped = skipped || skill.ToolFolder(seg)
			}
			if !skipped {
				log.Warn(fmt.Sprintf("the remote cache %s lies inside the source %s: its skills are served twice; set SKILLJACK_CACHE_DIR outside it (or below a folder discovery skips, such as .cache or .skilljack)", c.dir, src.Root), "source", src.Location)
			}
		}
	}
}

// remoteConfig completes the remote-source settings the table read
// (reference §2.2): the usable publisher origins, the allowed owners in
// lower case and the cache folders, warning once about each unusable
// origin.
func remoteConfig(st *Settings, home string, log *slog.Logger) (WellKnown, GitHub) {
	wk, gh := st.Config.WellKnown, st.Config.GitHub
	if base := st.cacheDir; base != "" {
		base = resolvePath(base, home, home)
		wk.CacheDir = filepath.Join(base, "well-known")
		gh.CacheDir = base
	} else {
		wk.CacheDir = filepath.Join(home, ".skilljack", "well-known-cache")
		gh.CacheDir = filepath.Join(home, ".skilljack", "github-cache")
	}
	wk.AllowedOrigins = nil
	for _, o := range st.wkOrigins {
		spec, err := ParseWellKnownURL(o, true)
		if err != nil || (spec.PathPrefix != "" && spec.PathPrefix != "/") {
			log.Warn("allowed publisher origin ignored: not an origin (scheme://host[:port]); check WELL_KNOWN_ALLOWED_ORIGINS or wellKnownAllowedOrigins", "value", o)
			continue
		}
		if !slices.Contains(wk.AllowedOrigins, spec.Origin) {
			wk.AllowedOrigins = append(wk.AllowedOrigins, spec.Origin)
		}
	}
	gh.AllowedOwners = nil
	for _, o := range append(slices.Clone(st.ghOrgs), st.ghUsers...) {
		o = strings.ToLower(strings.TrimSpace(o))
		if o != "" && !slices.Contains(gh.AllowedOwners, o) {
			gh.AllowedOwners = append(gh.AllowedOwners, o)
		}
	}
	return wk, gh
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

// ensureLogger returns log, or a logger that discards everything when nil.
func ensureLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
