package events

// Project rule IDs. A finding ([Diagnostic.Rule]) cites the requirement ID
// of a specification when one applies (ASF-R05, SEP2640-R43…); a finding
// about this server's own limits, state or configuration, which no
// specification covers, cites one of these instead, so that every finding
// carries a rule. [Rules] is the one table of them; the README lists it.
const (
	RuleSourceRefused   = "SKJ-S01"
	RulePrefixRenamed   = "SKJ-S02"
	RuleNoSkill         = "SKJ-S03"
	RuleRootUnreadable  = "SKJ-S04"
	RuleNotCached       = "SKJ-S05"
	RuleFolderTwice     = "SKJ-S06"
	RuleSkippedFolder   = "SKJ-S07"
	RuleTooDeep         = "SKJ-S08"
	RuleOverCap         = "SKJ-F01"
	RuleUnreadable      = "SKJ-F02"
	RuleLinkNotFollowed = "SKJ-F03"
	RuleBrokenLink      = "SKJ-F04"
	RuleChangedInScan   = "SKJ-F05"
	RuleStaticAdded     = "SKJ-C01"
	RuleStaticRenamed   = "SKJ-C02"
	RuleOverrideUnused  = "SKJ-C03"
)

// Rule is one project rule: its ID and a one-line meaning.
type Rule struct {
	ID      string
	Meaning string
}

// Rules is every project rule ID with its meaning, in README order.
var Rules = []Rule{
	{RuleSourceRefused, "a configured source is not served: an invalid or repeated name, an owner or origin not allowlisted, an entry that does not parse, an unsupported scheme, a repeated source or a second ref of one repository"},
	{RulePrefixRenamed, "two sources would share a prefix: the later one's prefix gets a -2 suffix (name the sources to choose)"},
	{RuleNoSkill, "a source holds no skill folder"},
	{RuleRootUnreadable, "a source folder is missing, not a folder or unreadable"},
	{RuleNotCached, "a remote source has no cached copy yet (validate and list never fetch)"},
	{RuleFolderTwice, "a folder reached a second time (through a link or another source) is scanned once"},
	{RuleSkippedFolder, "a SKILL.md inside a folder discovery skips (version-control, tool or hidden folders) is not served"},
	{RuleTooDeep, "a SKILL.md more than six folders below its source root is past the discovery depth and not served as a skill"},
	{RuleOverCap, "a file is over its size cap (MAX_SKILL_MD_MB, MAX_FILE_SIZE_MB) and is not read"},
	{RuleUnreadable, "a file or folder cannot be read"},
	{RuleLinkNotFollowed, "a symbolic link that discovery does not follow"},
	{RuleBrokenLink, "a broken symbolic link is ignored"},
	{RuleChangedInScan, "a skill folder changed while it was scanned and waits for the next scan"},
	{RuleStaticAdded, "a skill added after startup is not served while the skill set is fixed (--static)"},
	{RuleStaticRenamed, "a skill renamed after startup keeps its startup name while the skill set is fixed (--static)"},
	{RuleOverrideUnused, "an entry of skillInvocationOverrides names no served skill"},
}
