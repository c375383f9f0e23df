package config_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// The live configuration (issue 11 item 4): the config actor watches
// ~/.skilljack/config.json and applies config commands. Each test runs in a
// synctest bubble: the actor's poll ticker runs on the bubble's clock, so
// "within a second" is measured without sleeping for real.

// cfgRun is one config actor under test, with HOME at home.
type cfgRun struct {
	t        *testing.T
	home     string
	path     string
	pub      *eventstest.Publisher
	logs     *eventstest.LogBuffer
	commands chan *message.Message
	seen     int // messages of pub already looked at
	// views are the config.view messages published so far, which
	// published leaves out (view_test.go checks them).
	views []events.ConfigView
}

// startConfigActor starts the config actor of the configuration Resolve
// works out from args and env with HOME at home (cwd home too), reloading
// it the same way. Call inside a synctest bubble.
func startConfigActor(t *testing.T, home string, env map[string]string, args ...string) *cfgRun {
	t.Helper()
	log, logs := eventstest.CaptureLog()
	opts := config.ResolveOptions{Args: args, Home: home, Cwd: home, Getenv: func(k string) string { return env[k] }, Logger: log}
	cfg, err := config.Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &cfgRun{t: t, home: home, path: cfg.ConfigPath, pub: eventstest.NewPublisher(), logs: logs, commands: make(chan *message.Message)}
	a := config.New(config.Inboxes{Commands: r.commands}, r.pub, &config.Options{
		Config: cfg,
		Reload: func() (config.Config, error) { return config.Resolve(opts) },
		Logger: log,
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	})
	synctest.Wait()
	if got := r.published(); len(got) != 2 {
		t.Fatalf("published %d messages at start, want overrides.changed and sources.configured", len(got))
	}
	return r
}

// published returns the messages published since the last call, except
// the config views, which it appends to r.views.
func (r *cfgRun) published() []*message.Message {
	all := r.pub.All()
	var out []*message.Message
	for _, m := range all[r.seen:] {
		if m.Metadata.Get(events.MetadataName) == "ConfigView" {
			v, err := events.Decode[events.ConfigView](m)
			if err != nil {
				r.t.Fatal(err)
			}
			r.views = append(r.views, v)
			continue
		}
		out = append(out, m)
	}
	r.seen = len(all)
	return out
}

// within waits d of bubble time for the actor and returns what it
// published meanwhile.
func (r *cfgRun) within(d time.Duration) []*message.Message {
	time.Sleep(d)
	synctest.Wait()
	return r.published()
}

// command sends cmd and returns the answer and the events published before it.
func (r *cfgRun) command(cmd events.ConfigCommand) (events.ConfigApplied, []*message.Message) {
	r.t.Helper()
	r.commands <- eventstest.Encode(r.t, cmd)
	synctest.Wait()
	msgs := r.published()
	if len(msgs) == 0 {
		r.t.Fatalf("no answer to %+v", cmd)
	}
	ans, err := events.Decode[events.ConfigApplied](msgs[len(msgs)-1])
	if err != nil {
		r.t.Fatalf("last message after %+v: %v", cmd, err)
	}
	if ans.ID != cmd.ID || ans.Op != cmd.Op {
		r.t.Errorf("answer %+v does not repeat the command's ID and op %+v", ans, cmd)
	}
	return ans, msgs[:len(msgs)-1]
}

func editConfig(t *testing.T, home, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, ".skilljack"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A new file each time (write + rename), as editors save: the size
	// may stay the same, the inode does not.
	tmp := filepath.Join(home, ".skilljack", "edit.tmp")
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(home, ".skilljack", "config.json")); err != nil {
		t.Fatal(err)
	}
}

// decodeAll splits msgs into the configurations and override sets they hold.
func decodeAll(t *testing.T, msgs []*message.Message) (cfgs []events.SourcesConfigured, ovs []events.OverridesChanged) {
	t.Helper()
	for _, m := range msgs {
		switch m.Metadata.Get(events.MetadataName) {
		case "SourcesConfigured":
			ev, err := events.Decode[events.SourcesConfigured](m)
			if err != nil {
				t.Fatal(err)
			}
			cfgs = append(cfgs, ev)
		case "OverridesChanged":
			ev, err := events.Decode[events.OverridesChanged](m)
			if err != nil {
				t.Fatal(err)
			}
			ovs = append(ovs, ev)
		default:
			t.Fatalf("unexpected message %s", m.Metadata.Get(events.MetadataName))
		}
	}
	return cfgs, ovs
}

