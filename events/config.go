package events

// GitHubRepo is a GitHub source as the config actor parsed it, so that no
// consumer parses [Source.Location] again. It never holds a token: the
// GitHub poller takes GITHUB_TOKEN from its options.
type GitHubRepo struct {
	// Owner and Repo are as written (".git" stripped).
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// Ref is the branch, tag or commit; "" means the default branch.
	Ref string `json:"ref,omitempty"`
	// Subpath is the '/'-separated folder inside the repository that holds
	// the skills; "" for the repository root.
	Subpath string `json:"subpath,omitempty"`
}

// Publisher is a /.well-known/agent-skills/ source as the config actor
// parsed it.
type Publisher struct {
	// Origin is "scheme://host[:port]", lower case.
	Origin string `json:"origin"`
	// PathPrefix is the URL path before /.well-known ("" or "/docs").
	PathPrefix string `json:"path_prefix,omitempty"`
	// IndexURL is the v0.2 index URL (WKAS-R01).
	IndexURL string `json:"index_url"`
	// LegacyIndexURL is the v0.1 index URL (WKAS-R32).
	LegacyIndexURL string `json:"legacy_index_url"`
	// Key names the publisher's cache folder.
	Key string `json:"key"`
}

// TopicConfigCommand is the topic of [ConfigCommand].
const TopicConfigCommand = "config.command"

// ConfigOp names what a [ConfigCommand] changes in the config file.
type ConfigOp string

// The config commands (reference §7, the skill-config-* and skill-display-*
// tools).
const (
	// ConfigAddDirectory appends Directory to skillDirectories: a local
	// folder (made absolute; it must exist), a GitHub repository or a
	// publisher URL (stored as given).
	ConfigAddDirectory ConfigOp = "add-directory"
	// ConfigRemoveDirectory removes Directory from skillDirectories.
	ConfigRemoveDirectory ConfigOp = "remove-directory"
	// ConfigAddAllowedOrg and ConfigRemoveAllowedOrg edit githubAllowedOrgs
	// (Org, case-insensitive).
	ConfigAddAllowedOrg    ConfigOp = "add-allowed-org"
	ConfigRemoveAllowedOrg ConfigOp = "remove-allowed-org"
	// ConfigAddAllowedOrigin and ConfigRemoveAllowedOrigin edit
	// wellKnownAllowedOrigins; Origin may be a full URL, reduced to its
	// origin.
	ConfigAddAllowedOrigin    ConfigOp = "add-allowed-origin"
	ConfigRemoveAllowedOrigin ConfigOp = "remove-allowed-origin"
	// ConfigSetOverride sets skillInvocationOverrides[Skill][Setting] to
	// Value.
	ConfigSetOverride ConfigOp = "set-override"
	// ConfigResetOverride removes skillInvocationOverrides[Skill][Setting],
	// or the whole entry when Setting is empty.
	ConfigResetOverride ConfigOp = "reset-override"
	// ConfigSetStaticMode sets staticMode to Value; it applies at the next
	// start.
	ConfigSetStaticMode ConfigOp = "set-static-mode"
	// ConfigSetClientRoots replaces the stdio client's workspace roots with
	// Roots (issue 13 item 14). It changes no file: the config actor serves
	// the skill folders of each root as extra local sources until the next
	// set-client-roots.
	ConfigSetClientRoots ConfigOp = "set-client-roots"
)

// ConfigCommand asks the config actor to change ~/.skilljack/config.json.
// Published by the MCP facade's config tools (and tests); consumed by the
// config actor, which answers every command with one [ConfigApplied]
// carrying the same ID.
type ConfigCommand struct {
	// ID correlates the answer; the caller picks it (a UUID).
	ID string `json:"id"`
	// Op is what to change.
	Op ConfigOp `json:"op"`
	// Directory is the argument of add-directory and remove-directory.
	Directory string `json:"directory,omitempty"`
	// Org is the argument of add-allowed-org and remove-allowed-org.
	Org string `json:"org,omitempty"`
	// Origin is the argument of add-allowed-origin and
	// remove-allowed-origin.
	Origin string `json:"origin,omitempty"`
	// Skill is the qualified skill name of set-override and reset-override.
	Skill string `json:"skill,omitempty"`
	// Setting is "assistant" or "user" (set-override; reset-override, where
	// empty means both).
	Setting string `json:"setting,omitempty"`
	// Value is the flag of set-override and set-static-mode.
	Value *bool `json:"value,omitempty"`
	// Roots are the absolute local folders of set-client-roots, in the
	// client's order; empty means the client has no roots.
	Roots []string `json:"roots,omitempty"`
}

// TopicConfigApplied is the topic of [ConfigApplied].
const TopicConfigApplied = "config.applied"

// ConfigApplied is the config actor's answer to one [ConfigCommand].
// Consumed by whoever sent the command (the facade's config tools wait for
// it, then for the catalog it leads to).
type ConfigApplied struct {
	// ID is the command's ID.
	ID string `json:"id"`
	// Op is the command's Op.
	Op ConfigOp `json:"op"`
	// ConfigSeq and OverridesSeq are the Seq of the [SourcesConfigured] and
	// [OverridesChanged] in force once the command was applied (published
	// before this answer when the command changed them).
	ConfigSeq    uint64 `json:"config_seq"`
	OverridesSeq uint64 `json:"overrides_seq"`
	// Error says why the command was refused; empty on success. A refused
	// command changed nothing.
	Error string `json:"error,omitempty"`
	// Note says why a saved change is not served now (sources given on the
	// command line or in SKILLS_DIR win over the file, an environment
	// allowlist wins over the file's, static mode applies at restart).
	Note string `json:"note,omitempty"`
}
