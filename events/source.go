package events

import (
	"slices"
	"time"
)

// SourceKind says where the skills of a [Source] come from.
type SourceKind string

// The source kinds. Local sources are watched folders; github and
// well-known sources are remote, served from a cache folder (their Root)
// that the GitHub poller and the well-known fetcher keep in sync; the
// bundled source is embedded in the binary.
const (
	SourceLocal     SourceKind = "local"
	SourceBundled   SourceKind = "bundled"
	SourceGitHub    SourceKind = "github"
	SourceWellKnown SourceKind = "well-known"
)

// Source is one configured place skills come from, in priority order.
type Source struct {
	// ID identifies the source within one configuration: its index in the
	// source list, as a string ("0", "1", …; the bundled source is "bundled").
	ID string `json:"id"`
	// Kind is where the skills come from.
	Kind SourceKind `json:"kind"`
	// Location is the entry as the user wrote it (a path, URL or "bundled").
	Location string `json:"location"`
	// Root is the absolute folder that is scanned for skills. For a remote
	// source it is inside the cache (<cache>/well-known/<key>/skills, or
	// <github-cache>/<owner>/<repo>[/<subpath>]); for the bundled source it
	// is the root of the embedded file system (".").
	Root string `json:"root"`
	// Prefix is the first segment of every skill path of this source: the
	// folder basename for a local source, "owner-repo" for GitHub, the host
	// slug for a publisher ("host-slug/path-slug" — two segments — when the
	// publisher URL has a path before /.well-known), made unique among
	// sources; empty for the bundled source.
	Prefix string `json:"prefix"`
	// GitHub is the parsed repository of a github source; zero otherwise.
	// (Values, not pointers, so that a Source stays comparable with ==.)
	GitHub GitHubRepo `json:"github,omitzero"`
	// Publisher is the parsed publisher of a well-known source; zero
	// otherwise.
	Publisher Publisher `json:"publisher,omitzero"`
}

// TopicSourcesConfigured is the topic of [SourcesConfigured].
const TopicSourcesConfigured = "sources.configured"

// SourcesConfigured is published by the config actor at start and after
// every change of the configured sources (the config file edited, a
// [ConfigCommand]). Consumed by the watcher and the hasher (what to watch
// and scan), the remote fetchers (what to sync) and the catalog builder
// (source order and which sources still exist).
type SourcesConfigured struct {
	// Seq increases with every configuration the config actor publishes.
	Seq uint64 `json:"seq"`
	// Sources are in priority order: the first source wins a duplicate
	// qualified name. The bundled source is last.
	Sources []Source `json:"sources"`
	// Static is true when the skill set is fixed at startup (--static).
	Static bool `json:"static"`
	// AllowedOrigins are the allowlisted publisher origins of this
	// configuration: every hop of a publisher fetch must be on one. Nil
	// from a producer that does not set it: the fetcher keeps its own.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`
}

// Has reports whether c configures a source of kind k.
func (c SourcesConfigured) Has(k SourceKind) bool {
	return slices.ContainsFunc(c.Sources, func(s Source) bool { return s.Kind == k })
}

// Override is a user's choice about one skill's invocation flags, keyed by
// qualified name in [OverridesChanged]. A nil field means "use the
// frontmatter".
type Override struct {
	// Assistant overrides model invocation (disable-model-invocation).
	Assistant *bool `json:"assistant,omitempty"`
	// User overrides user invocation (user-invocable).
	User *bool `json:"user,omitempty"`
}

// TopicOverridesChanged is the topic of [OverridesChanged].
const TopicOverridesChanged = "overrides.changed"

// OverridesChanged is published by the config actor with the complete set of
// invocation overrides (config key skillInvocationOverrides). Consumed by the
// catalog builder.
type OverridesChanged struct {
	// Seq increases with every override set the config actor publishes.
	Seq uint64 `json:"seq"`
	// Overrides maps a qualified skill name to its override.
	Overrides map[string]Override `json:"overrides"`
	// ConfigSeq is the [SourcesConfigured] Seq the overrides were read
	// with: the catalog builder applies them only once it holds that
	// configuration, so an override naming a skill of a source added in the
	// same edit is never checked against the sources before it. Zero
	// (older traces) means any.
	ConfigSeq uint64 `json:"config_seq,omitempty"`
}

// File is one file of a skill's manifest, as hashed by the hasher.
type File struct {
	// Path is the file's path relative to the skill folder, '/'-separated
	// ("templates/email.md"). The skill's own SKILL.md (whatever its case on
	// disk) has Path "SKILL.md".
	Path string `json:"path"`
	// DiskName is the path relative to the skill folder as it is on disk, when
	// it differs from Path (a lower-case "skill.md"). Empty otherwise.
	DiskName string `json:"disk_name,omitempty"`
	// Digest is "sha256:" followed by 64 lowercase hex digits of the raw
	// bytes (SEP2640-R40). Empty means pending: a supporting file of a
	// partial scan ([SourceScanned.Partial]) not hashed yet, whose MIME and
	// Text are empty too; a SKILL.md always has its digest.
	Digest string `json:"digest"`
	// Size is the length of the raw bytes.
	Size int64 `json:"size"`
	// ModTime is the file's modification time when it was hashed.
	ModTime time.Time `json:"mod_time"`
	// MIME is the file's MIME type, decided by the hasher from the bytes it
	// hashed: by extension, else sniffed from their start (actors/skill
	// Content). Empty in a record made before it existed.
	MIME string `json:"mime,omitempty"`
	// Text reports whether the file is served as text: MIME is a text type
	// and every byte the hasher hashed is valid UTF-8.
	Text bool `json:"text,omitempty"`
}

