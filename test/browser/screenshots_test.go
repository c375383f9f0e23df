package browser

import (
	"path/filepath"
	"testing"
)

// TestScreenshots renders both apps in both themes from a configuration
// with every kind of entry (a served folder, a GitHub repository whose owner
// is not allowlisted, a folder that does not exist) and one customised
// skill: the pictures in the README (copied from out/readme-*.png).
func TestScreenshots(t *testing.T) {
	e := newEnv(t)
	e.writeConfig(map[string]any{
		"skillDirectories":        []string{e.a, "github.com/acme/team-skills", filepath.Join(e.home, "moved-away")},
		"githubAllowedOrgs":       []string{"anthropics"},
		"wellKnownAllowedOrigins": []string{"https://skills.example.com"},
		"skillInvocationOverrides": map[string]any{
			"skills-a__beta": map[string]any{"assistant": false},
		},
	})
	srv := startServer(t, e.bin, e.home)
	h := startHost(t, srv, e.js)
	for _, app := range []struct{ tool, ready string }{
		{"skill-config", `document.querySelectorAll('#dirs li[data-path]').length === 3`},
		{"skill-display", `document.querySelector('#skills li[data-skill]')`},
	} {
		for _, theme := range []string{"light", "dark"} {
			v := openView(t, e.browser, h, app.tool, theme, "allow-scripts")
			v.wait(app.ready, app.tool+" to render")
			v.screenshot("readme-" + app.tool + "-" + theme)
		}
	}
}
