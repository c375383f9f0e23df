package mcpface

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// The skill-display tools (reference §1.2, §7): every served skill with its
// effective invocation flags, and the two app-only tools that write an
// invocation override (config key skillInvocationOverrides, keyed by
// qualified name). assistant=false takes a skill out of <available_skills>
// (instructions of a new session, the load-skill description in
// tool-description mode); user=false takes away its prompt. Resources and
// skills/list keep it (reference §2.3).

// displaySkill is one card of the display app.
type displaySkill struct {
	Name                  string `json:"name" jsonschema:"the qualified name (tools, prompts, overrides)"`
	BaseName              string `json:"baseName" jsonschema:"the frontmatter name"`
	Description           string `json:"description"`
	Path                  string `json:"path,omitempty" jsonschema:"the SKILL.md on disk; absent for bundled skills"`
	URI                   string `json:"uri" jsonschema:"the skill:// URI of its SKILL.md"`
	AssistantInvocable    bool   `json:"assistantInvocable" jsonschema:"the model may load it on its own (listed in <available_skills>)"`
	UserInvocable         bool   `json:"userInvocable" jsonschema:"it has a prompt in the user's prompt menu"`
	IsAssistantOverridden bool   `json:"isAssistantOverridden" jsonschema:"assistantInvocable comes from an override in the config file"`
	IsUserOverridden      bool   `json:"isUserOverridden" jsonschema:"userInvocable comes from an override in the config file"`
	SourceType            string `json:"sourceType" jsonschema:"local, github, bundled or well-known"`
	SourceDisplayName     string `json:"sourceDisplayName" jsonschema:"the source badge: Local, Bundled, owner/repo or the publisher origin"`
	SourceOwner           string `json:"sourceOwner,omitempty"`
	SourceRepo            string `json:"sourceRepo,omitempty"`
}

// displayResult is the structuredContent of every skill-display tool. On
// success skills and totalCount are present; a refused change carries
// success false and error only.
type displayResult struct {
	Success    bool           `json:"success" jsonschema:"the change was saved (always true for skill-display)"`
	Error      string         `json:"error,omitempty" jsonschema:"why the change was refused"`
	Message    string         `json:"message,omitempty" jsonschema:"what was done, for a person"`
	Note       string         `json:"note,omitempty" jsonschema:"why a saved change is not served yet"`
	Skills     []displaySkill `json:"skills,omitzero" jsonschema:"every served skill, sorted by name"`
	TotalCount *int           `json:"totalCount,omitzero" jsonschema:"the number of skills"`
}

type updateInvocationIn struct {
	SkillName string `json:"skillName" jsonschema:"the skill's qualified name, e.g. my-project__commit"`
	Setting   string `json:"setting" jsonschema:"assistant (the model loads it on its own) or user (its prompt)"`
	Value     bool   `json:"value" jsonschema:"true to allow, false to take it away"`
}

type resetOverrideIn struct {
	SkillName string `json:"skillName" jsonschema:"the skill's qualified name, e.g. my-project__commit"`
	Setting   string `json:"setting,omitempty" jsonschema:"assistant or user; omitted resets both"`
}

// settingSchema returns the input schema of In with the setting property
// limited to assistant and user (reference: a zod enum).
func settingSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("input schema of %T: %v", *new(In), err)) // a programming error, caught by every test
	}
	if p := s.Properties["setting"]; p != nil {
		p.Enum = []any{"assistant", "user"}
	}
	return s
}

func (f *Facade) registerDisplayTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:  toolDisplay,
		Title: "View Skills",
		Description: "Show every skill this server serves, with its source and whether the model may load it on its own and whether it has a prompt. " +
			"Use when the user wants to see the skills or choose which ones the assistant or the prompt menu offers. " +
			"In a host that renders MCP Apps it opens an interactive view with toggles; otherwise it returns the list as text.",
		Annotations: toolAnnotations("View Skills", true, false, true),
		Meta:        uiMeta(apps.DisplayURI, false),
	}, f.skillDisplay)
	mcp.AddTool(srv, &mcp.Tool{
		Name: toolDisplayUpdate, Title: "Update Skill Invocation",
		Description: "Set whether a skill is offered to the model (assistant) or in the prompt menu (user), saved as an override in the config file (display app only).",
		InputSchema: settingSchema[updateInvocationIn](),
		Annotations: toolAnnotations("Update Skill Invocation", false, false, true),
		Meta:        uiMeta(apps.DisplayURI, true),
	}, f.updateInvocation)
	mcp.AddTool(srv, &mcp.Tool{
		Name: toolDisplayResetOverride, Title: "Reset Skill Override",
		Description: "Remove a skill's invocation override, so its frontmatter decides again (display app only).",
		InputSchema: settingSchema[resetOverrideIn](),
		Annotations: toolAnnotations("Reset Skill Override", false, false, true),
		Meta:        uiMeta(apps.DisplayURI, true),
	}, f.resetOverride)
}

// skillDisplay answers skill-display from the catalog served now.
func (f *Facade) skillDisplay(_ context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, displayResult, error) {
	res := displaySnapshot(f.current())
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: displayText(res)}}}, res, nil
}

