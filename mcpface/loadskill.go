package mcpface

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

const loadSkillUsage = `Load a skill's full instructions: returns its whole SKILL.md, frontmatter included. Call it as soon as the user's task matches a skill's description, before doing the task, then follow the instructions it returns. Pass the skill's name exactly as listed in <available_skills>, for example {"name": "my-project__commit"}. To read a file the skill refers to, call skill-resource.`

type loadSkillIn struct {
	Name string `json:"name" jsonschema:"the skill's name exactly as listed in <available_skills>, e.g. my-project__commit"`
}

// readOnlyAnnotations are shared by load-skill and skill-resource.
func readOnlyAnnotations(title string) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    true,
		DestructiveHint: &f,
		IdempotentHint:  true,
		OpenWorldHint:   &f,
	}
}

func (f *Facade) loadSkillTool(s *snapshot, remote bool) *mcp.Tool {
	desc := loadSkillUsage
	if f.opts.CatalogMode == CatalogToolDescription {
		desc += "\n\n" + f.skillsBlock(s.cat, modelInvocable, remote)
	}
	return &mcp.Tool{
		Name:        toolLoadSkill,
		Title:       "Load Skill",
		Description: desc,
		Annotations: readOnlyAnnotations("Load Skill"),
		Meta:        modelOnlyMeta(),
	}
}

func (f *Facade) loadSkill(_ context.Context, _ *mcp.CallToolRequest, in loadSkillIn) (*mcp.CallToolResult, any, error) {
	s := f.current()
	sk, missing := skillNamed(s.cat, in.Name)
	if sk == nil {
		return missing, nil, nil
	}
	if len(sk.Files) == 0 {
		return errorResult(fmt.Sprintf("Failed to load skill %q: it has no SKILL.md", in.Name)), nil, nil
	}
	data, err := f.currentSkillMD(s, sk)
	if err != nil {
		return errorResult(fmt.Sprintf("Failed to load skill %q: %v", in.Name, err)), nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil, nil
}

// skillNamed returns the skill named name ([resolveName]), or the tool
// error a model reads when there is none: the name and every served one.
func skillNamed(cat *events.Catalog, name string) (*events.Skill, *mcp.CallToolResult) {
	sk, msg := resolveName(cat, name)
	if sk == nil {
		return nil, errorResult(msg)
	}
	return sk, nil
}

// resolveName returns the skill whose qualified name is name or, failing
// that, the one skill whose bare name is name: its frontmatter name, or the
// last segment of its qualified name ("pdf-summary" for
// "skills__pdf-summary"), issue 13 item 9. When there is none, or several,
// it returns nil and the message a model or user reads: the candidates, or
// every served name.
func resolveName(cat *events.Catalog, name string) (*events.Skill, string) {
	if sk := cat.SkillByName(name); sk != nil {
		return sk, ""
	}
	var found []*events.Skill
	if name != "" {
		for i := range cat.Skills {
			s := cat.Skills[i]
			if s.Name == name || strings.HasSuffix(s.QualifiedName, "__"+name) {
				found = append(found, s)
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], ""
	case 0:
		return nil, fmt.Sprintf("No skill named %q. Available skills: %s", clip(name), namesList(qualifiedNames(cat)))
	}
	names := make([]string, len(found))
	for i, s := range found {
		names[i] = s.QualifiedName
	}
	return nil, fmt.Sprintf("Several skills are named %q; pass one of these qualified names: %s", clip(name), strings.Join(names, ", "))
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
