package mcpface_test

import (
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// TestPercentEncodedEquivalents checks that a URI is looked up after each
// segment is percent-decoded and re-encoded (BR-21 "after each segment is
// percent-decoded"; hostile tester finding 3: lower-case hex, an escaped
// unreserved letter and an escaped dot were refused), while every form that
// only a path resolution would match stays -32602.
func TestPercentEncodedEquivalents(t *testing.T) {
	fx := newFixture(t)
	uni := writeSkill(t, fx.root, skillSpec{dir: "uni-ñame", name: "uni-ñame", desc: "Non-ASCII name.", files: map[string][]byte{
		"bin/blob.dat": {0, 1, 2},
		"a b/c.md":     []byte("spaced\n"),
	}})
	cat := events.NewCatalog(1, false, append(slices.Clone(fx.cat.Skills), uni), nil)
	if uni.URI != "skill://skills/uni-%C3%B1ame/SKILL.md" {
		t.Fatalf("fixture URI = %s", uni.URI)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newFacade(t, cat, nil), era, nil)
			ctx := t.Context()
			for _, tc := range []struct{ uri, want string }{
				{"skill://skills/uni-%c3%b1ame/SKILL.md", uni.URI},
				{"skill://skills/%75ni-%C3%B1ame/SKILL.md", uni.URI},
				{"skill://skills/%63ode-review/SKILL.md", "skill://skills/code-review/SKILL.md"},
				{"skill://skills/uni-%c3%b1ame/bin/blob%2Edat", "skill://skills/uni-%C3%B1ame/bin/blob.dat"},
				{"skill://skills/uni-%C3%B1ame/a%20b/c%2emd", "skill://skills/uni-%C3%B1ame/a%20b/c.md"},
				{"skill://index%2Ejson", events.IndexURI},
			} {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.uri})
				if err != nil {
					t.Errorf("ReadResource(%s) = %v, want the file", tc.uri, err)
					continue
				}
				if got := res.Contents[0].URI; got != tc.want {
					t.Errorf("ReadResource(%s) contents uri = %s, want %s", tc.uri, got, tc.want)
				}
			}
			for _, uri := range []string{
				"skill://skills/code-review/%2e%2e/code-review/SKILL.md",
				"skill://skills/code-review/%2E/SKILL.md",
				"skill://skills/code-review/./SKILL.md",
				"skill://skills/code-review/..%2f..%2fSKILL.md",
				"skill://skills/code-review/templates%2Femail.md",
				"skill://skills/code-review/templates%2femail.md",
				"skill://skills/code-review//SKILL.md",
				"skill://skills/code-review/SKILL.md/",
				"skill://skills/code-review/%zz",
				"skill://skills/code-review/%c3",
				"skill://skills/code-review/SKILL%2Emd%00",
				"skill://",
			} {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				we := wireError(t, err)
				var data struct{ URI string }
				json.Unmarshal(we.Data, &data)
				if we.Code != -32602 || !strings.Contains(we.Message, uri) || data.URI != uri {
					t.Errorf("ReadResource(%s) = %d %q data %s, want -32602 naming the URI as written", uri, we.Code, we.Message, we.Data)
				}
				// On 2026-07-28 a subscription rides on a listen stream and
				// its refusal does not come back to Subscribe.
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); era == legacy && wireCode(err) != -32602 {
					t.Errorf("Subscribe(%s) = %v, want -32602", uri, err)
				}
			}

			// skills/get, resources/directory/read and subscribe take the
			// same equivalents.
			m, err := call(t, cs, "skills/get", &rawParams{URI: "skill://skills/uni-%c3%b1ame/SKILL%2Emd"})
			if err != nil {
				t.Errorf("skills/get of an equivalent URI: %v", err)
			} else if got := m["skill"].(map[string]any)["uri"]; got != uni.URI {
				t.Errorf("skills/get uri = %v, want %s", got, uni.URI)
			}
			for _, uri := range []string{"skill://skills/uni-%c3%b1ame/%2e%2e/uni-%c3%b1ame/SKILL.md", "skill://skills/%2e%2e/skills/code-review/SKILL.md"} {
				if _, err := call(t, cs, "skills/get", &rawParams{URI: uri}); wireCode(err) != -32602 {
					t.Errorf("skills/get(%s) = %v, want -32602", uri, err)
				}
			}
			m, err = call(t, cs, "resources/directory/read", &rawParams{URI: "skill://skills/uni-%c3%b1ame/%62in/"})
			if err != nil {
				t.Errorf("directory/read of an equivalent URI: %v", err)
			} else if rs := m["resources"].([]any); len(rs) != 1 || rs[0].(map[string]any)["uri"] != "skill://skills/uni-%C3%B1ame/bin/blob.dat" {
				t.Errorf("directory/read resources = %v", rs)
			}
			for _, uri := range []string{"skill://skills/uni-%c3%b1ame/%2e%2e", "skill://skills/uni-%c3%b1ame/bin/%2e%2e/bin"} {
				if _, err := call(t, cs, "resources/directory/read", &rawParams{URI: uri}); wireCode(err) != -32602 {
					t.Errorf("directory/read(%s) = %v, want -32602", uri, err)
				}
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "skill://skills/uni-%c3%b1ame/bin/blob%2Edat"}); err != nil {
				t.Errorf("Subscribe of an equivalent URI: %v", err)
			}
		})
	}
}

// TestCatalogXMLChars checks that characters XML 1.0 does not allow never
// reach the <available_skills> catalog (hostile tester finding 5: a NUL in a
// description went through), and that the catalog parses as XML.
func TestCatalogXMLChars(t *testing.T) {
	fx := newFixture(t)
	bad := writeSkill(t, fx.root, skillSpec{dir: "bad", name: "bad", qname: "skills__b\x00ad", desc: "x"})
	bad.Description = "a\x00b\x08c\x0bd\x0ce\x1ff\uFFFEg\uFFFFh\xffi\tj\uFFFDk\u00e9"
	cat := events.NewCatalog(1, false, append(slices.Clone(fx.cat.Skills), bad), nil)
	for _, mode := range []string{mcpface.CatalogInstructions, mcpface.CatalogToolDescription} {
		t.Run(mode, func(t *testing.T) {
			cs := connect(t, newFacade(t, cat, &mcpface.Options{CatalogMode: mode, Tools: mcpface.ToolsAlways}), legacy, nil)
			text := cs.InitializeResult().Instructions
			if mode == mcpface.CatalogToolDescription {
				lr, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, tool := range lr.Tools {
					if tool.Name == "load-skill" {
						text = tool.Description
					}
				}
			}
			start, end := strings.Index(text, "<available_skills>\n"), strings.LastIndex(text, "</available_skills>")
			if start < 0 || end < 0 {
				t.Fatalf("no catalog in %q", text)
			}
			block := text[start : end+len("</available_skills>")]
			want := "<name>skills__bad</name>\n<description>abcdefghi\tj\uFFFDk\u00e9</description>"
			if !strings.Contains(block, want) {
				t.Errorf("catalog lacks %q:\n%q", want, block)
			}
			var doc struct {
				Skills []struct {
					Name string `xml:"name"`
				} `xml:"skill"`
			}
			if err := xml.Unmarshal([]byte(block), &doc); err != nil {
				t.Errorf("catalog is not XML: %v", err)
			}
		})
	}
}
