package mcpface

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface/apps"
)

// The skill-config tools (reference §1.2, §7). Every one of them answers
// with a [configResult]: one Go type, so one output schema, derived from it
// by go-sdk, declares every key any of them returns (reference bugs
// #94/#103: an undeclared key fails the client's validation).

// configDirectory is one directory card of the config app.
type configDirectory struct {
	Path       string `json:"path" jsonschema:"the entry: an absolute folder, a GitHub repository or a publisher URL (name=source when named)"`
	Source     string `json:"source" jsonschema:"the list that holds it: cli, env or config (only config entries can be removed)"`
	Type       string `json:"type" jsonschema:"local, github or well-known"`
	Valid      bool   `json:"valid" jsonschema:"a local entry is an existing folder; a remote entry parses"`
	Allowed    bool   `json:"allowed" jsonschema:"a remote entry's owner or origin is allowlisted (false: BLOCKED); always true for local entries"`
	Active     bool   `json:"active" jsonschema:"the entry is served now (its list is the active one)"`
	SkillCount int    `json:"skillCount" jsonschema:"skills served from it now"`
}

// configResult is the structuredContent of every skill-config tool. On
// success every key but error is present; a refused change carries
// success false and error only.
type configResult struct {
	Success      bool              `json:"success" jsonschema:"the change was saved (always true for skill-config)"`
	Error        string            `json:"error,omitempty" jsonschema:"why the change was refused"`
	Message      string            `json:"message,omitempty" jsonschema:"what was done, for a person"`
	Note         string            `json:"note,omitempty" jsonschema:"why a saved change is not served now (sources from the command line or SKILLS_DIR win, an environment allowlist wins, static mode applies at restart, still syncing)"`
	Directories  []configDirectory `json:"directories,omitzero" jsonschema:"every entry of the three source lists: command line, SKILLS_DIR, config file"`
	ActiveSource string            `json:"activeSource,omitempty" jsonschema:"the list the served sources come from: cli, env, config or none"`
	IsOverridden *bool             `json:"isOverridden,omitzero" jsonschema:"the command line or SKILLS_DIR sets the directories, so the config file's list is not served"`
	StaticMode   *bool             `json:"staticMode,omitzero" jsonschema:"the config file's staticMode, used from the next start"`
	// StaticActive is whether this run is static; the tools exist only
	// when it is not, so it is false, kept for the view's restart note.
	StaticActive   *bool    `json:"staticModeActive,omitzero" jsonschema:"this run is static (fixed at startup)"`
	AllowedOrgs    []string `json:"allowedOrgs,omitzero" jsonschema:"the config file's githubAllowedOrgs"`
	AllowedUsers   []string `json:"allowedUsers,omitzero" jsonschema:"the config file's githubAllowedUsers (shown only; edit the file)"`
	AllowedOrigins []string `json:"allowedOrigins,omitzero" jsonschema:"the config file's wellKnownAllowedOrigins"`
	EnvAllowlist   *bool    `json:"envAllowlist,omitzero" jsonschema:"GITHUB_ALLOWED_ORGS/USERS or WELL_KNOWN_ALLOWED_ORIGINS replace the file's lists"`
	TotalSkills    *int     `json:"totalSkills,omitzero" jsonschema:"skills served now, bundled ones included"`
	ConfigPath     string   `json:"configPath,omitempty" jsonschema:"the config file the changes are saved to"`
	ConfigProblem  string   `json:"configProblem,omitempty" jsonschema:"why the config file is not used: it failed to parse (with the line and column) or is not a JSON object; while the server runs the last good configuration stays served"`
}

type noArgs struct{}

type directoryIn struct {
	Directory string `json:"directory" jsonschema:"a folder (absolute, or ~/...), a GitHub repository (github.com/owner/repo[/sub][@ref]) or a publisher URL (https://host/.well-known/agent-skills/)"`
}

