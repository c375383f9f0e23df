package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// DefaultPoll is how often the config actor looks at the config
// file's (size, mtime, inode): a hand edit is served well within a second.
const DefaultPoll = 250 * time.Millisecond

// Inboxes are the subscriptions an [Actor] reads.
type Inboxes struct {
	// Commands carries config.command ([events.ConfigCommand]). If nil, no
	// command arrives.
	Commands <-chan *message.Message
}

// Options configure an [Actor]. A nil *Options means defaults: an empty
// configuration that never changes.
type Options struct {
	// Config is the configuration of the start ([Resolve]); the actor
	// publishes it first.
	Config Config
	// Reload works the configuration out again, exactly as at the start
	// ([Resolve] with the start's options; it re-reads the config file).
	// Nil: the configuration never changes while running; the file is not
	// watched, and commands are saved to the file only.
	Reload func() (Config, error)
	// Poll is how often the config file is looked at. If zero, defaults to
	// [DefaultPoll].
	Poll time.Duration
	// Logger receives the actor's lines; nil discards.
	Logger *slog.Logger
}

// Actor is the one owner of the configuration while the server runs
// (DESIGN "config", issue 11 item 4). It publishes the configuration of the
// start, then keeps it current:
//   - it watches the config file (polling its size, mtime and inode every
//     [Options.Poll]; the file-watching library is the
//     watcher's alone) and on a change re-reads the configuration;
//   - it applies [events.ConfigCommand] messages to the config file (see
//     config_write.go for how the file is written) and re-reads the
//     configuration, then answers each with one [events.ConfigApplied].
//
// After a re-read it publishes a new [events.SourcesConfigured] (next Seq)
// when the sources or the publisher allowlist differ, and a new
// [events.OverridesChanged] when the overrides do. Sources given on the
// command line or in SKILLS_DIR still win over the file's
// skillDirectories, environment allowlists over the file's: re-reading
// applies the same rules as the start. A config file that is not a JSON
// object is reported once per version of it, with the file's name; the
// last good configuration stays served and the file is left as it is.
// Static mode (from the start) fixes the configuration: the file is not
// watched and commands are saved only, for the next start; a change of
// staticMode itself always applies at the next start.
type Actor struct {
	pub      message.Publisher
	log      *slog.Logger
	commands <-chan *message.Message
	reload   func() (Config, error)
	poll     time.Duration
	edit     configEdit

	// Run's state.
	cfg          Config
	seq, ovSeq   uint64
	stamp        fileStamp
	badStampSeen bool // the current stamp's file was reported as unusable
	// fileProblem says why the config file on disk is not used while the
	// last good configuration is served; "" once it is read again.
	fileProblem string
	// roots are the stdio client's workspace roots (set-client-roots,
	// roots.go): never saved, served beside the configured sources.
	roots []string
	// served are the sources of the last SourcesConfigured.
	served []events.Source
	// viewSeq and lastView are the Seq and content of the last ConfigView.
	viewSeq  uint64
	lastView events.ConfigView
}

// New returns the config actor of opts.Config, the configuration of the
// start, reading commands from in and publishing through pub. It panics if
// pub is nil. opts is copied (its Config too).
func New(in Inboxes, pub message.Publisher, opts *Options) *Actor {
	if pub == nil {
		panic("config.New: nil publisher")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	cfg := o.Config
	cfg.Sources = slices.Clone(cfg.Sources)
	cfg.Overrides = maps.Clone(cfg.Overrides)
	if cfg.Overrides == nil {
		cfg.Overrides = map[string]events.Override{}
	}
	cwd, _ := os.Getwd()
	home := filepath.Dir(filepath.Dir(cfg.ConfigPath)) // <home>/.skilljack/config.json
	return &Actor{
		pub: pub, log: ensureLogger(o.Logger), commands: in.Commands, reload: o.Reload, poll: o.Poll,
		edit: configEdit{home: home, cwd: cwd, allowHTTP: cfg.WellKnown.AllowHTTP, now: time.Now},
		cfg:  cfg,
	}
}

// live reports whether the configuration may change while running.
func (a *Actor) live() bool { return a.reload != nil && !a.cfg.Static && a.cfg.ConfigPath != "" }

// Run publishes [events.OverridesChanged] and then [events.SourcesConfigured]
// (both Seq 1), then watches the config file and handles commands until
// ctx is done, and returns nil. It returns an error only when the first
// publish fails. Call it once.
func (a *Actor) Run(ctx context.Context) error {
	a.log.Debug("configuration", "active_source", a.cfg.ActiveSource, "sources", len(a.cfg.Sources),
		"static", a.cfg.Static, "overrides", len(a.cfg.Overrides), "config_path", a.cfg.ConfigPath)
	a.seq, a.ovSeq = 1, 1
	if err := events.Publish(a.pub, events.OverridesChanged{Seq: 1, Overrides: a.cfg.Overrides, ConfigSeq: 1}); err != nil {
		return fmt.Errorf("publishing invocation overrides: %w", err)
	}
	if err := events.Publish(a.pub, a.sourcesEvent()); err != nil {
		return fmt.Errorf("publishing configured sources: %w", err)
	}
	a.publishView()
	var tick <-chan time.Time
	if a.live() {
		a.stamp = statConfig(a.cfg.ConfigPath)
		t := time.NewTicker(a.poll)
		defer t.Stop()
		tick = t.C
	}
	cmds := a.commands
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if s := statConfig(a.cfg.ConfigPath); s != a.stamp {
				a.stamp, a.badStampSeen = s, false
				a.fileChanged()
			}
		case msg, ok := <-cmds:
			if !ok {
				cmds = nil
				continue
			}
			if cmd, ok := events.Receive[events.ConfigCommand](a.log, msg); ok {
				a.answer(a.command(cmd))
			}
		}
	}
}

