package skill

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The names a skill folder's instructions file may have; the first is
// preferred when a folder holds both.
const (
	MDName      = "SKILL.md"
	MDNameLower = "skill.md"
)

// The container folders below a source root whose children count as skill
// folders of the root itself ('/'-separated, relative to the root).
const (
	ClaudeSkillsDir = ".claude/skills"
	SkillsDir       = "skills"
)

// Containers returns the container folders ([ClaudeSkillsDir],
// [SkillsDir]) in the order discovery walks them, after the root.
func Containers() []string { return []string{ClaudeSkillsDir, SkillsDir} }

// FindMD returns the entry of a folder's SKILL.md (preferred) or skill.md,
// recognised by its directory-entry name among regular files, or nil.
func FindMD(ents []fs.DirEntry) fs.DirEntry {
	var lower fs.DirEntry
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		switch e.Name() {
		case MDName:
			return e
		case MDNameLower:
			lower = e
		}
	}
	return lower
}

// MisnamedMD returns the name of a regular file among ents that is SKILL.md
// in another casing (SKILL.MD, Skill.md), which [FindMD] does not accept,
// or "" (issue 13 item 10).
func MisnamedMD(ents []fs.DirEntry) string {
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && n != MDName && n != MDNameLower && strings.EqualFold(n, MDName) {
			return n
		}
	}
	return ""
}

// HoldsMD reports whether the folder dir on disk holds a regular SKILL.md
// or skill.md file (links to one followed).
func HoldsMD(dir string) bool {
	for _, n := range []string{MDName, MDNameLower} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// Hidden reports whether a file or folder name is hidden (starts with a
// dot, . and .. included): never discovered, listed or served.
func Hidden(name string) bool { return strings.HasPrefix(name, ".") }

// Excluded reports whether a folder or file name is never descended into or
// served: hidden names and node_modules.
func Excluded(name string) bool { return Hidden(name) || name == "node_modules" }

// Noisy reports whether a folder name is one that is never served and often
// busy (.git, node_modules): its changes are not watched and the skills
// inside it are not worth a hint one level further down.
func Noisy(name string) bool { return name == ".git" || name == "node_modules" }
