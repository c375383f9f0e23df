package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// bundleFile is one file of the .mcpb bundle: its '/'-separated path
// inside the bundle, its bytes and its permission bits.
type bundleFile struct {
	name string
	data []byte
	mode fs.FileMode
}

// zipTime is the modification time of every entry of the .mcpb archive:
// fixed, so that building twice gives the same bytes (mcpb pack stamps the
// current time, which is why the bundle is not packed by it).
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// writeZip writes files as a reproducible zip archive: entries sorted by
// name, every time [zipTime], Unix permission bits kept (binaries 0755),
// deflated. The same files always give the same bytes.
func writeZip(w io.Writer, files []bundleFile) error {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b bundleFile) int { return strings.Compare(a.name, b.name) })
	zw := zip.NewWriter(w)
	for _, f := range sorted {
		fh := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: zipTime}
		fh.SetMode(f.mode)
		fw, err := zw.CreateHeader(fh)
		if err != nil {
			return fmt.Errorf("writing %s to the bundle: %w", f.name, err)
		}
		if _, err := fw.Write(f.data); err != nil {
			return fmt.Errorf("writing %s to the bundle: %w", f.name, err)
		}
	}
	return zw.Close()
}

// The manifest of the .mcpb bundle (MCPB-R02 … R10, manifest_version 0.3).
// Field order is the JSON order.
type manifest struct {
	ManifestVersion string                `json:"manifest_version"`
	Name            string                `json:"name"`
	DisplayName     string                `json:"display_name"`
	Version         string                `json:"version"`
	Description     string                `json:"description"`
	LongDescription string                `json:"long_description"`
	Author          author                `json:"author"`
	Repository      repository            `json:"repository"`
	Homepage        string                `json:"homepage"`
	Server          server                `json:"server"`
	Tools           []tool                `json:"tools"`
	Prompts         []prompt              `json:"prompts"`
	PromptsGen      bool                  `json:"prompts_generated"`
	Keywords        []string              `json:"keywords"`
	License         string                `json:"license"`
	Compatibility   compatibility         `json:"compatibility"`
	UserConfig      map[string]userOption `json:"user_config"`
}

type author struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

type repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type server struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  mcpConfig `json:"mcp_config"`
}

type mcpConfig struct {
	Command           string                    `json:"command"`
	Args              []string                  `json:"args"`
	Env               map[string]string         `json:"env"`
	PlatformOverrides map[string]platformConfig `json:"platform_overrides"`
}

type platformConfig struct {
	Command string `json:"command"`
}

type tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type prompt struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Arguments   []string `json:"arguments,omitempty"`
	Text        string   `json:"text"`
}

type compatibility struct {
	Platforms []string `json:"platforms"`
}

type userOption struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Multiple    bool   `json:"multiple,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	Default     any    `json:"default"`
}

// Paths inside the bundle of the server binary per host OS (Node's
// process.platform names, the keys of platform_overrides). Hosts select by
// OS only, so darwin gets one universal binary (amd64 + arm64) and win32
// and linux get amd64 (Windows on ARM runs it emulated).
const (
	binDarwin = "server/darwin/skilljack-mcp"
	binLinux  = "server/linux/skilljack-mcp"
	binWin32  = "server/win32/skilljack-mcp.exe"
)

// newManifest returns the bundle manifest for version, declaring tools
// and prompts (names and descriptions as the server lists them).
//
// Every optional user_config field has a default, because the official
// resolver passes an unset one as the literal text ${user_config.x}; with
// the defaults, an unset token or allowlist becomes an empty environment
// variable (which the server reads as unset) and no skill folder becomes
// no argument, so the config file (~/.skilljack/config.json, edited
// through the config app) stays the source of truth. Commands use
// ${__dirname}, which the resolver substitutes (${EXTENSION_DIR} is not).
func newManifest(version string, tools []tool, prompts []prompt) manifest {
	const repo = "https://github.com/skilljack/skilljack-mcp"
	dir := "${__dirname}/"
	return manifest{
		ManifestVersion: "0.3",
		Name:            "skilljack-mcp",
		DisplayName:     "Skilljack",
		Version:         version,
		Description:     "Serves Agent Skills (folders with a SKILL.md) to Claude as tools, prompts and resources",
		LongDescription: "Skilljack serves the Agent Skills in the folders you choose — each a folder holding a `SKILL.md` with YAML frontmatter and supporting files — " +
			"as a catalog, the `load-skill` and `skill-resource` tools, one prompt per skill and `skill://` resources, and keeps them live while the files change. " +
			"The `skill-config` and `skill-display` apps manage the folders, allowlists and which skills the model sees from inside Claude. " +
			"With no folder chosen it serves the folders listed in `~/.skilljack/config.json`. GitHub repositories and `/.well-known/agent-skills/` publishers are served once their owner or origin is allowlisted. " +
			"One native binary; no Node or Python needed.",
		Author:     author{Name: "the skilljack-mcp Go authors", URL: repo},
		Repository: repository{Type: "git", URL: repo},
		Homepage:   repo,
		Server: server{
			Type:       "binary",
			EntryPoint: binDarwin,
			MCPConfig: mcpConfig{
				Command: dir + binDarwin,
				// "--" first: a chosen folder whose name starts with "-" is
				// still a folder. An empty list expands to no argument.
				Args: []string{"--", "${user_config.skill_dirs}"},
				Env: map[string]string{
					"GITHUB_TOKEN":               "${user_config.github_token}",
					"GITHUB_ALLOWED_ORGS":        "${user_config.github_allowed_orgs}",
					"GITHUB_ALLOWED_USERS":       "${user_config.github_allowed_users}",
					"WELL_KNOWN_ALLOWED_ORIGINS": "${user_config.well_known_allowed_origins}",
				},
				PlatformOverrides: map[string]platformConfig{
					"darwin": {Command: dir + binDarwin},
					"linux":  {Command: dir + binLinux},
					"win32":  {Command: dir + binWin32},
				},
			},
		},
		Tools:         tools,
		Prompts:       prompts,
		PromptsGen:    true, // one prompt per user-invocable skill
		Keywords:      []string{"agent-skills", "skills", "skill.md", "mcp"},
		License:       "MIT",
		Compatibility: compatibility{Platforms: []string{"darwin", "linux", "win32"}},
		UserConfig: map[string]userOption{
			"skill_dirs": {Type: "directory", Title: "Skill folders", Multiple: true, Default: []string{},
				Description: "Folders of Agent Skills to serve. Leave empty to serve the folders listed in ~/.skilljack/config.json."},
			"github_token": {Type: "string", Title: "GitHub token", Sensitive: true, Default: "",
				Description: "Optional token for private GitHub repositories and higher rate limits."},
			"github_allowed_orgs": {Type: "string", Title: "Allowed GitHub organisations", Default: "",
				Description: "Comma list of GitHub organisations whose repositories may be served."},
			"github_allowed_users": {Type: "string", Title: "Allowed GitHub users", Default: "",
				Description: "Comma list of GitHub users whose repositories may be served."},
			"well_known_allowed_origins": {Type: "string", Title: "Allowed skill publishers", Default: "",
				Description: "Comma list of publisher origins (https://host) whose /.well-known/agent-skills/ may be served."},
		},
	}
}

// manifestJSON encodes m as the bundle's manifest.json: indented, with a
// final newline, HTML characters unescaped.
func manifestJSON(m manifest) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding manifest.json: %w", err)
	}
	return b.Bytes(), nil
}
