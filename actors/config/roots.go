package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skilljack/skilljack-mcp/events"
)

// The values of --roots / SKILLJACK_ROOTS (issue 13 item 14).
const (
	// RootsAuto asks a stdio client that declares the roots capability for
	// its workspace roots and serves their skill folders.
	RootsAuto = "auto"
	// RootsOff never asks.
	RootsOff = "off"
)

// ClientRootFolders are the folders of a client's workspace root that are
// served, each that exists, in this order: the places a project keeps its
// own skills for Claude Code, for other agents, and by convention.
func ClientRootFolders() []string { return []string{".claude/skills", ".agents/skills", "skills"} }

// clientRootSources returns the local sources of the client's workspace
// roots (absolute folders, in the client's order) beside the configured
// sources: for each root, each existing folder of [ClientRootFolders], all
// of one root sharing one prefix — the root's folder name, made unique
// among the configured sources and the other roots (so a skill x of a root
// "shop" is shop/x whichever of its folders holds it; the first folder wins
// a duplicate, with the catalog's warning). A root that is a configured
// local source, and a folder that is one, are not served twice: discovery
// of the configured source already reaches them. IDs are left empty
// ([servedSources] numbers them).
func clientRootSources(configured []events.Source, roots []string, log *slog.Logger) []events.Source {
	if len(roots) == 0 {
		return nil
	}
	local := map[string]bool{}
	taken := map[string]bool{}
	for _, s := range configured {
		taken[s.Prefix] = true
		if s.Kind == events.SourceLocal {
			local[s.Root] = true
		}
	}
	var out []events.Source
	seen := map[string]bool{}
	for _, root := range roots {
		root = filepath.Clean(root)
		if !filepath.IsAbs(root) || seen[root] {
			continue
		}
		seen[root] = true
		if local[root] {
			log.Debug("client root not served twice: it is a configured source", "root", root)
			continue
		}
		var dirs []string
		for _, rel := range ClientRootFolders() {
			dir := filepath.Join(root, filepath.FromSlash(rel))
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				continue
			}
			if local[dir] {
				log.Debug("client root folder not served twice: it is a configured source", "folder", dir)
				continue
			}
			dirs = append(dirs, dir)
		}
		if len(dirs) == 0 {
			log.Debug("client root holds no skill folder", "root", root, "looked_for", strings.Join(ClientRootFolders(), ", "))
			continue
		}
		prefix := filepath.Base(root)
		if prefix == string(filepath.Separator) || prefix == "." || prefix == "" {
			prefix = "root"
		}
		if taken[prefix] {
			n := 2
			for taken[prefix+"-"+strconv.Itoa(n)] {
				n++
			}
			prefix += "-" + strconv.Itoa(n)
		}
		taken[prefix] = true
		for _, dir := range dirs {
			out = append(out, events.Source{Kind: events.SourceLocal, Location: dir, Root: dir, Prefix: prefix})
		}
	}
	return out
}

// servedSources is the configured list with the client roots' sources
// inserted before the bundled source (which stays last), every source but
// the bundled one numbered by its index: the configured sources keep their
// IDs.
func servedSources(configured, roots []events.Source) []events.Source {
	if len(roots) == 0 {
		return configured
	}
	out := make([]events.Source, 0, len(configured)+len(roots))
	var bundled []events.Source
	for _, s := range configured {
		if s.Kind == events.SourceBundled {
			bundled = append(bundled, s)
			continue
		}
		out = append(out, s)
	}
	for _, s := range roots {
		s.ID = strconv.Itoa(len(out))
		out = append(out, s)
	}
	return append(out, bundled...)
}

// servedSources returns the sources to serve: the configured ones and
// those of the client's roots.
func (a *Actor) servedSources() []events.Source {
	return servedSources(a.cfg.Sources, clientRootSources(a.cfg.Sources, a.roots, a.log))
}

// setClientRoots applies a set-client-roots command: it keeps the roots
// (nothing is written to the config file) and publishes a new
// [events.SourcesConfigured] when the served sources change. In static mode
// the skill set is fixed: the roots are ignored.
func (a *Actor) setClientRoots(cmd events.ConfigCommand) events.ConfigApplied {
	ans := events.ConfigApplied{ID: cmd.ID, Op: cmd.Op}
	if a.cfg.Static {
		ans.Note = "ignored: the server runs in static mode, so the skill set is fixed at startup"
	} else {
		a.roots = slices.Clone(cmd.Roots)
		rootSrcs := clientRootSources(a.cfg.Sources, a.roots, a.log)
		if next := servedSources(a.cfg.Sources, rootSrcs); !slices.Equal(a.served, next) {
			a.seq++
			var folders []string
			for _, s := range rootSrcs {
				folders = append(folders, s.Prefix+"="+s.Root)
			}
			a.log.Info(fmt.Sprintf("client workspace roots changed: serving %d skill folder(s) of them", len(folders)),
				"seq", a.seq, "roots", len(cmd.Roots), "folders", strings.Join(folders, ","))
			a.publishSources()
		}
	}
	ans.ConfigSeq, ans.OverridesSeq = a.seq, a.ovSeq
	return ans
}

// publishSources publishes the current [events.SourcesConfigured].
func (a *Actor) publishSources() {
	if err := events.Publish(a.pub, a.sourcesEvent()); err != nil {
		a.log.Error("publishing configured sources", "error", err)
	}
}
