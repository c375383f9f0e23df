package actors_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/skill/skilltest"
	"github.com/skilljack/skilljack-mcp/events"
)

// TestPipelineConfigCommands drives the whole pipeline (real bus, every
// actor from NewPipeline, the config file reloaded as main does) with
// config.command messages, as the UI tools of the next issue will: each is
// answered on config.applied, then the catalog follows — an added folder's
// skill appears, a set-override takes the skill out of the model's catalog,
// a removed folder's skill goes (issue 11 item 4).
func TestPipelineConfigCommands(t *testing.T) {
	home := t.TempDir()
	lib := filepath.Join(t.TempDir(), "lib")
	skilltest.WriteTree(t, lib, map[string]string{"x/SKILL.md": skilltest.SkillMD("x", "X.")})
	opts := config.ResolveOptions{Home: home, Cwd: home, Getenv: func(string) string { return "" }}
	cfg, err := config.Resolve(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	bus := events.NewBus(nil)
	catalogs, err := bus.Subscribe(ctx, events.TopicCatalogChanged)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := bus.Subscribe(ctx, events.TopicConfigApplied)
	if err != nil {
		t.Fatal(err)
	}
	p, err := actors.NewPipeline(ctx, bus, bus, cfg, &actors.PipelineOptions{
		Bundled: actors.Bundled(),
		Reload:  func() (config.Config, error) { return config.Resolve(opts) },
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("pipeline: %v", err)
		}
		bus.Close()
	})

	// The catalogs are acked as they come, so that no publisher waits on
	// this test while it waits for an answer.
	cats := make(chan *events.Catalog, 1000)
	go func() {
		for msg := range catalogs {
			ev, err := events.Decode[events.CatalogChanged](msg)
			msg.Ack()
			if err == nil {
				cats <- ev.Catalog
			}
		}
	}()
	var cur *events.Catalog
	// until reads catalogs until cond holds for one.
	until := func(what string, cond func(*events.Catalog) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for cur == nil || !cond(cur) {
			select {
			case cur = <-cats:
			case <-deadline:
				t.Fatalf("no catalog with %s within 10 s", what)
			}
		}
	}
	skill := func(c *events.Catalog, q string) *events.Skill {
		i := slices.IndexFunc(c.Skills, func(s *events.Skill) bool { return s.QualifiedName == q })
		if i < 0 {
			return nil
		}
		return c.Skills[i]
	}
	send := func(cmd events.ConfigCommand) events.ConfigApplied {
		t.Helper()
		if err := events.Publish(bus, cmd); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case msg := <-answers:
				ans, err := events.Decode[events.ConfigApplied](msg)
				msg.Ack()
				if err != nil {
					t.Fatal(err)
				}
				if ans.ID == cmd.ID {
					if ans.Error != "" {
						t.Fatalf("%s refused: %s", cmd.Op, ans.Error)
					}
					return ans
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no answer to %s within 10 s", cmd.Op)
			}
		}
	}

	until("the bundled skills", func(c *events.Catalog) bool { return len(c.Skills) > 0 })
	start := time.Now()
	send(events.ConfigCommand{ID: "1", Op: events.ConfigAddDirectory, Directory: lib})
	until("lib__x", func(c *events.Catalog) bool { return skill(c, "lib__x") != nil })
	if d := time.Since(start); d > time.Second {
		t.Errorf("the added folder took %v to be served, want within a second", d)
	}
	if !skill(cur, "lib__x").ModelInvocable {
		t.Fatal("lib__x is not model-invocable before the override")
	}

	no := false
	ans := send(events.ConfigCommand{ID: "2", Op: events.ConfigSetOverride, Skill: "lib__x", Setting: "assistant", Value: &no})
	if ans.OverridesSeq != 2 {
		t.Errorf("answer overrides seq = %d, want 2", ans.OverridesSeq)
	}
	until("lib__x out of the model's catalog", func(c *events.Catalog) bool {
		s := skill(c, "lib__x")
		return s != nil && !s.ModelInvocable && s.AssistantOverridden
	})

	send(events.ConfigCommand{ID: "3", Op: events.ConfigRemoveDirectory, Directory: lib})
	until("lib__x gone", func(c *events.Catalog) bool { return skill(c, "lib__x") == nil })

	if fi, err := os.Stat(filepath.Join(home, ".skilljack", "config.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config.json: %v, %v; want mode 0600", fi, err)
	}
}
