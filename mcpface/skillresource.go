package mcpface

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/events"
)

const skillResourceUsage = `Read a supporting file of a skill: a template, script or reference that its SKILL.md mentions. Pass the skill's name and the file's path relative to the skill folder, for example {"skill": "my-project__commit", "path": "templates/message.md"}. An empty path lists the skill's files; a folder path returns every file in it. Load SKILL.md itself with load-skill.`

// maxSuggestions bounds the file names offered when a path is not found.
const maxSuggestions = 10

type skillResourceIn struct {
	Skill string `json:"skill" jsonschema:"the skill's name as listed in <available_skills>, e.g. my-project__commit"`
	Path  string `json:"path" jsonschema:"path of the file or folder relative to the skill folder, e.g. templates/message.md; empty to list the skill's files"`
}

func (f *Facade) skillResourceTool() *mcp.Tool {
	return &mcp.Tool{
		Name:        toolSkillResource,
		Title:       "Read Skill File",
		Description: skillResourceUsage,
		Annotations: readOnlyAnnotations("Read Skill File"),
		Meta:        modelOnlyMeta(),
	}
}

func (f *Facade) skillResource(_ context.Context, _ *mcp.CallToolRequest, in skillResourceIn) (*mcp.CallToolResult, any, error) {
	s := f.current()
	sk, missing := skillNamed(s.cat, in.Skill)
	if sk == nil {
		return missing, nil, nil
	}
	files := supportingFiles(sk)
	if strings.TrimSpace(in.Path) == "" {
		if len(files) == 0 {
			return textResult(fmt.Sprintf("Skill %s has only SKILL.md; load it with load-skill.", sk.QualifiedName)), nil, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Files in skill %s:\n", sk.QualifiedName)
		for _, file := range files {
			b.WriteString("- " + file.Path + "\n")
		}
		return textResult(strings.TrimSuffix(b.String(), "\n")), nil, nil
	}
	if reason := refusePath(in.Path); reason != "" {
		return errorResult(fmt.Sprintf("Invalid path %q: %s.", clip(in.Path), reason)), nil, nil
	}
	// The path is looked up verbatim in the manifest: nothing is joined onto
	// the file system (BR-21).
	for _, file := range files {
		if file.Path == in.Path {
			return f.readOne(s, sk, file), nil, nil
		}
	}
	prefix := strings.TrimSuffix(in.Path, "/") + "/"
	var under []*events.File
	for _, file := range files {
		if strings.HasPrefix(file.Path, prefix) {
			under = append(under, file)
		}
	}
	if len(under) > 0 {
		return f.readDir(s, sk, under), nil, nil
	}
	return errorResult(notFound(sk, in.Path, files)), nil, nil
}

// supportingFiles returns the manifest without the skill's own SKILL.md.
func supportingFiles(sk *events.Skill) []*events.File {
	var out []*events.File
	for i := range sk.Files {
		if i == 0 && sk.Files[i].Path == "SKILL.md" {
			continue
		}
		out = append(out, &sk.Files[i])
	}
	return out
}

// refusePath returns why p is refused outright, or "".
func refusePath(p string) string {
	switch {
	case strings.HasPrefix(p, "/"):
		return "absolute paths are not allowed"
	case strings.Contains(p, `\`):
		return "backslashes are not allowed; use / between folders"
	case strings.EqualFold(strings.TrimSuffix(p, "/"), "SKILL.md"):
		return "load SKILL.md with load-skill"
	}
	for _, seg := range strings.Split(p, "/") {
		if skill.Hidden(seg) {
			return "hidden files and relative segments such as .. are not served"
		}
	}
	return ""
}

func notFound(sk *events.Skill, p string, files []*events.File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "File %q not found in skill %s.", clip(p), sk.QualifiedName)
	if len(files) == 0 {
		b.WriteString(" The skill has only SKILL.md.")
		return b.String()
	}
	b.WriteString(" Available files:")
	for i, file := range files {
		if i == maxSuggestions {
			fmt.Fprintf(&b, "\n... and %d more", len(files)-maxSuggestions)
			break
		}
		b.WriteString("\n- " + file.Path)
	}
	return b.String()
}

func (f *Facade) readOne(s *snapshot, sk *events.Skill, file *events.File) *mcp.CallToolResult {
	data, served, err := f.readCurrent(s, sk, file, f.opts.MaxFileSize)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return errorResult(fmt.Sprintf("File too large: %s (limit %s). Read a smaller file.", megabytes(file.Size), megabytes(f.opts.MaxFileSize)))
		}
		return errorResult(fmt.Sprintf("Failed to read %s: %v", file.Path, err))
	}
	uri := sk.FileURI(file.Path)
	mime := fileMIME(served)
	if servedAsText(served, data) {
		return textResult(string(data))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{
		Resource: &mcp.ResourceContents{URI: uri, MIMEType: mime, Blob: data},
	}}}
}

func (f *Facade) readDir(s *snapshot, sk *events.Skill, files []*events.File) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	for _, file := range files {
		var body string
		switch data, served, err := f.readCurrent(s, sk, file, f.opts.MaxFileSize); {
		case errors.Is(err, errTooLarge):
			body = fmt.Sprintf("[File too large: %s]", megabytes(file.Size))
		case err != nil:
			body = fmt.Sprintf("[Could not read: %v]", err)
		case !skill.IsTextMIME(fileMIME(served)):
			body = fmt.Sprintf("[Binary file (%s, %d bytes). Read it on its own with skill-resource to get its bytes.]", fileMIME(served), served.Size)
		case !servedAsText(served, data):
			body = fmt.Sprintf("[Not valid UTF-8 (%s, %d bytes). Read it on its own with skill-resource to get its bytes.]", fileMIME(served), served.Size)
		default:
			body = string(data)
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: "--- " + file.Path + " ---\n" + body})
	}
	return res
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func modelInvocable(s *events.Skill) bool { return s.ModelInvocable }
func userInvocable(s *events.Skill) bool  { return s.UserInvocable }

// registerTools adds both tools on the first registration and later
// re-adds load-skill only when its description changed: re-adding makes the
// SDK send notifications/tools/list_changed, which must not go out for
// nothing. reg is what srv holds and is updated.
func (f *Facade) registerTools(srv *mcp.Server, s *snapshot, reg *registrations, first bool) {
	if f.opts.Tools == ToolsNever {
		return
	}
	if !first && reg.snap != nil && f.opts.CatalogMode == CatalogToolDescription {
		// The description carries the catalog: unchanged unless a changed
		// skill's entry in it is (issue 12: no 10,000-skill block per edit).
		if d := f.diffs.diffOf(reg.snap, s); d.shape && !blockChanged(reg.snap, s, d, modelInvocable) {
			return
		}
	}
	tool := f.loadSkillTool(s, reg.remote)
	if first {
		mcp.AddTool(srv, f.skillResourceTool(), f.skillResource)
	} else if tool.Description == reg.tool {
		return
	}
	mcp.AddTool(srv, tool, f.loadSkill)
	reg.tool = tool.Description
}