func (a *Actor) sourcesEvent() events.SourcesConfigured {
	a.served = a.servedSources()
	return events.SourcesConfigured{Seq: a.seq, Sources: a.served, Static: a.cfg.Static, AllowedOrigins: a.cfg.WellKnown.AllowedOrigins}
}

// fileChanged re-reads the configuration after the config file changed,
// unless the file cannot be used: then it warns once and keeps the last
// good configuration.
func (a *Actor) fileChanged() {
	path := a.cfg.ConfigPath
	if reason := unusableConfig(path); reason != "" {
		if !a.badStampSeen {
			a.badStampSeen = true
			a.fileProblem = "config file " + path + " " + reason
			a.log.Warn(a.fileProblem+"; the last good configuration stays served and the file is left as it is: fix it by hand", "path", path)
			a.publishView()
		}
		return
	}
	a.apply()
}

// unusableConfig says why the config file at path cannot be read as a
// configuration, or "" when it can (a missing or empty file can: it means
// the defaults); the words are [parseConfigObject]'s, as at startup.
func unusableConfig(path string) string {
	b, err := readRegularFile(path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("cannot be read (%v)", err)
	}
	_, problem := parseConfigObject(b)
	return problem
}

// apply re-reads the configuration and publishes what changed. A re-read
// that raced with another change of the file is dropped: the next poll
// sees that change.
func (a *Actor) apply() {
	next, err := a.reload()
	if err != nil {
		a.log.Warn("cannot reload the configuration; the last good one stays served", "error", err)
		return
	}
	if statConfig(a.cfg.ConfigPath) != a.stamp {
		return
	}
	next.Static = a.cfg.Static // static mode applies at the next start
	if next.Overrides == nil {
		next.Overrides = map[string]events.Override{}
	}
	prev := a.cfg
	a.cfg, a.fileProblem = next, ""
	defer a.publishView()
	if !reflect.DeepEqual(prev.Sources, next.Sources) || !slices.Equal(prev.WellKnown.AllowedOrigins, next.WellKnown.AllowedOrigins) {
		a.seq++
		a.log.Info("configured sources changed", "seq", a.seq, "sources", len(next.Sources), "active_source", next.ActiveSource)
		if err := events.Publish(a.pub, a.sourcesEvent()); err != nil {
			a.log.Error("publishing configured sources", "error", err)
		}
	}
	if !maps.EqualFunc(prev.Overrides, next.Overrides, sameOverride) {
		a.ovSeq++
		a.log.Info("invocation overrides changed", "seq", a.ovSeq, "overrides", len(next.Overrides))
		if err := events.Publish(a.pub, events.OverridesChanged{Seq: a.ovSeq, Overrides: next.Overrides, ConfigSeq: a.seq}); err != nil {
			a.log.Error("publishing invocation overrides", "error", err)
		}
	}
}

func sameOverride(a, b events.Override) bool {
	eq := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Assistant, b.Assistant) && eq(a.User, b.User)
}