type orgIn struct {
	Org string `json:"org" jsonschema:"a GitHub organisation or user name, e.g. acme (case-insensitive)"`
}

type originIn struct {
	Origin string `json:"origin" jsonschema:"an https origin or any URL on it, e.g. https://example.com/.well-known/agent-skills/; only scheme://host[:port] is stored"`
}

type staticIn struct {
	Enabled bool `json:"enabled" jsonschema:"true to start in static mode from the next start"`
}

// toolAnnotations returns annotations with the given hints.
func toolAnnotations(title string, readOnly, destructive, idempotent bool) *mcp.ToolAnnotations {
	f := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &f}
}

func (f *Facade) registerConfigTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:  toolConfig,
		Title: "Configure Skills",
		Description: "Open the skills configuration: the skill directories (with where each comes from, its type and skill count), " +
			"the GitHub organisations and publisher origins allowed, and static mode. Use when the user wants to see, add or remove skill directories or allowlists. " +
			"In a host that renders MCP Apps it opens an interactive view; otherwise it returns the configuration as text.",
		Annotations: toolAnnotations("Configure Skills", true, false, true),
		Meta:        uiMeta(apps.ConfigURI, false),
	}, f.skillConfig)
	mut := func(name, title, desc string, destructive, idempotent bool) *mcp.Tool {
		return &mcp.Tool{Name: name, Title: title, Description: desc,
			Annotations: toolAnnotations(title, false, destructive, idempotent), Meta: uiMeta(apps.ConfigURI, true)}
	}
	mcp.AddTool(srv, mut(toolConfigAddDirectory, "Add Skills Directory",
		"Add a skill directory, GitHub repository or publisher to the config file's skillDirectories (config app only).", false, false),
		configTool(f, "Failed to add directory", func(in directoryIn) (events.ConfigCommand, string) {
			return events.ConfigCommand{Op: events.ConfigAddDirectory, Directory: in.Directory}, "Added directory: " + strings.TrimSpace(in.Directory)
		}))
	mcp.AddTool(srv, mut(toolConfigRemoveDir, "Remove Skills Directory",
		"Remove an entry from the config file's skillDirectories (config app only).", true, true),
		configTool(f, "Failed to remove directory", func(in directoryIn) (events.ConfigCommand, string) {
			return events.ConfigCommand{Op: events.ConfigRemoveDirectory, Directory: in.Directory}, "Removed directory: " + strings.TrimSpace(in.Directory)
		}))
	mcp.AddTool(srv, mut(toolConfigAddOrg, "Add Allowed GitHub Org",
		"Allow the GitHub repositories of an organisation or user (config file githubAllowedOrgs; config app only).", false, true),
		configTool(f, "Failed to add allowed org", func(in orgIn) (events.ConfigCommand, string) {
			return events.ConfigCommand{Op: events.ConfigAddAllowedOrg, Org: in.Org}, "Added allowed org: " + strings.TrimSpace(in.Org)
		}))
	mcp.AddTool(srv, mut(toolConfigRemoveOrg, "Remove Allowed GitHub Org",
		"Remove an organisation or user from the config file's githubAllowedOrgs (config app only).", true, true),
		configTool(f, "Failed to remove allowed org", func(in orgIn) (events.ConfigCommand, string) {
			return events.ConfigCommand{Op: events.ConfigRemoveAllowedOrg, Org: in.Org}, "Removed allowed org: " + strings.TrimSpace(in.Org)
		}))
	mcp.AddTool(srv, mut(toolConfigAddOrigin, "Add Allowed Well-Known Origin",
		"Allow a /.well-known/agent-skills/ publisher origin (https only unless WELL_KNOWN_ALLOW_HTTP; a full URL is reduced to its origin; config app only).", false, true),
		configTool(f, "Failed to add allowed origin", func(in originIn) (events.ConfigCommand, string) {
			return events.ConfigCommand{Op: events.ConfigAddAllowedOrigin, Origin: in.Origin}, "Added allowed origin: " + strings.TrimSpace(in.Origin)
		}))
	mcp.AddTool(srv, mut(toolConfigRemoveOrigin, "Remove Allowed Well-Known Origin",
		"Remove a publisher origin from the config file's wellKnownAllowedOrigins (config app only).", true, true),
		configTool(f, "Failed to remove allowed origin", func(in originIn) (events.ConfigCommand, string) {
			return events.ConfigCommand{Op: events.ConfigRemoveAllowedOrigin, Origin: in.Origin}, "Removed allowed origin: " + strings.TrimSpace(in.Origin)
		}))
	mcp.AddTool(srv, mut(toolConfigSetStatic, "Set Static Mode",
		"Save staticMode in the config file; it applies at the next start (config app only).", false, true),
		configTool(f, "Failed to set static mode", func(in staticIn) (events.ConfigCommand, string) {
			v := in.Enabled
			state := "off"
			if v {
				state = "on"
			}
			return events.ConfigCommand{Op: events.ConfigSetStaticMode, Value: &v}, "Static mode saved " + state + "; restart the server to apply it."
		}))
}

