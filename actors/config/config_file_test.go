package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// loadWithConfigFile runs Resolve with HOME=home and SKILLJACK_STATIC=1,
// failing if it does not return within a generous timeout (a FIFO once made
// it wait for ever). It returns the config and the log.
func loadWithConfigFile(t *testing.T, home string) (config.Config, string) {
	t.Helper()
	log, buf := eventstest.CaptureLog()
	type result struct {
		cfg config.Config
		err error
	}
	done := make(chan result, 1)
	go func() {
		cfg, err := config.Resolve(config.ResolveOptions{
			Getenv: func(k string) string {
				switch k {
				case "HOME":
					return home
				case "SKILLJACK_STATIC":
					return "1"
				}
				return ""
			},
			Cwd:    home,
			Logger: log,
		})
		done <- result{cfg, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.cfg, buf.String()
	case <-time.After(30 * time.Second):
		t.Fatal("Resolve did not return within 30 s")
		panic("unreachable")
	}
}

// configFileCase places something at ~/.skilljack/config.json; want the
// static setting read from it, or a warning naming the file and containing
// wantWarn (then the rest of the configuration, here SKILLJACK_STATIC, still
// applies).
type configFileCase struct {
	name     string
	place    func(t *testing.T, path string)
	wantDirs int    // skillDirectories entries read from the file
	wantWarn string // "" for none
}

func runConfigFileCases(t *testing.T, cases []configFileCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, ".skilljack", "config.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.place(t, path)
			cfg, log := loadWithConfigFile(t, home)
			dirs := 0
			for _, s := range cfg.Sources {
				if s.Kind != events.SourceBundled {
					dirs++
				}
			}
			if dirs != tc.wantDirs {
				t.Errorf("sources from the file = %d, want %d; log:\n%s", dirs, tc.wantDirs, log)
			}
			if !cfg.Static {
				t.Error("Static = false, want true from SKILLJACK_STATIC: the rest of the configuration must still apply")
			}
			warned := strings.Contains(log, "level=WARN") && strings.Contains(log, path)
			switch {
			case tc.wantWarn == "" && strings.Contains(log, "level=WARN"):
				t.Errorf("unexpected warning:\n%s", log)
			case tc.wantWarn != "" && (!warned || !strings.Contains(log, tc.wantWarn)):
				t.Errorf("no warning naming %s with %q; log:\n%s", path, tc.wantWarn, log)
			}
		})
	}
}

func writeConfig(content string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConfigFileShape: a config.json starting with a UTF-8 BOM is read (it
// was rejected whole); one over 1 MiB or a folder is refused with a warning
// naming the file, and the rest of the configuration still applies (issue
// 10 Low).
func TestConfigFileShape(t *testing.T) {
	const dirs = `{"skillDirectories": ["/x/one", "/x/two"]}`
	runConfigFileCases(t, []configFileCase{
		{name: "plain", place: writeConfig(dirs), wantDirs: 2},
		{name: "BOM", place: writeConfig("\ufeff" + dirs), wantDirs: 2},
		{name: "oversize", place: writeConfig(`{"skillDirectories": ["/x/one"], "pad": "` + strings.Repeat("p", config.MaxFileBytes) + `"}`), wantWarn: "larger than 1048576 bytes"},
		{name: "at the cap", place: writeConfig(dirs + strings.Repeat(" ", config.MaxFileBytes-len(dirs))), wantDirs: 2},
		{name: "folder", place: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantWarn: "not a regular file (a folder)"},
		{name: "link to a regular file", place: func(t *testing.T, path string) {
			real := filepath.Join(filepath.Dir(path), "real.json")
			writeConfig(dirs)(t, real)
			if err := os.Symlink(real, path); err != nil {
				t.Skip(err)
			}
		}, wantDirs: 2},
	})
}
