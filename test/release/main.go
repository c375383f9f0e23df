// Command release builds the release artifacts of skilljack-mcp (issue 15)
// into one folder, dist/ by default:
//
//	go run ./test/release [-out dist]
//
// It must run from the repository root (test/release/release.sh and
// `task release` do). It writes:
//
//   - skilljack-mcp-<os>-<arch>[.exe]: static binaries for linux, darwin
//     and windows × amd64 and arm64, built with CGO_ENABLED=0 -trimpath
//     -buildvcs=false -ldflags="-s -w", so that the same source gives the
//     same bytes on any machine with the same Go release;
//   - bundle/: the staged .mcpb bundle folder (manifest.json, LICENSE, a
//     universal macOS binary written by [writeFat], win32 and linux amd64);
//   - skilljack-mcp.mcpb: that folder as a reproducible zip ([writeZip]);
//   - SHA256SUMS: "<sha256>  <name>" for every binary and the .mcpb.
//
// The version is the one the built binary reports with --version (main.go's
// version variable, also serverInfo.version); the manifest's tools and
// prompts, with their descriptions, are the ones that binary lists. The
// version is read from the binary built for this host, so the host must be
// one of the six targets.
//
// It writes only below -out, through an [os.Root]: each artifact under a
// temporary name, then renamed over the previous one; bundle/ is removed and
// rewritten only when it holds a manifest.json (a folder this program
// made), else the run fails and leaves it alone.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

func main() {
	out := flag.String("out", "dist", "folder the artifacts are written to")
	flag.Parse()
	if err := run(context.Background(), *out); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// target is one GOOS/GOARCH pair built.
type target struct{ goos, goarch string }

// binName is the file name of t's binary in the output folder.
func (t target) binName() string {
	name := "skilljack-mcp-" + t.goos + "-" + t.goarch
	if t.goos == "windows" {
		name += ".exe"
	}
	return name
}

// targets are the platforms released, in SHA256SUMS order.
func targets() []target {
	return []target{
		{"darwin", "amd64"}, {"darwin", "arm64"},
		{"linux", "amd64"}, {"linux", "arm64"},
		{"windows", "amd64"}, {"windows", "arm64"},
	}
}

// Names of the bundle and checksum files in the output folder.
const (
	bundleName = "skilljack-mcp.mcpb"
	stageName  = "bundle"
	sumsName   = "SHA256SUMS"
)

// semverRe is a semantic version (MCPB-R02: the manifest's version is
// semver), build metadata allowed.
var semverRe = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// run is the whole program: build, read version and listings, stage, zip,
// sum.
func run(ctx context.Context, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(out)
	if err != nil {
		return err
	}
	defer root.Close()
	bins := map[target][]byte{}
	for _, t := range targets() {
		b, err := build(ctx, t)
		if err != nil {
			return err
		}
		bins[t] = b
		if err := writeAtomic(root, t.binName(), b, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "built %s (%d bytes)\n", path.Join(out, t.binName()), len(b))
	}
	host := target{runtime.GOOS, runtime.GOARCH}
	if bins[host] == nil {
		return fmt.Errorf("this host (%s/%s) is not a release target, so no built binary can be asked for its version", host.goos, host.goarch)
	}
	hostBin, err := absIn(out, host.binName())
	if err != nil {
		return err
	}
	version, err := binaryVersion(ctx, hostBin)
	if err != nil {
		return err
	}
	l, err := probe(ctx, hostBin)
	if err != nil {
		return err
	}
	tools, prompts, err := declared(l, []string{"load-skill", "skill-resource", "skill-config", "skill-display"}, []string{"skill"})
	if err != nil {
		return err
	}
	files, err := bundleFiles(newManifest(version, tools, prompts), bins)
	if err != nil {
		return err
	}
	if err := stage(root, files); err != nil {
		return err
	}
	var zb bytes.Buffer
	if err := writeZip(&zb, files); err != nil {
		return err
	}
	if err := writeAtomic(root, bundleName, zb.Bytes(), 0o644); err != nil {
		return err
	}
	sums := sha256sums(bins, zb.Bytes())
	if err := writeAtomic(root, sumsName, sums, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "skilljack-mcp %s: %s, %s/ and %s in %s\n", version, bundleName, stageName, sumsName, out)
	return nil
}

// build cross-compiles the server for t and returns the binary.
func build(ctx context.Context, t target) ([]byte, error) {
	dir, err := os.MkdirTemp("", "skilljack-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := dir + "/" + t.binName()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch, "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("building %s/%s: %w", t.goos, t.goarch, err)
	}
	return os.ReadFile(bin)
}

// binaryVersion returns the version bin reports with --version
// ("skilljack-mcp 0.1.0" gives "0.1.0"); it must be semver.
func binaryVersion(ctx context.Context, bin string) (string, error) {
	outb, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", bin, err)
	}
	f := strings.Fields(string(outb))
	if len(f) != 2 || f[0] != "skilljack-mcp" || !semverRe.MatchString(f[1]) {
		return "", fmt.Errorf("%s --version printed %q, want \"skilljack-mcp <semver>\"", bin, outb)
	}
	return f[1], nil
}

