package test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// releaseDirEnv names the release folder test/release wrote (dist/), whose
// bundle/ is the staged .mcpb bundle. .ci/run sets it after the release
// build; a plain `go test ./...` has no bundle to check.
const releaseDirEnv = "SKILLJACK_RELEASE_DIR"

// bundleManifest is the part of manifest.json the checks read.
type bundleManifest struct {
	Version string `json:"version"`
	Server  struct {
		Type       string          `json:"type"`
		EntryPoint string          `json:"entry_point"`
		MCPConfig  bundleMCPConfig `json:"mcp_config"`
	} `json:"server"`
	Tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tools"`
	Prompts []struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Arguments   []string `json:"arguments"`
	} `json:"prompts"`
	Compatibility struct {
		Platforms []string `json:"platforms"`
	} `json:"compatibility"`
	UserConfig map[string]struct {
		Type     string `json:"type"`
		Required bool   `json:"required"`
		Multiple bool   `json:"multiple"`
		Default  any    `json:"default"`
	} `json:"user_config"`
}

type bundleMCPConfig struct {
	Command           string                     `json:"command"`
	Args              []string                   `json:"args"`
	Env               map[string]string          `json:"env"`
	PlatformOverrides map[string]bundleMCPConfig `json:"platform_overrides"`
}

// TestReleaseBundle checks the staged .mcpb bundle for what `mcpb validate`
// does not (issue 15; MCPB-R05 … R09, spec Part C): every
// platform_overrides key is a real platform (hosts select by OS only), every
// command and the entry_point exist in the bundle, are executable and have
// the right header (a universal Mach-O with amd64 and arm64 slices, the arm64 one signed, PE
// amd64, ELF amd64), every ${...} is one the host substitutes and every
// ${user_config.x} is declared, every optional field has a default (an
// unset one is passed on as literal text), the version equals the binary's
// --version, the declared tools and prompts are ones the server lists with
// those descriptions, and the .mcpb archive is the staged folder, sorted,
// with fixed times and the staged permission bits, summed in SHA256SUMS.
func TestReleaseBundle(t *testing.T) {
	dist := os.Getenv(releaseDirEnv)
	if dist == "" {
		t.Skip(releaseDirEnv + " is unset: no staged bundle to check (run test/release/release.sh, then set it to the output folder; .ci/run does)")
	}
	dir := filepath.Join(dist, "bundle")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("reading the staged manifest: %v", err)
	}
	var m bundleManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("parsing %s/manifest.json: %v", dir, err)
	}
	t.Run("platforms", func(t *testing.T) { checkBundlePlatforms(t, dir, m) })
	t.Run("placeholders", func(t *testing.T) { checkBundlePlaceholders(t, m) })
	hostBin := bundleHostBinary(t, dir, m)
	t.Run("version", func(t *testing.T) {
		out, err := exec.Command(hostBin, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", hostBin, err)
		}
		if got := strings.TrimSpace(string(out)); got != "skilljack-mcp "+m.Version {
			t.Errorf("%s --version = %q, want \"skilljack-mcp %s\" (the manifest's version)", hostBin, got, m.Version)
		}
	})
	t.Run("tools and prompts", func(t *testing.T) { checkBundleListing(t, hostBin, m) })
	t.Run("archive", func(t *testing.T) { checkBundleArchive(t, dist, dir) })
}

// nodePlatforms are Node's process.platform names a bundle host selects a
// platform_overrides entry by, mapped to the GOOS of the binary it needs.
var nodePlatforms = map[string]string{"darwin": "darwin", "linux": "linux", "win32": "windows"}

// checkBundlePlatforms checks every command's platform key, file and
// header, and that each platform the bundle claims has its own command.
func checkBundlePlatforms(t *testing.T, dir string, m bundleManifest) {
	if m.Server.Type != "binary" {
		t.Errorf("server.type = %q, want binary", m.Server.Type)
	}
	for key, o := range m.Server.MCPConfig.PlatformOverrides {
		goos, ok := nodePlatforms[key]
		if !ok {
			t.Errorf("platform_overrides key %q is not a platform a host selects by (darwin, linux, win32; there is no CPU axis)", key)
			continue
		}
		checkBundleBinary(t, dir, "platform_overrides."+key+".command", strings.TrimPrefix(o.Command, "${__dirname}/"), goos)
	}
	for _, p := range m.Compatibility.Platforms {
		if _, ok := m.Server.MCPConfig.PlatformOverrides[p]; !ok {
			t.Errorf("compatibility.platforms names %q, but platform_overrides has no command for it", p)
		}
	}
	base := m.Server.MCPConfig.Command
	if !strings.HasPrefix(base, "${__dirname}/") {
		t.Errorf("mcp_config.command = %q, want a path under ${__dirname}/", base)
	}
	checkBundleBinary(t, dir, "mcp_config.command", strings.TrimPrefix(base, "${__dirname}/"), "")
	checkBundleBinary(t, dir, "server.entry_point", m.Server.EntryPoint, "")
}