// OnDisk returns the '/'-separated path of f relative to its skill folder as
// it is named on disk.
func (f File) OnDisk() string {
	if f.DiskName != "" {
		return f.DiskName
	}
	return f.Path
}

// FolderID identifies a folder on disk whatever its path: its device and
// inode numbers. A folder renamed away and back keeps it; a folder swapped
// for another one (or for a symbolic link to one) does not. The zero value
// means unknown: the bundled source, or a platform without inode numbers.
type FolderID struct {
	// Dev is the device number of the file system holding the folder.
	Dev uint64 `json:"dev"`
	// Ino is the folder's inode number on that device.
	Ino uint64 `json:"ino"`
}

// ScannedSkill is one folder holding a SKILL.md (or skill.md), as found by
// the hasher. It is not yet validated: the catalog builder parses SkillMD.
type ScannedSkill struct {
	// Dir is the skill folder: an absolute path for a local source, a path in
	// the embedded file system for the bundled source.
	Dir string `json:"dir"`
	// RelDir is Dir relative to the source root, '/'-separated
	// ("acme/billing/refunds"). The container folders are all but its last
	// segment.
	RelDir string `json:"rel_dir"`
	// RealDir is the skill folder of a local or remote source with every
	// symbolic link resolved, as discovery found it (a linked skill folder
	// in a source root is followed once, here). Every read opens this
	// folder, never Dir. Empty for the bundled source.
	RealDir string `json:"real_dir,omitempty"`
	// DirID is the identity of RealDir when it was scanned: a read refuses
	// a folder that is not this one any more. Zero for the bundled source.
	DirID FolderID `json:"dir_id"`
	// SkillMD is the raw content of the skill's SKILL.md, exactly the bytes
	// Files[0] describes, when the hasher read them in this scan; nil when
	// Files[0] came from its digest cache (an unchanged file: the catalog
	// builder reuses what it built of it, or reads the bytes itself and
	// checks them against Files[0], issue 12).
	SkillMD []byte `json:"skill_md"`
	// Files is the manifest: Files[0] is the SKILL.md, then every served
	// supporting file (nested skills' files included, SEP2640-R25) in walk
	// order. Hidden files, symlinks, node_modules and files over the
	// hasher's size cap are never in it.
	Files []File `json:"files"`
}

// Diagnostic is one finding about a file: a warning (the skill is served), an
// error (the skill is skipped) or a note (nothing is wrong with what is
// served; it says how a file is served, issue 13 item 7).
type Diagnostic struct {
	// File is the path of the file the finding is about (absolute for local
	// sources).
	File string `json:"file"`
	// Level is "warn", "error" or "note".
	Level string `json:"level"`
	// Unserved is set on a warning that means something the source holds is
	// not served as written: a skill left out of skills/list or not served
	// as a duplicate, a SKILL.md discovery does not reach, a file left out
	// of a manifest. validate exits 1 on it, as on every error (issue 13
	// items 7 and 10).
	Unserved bool `json:"unserved,omitempty"`
	// Rule is the requirement ID the finding cites (ASF-R05, SEP2640-R43…),
	// or empty.
	Rule string `json:"rule,omitempty"`
	// Message says what is off and what the server does about it.
	Message string `json:"message"`
	// Version identifies the file version the finding is about (the digest of
	// the file, or its size and mtime), so it is reported once per version.
	Version string `json:"version,omitempty"`
}

// Diagnostic levels.
const (
	LevelWarn  = "warn"
	LevelError = "error"
	LevelNote  = "note"
)

// TopicSourceScanned is the topic of [SourceScanned].
const TopicSourceScanned = "source.scanned"

// SourceScanned is published by the hasher after every scan of one source:
// the complete set of skill folders found under its root with their
// manifests. Consumed by the catalog builder, which replaces everything it
// held for that source.
type SourceScanned struct {
	// Seq increases with every scan the hasher publishes; the catalog builder
	// ignores a scan of a source older than one it already applied.
	Seq uint64 `json:"seq"`
	// ConfigSeq is the [SourcesConfigured.Seq] the scan was made for.
	ConfigSeq uint64 `json:"config_seq"`
	// Source is the scanned source.
	Source Source `json:"source"`
	// ScannedAt is when the scan finished.
	ScannedAt time.Time `json:"scanned_at"`
	// Skills are the skill folders found, in walk order.
	Skills []ScannedSkill `json:"skills"`
	// Diagnostics are the hasher's findings (broken links, SKILL.md files in
	// hidden folders, an unreadable root).
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Hashed counts the files whose bytes were read and hashed in this scan;
	// the rest came from the digest cache.
	Hashed int `json:"hashed"`
	// Partial is set on a scan that left supporting files pending (empty
	// [File.Digest]): the first scan of a root with a cold digest cache
	// hashes only the SKILL.md files, so that the first catalog comes
	// without waiting for every file to be read (issue 12). A complete scan
	// of the same source follows.
	Partial bool `json:"partial,omitempty"`
}
