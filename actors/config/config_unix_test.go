//go:build unix

package config_test

import (
	"os"
	"syscall"
	"testing"
)

// TestConfigFileSpecial: a FIFO as config.json no longer hangs startup and a
// link to /dev/zero no longer reads without end: both are refused with a
// warning naming the file, and the rest of the configuration still applies
// (issue 10 Low).
func TestConfigFileSpecial(t *testing.T) {
	runConfigFileCases(t, []configFileCase{
		{name: "FIFO", place: func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skip(err)
			}
		}, wantWarn: "not a regular file (a FIFO)"},
		{name: "link to /dev/zero", place: func(t *testing.T, path string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip(err)
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, wantWarn: "not a regular file (a device)"},
	})
}