func locations(ev events.SourcesConfigured) []string {
	var out []string
	for _, s := range ev.Sources {
		out = append(out, s.Location)
	}
	return out
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConfigActorFileEdit: a hand edit of config.json adding a folder, an
// override and an allowlisted GitHub repository is published within a
// second as a new sources.configured (Seq 2, the repository parsed) and
// overrides.changed; removing them again gives Seq 3 (issue 11 item 4).
func TestConfigActorFileEdit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		a, b := filepath.Join(home, "a"), filepath.Join(home, "b")
		mkdirs(t, a, b)
		editConfig(t, home, `{"skillDirectories": [`+jsonQ(a)+`]}`)
		r := startConfigActor(t, home, nil)

		editConfig(t, home, `{"skillDirectories": [`+jsonQ(a)+`, `+jsonQ(b)+`, "github.com/acme/skills@v1"],
			"githubAllowedOrgs": ["acme"], "skillInvocationOverrides": {"a__x": {"assistant": false}}}`)
		cfgs, ovs := decodeAll(t, r.within(time.Second))
		if len(cfgs) != 1 || len(ovs) != 1 {
			t.Fatalf("within a second of the edit: %d configurations and %d override sets, want 1 and 1", len(cfgs), len(ovs))
		}
		if diff := cmp.Diff([]string{a, b, "github.com/acme/skills@v1", "bundled"}, locations(cfgs[0])); diff != "" {
			t.Errorf("sources after the edit (-want +got):\n%s", diff)
		}
		if cfgs[0].Seq != 2 || ovs[0].Seq != 2 {
			t.Errorf("seqs = %d, %d, want 2, 2", cfgs[0].Seq, ovs[0].Seq)
		}
		if want := (events.GitHubRepo{Owner: "acme", Repo: "skills", Ref: "v1"}); cfgs[0].Sources[2].GitHub != want {
			t.Errorf("GitHub source carries %+v, want %+v", cfgs[0].Sources[2].GitHub, want)
		}
		if ov := ovs[0].Overrides["a__x"]; ov.Assistant == nil || *ov.Assistant {
			t.Errorf("override a__x = %+v, want assistant false", ov)
		}

		// Touching the file without changing what it means publishes nothing.
		editConfig(t, home, `{"githubAllowedOrgs": ["acme"], "skillDirectories": [`+jsonQ(a)+`, `+jsonQ(b)+`, "github.com/acme/skills@v1"],
			"skillInvocationOverrides": {"a__x": {"assistant": false}}}`)
		if got := r.within(time.Second); len(got) != 0 {
			t.Errorf("an edit that changes nothing published %d messages", len(got))
		}

		editConfig(t, home, `{"skillDirectories": [`+jsonQ(b)+`]}`)
		cfgs, ovs = decodeAll(t, r.within(time.Second))
		if len(cfgs) != 1 || len(ovs) != 1 || cfgs[0].Seq != 3 {
			t.Fatalf("after removing: %+v %+v, want one configuration (Seq 3) and one override set", cfgs, ovs)
		}
		if diff := cmp.Diff([]string{b, "bundled"}, locations(cfgs[0])); diff != "" {
			t.Errorf("sources after removing (-want +got):\n%s", diff)
		}
	})
}

