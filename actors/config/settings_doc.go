package config

import (
	"fmt"
	"strings"
)

// FlagsUsage returns the flags part of --help: one line per flag of
// [SettingsTable] with a Usage text, naming its variables and default.
func FlagsUsage() string {
	var b strings.Builder
	for _, s := range SettingsTable() {
		if s.Flag == "" || s.Usage == "" {
			continue
		}
		form := s.Flag
		switch {
		case s.Arg != "" && s.Optional:
			form += "[=" + s.Arg + "]"
		case s.Arg != "":
			form += "=" + s.Arg
		}
		if s.Alias != "" {
			form += ", " + s.Alias
		}
		line := s.Usage
		var notes []string
		if _, isBool := s.parse.(boolParser); s.Default != "" && !isBool && s.Implied == "" {
			notes = append(notes, "default "+s.Default)
		}
		if len(s.Env) > 0 {
			notes = append(notes, "env "+strings.Join(s.Env, ", "))
		}
		if s.FileKey != "" {
			notes = append(notes, "config "+s.FileKey)
		}
		if len(notes) > 0 {
			line += " (" + strings.Join(notes, "; ") + ")"
		}
		fmt.Fprintf(&b, "  %-40s  %s\n", form, line)
	}
	return b.String()
}

// SettingsMarkdown returns the README table of the settings listed in
// table ([TableServe] or [TableRemote]), header included.
func SettingsMarkdown(table string) string {
	var b strings.Builder
	switch table {
	case TableServe:
		b.WriteString("| Flag | Environment variable | Default | Meaning |\n|---|---|---|---|\n")
	case TableRemote:
		b.WriteString("| Environment variable | Config file key | Default | Meaning |\n|---|---|---|---|\n")
	}
	for _, s := range SettingsTable() {
		if s.Table != table {
			continue
		}
		env := s.EnvDoc
		if env == "" {
			env = codeList(s.Env)
		}
		def := s.DefaultDoc
		if def == "" {
			def = "`" + s.Default + "`"
		}
		if table == TableServe {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", flagCell(s), env, def, s.Doc)
		} else {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", env, codeList([]string{s.FileKey}), def, s.Doc)
		}
	}
	return b.String()
}

// flagCell is the README's flag cell of s.
func flagCell(s Setting) string {
	switch {
	case s.FlagDoc != "":
		return s.FlagDoc
	case s.Flag == "":
		return "—"
	case s.Arg != "":
		return "`" + s.Flag + "=" + strings.ReplaceAll(s.Arg, "|", "\\|") + "`"
	case s.Alias != "":
		return "`" + s.Flag + "`, `" + s.Alias + "`"
	}
	return "`" + s.Flag + "`"
}

// codeList writes names as `a`, `b`, or "—" when there is none.
func codeList(names []string) string {
	var cells []string
	for _, n := range names {
		if n != "" {
			cells = append(cells, "`"+n+"`")
		}
	}
	if len(cells) == 0 {
		return "—"
	}
	return strings.Join(cells, ", ")
}
