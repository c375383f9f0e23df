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
//
// When reg was registered from a snapshot whose skills s keeps in shape,
// only the changed skills are looked at ([Facade.patchPrompts]): an edit
// in 10,000 skills does not make 10,000 prompts again (issue 12).
func (f *Facade) registerPrompts(srv *mcp.Server, s *snapshot, reg *registrations) {
	if reg.snap != nil && reg.prompts != nil && f.patchPrompts(srv, s, reg) {
		return
	}
	want := make(map[string]string)
	add := func(p *mcp.Prompt, h mcp.PromptHandler) {
		want[p.Name] = p.Description
		if old, ok := reg.prompts[p.Name]; !ok || old != p.Description {
			srv.AddPrompt(p, h)
		}
	}
	add(f.skillPrompt(s, reg.remote), f.getSkillPrompt)
	for i := range s.cat.Skills {
		sk := s.cat.Skills[i]
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

// patchPrompts is [Facade.registerPrompts] from reg.snap to s by their
// changed skills alone, and reports whether it applied: the catalogs keep
// their shape, and every changed skill keeps its qualified name and
// whether it is user-invocable and is the skill its name finds (the last
// of that name, whose prompt the full registration keeps). Then the
// prompt names stay the ones registered; a changed skill's prompt is
// re-added when its description changed, and the skill prompt when the
// catalog it carries may have ([blockChanged]).
func (f *Facade) patchPrompts(srv *mcp.Server, s *snapshot, reg *registrations) bool {
	old := reg.snap
	d := f.diffs.diffOf(old, s)
	if !d.shape {
		return false
	}
	for _, i := range d.changed {
		a, b := old.cat.Skills[i], s.cat.Skills[i]
		if a.QualifiedName != b.QualifiedName || a.UserInvocable != b.UserInvocable || s.cat.SkillByName(b.QualifiedName) != b {
			return false
		}
	}
	if blockChanged(old, s, d, userInvocable) {
		if p := f.skillPrompt(s, reg.remote); reg.prompts[p.Name] != p.Description {
			srv.AddPrompt(p, f.getSkillPrompt)
			reg.prompts[p.Name] = p.Description
		}
	}
	for _, i := range d.changed {
		sk := s.cat.Skills[i]
		if !sk.UserInvocable || sk.QualifiedName == promptSkill {
			continue
		}
		if desc, ok := reg.prompts[sk.QualifiedName]; !ok || desc != sk.Description {
			srv.AddPrompt(&mcp.Prompt{Name: sk.QualifiedName, Title: sk.QualifiedName, Description: sk.Description}, f.getNamedPrompt)
			reg.prompts[sk.QualifiedName] = sk.Description
		}
	}
	return true
}

// blockChanged reports whether the <available_skills> list of the skills
// keep accepts may differ between snapshots a and b, whose skills differ
// by d (of the same shape): whether a changed skill is accepted in one
// and not the other, or accepted in b with another name, description,
// URI or path on disk than in a ([blockItem]: what the list is made of).
func blockChanged(a, b *snapshot, d skillDiff, keep func(*events.Skill) bool) bool {
	for _, i := range d.changed {
		x, y := a.cat.Skills[i], b.cat.Skills[i]
		if keep(x) != keep(y) {
			return true
		}
		if keep(y) && (x.QualifiedName != y.QualifiedName || x.Description != y.Description || x.URI != y.URI || diskPath(x) != diskPath(y)) {
			return true
		}
	}
	return false
}