// TestConfigActorCorruptFile: a config.json that stops being JSON gives one
// warning naming the file, no new configuration, and the file is left
// byte for byte; a command then backs it up (once, however many commands
// are refused) and is refused; fixing the file
// by hand is picked up (issue 11 item 4).
func TestConfigActorCorruptFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		a := filepath.Join(home, "a")
		mkdirs(t, a)
		editConfig(t, home, `{"skillDirectories": [`+jsonQ(a)+`]}`)
		r := startConfigActor(t, home, nil)

		corrupt := `{"skillDirectories": [` + jsonQ(a) + `,, oops`
		editConfig(t, home, corrupt)
		if got := r.within(3 * time.Second); len(got) != 0 {
			t.Errorf("a corrupt file published %d messages, want none (the last good configuration stays)", len(got))
		}
		warns := 0
		for _, l := range strings.Split(r.logs.String(), "\n") {
			// The startup wording: line and column (trial bug E).
			if strings.Contains(l, "level=WARN") && strings.Contains(l, r.path) && strings.Contains(l, "not valid JSON (line 1, column ") {
				warns++
			}
		}
		if warns != 1 {
			t.Errorf("%d warnings naming %s, want 1; log:\n%s", warns, r.path, r.logs.String())
		}
		if b, _ := os.ReadFile(r.path); string(b) != corrupt {
			t.Errorf("config.json = %q, want it untouched %q", b, corrupt)
		}
		// The config tools' view says so too (trial bug E).
		if v := r.views[len(r.views)-1]; !strings.Contains(v.ConfigProblem, r.path+" is not valid JSON (line 1, column ") {
			t.Errorf("view's ConfigProblem = %q, want the file and where it broke", v.ConfigProblem)
		}

		ans, evs := r.command(events.ConfigCommand{ID: "c1", Op: events.ConfigAddAllowedOrg, Org: "acme"})
		if ans.Error == "" || !strings.Contains(ans.Error, "copied to") || len(evs) != 0 {
			t.Errorf("command on a corrupt file: %+v, %d events; want refused with the backup named, nothing published", ans, len(evs))
		}
		if b, _ := os.ReadFile(r.path); string(b) != corrupt {
			t.Errorf("config.json = %q after the command, want it untouched", b)
		}
		// A second refused command backs the same content up no more
		// (trial bug F).
		if ans, _ := r.command(events.ConfigCommand{ID: "c2", Op: events.ConfigAddAllowedOrg, Org: "acme"}); !strings.Contains(ans.Error, "copied to") {
			t.Errorf("second command on a corrupt file: %+v, want refused with the backup named", ans)
		}
		baks, _ := filepath.Glob(r.path + ".bak-*")
		if len(baks) != 1 {
			t.Fatalf("backups = %v, want one", baks)
		}
		if b, _ := os.ReadFile(baks[0]); string(b) != corrupt {
			t.Errorf("backup holds %q, want %q", b, corrupt)
		}

		editConfig(t, home, `{"skillDirectories": []}`)
		cfgs, _ := decodeAll(t, r.within(time.Second))
		if len(cfgs) != 1 || cfgs[0].Seq != 2 {
			t.Fatalf("after the fix: %+v, want one configuration, Seq 2", cfgs)
		}
		if v := r.views[len(r.views)-1]; v.ConfigProblem != "" {
			t.Errorf("after the fix the view's ConfigProblem = %q, want none", v.ConfigProblem)
		}
	})
}

