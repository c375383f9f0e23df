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
	// ViewSeq is the Seq of the [ConfigView] in force once the command was
	// applied (published before this answer when the command changed it).
	ViewSeq uint64 `json:"view_seq,omitempty"`
}

// TopicConfigView is the topic of [ConfigView].
const TopicConfigView = "config.view"

// The lists a configured directory can come from ([ConfiguredDirectory.From],
// [ConfigView.ActiveSource]), as the reference names them (§2.1).
const (
	FromCLI    = "cli"
	FromEnv    = "env"
	FromConfig = "config"
)

// ConfiguredDirectory is one entry of a source list as the user wrote it
// (reference §7: a directory card of the config app).
type ConfiguredDirectory struct {
	// Location is the entry as written: a folder made absolute, a GitHub
	// repository or a publisher URL (with its "name=" when it has one).
	Location string `json:"location"`
	// From is the list that holds it: "cli", "env" or "config".
	From string `json:"from"`
	// Kind is local, github or well-known.
	Kind SourceKind `json:"kind"`
	// SourceID is the [Source.ID] the entry is served as; empty when it is
	// not served (its list is not the active one, it is blocked, a
	// duplicate, or does not parse).
	SourceID string `json:"source_id,omitempty"`
	// Root is the absolute folder of a local entry ("~" and relative
	// paths resolved); empty for remote entries.
	Root string `json:"root,omitempty"`
	// Valid reports that a local entry was an existing folder when the
	// view was made; remote entries are valid when they parse (they are
	// checked when synced).
	Valid bool `json:"valid"`
	// Allowed reports that a remote entry's owner or origin is on the
	// allowlist in force; local entries are always allowed.
	Allowed bool `json:"allowed"`
}

// ConfigView is what the configuration looks like to a person editing it
// (the skill-config tool): every directory of the three source lists,
// which list is in force, and the config file's allowlists and static
// flag. Published by the config actor at start and after every change of
// it (a config file edit, a command); consumed by the MCP facade, which
// keeps the newest by Seq. It never holds a token.
type ConfigView struct {
	// Seq increases with every view the config actor publishes.
	Seq uint64 `json:"seq"`
	// Directories are the CLI entries, then SKILLS_DIR's, then the config
	// file's skillDirectories, each list in its order.
	Directories []ConfiguredDirectory `json:"directories"`
	// ActiveSource is the list the served sources come from: "cli",
	// "env", "config" or "none".
	ActiveSource string `json:"active_source"`
	// Static reports that this run is static (the skill set is fixed).
	Static bool `json:"static"`
	// SavedStatic is the config file's staticMode: what the next start
	// uses unless --static or SKILLJACK_STATIC says otherwise.
	SavedStatic bool `json:"saved_static"`
	// AllowedOrgs, AllowedUsers and AllowedOrigins are the config file's
	// githubAllowedOrgs, githubAllowedUsers and wellKnownAllowedOrigins
	// (the lists the config tools edit).
	AllowedOrgs    []string `json:"allowed_orgs"`
	AllowedUsers   []string `json:"allowed_users"`
	AllowedOrigins []string `json:"allowed_origins"`
	// EnvAllowlist reports that GITHUB_ALLOWED_ORGS / GITHUB_ALLOWED_USERS
	// or WELL_KNOWN_ALLOWED_ORIGINS replace the file's lists.
	EnvAllowlist bool `json:"env_allowlist,omitempty"`
	// ConfigPath is the config file's path.
	ConfigPath string `json:"config_path"`
	// ConfigProblem says why the config file as a whole is not used, ""
	// when it is (or is missing): "config file P is not valid JSON (line
	// 4, column 1: …)". At startup nothing in it is used; while running,
	// the last good configuration stays served.
	ConfigProblem string `json:"config_problem,omitempty"`
}
