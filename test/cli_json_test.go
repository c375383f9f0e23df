package test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Golden tests of `validate --json` and `list --json` (issue 15) on the
// messy-input cases of shared/cases and the Microsoft look-alike corpus:
// the whole report a tool would read, per case, in
// testdata/golden/cli/<case>-{validate,list}.json. The case folder is
// copied into a temp folder first and its path written as $CASE, so the
// goldens hold no machine's paths; the skills embedded in the binary are
// left out of the comparison (their own tests pin them), so that editing
// the bundled skill does not touch these files. Rewrite with
// `go test ./test -run TestCLIJSONGolden -update` and review the diff.

// cliGoldenCases are the cases whose inputs a plain copy carries.
var cliGoldenCases = []string{"BR-01", "BR-02", "BR-04", "BR-07", "BR-08", "BR-09", "BR-12", "BR-17", "BR-18", "BR-20", "microsoft-lookalike"}

func TestCLIJSONGolden(t *testing.T) {
	for _, id := range cliGoldenCases {
		t.Run(id, func(t *testing.T) {
			var dir string
			if strings.HasPrefix(id, "BR-") {
				dir = caseDir(t, id)
			} else {
				dir = filepath.Join(t.TempDir(), id)
				if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", id))); err != nil {
					t.Fatal(err)
				}
			}
			src := filepath.Join(dir, "skills")
			for _, cmd := range []string{"validate", "list"} {
				out, stderr, err := runRaw(t, "", nil, cmd, "--json", src)
				code := exitCode(t, err)
				var doc map[string]any
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("%s --json: stdout is not one JSON object (%v):\n%s\nstderr:\n%s", cmd, err, out, stderr)
				}
				wantCode := 0
				if cmd == "validate" {
					wantCode = int(doc["summary"].(map[string]any)["exit_code"].(float64))
				}
				if code != wantCode {
					t.Errorf("%s --json exited %d, its report says %d:\n%s", cmd, code, wantCode, stderr)
				}
				dropBundled(doc)
				got, err := json.MarshalIndent(doc, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(bytes.ReplaceAll(got, []byte(dir), []byte("$CASE")), '\n')
				compareGolden(t, filepath.Join("testdata", "golden", "cli", id+"-"+cmd+".json"), got)
			}
		})
	}
}

// dropBundled removes the bundled source, its skills and its count from a
// validate or list report.
func dropBundled(doc map[string]any) {
	keep := func(key, kindField string) {
		list, _ := doc[key].([]any)
		if list == nil {
			return
		}
		doc[key] = slices.DeleteFunc(list, func(v any) bool { return v.(map[string]any)[kindField] == "bundled" })
	}
	keep("sources", "kind")
	keep("skills", "source_kind")
	if sum, ok := doc["summary"].(map[string]any); ok {
		delete(sum, "bundled")
	}
}

// compareGolden compares got with the golden file path, or rewrites it
// with -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v (rewrite with go test ./test -run TestCLIJSONGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale (rewrite with go test ./test -run TestCLIJSONGolden -update and review the diff); got:\n%s", path, got)
	}
}
