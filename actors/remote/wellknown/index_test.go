package wellknown_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/actors/remote/wellknown"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

const helloDigest = "sha256:4d1efe19ea355d4342112fb88383e5cec5dd5c37959355181ccdf265209bab7e"

// TestParseIndexEntries runs the entry-level vectors of TV-WKAS-02 inside a
// valid v0.2.0 index next to a valid entry: every invalid entry is skipped
// with a warning naming it, the valid one is kept (WKAS-R06..R12).
func TestParseIndexEntries(t *testing.T) {
	valid := `{"name":"ok","type":"skill-md","description":"d","url":"ok/SKILL.md","digest":"` + helloDigest + `"}`
	tests := []struct {
		name, entry string
		// placeholder: the entry keeps its name (its cached copy is kept).
		placeholder bool
	}{
		{"uppercase name", `{"name":"Hello","type":"skill-md","description":"d","url":"u","digest":"` + helloDigest + `"}`, false},
		{"consecutive hyphens", `{"name":"my--skill","type":"skill-md","description":"d","url":"u","digest":"` + helloDigest + `"}`, false},
		{"leading hyphen", `{"name":"-skill","type":"skill-md","description":"d","url":"u","digest":"` + helloDigest + `"}`, false},
		{"65 chars", `{"name":"` + strings.Repeat("a", 65) + `","type":"skill-md","description":"d","url":"u","digest":"` + helloDigest + `"}`, false},
		{"unknown type", `{"name":"hello","type":"mcp-resource-template","description":"d","url":"u","digest":"` + helloDigest + `"}`, true},
		{"digest missing", `{"name":"hello","type":"skill-md","description":"d","url":"u"}`, true},
		{"digest uppercase", `{"name":"hello","type":"skill-md","description":"d","url":"u","digest":"` + strings.ToUpper(helloDigest) + `"}`, true},
		{"digest without prefix", `{"name":"hello","type":"skill-md","description":"d","url":"u","digest":"` + helloDigest[7:] + `"}`, true},
		{"url missing", `{"name":"hello","type":"skill-md","description":"d","digest":"` + helloDigest + `"}`, true},
		{"description over 1024", `{"name":"hello","type":"skill-md","description":"` + strings.Repeat("a", 1025) + `","url":"u","digest":"` + helloDigest + `"}`, true},
		{"not an object", `"hello"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log, logs := eventstest.CaptureLog()
			doc := `{"$schema":"` + wellknown.DiscoverySchemaV02 + `","x-extra":1,"skills":[` + tc.entry + `,` + valid + `]}`
			got, v01, err := wellknown.ParseIndex([]byte(doc), false, log)
			if err != nil || v01 {
				t.Fatalf("ParseIndex = %v, v01 %v", err, v01)
			}
			want := []wellknown.IndexEntry{{Name: "ok", Type: "skill-md", URL: "ok/SKILL.md", Digest: helloDigest}}
			if tc.placeholder {
				want = append([]wellknown.IndexEntry{{Name: "hello"}}, want...)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if strings.Count(logs.String(), "level=WARN") != 1 || !strings.Contains(logs.String(), "skipped") {
				t.Errorf("want one warning about the skipped entry:\n%s", logs)
			}
		})
	}
}

// TestParseIndexDocument runs TV-WKAS-03 and TV-WKAS-05: unknown $schema is
// not processed, a missing one reads the index as v0.1 (RFC), skills
// missing or not an array fail, an empty catalogue is valid, and v0.1
// files lists are checked (WKAS-R05, R32).
func TestParseIndexDocument(t *testing.T) {
	tests := []struct {
		name, doc string
		legacy    bool
		wantErr   string
		wantV01   bool
		want      []wellknown.IndexEntry
	}{
		{name: "unknown $schema", doc: `{"$schema":"https://schemas.agentskills.io/discovery/0.3.0/schema.json","skills":[]}`, wantErr: "unknown $schema"},
		{name: "$schema not a string", doc: `{"$schema":1,"skills":[]}`, wantErr: "not a string"},
		{name: "skills missing", doc: `{"$schema":"` + wellknown.DiscoverySchemaV02 + `"}`, wantErr: "no skills"},
		{name: "skills not an array", doc: `{"$schema":"` + wellknown.DiscoverySchemaV02 + `","skills":{}}`, wantErr: "not an array"},
		{name: "not an object", doc: `[]`, wantErr: "not a JSON object"},
		{name: "empty catalogue", doc: `{"$schema":"` + wellknown.DiscoverySchemaV02 + `","skills":[]}`},
		{name: "missing $schema reads as v0.1", doc: `{"skills":[{"name":"hello","description":"Greets the user.","files":["SKILL.md"]}]}`,
			wantV01: true, want: []wellknown.IndexEntry{{Name: "hello", Type: "v0.1-files"}}},
		{name: "v0.1 files rules", legacy: true, wantV01: true, doc: `{"skills":[
			{"name":"release-notes","description":"Draft release notes.","files":["SKILL.md","references/STYLE.md","templates/entry.md"]},
			{"name":"a","description":"d","files":[]},
			{"name":"b","description":"d","files":["references/STYLE.md"]},
			{"name":"c","description":"d","files":["SKILL.md","/etc/passwd"]},
			{"name":"d","description":"d","files":["SKILL.md","../secrets.txt"]},
			{"name":"e","description":"d","files":["SKILL.md","notes?.md"]},
			{"name":"f","description":"d","files":["SKILL.md","refs\\a.md"]}]}`,
			want: []wellknown.IndexEntry{{Name: "release-notes", Type: "v0.1-files"}, {Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}, {Name: "e"}, {Name: "f"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log, _ := eventstest.CaptureLog()
			got, v01, err := wellknown.ParseIndex([]byte(tc.doc), tc.legacy, log)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseIndex error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || v01 != tc.wantV01 {
				t.Fatalf("ParseIndex = %v, v01 %v; want nil, %v", err, v01, tc.wantV01)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}