// skillConfig answers skill-config: the configuration view and catalog
// served now.
func (f *Facade) skillConfig(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, configResult, error) {
	wctx, cancel := context.WithTimeout(ctx, answerWait)
	defer cancel()
	v := f.viewAtLeast(wctx, 1)
	if v == nil {
		return refused("the configuration is not known yet; try again in a moment")
	}
	res := configSnapshot(v, f.current())
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: configText(res)}}}, res, nil
}

// configTool returns the handler of a mutation tool: build makes the
// command and the success message of its input; the command goes through
// [Facade.command], and the answer is the snapshot served once it is
// applied, or an isError result whose text starts with fail.
func configTool[In any](f *Facade, fail string, build func(In) (events.ConfigCommand, string)) mcp.ToolHandlerFor[In, configResult] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, configResult, error) {
		cmd, msg := build(in)
		ans, notServed, err := f.command(ctx, cmd)
		if err == nil && ans.Error != "" {
			err = errors.New(ans.Error)
		}
		if err != nil {
			return refused(fail + ": " + err.Error())
		}
		vctx, cancel := context.WithTimeout(ctx, answerWait)
		defer cancel()
		v := f.viewAtLeast(vctx, ans.ViewSeq)
		if v == nil {
			return refused(fail + ": the configuration is not known yet; try again in a moment")
		}
		res := configSnapshot(v, f.current())
		res.Message, res.Note = msg, ans.Note
		if notServed {
			res.Note = strings.TrimSpace(res.Note + " " + errNotServed.Error())
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: configText(res)}}}, res, nil
	}
}

// refused is the isError result of a change that was refused.
func refused(msg string) (*mcp.CallToolResult, configResult, error) {
	return errorResult(msg), configResult{Success: false, Error: msg}, nil
}

