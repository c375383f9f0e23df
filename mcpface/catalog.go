package mcpface

import (
	"fmt"
	"slices"
	"strings"
	"sync"
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
// paragraph for the tools mode, urgency paragraph, and the catalog of
// model-invocable skills. remote is true for HTTP clients (see
// [Facade.skillsBlock]).
func (f *Facade) catalogInstructions(c *events.Catalog, remote bool) string {
	return instructionsIntro + "\n\n" + howToLoad[f.opts.Tools] + "\n\n" + urgency + "\n\n" +
		f.skillsBlock(c, modelInvocable, remote)
}

// skillsBlock is the reference's generateInstructions(): a "# Skills"
// heading, a one-line rule and the <available_skills> list of the skills keep
// accepts, kept within the catalog budget ([Facade.availableSkills]).
func (f *Facade) skillsBlock(c *events.Catalog, keep func(*events.Skill) bool, remote bool) string {
	list, note := f.availableSkills(c, keep, remote)
	if note != "" {
		note += "\n\n"
	}
	return "# Skills\n\nWhen a task matches a skill below, activate that skill first, then follow its instructions fully.\n\n" +
		note + list
}

// minDescription is the shortest a description is cut to before the
// catalog falls back to names only: below it a description no longer says
// when to use the skill.
const minDescription = 80

// availableSkills renders the <available_skills> element of the skills keep
// accepts (see [renderSkills]) within the catalog budget, and returns with
// it the one line that says how it was shortened, or "" (issue 13 item 6).
// Over the budget, descriptions are cut to the longest length that fits
// (at least minDescription characters); if even that is too long, only
// names are listed; if even that is too long, only the first names that
// fit. The first shortening warns once per process.
func (f *Facade) availableSkills(c *events.Catalog, keep func(*events.Skill) bool, remote bool) (string, string) {
	var skills []*events.Skill
	for i := range c.Skills {
		if keep(c.Skills[i]) {
			skills = append(skills, c.Skills[i])
		}
	}
	items := blockItems(skills, !remote)
	if out, note, ok := f.blocks.get(items, remote); ok {
		return out, note
	}
	out, note := f.renderAvailable(skills, remote)
	f.blocks.put(items, remote, out, note)
	return out, note
}

// renderAvailable is [Facade.availableSkills] without the memo.
//
// The lengths it tries are counted, not rendered ([renderedChars]): at
// 10,000 skills a full rendering is some 4 MB that an over-budget catalog
// never uses, on the way to the first initialize (issue 12).
func (f *Facade) renderAvailable(skills []*events.Skill, remote bool) (string, string) {
	full := renderedChars(skills, !remote, -1)
	budget := f.opts.CatalogBudget
	if budget <= 0 || full <= budget {
		return renderSkills(skills, !remote, -1), ""
	}
	fits := func(cut int) bool { return renderedChars(skills, !remote, cut) <= budget }
	intro := fmt.Sprintf("This list is shortened to fit the catalog budget of %d characters (--catalog-budget, SKILLJACK_CATALOG_BUDGET): ", budget)
	rest := "; skills/list and the `skill` prompt give every skill with its full description."
	var out, how string
	if fits(minDescription) {
		// The longest cut that fits: rendered length grows with it.
		lo, hi := minDescription, maxDescription(skills)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if fits(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		out = renderSkills(skills, !remote, lo)
		how = fmt.Sprintf("descriptions longer than %d characters are cut", lo)
	} else if n := namesFit(skills, budget); n == len(skills) {
		out, how = renderNames(skills), fmt.Sprintf("only the names of the %d skills are listed", len(skills))
	} else {
		// A budget too small for even an empty list lists no name (n = 0)
		// rather than failing.
		out, how = renderNames(skills[:n]), fmt.Sprintf("only the names of the first %d of %d skills are listed", n, len(skills))
	}
	if f.budgetWarned.CompareAndSwap(false, true) {
		f.log.Warn("the skill catalog is over its budget and is shortened in instructions and the skill prompt description; see every skill in skills/list",
			"characters", full, "budget", budget, "skills", len(skills), "shortened", how,
			"setting", "--catalog-budget or SKILLJACK_CATALOG_BUDGET")
	}
	return out, intro + how + rest
}

// blockItem is what the rendering of one skill in <available_skills>
// depends on ([renderSkills], [renderNames]).
type blockItem struct {
	name, description, path, uri string
}

// blockItems returns the rendering inputs of skills; path is left empty
// unless paths holds.
func blockItems(skills []*events.Skill, paths bool) []blockItem {
	items := make([]blockItem, len(skills))
	for i, s := range skills {
		items[i] = blockItem{name: s.QualifiedName, description: s.Description, uri: s.URI}
		if paths {
			items[i].path = diskPath(s)
		}
	}
	return items
}

// blockMemo holds the last few <available_skills> renderings with their
// inputs, so that a catalog version that changes no listed name,
// description, path or URI (a file edit) does not render 10,000 skills
// again, twice over (issue 12: edit latency). The output is a function of
// the inputs, remote and the facade's fixed budget only. Safe for
// concurrent use.
type blockMemo struct {
	mu      sync.Mutex
	entries [4]blockEntry
	next    int // the entry put overwrites
}

type blockEntry struct {
	set       bool
	remote    bool
	items     []blockItem
	out, note string
}

func (m *blockMemo) get(items []blockItem, remote bool) (string, string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		if e.set && e.remote == remote && slices.Equal(e.items, items) {
			return e.out, e.note, true
		}
	}
	return "", "", false
}

func (m *blockMemo) put(items []blockItem, remote bool, out, note string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries[m.next] = blockEntry{set: true, remote: remote, items: items, out: out, note: note}
	m.next = (m.next + 1) % len(m.entries)
}

// chars counts the characters (runes) of s, the unit of the budget.
func chars(s string) int { return utf8.RuneCountInString(s) }

// maxDescription returns the length of the longest trimmed description.
func maxDescription(skills []*events.Skill) int {
	n := 0
	for _, s := range skills {
		n = max(n, chars(strings.TrimSpace(s.Description)))
	}
	return n
}

// renderSkills renders the <available_skills> element: elements only, in
// catalog (URI) order, every text XML-escaped. The empty list is exactly
// "<available_skills>\n</available_skills>". Each skill gives its name,
// its description (cut to cut characters, an ellipsis included, when cut
// >= 0), its SKILL.md's absolute path on disk as <location> when paths
// holds (a stdio client runs on the server's machine; an HTTP client must
// never see server paths, issue 13 item 11) and its skill:// URI.
func renderSkills(skills []*events.Skill, paths bool, cut int) string {
	var b strings.Builder
	// One buffer of about the right size, each piece written into it: at
	// 10,000 skills the concatenations and regrowth were most of the
	// rendering on the way to the first initialize (issue 12).
	n := 64
	for _, s := range skills {
		n += 100 + len(s.QualifiedName) + len(s.Description) + len(s.URI)
		if paths {
			n += 24 + len(s.Dir) + len("/SKILL.md")
		}
	}
	b.Grow(n)
	writeSkills(&b, skills, paths, cut)
	return b.String()
}

// renderedChars is chars(renderSkills(skills, paths, cut)), counted
// without making the string.
func renderedChars(skills []*events.Skill, paths bool, cut int) int {
	var c runeCounter
	writeSkills(&c, skills, paths, cut)
	return int(c)
}

// runeCounter is a string writer that only counts the characters written.
type runeCounter int

func (c *runeCounter) WriteString(s string) (int, error) {
	*c += runeCounter(chars(s))
	return len(s), nil
}

// writeSkills writes what [renderSkills] returns to w.
func writeSkills(w interface{ WriteString(string) (int, error) }, skills []*events.Skill, paths bool, cut int) {
	w.WriteString("<available_skills>\n")
	for _, s := range skills {
		w.WriteString("<skill>\n<name>")
		w.WriteString(xmlEscape(s.QualifiedName))
		w.WriteString("</name>\n<description>")
		w.WriteString(xmlEscape(shorten(strings.TrimSpace(s.Description), cut)))
		w.WriteString("</description>\n")
		if p := diskPath(s); paths && p != "" {
			w.WriteString("<location>")
			w.WriteString(xmlEscape(p))
			w.WriteString("</location>\n")
		}
		w.WriteString("<uri>")
		w.WriteString(xmlEscape(s.URI))
		w.WriteString("</uri>\n</skill>\n")
	}
	w.WriteString("</available_skills>")
}

// namesFit returns the largest n for which renderNames(skills[:n]) is at
// most budget characters long (0 when not even the empty list fits),
// counting instead of rendering every prefix (issue 12: at 10,000 skills
// a search over prefixes rendered the list 15 times on the way to the
// first initialize).
func namesFit(skills []*events.Skill, budget int) int {
	n := chars(renderNames(nil))
	if n > budget {
		return 0
	}
	for i, s := range skills {
		n += chars(nameItem(s))
		if n > budget {
			return i
		}
	}
	return len(skills)
}

// nameItem is one skill's line in [renderNames].
func nameItem(s *events.Skill) string {
	return "<skill><name>" + xmlEscape(s.QualifiedName) + "</name></skill>\n"
}

// renderNames renders the <available_skills> element with names only.
func renderNames(skills []*events.Skill) string {
	var b strings.Builder
	b.WriteString("<available_skills>\n")
	for _, s := range skills {
		b.WriteString(nameItem(s))
	}
	b.WriteString("</available_skills>")
	return b.String()
}

// shorten returns s cut to at most n characters, the last one an ellipsis,
// or s whole when n < 0 or s is short enough.
func shorten(s string, n int) string {
	if n < 0 || chars(s) <= n {
		return s
	}
	// The byte offset of character n-1, without a []rune of s (four
	// bytes a character, per skill and per cut tried: 10 MB at 10,000
	// skills on the way to the first initialize).
	end, k := 0, 0
	for i := range s {
		if k == max(n-1, 0) {
			end = i
			break
		}
		k++
	}
	if !utf8.ValidString(s[:end]) {
		// A byte that is not UTF-8 becomes U+FFFD, as a []rune makes it.
		return strings.TrimSpace(string([]rune(s[:end]))) + "…"
	}
	return strings.TrimSpace(s[:end]) + "…"
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
