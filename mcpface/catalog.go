package mcpface

import (
	"strings"
	"unicode/utf8"

	"github.com/skilljack/skilljack-mcp/events"
)

const instructionsIntro = `This server serves Agent Skills: folders of instructions, scripts and reference files that teach you how to do a specific task well. Each <skill> in the catalog below gives the skill's name, its description, and the skill:// URI of its SKILL.md.`

// howToLoad is the paragraph that tells how to load a skill, per tools mode.
var howToLoad = map[string]string{
	ToolsAuto:   "How to load a skill: a host that supports the MCP skills extension (io.modelcontextprotocol/skills) loads a skill by reading its <uri> with resources/read, and for such hosts this server does not offer the `load-skill` tool. Otherwise call `load-skill` with the skill's <name>, and `skill-resource` to read the files it refers to.",
	ToolsAlways: "How to load a skill: call `load-skill` with the skill's <name> to get its full SKILL.md, and `skill-resource` to read the files it refers to. A host that supports the MCP skills extension (io.modelcontextprotocol/skills) may instead read the skill's <uri> with resources/read.",
	ToolsNever:  "How to load a skill: this server offers no skill-loading tool. Load a skill through your host's skill loader, or read its <uri> with resources/read; its supporting files sit beside SKILL.md under the same skill:// path.",
}

const urgency = `IMPORTANT: when a task matches a skill's description, load that skill immediately, before you answer or take any other step. Loading the matching skill is a BLOCKING REQUIREMENT: do not start the task from memory.`

// catalogInstructions returns the server instructions: intro, how-to-load
// paragraph for toolsMode, urgency paragraph, and the catalog of
// model-invocable skills.
func catalogInstructions(c *events.Catalog, toolsMode string) string {
	return instructionsIntro + "\n\n" + howToLoad[toolsMode] + "\n\n" + urgency + "\n\n" +
		skillsBlock(c, func(s *events.Skill) bool { return s.ModelInvocable })
}

// skillsBlock is the reference's generateInstructions(): a "# Skills"
// heading, a one-line rule and the <available_skills> list of the skills keep
// accepts.
func skillsBlock(c *events.Catalog, keep func(*events.Skill) bool) string {
	return "# Skills\n\nWhen a task matches a skill below, activate that skill first, then follow its instructions fully.\n\n" +
		availableSkills(c, keep)
}

// availableSkills renders the <available_skills> element: elements only, in
// catalog (URI) order, every text XML-escaped. The empty list is exactly
// "<available_skills>\n</available_skills>".
func availableSkills(c *events.Catalog, keep func(*events.Skill) bool) string {
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for i := range c.Skills {
		s := &c.Skills[i]
		if !keep(s) {
			continue
		}
		b.WriteString("<skill>\n")
		b.WriteString("<name>" + xmlEscape(s.QualifiedName) + "</name>\n")
		b.WriteString("<description>" + xmlEscape(strings.TrimSpace(s.Description)) + "</description>\n")
		if p := diskPath(s); p != "" {
			b.WriteString("<location>" + xmlEscape(p) + "</location>\n")
		}
		b.WriteString("<uri>" + xmlEscape(s.URI) + "</uri>\n")
		b.WriteString("</skill>\n")
	}
	b.WriteString("</available_skills>")
	return b.String()
}

var xmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// xmlEscape escapes s for XML text and drops what XML 1.0 does not allow in
// a document at all (U+0000–U+0008, U+000B, U+000C, U+000E–U+001F, U+FFFE,
// U+FFFF and bytes that are not UTF-8), which a skill's name or description
// may hold and which would make the catalog unreadable to an XML parser.
func xmlEscape(s string) string { return xmlReplacer.Replace(xmlChars(s)) }

// xmlChars returns s without the characters XML 1.0 does not allow.
func xmlChars(s string) string {
	keep := func(i int, r rune) bool {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return false // a byte that is not UTF-8
		}
		return xmlChar(r)
	}
	for i, r := range s {
		if !keep(i, r) {
			var b strings.Builder
			b.WriteString(s[:i])
			for j, r := range s[i:] {
				if keep(i+j, r) {
					b.WriteRune(r)
				}
			}
			return b.String()
		}
	}
	return s
}

// xmlChar reports whether r is a Char of XML 1.0 (§2.2).
func xmlChar(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r':
		return true
	case r < 0x20, r == 0xFFFE, r == 0xFFFF:
		return false
	}
	return true
}

// qualifiedNames returns every skill's qualified name in catalog order.
func qualifiedNames(c *events.Catalog) []string {
	names := make([]string, 0, len(c.Skills))
	for i := range c.Skills {
		names = append(names, c.Skills[i].QualifiedName)
	}
	return names
}

// namesList joins names with ", ", or says "none".
func namesList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