func (f *Facade) updateInvocation(ctx context.Context, _ *mcp.CallToolRequest, in updateInvocationIn) (*mcp.CallToolResult, displayResult, error) {
	const fail = "Failed to update skill invocation"
	if in.Setting != "assistant" && in.Setting != "user" {
		return displayRefused(fmt.Sprintf("%s: setting %q is not assistant or user", fail, clip(in.Setting)))
	}
	v := in.Value
	msg := fmt.Sprintf("%s: %s invocation %s", in.SkillName, in.Setting, onOff(v))
	return f.overrideCommand(ctx, fail, in.SkillName, events.ConfigCommand{Op: events.ConfigSetOverride, Skill: in.SkillName, Setting: in.Setting, Value: &v}, msg)
}

func (f *Facade) resetOverride(ctx context.Context, _ *mcp.CallToolRequest, in resetOverrideIn) (*mcp.CallToolResult, displayResult, error) {
	const fail = "Failed to reset skill override"
	if in.Setting != "" && in.Setting != "assistant" && in.Setting != "user" {
		return displayRefused(fmt.Sprintf("%s: setting %q is not assistant or user", fail, clip(in.Setting)))
	}
	what := "overrides"
	if in.Setting != "" {
		what = in.Setting + " override"
	}
	msg := fmt.Sprintf("%s: %s reset; its frontmatter decides", in.SkillName, what)
	return f.overrideCommand(ctx, fail, in.SkillName, events.ConfigCommand{Op: events.ConfigResetOverride, Skill: in.SkillName, Setting: in.Setting}, msg)
}

// overrideCommand checks that skill is served, sends cmd and answers with
// the skills served once it applies.
func (f *Facade) overrideCommand(ctx context.Context, fail, skill string, cmd events.ConfigCommand, msg string) (*mcp.CallToolResult, displayResult, error) {
	if s := f.current(); s == nil || s.cat.SkillByName(skill) == nil {
		return displayRefused(fmt.Sprintf("%s: unknown skill %q; call skill-display for the served skills' names", fail, clip(skill)))
	}
	ans, notServed, err := f.command(ctx, cmd)
	if err == nil && ans.Error != "" {
		err = errors.New(ans.Error)
	}
	if err != nil {
		return displayRefused(fail + ": " + err.Error())
	}
	res := displaySnapshot(f.current())
	res.Message, res.Note = msg, ans.Note
	if notServed {
		res.Note = strings.TrimSpace(res.Note + " " + errNotServed.Error())
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: displayText(res)}}}, res, nil
}

func displayRefused(msg string) (*mcp.CallToolResult, displayResult, error) {
	return errorResult(msg), displayResult{Success: false, Error: msg}, nil
}

// displaySnapshot lists the skills of s sorted by qualified name.
func displaySnapshot(s *snapshot) displayResult {
	res := displayResult{Success: true, Skills: []displaySkill{}}
	if s != nil {
		for i := range s.cat.Skills {
			res.Skills = append(res.Skills, displayOf(s.cat.Skills[i]))
		}
	}
	slices.SortFunc(res.Skills, func(a, b displaySkill) int { return strings.Compare(a.Name, b.Name) })
	n := len(res.Skills)
	res.TotalCount = &n
	return res
}

func displayOf(sk *events.Skill) displaySkill {
	d := displaySkill{
		Name: sk.QualifiedName, BaseName: sk.Name, Description: sk.Description, Path: diskPath(sk), URI: sk.URI,
		AssistantInvocable: sk.ModelInvocable, UserInvocable: sk.UserInvocable,
		IsAssistantOverridden: sk.AssistantOverridden, IsUserOverridden: sk.UserOverridden,
		SourceType: string(sk.Source.Kind),
	}
	switch sk.Source.Kind {
	case events.SourceGitHub:
		d.SourceOwner, d.SourceRepo = sk.Source.GitHub.Owner, sk.Source.GitHub.Repo
		d.SourceDisplayName = d.SourceOwner + "/" + d.SourceRepo
	case events.SourceWellKnown:
		d.SourceDisplayName = sk.Source.Publisher.Origin
	case events.SourceBundled:
		d.SourceDisplayName = "Bundled"
	default:
		d.SourceDisplayName = "Local"
	}
	return d
}

// maxDisplayLines bounds the skills listed in the text content: the model
// needs names and flags, not 10,000 lines.
const maxDisplayLines = 200

// displayText is the skill list as text for the model and for hosts that
// render no views.
func displayText(r displayResult) string {
	var b strings.Builder
	if r.Message != "" {
		b.WriteString(r.Message + "\n")
	}
	if r.Note != "" {
		b.WriteString("Note: " + r.Note + "\n")
	}
	fmt.Fprintf(&b, "%d skills (assistant: the model may load it on its own; user: it has a prompt):\n", len(r.Skills))
	for i, sk := range r.Skills {
		if i == maxDisplayLines {
			fmt.Fprintf(&b, "... and %d more\n", len(r.Skills)-i)
			break
		}
		custom := ""
		if sk.IsAssistantOverridden || sk.IsUserOverridden {
			custom = ", customised"
		}
		fmt.Fprintf(&b, "- %s [%s] assistant %s, user %s%s: %s\n", sk.Name, sk.SourceDisplayName, onOff(sk.AssistantInvocable), onOff(sk.UserInvocable), custom, clip(sk.Description))
	}
	b.WriteString("A host that renders MCP Apps shows the skills app, whose toggles save overrides in the config file.")
	return b.String()
}