// checkBundleBinary checks that rel, named by field, is an executable file
// of the bundle dir built for goos (any of the three when ""): a universal
// Mach-O holding amd64 and arm64, a PE or ELF file for amd64.
func checkBundleBinary(t *testing.T, dir, field, rel, goos string) {
	t.Helper()
	if rel == "" || path.IsAbs(rel) || strings.Contains(rel, "${") || strings.Contains(rel, "..") {
		t.Errorf("%s = %q: want a relative path inside the bundle", field, rel)
		return
	}
	p := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("%s %s: want an executable file in the bundle (stat: %v, mode %v)", field, rel, err, fi.Mode())
		return
	}
	kind := ""
	if ff, err := macho.OpenFat(p); err == nil {
		var cpus []macho.Cpu
		for _, a := range ff.Arches {
			cpus = append(cpus, a.Cpu)
			// macOS on Apple silicon runs no unsigned code; Go's linker
			// signs darwin/arm64 ad hoc, and the slice must keep it.
			if a.Cpu == macho.CpuArm64 && !slices.ContainsFunc(a.Loads, func(l macho.Load) bool {
				raw := l.Raw()
				return len(raw) >= 4 && binary.LittleEndian.Uint32(raw) == lcCodeSignature
			}) {
				t.Errorf("%s %s: the arm64 slice has no code signature (LC_CODE_SIGNATURE)", field, rel)
			}
		}
		ff.Close()
		if !slices.Contains(cpus, macho.CpuAmd64) || !slices.Contains(cpus, macho.CpuArm64) {
			t.Errorf("%s %s: universal Mach-O with slices %v, want amd64 and arm64", field, rel, cpus)
		}
		kind = "darwin"
	} else if pf, err := pe.Open(p); err == nil {
		if pf.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			t.Errorf("%s %s: PE machine %#x, want amd64", field, rel, pf.Machine)
		}
		pf.Close()
		kind = "windows"
	} else if ef, err := elf.Open(p); err == nil {
		if ef.Machine != elf.EM_X86_64 || ef.Class != elf.ELFCLASS64 {
			t.Errorf("%s %s: ELF %v %v, want 64-bit x86-64", field, rel, ef.Class, ef.Machine)
		}
		ef.Close()
		kind = "linux"
	} else {
		t.Errorf("%s %s: neither a universal Mach-O, PE nor ELF file", field, rel)
		return
	}
	if goos != "" && kind != goos {
		t.Errorf("%s %s: a %s binary, want one for %s", field, rel, kind, goos)
	}
}

// lcCodeSignature is the Mach-O load command of a code signature.
const lcCodeSignature = 0x1d

// placeholderRe finds each ${...} of a manifest value.
var placeholderRe = regexp.MustCompile(`\$\{([^{}]*)\}`)

// hostVariables are the ${...} a bundle host substitutes besides
// user_config (MCPB-R07); ${EXTENSION_DIR} is not one.
var hostVariables = []string{"__dirname", "HOME", "DESKTOP", "DOCUMENTS", "DOWNLOADS", "pathSeparator", "/"}

// checkBundlePlaceholders checks every ${...} of command, args and env
// (base and overrides): a host variable or a declared user_config field;
// every optional field has a default (a list for a multiple one used as a
// whole argument, so that none expands to no argument).
func checkBundlePlaceholders(t *testing.T, m bundleManifest) {
	configs := []bundleMCPConfig{m.Server.MCPConfig}
	for _, o := range m.Server.MCPConfig.PlatformOverrides {
		configs = append(configs, o)
	}
	var values []string
	for _, c := range configs {
		values = append(values, c.Command)
		values = append(values, c.Args...)
		for _, v := range c.Env {
			values = append(values, v)
		}
	}
	used := 0
	for _, v := range values {
		for _, sm := range placeholderRe.FindAllStringSubmatch(v, -1) {
			name, isUser := strings.CutPrefix(sm[1], "user_config.")
			switch {
			case isUser:
				used++
				if _, ok := m.UserConfig[name]; !ok {
					t.Errorf("%q uses user_config.%s, which user_config does not declare", v, name)
				}
			case !slices.Contains(hostVariables, sm[1]):
				t.Errorf("%q uses ${%s}, which no bundle host substitutes", v, sm[1])
			}
		}
	}
	if used == 0 {
		t.Error("no ${user_config.x} in command, args or env: the user's settings never reach the server")
	}
	for name, o := range m.UserConfig {
		if o.Required {
			continue
		}
		if o.Default == nil {
			t.Errorf("user_config.%s is optional without a default: unset, the host passes the literal ${user_config.%s}", name, name)
		}
		if _, isList := o.Default.([]any); o.Multiple && !isList {
			t.Errorf("user_config.%s is multiple, default %v: want a list ([] expands to no argument)", name, o.Default)
		}
	}
}

