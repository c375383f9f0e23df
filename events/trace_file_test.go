package events_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestCreateTraceFile: --trace=FILE never writes through a symbolic link and
// never truncates a file that is not a trace; a missing file is created and
// an existing trace (or empty file) replaced by an empty one (issue 10 F1,
// trace bullet).
func TestCreateTraceFile(t *testing.T) {
	const trace = `{"time":"2026-01-02T03:04:05.123456Z","topic":"config.loaded","uuid":"u1","metadata":{"name":"ConfigLoaded"},"payload":{}}` + "\n"
	const canary = "root:x:0:0:root:/root:/bin/bash\n"
	tests := []struct {
		name    string
		place   func(t *testing.T, path, outside string) // outside holds canary
		wantErr string                                   // "" to succeed
		notDone bool                                     // wantErr wraps ErrNotTrace
	}{
		{name: "missing", place: func(*testing.T, string, string) {}},
		{name: "empty", place: func(t *testing.T, path, _ string) { write(t, path, "") }},
		{name: "old trace", place: func(t *testing.T, path, _ string) { write(t, path, trace+trace) }},
		{name: "not a trace", place: func(t *testing.T, path, _ string) { write(t, path, "my notes\n") },
			wantErr: "exists and is not a skilljack trace; choose another file", notDone: true},
		{name: "JSON but not a trace", place: func(t *testing.T, path, _ string) { write(t, path, `{"time":"soon","topic":"x"}`+"\n") },
			wantErr: "is not a skilljack trace", notDone: true},
		{name: "link to a file", place: func(t *testing.T, path, outside string) { symlink(t, outside, path) }, wantErr: "symbolic link"},
		{name: "link to a trace", place: func(t *testing.T, path, outside string) {
			write(t, outside+".trace", trace)
			symlink(t, outside+".trace", path)
		}, wantErr: "symbolic link"},
		{name: "dangling link", place: func(t *testing.T, path, outside string) { symlink(t, outside+".new", path) }, wantErr: "symbolic link"},
		{name: "folder", place: func(t *testing.T, path, _ string) { os.Mkdir(path, 0o755) }, wantErr: "not a regular file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			path, outside := filepath.Join(dir, "run.jsonl"), filepath.Join(elsewhere, "passwd")
			write(t, outside, canary)
			tc.place(t, path, outside)
			before := snapshot(t, dir)
			f, err := events.CreateTraceFile(path)
			if got, _ := os.ReadFile(outside); string(got) != canary {
				t.Errorf("file outside changed: %q", got)
			}
			if _, err := os.Stat(outside + ".new"); err == nil {
				t.Error("a file was created through a dangling link")
			}
			if tc.wantErr != "" {
				if err == nil {
					f.Close()
					t.Fatalf("CreateTraceFile = nil error, want %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) || errors.Is(err, events.ErrNotTrace) != tc.notDone {
					t.Errorf("CreateTraceFile = %v, want an error naming %s with %q (ErrNotTrace %v)", err, path, tc.wantErr, tc.notDone)
				}
				if after := snapshot(t, dir); after != before {
					t.Errorf("folder changed on refusal:\n%s\nwant\n%s", after, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(trace); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != trace {
				t.Errorf("trace file holds %q, want only the new line", got)
			}
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
				t.Errorf("trace file mode = %v (%v), want a regular file 0600", fi.Mode(), err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("folder holds %d entries, want only the trace", len(entries))
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
}

// snapshot lists dir's entries with their kinds and contents.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		content, _ := os.ReadFile(p)
		target, _ := os.Readlink(p)
		b.WriteString(e.Name() + " " + e.Type().String() + " " + target + " " + string(content) + "\n")
	}
	return b.String()
}
