package mcpface

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
)

const skillPromptUsage = "Load a skill by name with auto-completion."

func (f *Facade) skillPrompt(s *snapshot, remote bool) *mcp.Prompt {
	return &mcp.Prompt{
		Name:        promptSkill,
		Title:       "Load Skill",
		Description: skillPromptUsage + "\n\n" + f.skillsBlock(s.cat, userInvocable, remote),
		Arguments: []*mcp.PromptArgument{{
			Name:        "name",
			Description: "the skill's qualified name, e.g. my-project__commit",
			Required:    true,
		}},
	}
}

// getSkillPrompt answers prompts/get of "skill".
func (f *Facade) getSkillPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	s := f.current()
	name := req.Params.Arguments["name"]
	sk, msg := resolveName(s.cat, name)
	if sk == nil {
		// A normal message, not an error, as in the reference.
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
			Role:    "user",
			Content: &mcp.TextContent{Text: msg},
		}}}, nil
	}
	return f.skillMessage(s, sk)
}

// getNamedPrompt answers prompts/get of a per-skill prompt.
func (f *Facade) getNamedPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	s := f.current()
	sk := s.cat.SkillByName(req.Params.Name)
	if sk == nil && f.opts.Static {
		// Static mode keeps the prompts of the first catalog (no
		// list_changed), so a prompt can outlive its skill's folder: say so
		// in a message the user reads, as the skill prompt does for an
		// unknown name, rather than fail a prompt that prompts/list offers.
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
			Role:    "user",
			Content: &mcp.TextContent{Text: fmt.Sprintf("The skill %s was removed from disk after the server started in static mode; restart the server to refresh its skills.", clip(req.Params.Name))},
		}}}, nil
	}
	if sk == nil || !sk.UserInvocable {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", clip(req.Params.Name))}
	}
	return f.skillMessage(s, sk)
}

// skillMessage is the prompt result for sk of snapshot s: one user message
// embedding its SKILL.md for the assistant.
func (f *Facade) skillMessage(s *snapshot, sk *events.Skill) (*mcp.GetPromptResult, error) {
	if len(sk.Files) == 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("skill %s has no SKILL.md", sk.QualifiedName)}
	}
	data, err := f.currentSkillMD(s, sk)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("loading skill %s: %v", sk.QualifiedName, err)}
	}
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
		Role: "user",
		Content: &mcp.EmbeddedResource{
			Resource:    &mcp.ResourceContents{URI: sk.URI, MIMEType: "text/markdown", Text: string(data)},
			Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 1.0},
		},
	}}}, nil
}

// registerPrompts brings the prompts in line with the snapshot: the skill
// prompt (whose description carries the catalog of user-invocable skills)
// and one prompt per user-invocable skill. Only a prompt that is new or whose
// description changed is (re-)added, and only prompts that went are removed,
// so the SDK sends notifications/prompts/list_changed only for a visible
// change. reg is what srv holds and is updated.
func (f *Facade) registerPrompts(srv *mcp.Server, s *snapshot, reg *registrations) {
	want := make(map[string]string)
	add := func(p *mcp.Prompt, h mcp.PromptHandler) {
		want[p.Name] = p.Description
		if old, ok := reg.prompts[p.Name]; !ok || old != p.Description {
			srv.AddPrompt(p, h)
		}
	}
	add(f.skillPrompt(s, reg.remote), f.getSkillPrompt)
	for i := range s.cat.Skills {
		sk := &s.cat.Skills[i]
		if !sk.UserInvocable {
			continue
		}
		if sk.QualifiedName == promptSkill {
			f.log.Warn("skill name collides with the fixed prompt; no prompt of its own", "skill", sk.QualifiedName)
			continue
		}
		add(&mcp.Prompt{
			Name:        sk.QualifiedName,
			Title:       sk.QualifiedName,
			Description: sk.Description,
		}, f.getNamedPrompt)
	}
	var gone []string
	for name := range reg.prompts {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		srv.RemovePrompts(gone...)
	}
	reg.prompts = want
}