// bundleHostBinary returns the bundle's binary for this host, by the
// platform_overrides entry a host would pick; it skips the test when the
// bundle has none that runs here.
func bundleHostBinary(t *testing.T, dir string, m bundleManifest) string {
	key := ""
	for k, goos := range nodePlatforms {
		if goos == runtime.GOOS {
			key = k
		}
	}
	o, ok := m.Server.MCPConfig.PlatformOverrides[key]
	if !ok || (runtime.GOOS != "darwin" && runtime.GOARCH != "amd64") {
		t.Skipf("the bundle has no binary that runs on %s/%s, so its version and listing cannot be checked here", runtime.GOOS, runtime.GOARCH)
	}
	p, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(o.Command, "${__dirname}/"))))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkBundleListing starts bin as a host would with no folder chosen
// (args "--") and checks that each declared tool and prompt is listed,
// tools with the same description, prompts with the first paragraph of
// theirs (the rest is the catalog of the moment) and the same arguments.
func checkBundleListing(t *testing.T, bin string, m bundleManifest) {
	if len(m.Tools) == 0 || len(m.Prompts) == 0 {
		t.Errorf("manifest declares %d tools and %d prompts, want some of each", len(m.Tools), len(m.Prompts))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "--")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	client := mcp.NewClient(&mcp.Implementation{Name: "bundle-check", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", bin, err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range m.Tools {
		i := slices.IndexFunc(tools.Tools, func(x *mcp.Tool) bool { return x.Name == want.Name })
		if i < 0 {
			t.Errorf("the manifest declares the tool %q, which the server does not list", want.Name)
		} else if got := tools.Tools[i].Description; got != want.Description {
			t.Errorf("tool %q: manifest description %q, server's %q", want.Name, want.Description, got)
		}
	}
	for _, want := range m.Prompts {
		i := slices.IndexFunc(prompts.Prompts, func(x *mcp.Prompt) bool { return x.Name == want.Name })
		if i < 0 {
			t.Errorf("the manifest declares the prompt %q, which the server does not list", want.Name)
			continue
		}
		p := prompts.Prompts[i]
		first, _, _ := strings.Cut(p.Description, "\n\n")
		var args []string
		for _, a := range p.Arguments {
			args = append(args, a.Name)
		}
		if first != want.Description || !slices.Equal(args, want.Arguments) {
			t.Errorf("prompt %q: manifest %q %v, server %q %v", want.Name, want.Description, want.Arguments, first, args)
		}
	}
}

// bundleZipTime is the fixed time of every .mcpb entry (test/release).
var bundleZipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// checkBundleArchive checks dist/skilljack-mcp.mcpb against the staged
// folder dir and dist/SHA256SUMS.
func checkBundleArchive(t *testing.T, dist, dir string) {
	zpath := filepath.Join(dist, "skilljack-mcp.mcpb")
	zb, err := os.ReadFile(zpath)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatalf("%s is not a zip archive: %v", zpath, err)
	}
	var names, staged []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		sfi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil {
			t.Errorf("%s holds %s, which the staged folder does not: %v", zpath, f.Name, err)
			continue
		}
		if !f.Modified.Equal(bundleZipTime) || f.Mode() != sfi.Mode() {
			t.Errorf("entry %s: time %v mode %v, want %v and the staged %v", f.Name, f.Modified, f.Mode(), bundleZipTime, sfi.Mode())
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		want, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("entry %s differs from the staged file (%v)", f.Name, err)
		}
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			staged = append(staged, filepath.ToSlash(rel))
		}
		return err
	})
	if !slices.IsSorted(names) {
		t.Errorf("entries are not sorted: %v", names)
	}
	slices.Sort(staged)
	if !slices.Equal(names, staged) {
		t.Errorf("archive entries %v, staged files %v", names, staged)
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(zb)
	if line := hex.EncodeToString(sum[:]) + "  skilljack-mcp.mcpb\n"; !strings.Contains(string(sums), line) {
		t.Errorf("SHA256SUMS lacks %q:\n%s", line, sums)
	}
}