// configSnapshot is the result of the view v and the catalog of s.
func configSnapshot(v *events.ConfigView, s *snapshot) configResult {
	var skills []*events.Skill
	if s != nil {
		skills = s.cat.Skills
	}
	t, fl := true, false
	total := len(skills)
	res := configResult{
		Success: true, ActiveSource: v.ActiveSource,
		Directories:    []configDirectory{},
		IsOverridden:   &fl,
		StaticMode:     &v.SavedStatic,
		StaticActive:   &v.Static,
		AllowedOrgs:    nonNilStrings(v.AllowedOrgs),
		AllowedUsers:   nonNilStrings(v.AllowedUsers),
		AllowedOrigins: nonNilStrings(v.AllowedOrigins),
		EnvAllowlist:   &v.EnvAllowlist,
		TotalSkills:    &total,
		ConfigPath:     v.ConfigPath,
		ConfigProblem:  v.ConfigProblem,
	}
	if v.ActiveSource == events.FromCLI || v.ActiveSource == events.FromEnv {
		res.IsOverridden = &t
	}
	count := map[string]int{}
	for i := range skills {
		count[skills[i].Source.ID]++
	}
	for _, d := range v.Directories {
		cd := configDirectory{Path: d.Location, Source: d.From, Type: string(d.Kind), Valid: d.Valid, Allowed: d.Allowed, Active: d.SourceID != ""}
		if d.Root != "" {
			// Checked now: the folder may have come or gone since the view.
			fi, err := os.Stat(d.Root)
			cd.Valid = err == nil && fi.IsDir()
		}
		if cd.Active {
			cd.SkillCount = count[d.SourceID]
		}
		res.Directories = append(res.Directories, cd)
	}
	return res
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// configText is the configuration as text for the model and for hosts
// that render no views.
func configText(r configResult) string {
	var b strings.Builder
	if r.Message != "" {
		b.WriteString(r.Message + "\n")
	}
	if r.Note != "" {
		b.WriteString("Note: " + r.Note + "\n")
	}
	if r.ConfigProblem != "" {
		b.WriteString("Config file problem: " + r.ConfigProblem + "\n")
	}
	b.WriteString(directoriesHeader(r) + "\n")
	if len(r.Directories) == 0 {
		b.WriteString("- none: only the bundled skills are served\n")
	}
	for _, d := range r.Directories {
		state := countOf(d.SkillCount, "skill", "skills")
		switch {
		case !d.Allowed:
			state = "BLOCKED: not allowlisted"
		case !d.Valid:
			state = "missing"
		case !d.Active:
			state = "not served (another list is active)"
		}
		fmt.Fprintf(&b, "- %s [%s, %s] %s\n", d.Path, strings.ToUpper(d.Source), strings.ToUpper(d.Type), state)
	}
	if r.IsOverridden != nil && *r.IsOverridden {
		b.WriteString("The command line or SKILLS_DIR sets the directories; the config file's list is used when neither does.\n")
	}
	fmt.Fprintf(&b, "Allowed GitHub orgs: %s\n", listOrNone(r.AllowedOrgs))
	fmt.Fprintf(&b, "Allowed GitHub users: %s\n", listOrNone(r.AllowedUsers))
	fmt.Fprintf(&b, "Allowed publisher origins: %s\n", listOrNone(r.AllowedOrigins))
	if r.StaticMode != nil {
		fmt.Fprintf(&b, "Static mode (config file, applies at start): %s\n", onOff(*r.StaticMode))
	}
	if r.ConfigPath != "" {
		fmt.Fprintf(&b, "Config file: %s. A host that renders MCP Apps shows the config app to change these.", filepath.Clean(r.ConfigPath))
	}
	return b.String()
}

// directoriesHeader is the line above the directory cards: "Skill
// directories (2 entries; served from the config file list; 5 skills
// served in all):", without a list when none is active.
func directoriesHeader(r configResult) string {
	parts := []string{countOf(len(r.Directories), "entry", "entries")}
	if name := sourceName(r.ActiveSource); name != "" {
		parts = append(parts, "served from the "+name+" list")
	}
	total := 0
	if r.TotalSkills != nil {
		total = *r.TotalSkills
	}
	parts = append(parts, countOf(total, "skill", "skills")+" served in all")
	return "Skill directories (" + strings.Join(parts, "; ") + "):"
}

// countOf writes n with the singular or plural word: "no entries" for 0.
func countOf(n int, one, many string) string {
	switch n {
	case 0:
		return "no " + many
	case 1:
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sourceName names the active list for text, "" when none is active.
func sourceName(active string) string {
	switch active {
	case events.FromCLI:
		return "command-line"
	case events.FromEnv:
		return "SKILLS_DIR"
	case events.FromConfig:
		return "config file"
	}
	return ""
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(slices.Clone(l), ", ")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