// TestConfigActorCommands: each command op edits only its key of the file
// (unknown keys and entries kept), writes it 0600 with no temporary file
// left, and publishes the configuration it leads to (issue 11 item 4).
func TestConfigActorCommands(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name     string
		file     string // initial config.json; "" for none
		cmd      func(home string) events.ConfigCommand
		wantFile func(home string) string
		wantErr  string
		// wantSources are the locations published (nil: no new
		// configuration); wantOverrides the override set (nil: none).
		wantSources   func(home string) []string
		wantOverrides map[string]events.Override
		wantNote      string
	}{
		{
			name: "add-directory creates the folder and file, absolute path",
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddDirectory, Directory: "~/lib"}
			},
			wantFile:    func(home string) string { return `{"skillDirectories": [` + jsonQ(filepath.Join(home, "lib")) + `]}` },
			wantSources: func(home string) []string { return []string{filepath.Join(home, "lib"), "bundled"} },
		},
		{
			// issue 13 item 9: the name is kept in front of the stored path.
			name: "add-directory name=path keeps the name",
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddDirectory, Directory: "team=~/lib"}
			},
			wantFile: func(home string) string {
				return `{"skillDirectories": [` + jsonQ("team="+filepath.Join(home, "lib")) + `]}`
			},
			wantSources: func(home string) []string { return []string{"team=" + filepath.Join(home, "lib"), "bundled"} },
		},
		{
			name: "add-directory keeps unknown keys and entries",
			file: `{"theme": {"dark": true}, "skillDirectories": [5], "staticMode": false}`,
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddDirectory, Directory: filepath.Join(home, "lib")}
			},
			wantFile: func(home string) string {
				return `{"theme": {"dark": true}, "skillDirectories": [5, ` + jsonQ(filepath.Join(home, "lib")) + `], "staticMode": false}`
			},
			wantSources: func(home string) []string { return []string{filepath.Join(home, "lib"), "bundled"} },
		},
		{
			name: "add-directory refuses a duplicate and a missing folder",
			file: `{"skillDirectories": ["~/lib"]}`,
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddDirectory, Directory: filepath.Join(home, "lib")}
			},
			wantErr: "Already configured",
		},
		{
			// trial bug F: the words of startup, no Go type names.
			name: "a config file holding an array refuses a command in plain words",
			file: `["~/lib"]`,
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddAllowedOrg, Org: "acme"}
			},
			wantErr: "config.json is not a JSON object (it is an array); it was left as it is and copied to",
		},
		{
			name: "a config file holding null refuses a command",
			file: `null`,
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddAllowedOrg, Org: "acme"}
			},
			wantErr: "config.json is not a JSON object (it is null); it was left",
		},
		{
			name: "add-directory refuses a folder that does not exist",
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddDirectory, Directory: filepath.Join(home, "nope")}
			},
			wantErr: "no such file",
		},
		{
			name: "remove-directory",
			file: `{"skillDirectories": ["~/lib", "github.com/acme/x"], "other": 1}`,
			cmd: func(home string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigRemoveDirectory, Directory: filepath.Join(home, "lib")}
			},
			wantFile:    func(string) string { return `{"skillDirectories": ["github.com/acme/x"], "other": 1}` },
			wantSources: func(string) []string { return []string{"bundled"} }, // acme is not allowlisted
		},
		{
			name: "add-allowed-org serves a listed repository",
			file: `{"skillDirectories": ["github.com/acme/x"], "githubAllowedOrgs": ["Other"]}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddAllowedOrg, Org: "acme"}
			},
			wantFile: func(string) string {
				return `{"skillDirectories": ["github.com/acme/x"], "githubAllowedOrgs": ["Other", "acme"]}`
			},
			wantSources: func(string) []string { return []string{"github.com/acme/x", "bundled"} },
		},
		{
			name: "remove-allowed-org is case-insensitive",
			file: `{"githubAllowedOrgs": ["ACME", "other"]}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigRemoveAllowedOrg, Org: "acme"}
			},
			wantFile: func(string) string { return `{"githubAllowedOrgs": ["other"]}` },
		},
		{
			name: "add-allowed-origin reduces a URL to its origin",
			file: `{"skillDirectories": ["https://skills.example.com/docs"]}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddAllowedOrigin, Origin: "https://Skills.Example.com/docs/.well-known/agent-skills/index.json"}
			},
			wantFile: func(string) string {
				return `{"skillDirectories": ["https://skills.example.com/docs"], "wellKnownAllowedOrigins": ["https://skills.example.com"]}`
			},
			wantSources: func(string) []string { return []string{"https://skills.example.com/docs", "bundled"} },
		},
		{
			name: "add-allowed-origin refuses http",
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddAllowedOrigin, Origin: "http://skills.example.com"}
			},
			wantErr: "WELL_KNOWN_ALLOW_HTTP",
		},
		{
			name: "remove-allowed-origin",
			file: `{"wellKnownAllowedOrigins": ["https://a.example", "https://b.example/"]}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigRemoveAllowedOrigin, Origin: "https://b.example"}
			},
			wantFile: func(string) string { return `{"wellKnownAllowedOrigins": ["https://a.example"]}` },
			// The publisher allowlist travels in sources.configured.
			wantSources: func(string) []string { return []string{"bundled"} },
		},
		{
			name: "set-override keeps the other flag and unknown keys",
			file: `{"skillInvocationOverrides": {"lib__x": {"user": true, "note": "mine"}}}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigSetOverride, Skill: "lib__x", Setting: "assistant", Value: &no}
			},
			wantFile: func(string) string {
				return `{"skillInvocationOverrides": {"lib__x": {"user": true, "note": "mine", "assistant": false}}}`
			},
			wantOverrides: map[string]events.Override{"lib__x": {User: &yes, Assistant: &no}},
		},
		{
			name: "reset-override of one flag, then the empty entry goes",
			file: `{"skillInvocationOverrides": {"lib__x": {"assistant": false}, "lib__y": {"user": false}}}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigResetOverride, Skill: "lib__x", Setting: "assistant"}
			},
			wantFile:      func(string) string { return `{"skillInvocationOverrides": {"lib__y": {"user": false}}}` },
			wantOverrides: map[string]events.Override{"lib__y": {User: &no}},
		},
		{
			name: "set-static-mode is saved for the next start",
			file: `{"x": null}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigSetStaticMode, Value: &yes}
			},
			wantFile: func(string) string { return `{"x": null, "staticMode": true}` },
			wantNote: "next start",
		},
		{
			name: "a key of the wrong type is not overwritten",
			file: `{"githubAllowedOrgs": "acme"}`,
			cmd: func(string) events.ConfigCommand {
				return events.ConfigCommand{Op: events.ConfigAddAllowedOrg, Org: "bob"}
			},
			wantErr: "not a list",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				home := t.TempDir()
				mkdirs(t, filepath.Join(home, "lib"))
				if tc.file != "" {
					editConfig(t, home, tc.file)
				}
				r := startConfigActor(t, home, nil)
				before, _ := os.ReadFile(r.path)
				cmd := tc.cmd(home)
				cmd.ID = "req-1"
				ans, evs := r.command(cmd)
				if tc.wantErr != "" {
					if !strings.Contains(ans.Error, tc.wantErr) || len(evs) != 0 {
						t.Errorf("answer %+v with %d events, want an error with %q and none", ans, len(evs), tc.wantErr)
					}
					if after, _ := os.ReadFile(r.path); string(after) != string(before) {
						t.Errorf("a refused command changed the file:\n%s", after)
					}
					return
				}
				if ans.Error != "" {
					t.Fatalf("answer error %q", ans.Error)
				}
				if !strings.Contains(ans.Note, tc.wantNote) {
					t.Errorf("note %q, want it to hold %q", ans.Note, tc.wantNote)
				}
				checkConfigFile(t, r.path, tc.wantFile(home))
				cfgs, ovs := decodeAll(t, evs)
				if tc.wantSources == nil {
					if len(cfgs) != 0 {
						t.Errorf("published configuration %v, want none", locations(cfgs[0]))
					}
				} else if len(cfgs) != 1 || ans.ConfigSeq != 2 || cfgs[0].Seq != 2 {
					t.Errorf("published %d configurations, answer seq %d; want one, Seq 2", len(cfgs), ans.ConfigSeq)
				} else if diff := cmp.Diff(tc.wantSources(home), locations(cfgs[0])); diff != "" {
					t.Errorf("published sources (-want +got):\n%s", diff)
				}
				if tc.wantOverrides == nil {
					if len(ovs) != 0 {
						t.Errorf("published overrides %+v, want none", ovs[0])
					}
				} else if len(ovs) != 1 || ans.OverridesSeq != 2 {
					t.Errorf("published %d override sets, answer seq %d; want one, Seq 2", len(ovs), ans.OverridesSeq)
				} else if diff := cmp.Diff(tc.wantOverrides, ovs[0].Overrides); diff != "" {
					t.Errorf("published overrides (-want +got):\n%s", diff)
				}
				// The actor's own write is not seen as a new edit.
				if got := r.within(time.Second); len(got) != 0 {
					t.Errorf("%d messages after the command's own write, want none", len(got))
				}
			})
		})
	}
}

// checkConfigFile requires the config file to hold want (as JSON), with
// mode 0600 and nothing but it in its folder (no temporary file left).
func checkConfigFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got, w any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("config.json is not JSON: %v\n%s", err, b)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("config.json (-want +got):\n%s", diff)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode() != 0o600 {
		t.Errorf("config.json mode = %v, %v; want a regular file 0600", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"config.json"}) {
		t.Errorf("config folder holds %v, want config.json only", names)
	}
}

// TestConfigActorSymlinkNotWrittenThrough: a config.json that is a
// symbolic link is read (the configuration it holds is served) but a
// command never writes through it: refused, link and target unchanged.
func TestConfigActorSymlinkNotWrittenThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		target := filepath.Join(t.TempDir(), "dotfiles.json")
		body := `{"githubAllowedOrgs": ["acme"]}`
		if err := os.WriteFile(target, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		mkdirs(t, filepath.Join(home, ".skilljack"))
		link := filepath.Join(home, ".skilljack", "config.json")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		r := startConfigActor(t, home, nil)
		ans, evs := r.command(events.ConfigCommand{ID: "l", Op: events.ConfigAddAllowedOrg, Org: "bob"})
		if !strings.Contains(ans.Error, "symbolic link") || len(evs) != 0 {
			t.Errorf("answer %+v, %d events; want refused (symbolic link), nothing published", ans, len(evs))
		}
		if b, _ := os.ReadFile(target); string(b) != body {
			t.Errorf("target = %q, want it untouched", b)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("config.json is no longer the link: %v, %v", fi, err)
		}
	})
}

// TestConfigActorCLISourcesWin: with sources on the command line, a saved
// add-directory is answered with a note saying so and changes nothing
// served (reference §2.1: CLI > SKILLS_DIR > config file).
func TestConfigActorCLISourcesWin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		cli, lib := filepath.Join(home, "cli"), filepath.Join(home, "lib")
		mkdirs(t, cli, lib)
		r := startConfigActor(t, home, nil, cli)
		ans, evs := r.command(events.ConfigCommand{ID: "d", Op: events.ConfigAddDirectory, Directory: lib})
		if ans.Error != "" || !strings.Contains(ans.Note, "command line") || len(evs) != 0 || ans.ConfigSeq != 1 {
			t.Errorf("answer %+v, %d events; want saved with a note on the command line, config seq 1, nothing published", ans, len(evs))
		}
		checkConfigFile(t, r.path, `{"skillDirectories": [`+jsonQ(lib)+`]}`)
	})
}

// TestConfigActorEnvAllowlistWins: with GITHUB_ALLOWED_ORGS set, adding an
// org to the file is saved with a note and allowlists nothing now.
func TestConfigActorEnvAllowlistWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		r := startConfigActor(t, home, map[string]string{"GITHUB_ALLOWED_ORGS": "other"}, "github.com/acme/x")
		ans, evs := r.command(events.ConfigCommand{ID: "o", Op: events.ConfigAddAllowedOrg, Org: "acme"})
		if ans.Error != "" || !strings.Contains(ans.Note, "GITHUB_ALLOWED_ORGS") || len(evs) != 0 {
			t.Errorf("answer %+v, %d events; want saved with a note on GITHUB_ALLOWED_ORGS, nothing published", ans, len(evs))
		}
	})
}

// TestConfigActorStatic: in static mode the file is not watched (the skill
// set is fixed at startup) and commands are saved for the next start.
func TestConfigActorStatic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		lib := filepath.Join(home, "lib")
		mkdirs(t, lib)
		r := startConfigActor(t, home, map[string]string{"SKILLJACK_STATIC": "1"})
		editConfig(t, home, `{"skillDirectories": [`+jsonQ(lib)+`]}`)
		if got := r.within(time.Second); len(got) != 0 {
			t.Errorf("static: an edit published %d messages, want none", len(got))
		}
		ans, evs := r.command(events.ConfigCommand{ID: "s", Op: events.ConfigRemoveDirectory, Directory: lib})
		if ans.Error != "" || !strings.Contains(ans.Note, "static mode") || len(evs) != 0 {
			t.Errorf("answer %+v, %d events; want saved with a static-mode note, nothing published", ans, len(evs))
		}
	})
}

func jsonQ(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
