package config

import (
	"os"
	"slices"
	"strings"

	"github.com/skilljack/skilljack-mcp/events"
)

// Listing is the part of a configuration the config tools show besides the
// served sources (reference §7, getAllDirectoriesWithSources): every entry
// of the three source lists, and the config file's own allowlists and
// staticMode, which the tools edit.
type Listing struct {
	// CLI, Env and File are the entries of the positional arguments,
	// SKILLS_DIR and the config file's skillDirectories, split and trimmed
	// like the sources read from them.
	CLI, Env, File []string
	// FileOrgs, FileUsers and FileOrigins are the config file's
	// githubAllowedOrgs, githubAllowedUsers and wellKnownAllowedOrigins, as
	// written.
	FileOrgs, FileUsers, FileOrigins []string
	// FileStatic is the config file's staticMode (false when not a boolean).
	FileStatic bool
	// EnvAllowlist reports that GITHUB_ALLOWED_ORGS, GITHUB_ALLOWED_USERS
	// or WELL_KNOWN_ALLOWED_ORIGINS is set, replacing its file list.
	EnvAllowlist bool
	// Home and Cwd are what "~" and relative local entries resolved
	// against.
	Home, Cwd string
	// FileProblem says why the config file as a whole was not used ("" when
	// it was, or is missing); see [events.ConfigView.ConfigProblem].
	FileProblem string
}

// newListing records the lists of one resolution.
func newListing(cl commandLine, getenv func(string) string, file configFile, home, cwd string) Listing {
	l := Listing{Home: home, Cwd: cwd,
		CLI: splitList(cl.positional...), Env: splitList(getenv("SKILLS_DIR")), File: slices.Clone(file.dirs),
		FileOrgs: slices.Clone(file.ghOrgs), FileUsers: slices.Clone(file.ghUsers), FileOrigins: slices.Clone(file.wkOrigins),
		FileStatic: file.static != nil && *file.static, FileProblem: file.unusable,
	}
	for _, v := range []string{"GITHUB_ALLOWED_ORGS", "GITHUB_ALLOWED_USERS", "WELL_KNOWN_ALLOWED_ORIGINS"} {
		if len(splitList(getenv(v))) > 0 {
			l.EnvAllowlist = true
		}
	}
	return l
}

// view returns the [events.ConfigView] of cfg with sequence number seq:
// every entry of the three lists with the source it is served as (matched
// by its entry text among the sources of the active list), whether a local
// entry is a folder and whether a remote entry is allowlisted.
func view(cfg Config, seq uint64) events.ConfigView {
	home, cwd := cfg.Listing.Home, cfg.Listing.Cwd
	v := events.ConfigView{
		Seq: seq, ActiveSource: cfg.ActiveSource, Static: cfg.Static, SavedStatic: cfg.Listing.FileStatic,
		AllowedOrgs:    nonNil(cfg.Listing.FileOrgs),
		AllowedUsers:   nonNil(cfg.Listing.FileUsers),
		AllowedOrigins: nonNil(cfg.Listing.FileOrigins),
		EnvAllowlist:   cfg.Listing.EnvAllowlist, ConfigPath: cfg.ConfigPath,
		ConfigProblem: cfg.Listing.FileProblem,
		Directories:   []events.ConfiguredDirectory{},
	}
	for _, list := range []struct {
		from    string
		entries []string
	}{{events.FromCLI, cfg.Listing.CLI}, {events.FromEnv, cfg.Listing.Env}, {events.FromConfig, cfg.Listing.File}} {
		for _, e := range list.entries {
			d := directory(cfg, e, home, cwd)
			d.From = list.from
			if list.from == cfg.ActiveSource {
				if i := slices.IndexFunc(cfg.Sources, func(s events.Source) bool { return s.Location == e }); i >= 0 {
					d.SourceID = cfg.Sources[i].ID
				}
			}
			if d.Kind == events.SourceLocal {
				// Shown absolute, as the reference resolves it.
				name, loc, _ := cutSourceName(e)
				d.Root = resolvePath(loc, home, cwd)
				if d.Location = d.Root; name != "" {
					d.Location = name + "=" + d.Root
				}
			}
			v.Directories = append(v.Directories, d)
		}
	}
	return v
}

// directory classifies the source-list entry e as [sourceList.add] does.
func directory(cfg Config, e, home, cwd string) events.ConfiguredDirectory {
	_, loc, _ := cutSourceName(e)
	d := events.ConfiguredDirectory{Location: e, Kind: events.SourceLocal, Allowed: true}
	lower := strings.ToLower(loc)
	switch {
	case isGitHubSource(loc):
		d.Kind = events.SourceGitHub
		spec, err := ParseGitHubURL(loc)
		d.Valid = err == nil
		d.Allowed = err == nil && slices.Contains(cfg.GitHub.AllowedOwners, strings.ToLower(spec.Owner))
	case strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
		d.Kind = events.SourceWellKnown
		spec, err := ParseWellKnownURL(loc, cfg.WellKnown.AllowHTTP)
		d.Valid = err == nil
		d.Allowed = err == nil && slices.Contains(cfg.WellKnown.AllowedOrigins, spec.Origin)
	case schemeRe.MatchString(lower):
		d.Valid = false
	default:
		fi, err := os.Stat(resolvePath(loc, home, cwd))
		d.Valid = err == nil && fi.IsDir()
	}
	return d
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}