// bundleFiles are the files of the bundle: the manifest, the license and
// one server binary per host OS (see [binDarwin]).
func bundleFiles(m manifest, bins map[target][]byte) ([]bundleFile, error) {
	mj, err := manifestJSON(m)
	if err != nil {
		return nil, err
	}
	license, err := os.ReadFile("LICENSE")
	if err != nil {
		return nil, err
	}
	var fat bytes.Buffer
	if err := writeFat(&fat, [][]byte{bins[target{"darwin", "amd64"}], bins[target{"darwin", "arm64"}]}); err != nil {
		return nil, err
	}
	return []bundleFile{
		{"manifest.json", mj, 0o644},
		{"LICENSE", license, 0o644},
		{binDarwin, fat.Bytes(), 0o755},
		{binLinux, bins[target{"linux", "amd64"}], 0o755},
		{binWin32, bins[target{"windows", "amd64"}], 0o755},
	}, nil
}

// stage writes files into the bundle/ folder of root, replacing a previous
// one this program made (it holds a manifest.json); another folder of that
// name is refused and left alone.
func stage(root *os.Root, files []bundleFile) error {
	if fi, err := root.Lstat(stageName); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a folder this program made; move it away", stageName)
		}
		if _, err := root.Lstat(path.Join(stageName, "manifest.json")); err != nil {
			return fmt.Errorf("%s exists without a manifest.json, so it is not a folder this program made; move it away", stageName)
		}
		if err := root.RemoveAll(stageName); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, f := range files {
		name := path.Join(stageName, f.name)
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return err
		}
		if err := root.WriteFile(name, f.data, f.mode); err != nil {
			return err
		}
		if err := root.Chmod(name, f.mode); err != nil { // whatever the umask
			return err
		}
	}
	return nil
}

// writeAtomic writes data to name in root under a temporary name, then
// renames it into place, with permission bits mode.
func writeAtomic(root *os.Root, name string, data []byte, mode fs.FileMode) error {
	tmp := "." + name + ".tmp"
	if err := root.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := root.Chmod(tmp, mode); err != nil {
		return err
	}
	return root.Rename(tmp, name)
}

// sha256sums returns the SHA256SUMS file: one "<hex>  <name>" line per
// binary (in [targets] order) and the bundle.
func sha256sums(bins map[target][]byte, bundle []byte) []byte {
	var b strings.Builder
	line := func(name string, data []byte) {
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	for _, t := range targets() {
		line(t.binName(), bins[t])
	}
	line(bundleName, bundle)
	return []byte(b.String())
}

// absIn returns the absolute path of name inside folder dir.
func absIn(dir, name string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name), nil
}
