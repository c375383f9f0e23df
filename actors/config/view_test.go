package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestConfigActorView: the config actor publishes the configuration as the
// config tools show it (issue 14; reference §7 getAllDirectoriesWithSources):
// every entry of the command line, SKILLS_DIR and the config file, each
// with its list, kind, validity and allowlisting, the served ones with
// their source ID; the config file's own allowlists and staticMode. A
// command that changes it publishes a new view before its answer, whose
// ViewSeq names it; a change that leaves the view as it was publishes none.
func TestConfigActorView(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		home := t.TempDir()
		cli := filepath.Join(home, "cli")
		if err := os.MkdirAll(cli, 0o755); err != nil {
			t.Fatal(err)
		}
		saved := filepath.Join(home, "saved")
		editConfig(t, home, `{"skillDirectories": ["`+saved+`", "github.com/acme/skills"], "githubAllowedOrgs": ["Acme"],
			"wellKnownAllowedOrigins": ["https://pub.example.com"], "staticMode": true, "other": 1}`)
		// SKILLJACK_STATIC=false beats the file's staticMode: the run is
		// live, and the view still shows what the file says.
		env := map[string]string{"SKILLS_DIR": "github.com/other/repo, https://pub.example.com/.well-known/agent-skills/", "SKILLJACK_STATIC": "false"}
		r := startConfigActor(t, home, env, "cli")
		if len(r.views) != 1 {
			t.Fatalf("views at start = %d, want 1", len(r.views))
		}
		want := events.ConfigView{
			Seq: 1, ActiveSource: "cli", SavedStatic: true,
			Directories: []events.ConfiguredDirectory{
				{Location: cli, From: "cli", Kind: events.SourceLocal, SourceID: "0", Root: cli, Valid: true, Allowed: true},
				{Location: "github.com/other/repo", From: "env", Kind: events.SourceGitHub, Valid: true, Allowed: false},
				{Location: "https://pub.example.com/.well-known/agent-skills/", From: "env", Kind: events.SourceWellKnown, Valid: true, Allowed: true},
				{Location: saved, From: "config", Kind: events.SourceLocal, Root: saved, Valid: false, Allowed: true},
				{Location: "github.com/acme/skills", From: "config", Kind: events.SourceGitHub, Valid: true, Allowed: true},
			},
			AllowedOrgs: []string{"Acme"}, AllowedUsers: []string{}, AllowedOrigins: []string{"https://pub.example.com"},
			ConfigPath: filepath.Join(home, ".skilljack", "config.json"),
		}
		if diff := cmp.Diff(want, r.views[0]); diff != "" {
			t.Errorf("view at start mismatch (-want +got):\n%s", diff)
		}

		ans, _ := r.command(events.ConfigCommand{ID: "1", Op: events.ConfigAddAllowedOrg, Org: "other"})
		if ans.Error != "" || len(r.views) != 2 || ans.ViewSeq != 2 || r.views[1].Seq != 2 {
			t.Fatalf("add-allowed-org: answer %+v, %d views, want a second view named by ViewSeq 2", ans, len(r.views))
		}
		if got := r.views[1]; !cmp.Equal(got.AllowedOrgs, []string{"Acme", "other"}) || !got.Directories[1].Allowed {
			t.Errorf("view after add-allowed-org: orgs %v, env repository allowed %v; want [Acme other], true", got.AllowedOrgs, got.Directories[1].Allowed)
		}
		ans, _ = r.command(events.ConfigCommand{ID: "2", Op: events.ConfigAddAllowedOrg, Org: "OTHER"})
		// Trial bug G: a case-insensitive duplicate is refused "Already
		// allowed", as add-directory's "Already configured" (reference §1.2).
		if !strings.Contains(ans.Error, "OTHER: Already allowed") || len(r.views) != 2 || ans.ViewSeq != 2 {
			t.Errorf("adding an org already there: answer %+v, %d views; want Already allowed and no new view", ans, len(r.views))
		}
	})
}
