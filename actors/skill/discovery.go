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
// dot, . and .. included). Inside a skill a hidden file or folder is never
// listed or served ([Excluded]); outside skills discovery descends into
// hidden folders, as collections keep skills in them (OpenAI's
// skills/.curated, issue 13 item 2), unless they are [ToolFolder]s.
func Hidden(name string) bool { return strings.HasPrefix(name, ".") }

// Excluded reports whether a file or folder name inside a skill is never
// listed, served or descended into: hidden names and node_modules (every
// [ToolFolder] is one of them).
func Excluded(name string) bool { return Hidden(name) || name == "node_modules" }

// ToolFolder reports whether a folder name is a version-control or tool
// folder (.git, .hg, .svn, .github, .vscode, .idea, node_modules, caches
// and virtual environments, and this server's own .skilljack): never a skill collection, often large and
// busy, so discovery never descends into it and the watcher never watches
// it. Each is also [Excluded].
func ToolFolder(name string) bool {
	switch name {
	case ".", "..",
		".git", ".hg", ".svn", ".bzr", ".jj",
		".github", ".gitlab", ".circleci",
		".vscode", ".idea", ".vs", ".fleet", ".zed",
		"node_modules", ".venv", ".tox", ".nox",
		".mypy_cache", ".pytest_cache", ".ruff_cache",
		".cache", ".npm", ".yarn", ".pnpm-store", ".gradle",
		".next", ".nuxt", ".terraform", ".Trash", ".Trashes",
		".skilljack": // this server's own caches and configuration

		return true
	}
	return false
}

// Descend reports whether discovery looks for skills below the folder
// name: outside a skill every folder but a [ToolFolder]; inside a skill
// (inSkill), whose hidden files are never served, no [Excluded] folder
// either.
func Descend(name string, inSkill bool) bool {
	if inSkill {
		return !Excluded(name)
	}
	return !ToolFolder(name)
}

// Noisy reports whether a folder name is one that is never served and often
// busy (the [ToolFolder]s): its changes are not watched and the skills
// inside it are not worth a hint one level further down.
func Noisy(name string) bool { return ToolFolder(name) }