// command applies cmd to the config file and, when the configuration is
// live, re-reads it; it returns the answer.
func (a *Actor) command(cmd events.ConfigCommand) events.ConfigApplied {
	if cmd.Op == events.ConfigSetClientRoots {
		return a.setClientRoots(cmd)
	}
	ans := events.ConfigApplied{ID: cmd.ID, Op: cmd.Op}
	path := a.cfg.ConfigPath
	err := func() error {
		if path == "" {
			return errors.New("no config file path")
		}
		top, err := a.edit.readConfigObject(path)
		if err != nil {
			return err
		}
		if err := a.edit.applyCommand(top, cmd); err != nil {
			return err
		}
		b, err := marshalConfig(top)
		if err != nil {
			return err
		}
		return writeConfigFile(path, b)
	}()
	if err != nil {
		ans.Error = err.Error()
		a.log.Warn("config command refused", "op", cmd.Op, "id", cmd.ID, "error", err)
	} else {
		a.log.Info("config file changed by a command", "op", cmd.Op, "id", cmd.ID, "path", path)
		if a.live() {
			a.stamp, a.badStampSeen = statConfig(path), false
			a.apply()
		}
		ans.Note = a.note(cmd)
	}
	ans.ConfigSeq, ans.OverridesSeq, ans.ViewSeq = a.seq, a.ovSeq, a.viewSeq
	return ans
}

// publishView publishes the [events.ConfigView] of the configuration held
// when it differs from the last one published (view.go).
func (a *Actor) publishView() {
	v := view(a.cfg, 0)
	if a.fileProblem != "" {
		v.ConfigProblem = a.fileProblem
	}
	if a.viewSeq > 0 && reflect.DeepEqual(v, a.lastView) {
		return
	}
	a.viewSeq++
	a.lastView = v
	v.Seq = a.viewSeq
	if err := events.Publish(a.pub, v); err != nil {
		a.log.Error("publishing the configuration view", "error", err)
	}
}

// note says why a saved command does not change what is served now.
func (a *Actor) note(cmd events.ConfigCommand) string {
	switch {
	case cmd.Op == events.ConfigSetStaticMode:
		return "saved: static mode applies at the next start"
	case a.cfg.Static:
		return "saved: the server runs in static mode, so the change applies at the next start"
	case !a.live():
		return "saved: this server does not reload its configuration while running, so the change applies at the next start"
	}
	switch cmd.Op {
	case events.ConfigAddDirectory, events.ConfigRemoveDirectory:
		switch a.cfg.ActiveSource {
		case activeCLI:
			return "saved: the sources given on the command line win over the config file's skillDirectories; it is used when none are given"
		case activeEnv:
			return "saved: the sources in SKILLS_DIR win over the config file's skillDirectories; it is used when SKILLS_DIR is not set"
		}
	case events.ConfigAddAllowedOrg, events.ConfigRemoveAllowedOrg:
		has := slices.Contains(a.cfg.GitHub.AllowedOwners, strings.ToLower(strings.TrimSpace(cmd.Org)))
		if has != (cmd.Op == events.ConfigAddAllowedOrg) {
			return "saved: GITHUB_ALLOWED_ORGS / GITHUB_ALLOWED_USERS (or githubAllowedUsers) decide the allowlist now; the file's githubAllowedOrgs is used when GITHUB_ALLOWED_ORGS is not set"
		}
	case events.ConfigAddAllowedOrigin, events.ConfigRemoveAllowedOrigin:
		o, err := a.edit.origin(cmd.Origin, false)
		if err == nil && slices.Contains(a.cfg.WellKnown.AllowedOrigins, o) != (cmd.Op == events.ConfigAddAllowedOrigin) {
			return "saved: WELL_KNOWN_ALLOWED_ORIGINS decides the allowlist now; the file's wellKnownAllowedOrigins is used when it is not set"
		}
	}
	return ""
}

func (a *Actor) answer(ans events.ConfigApplied) {
	if err := events.Publish(a.pub, ans); err != nil {
		a.log.Error("publishing config.applied", "id", ans.ID, "error", err)
	}
}

// fileStamp tells one version of the config file from another without
// reading it: the link itself and what it leads to, each by device, inode,
// size, mode and mtime. The zero value means missing.
type fileStamp struct {
	link, target fileID
}

type fileID struct {
	dev, ino  uint64
	size      int64
	mode      fs.FileMode
	mtimeNano int64
	exists    bool
}

func idOf(fi fs.FileInfo, err error) fileID {
	if err != nil {
		return fileID{}
	}
	id := fileID{size: fi.Size(), mode: fi.Mode(), mtimeNano: fi.ModTime().UnixNano(), exists: true}
	id.dev, id.ino = fileInode(fi)
	return id
}

func statConfig(path string) fileStamp {
	return fileStamp{link: idOf(os.Lstat(path)), target: idOf(os.Stat(path))}
}
