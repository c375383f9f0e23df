package actors

import (
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/skill"
	"github.com/skilljack/skilljack-mcp/actors/watch"
)

// sanitizeSegment forwards to [skill.SanitizeSegment] for config.go until
// the configuration moves to actors/config (issue 11 stage 2).
func sanitizeSegment(s string) string { return skill.SanitizeSegment(s) }

// utf8BOM is the byte-order mark config.go strips from the config file,
// as [skill.ParseFrontmatter] does from a SKILL.md.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// The hasher's default size caps, for the settings table until it moves to
// actors/config (issue 11 stage 2).
const (
	// DefaultMaxFileSize is [hasher.DefaultMaxFileSize].
	DefaultMaxFileSize = hasher.DefaultMaxFileSize
	// DefaultMaxSkillMDSize is [hasher.DefaultMaxSkillMDSize].
	DefaultMaxSkillMDSize = hasher.DefaultMaxSkillMDSize
)

// DefaultReconcile is [watch.DefaultReconcile], for the settings table
// until it moves to actors/config (issue 11 stage 2).
const DefaultReconcile = watch.DefaultReconcile
