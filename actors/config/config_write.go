package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skilljack/skilljack-mcp/events"
)

// The config file as the config actor writes it (issue 11 item 4):
//   - it is edited as a JSON object whose keys are kept as they are, the
//     ones this release does not know included; only the key a command
//     names is rewritten, then the whole object is written pretty-printed
//     (two spaces, keys sorted, as the reference writes it);
//   - it is written atomically: a temporary file in the same folder (mode
//     0600, synced), renamed over config.json, every step through an
//     [os.Root] on the folder; ~/.skilljack is made (0700) when missing;
//   - it is never written through a symbolic link: a config.json or a
//     ~/.skilljack that is a link refuses the command (edit the link's
//     target by hand);
//   - a file that exists but is not a JSON object is never overwritten: the
//     command copies it to config.json.bak-<UTC time> (once per content: a
//     backup holding the same bytes is reused) and is refused, so the
//     user's text survives and they choose what to keep. An empty file
//     counts as {}.

// errConfigRefused marks a command refused because of the state of the
// config file (not of the command's arguments).
var errConfigRefused = errors.New("config file not changed")

// configEdit is what one command needs besides the file: where "~" and
// relative paths point, and whether http:// publishers are allowed.
type configEdit struct {
	home, cwd string
	allowHTTP bool
	now       func() time.Time
}

// readConfigObject reads the config file at path for an edit: its keys, or
// an empty object when it is missing or empty. A link, a file that is not
// regular or too large, and a file that is not a JSON object are refused;
// the last is first backed up.
func (e configEdit) readConfigObject(path string) (map[string]json.RawMessage, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s is a symbolic link; skilljack never writes through a link: edit its target by hand", errConfigRefused, path)
	}
	b, err := readRegularFile(path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]json.RawMessage{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", errConfigRefused, path, err)
	}
	top, problem := parseConfigObject(b)
	if problem != "" {
		bak, berr := e.backup(path, b)
		if berr != nil {
			return nil, fmt.Errorf("%w: %s %s and could not be backed up (%v); fix or remove it by hand", errConfigRefused, path, problem, berr)
		}
		return nil, fmt.Errorf("%w: %s %s; it was left as it is and copied to %s; fix or remove it, then try again", errConfigRefused, path, problem, bak)
	}
	return top, nil
}

// backup copies data, the unparseable content of the config file at path,
// to a new file beside it named config.json.bak-<UTC time>, and returns its
// path. When a backup beside it already holds data, that one is returned
// and none is made: each refused command would otherwise leave one more
// copy of the same broken text.
func (e configEdit) backup(path string, data []byte) (string, error) {
	root, err := openConfigFolder(filepath.Dir(path), false)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if name := sameBackup(root, filepath.Base(path)+".bak-", data); name != "" {
		return filepath.Join(filepath.Dir(path), name), nil
	}
	base := filepath.Base(path) + ".bak-" + e.now().UTC().Format("20060102T150405Z")
	for i := 0; ; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s-%d", base, i+1)
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			root.Remove(name)
			return "", werr
		}
		return filepath.Join(filepath.Dir(path), name), nil
	}
}

// sameBackup returns the name of a regular file in root named prefix…
// that holds exactly data, or "". Links are not followed and files larger
// than data are not read.
func sameBackup(root *os.Root, prefix string, data []byte) string {
	dir, err := root.Open(".")
	if err != nil {
		return ""
	}
	entries, err := dir.ReadDir(-1)
	dir.Close()
	if err != nil {
		return ""
	}
	for _, de := range entries {
		if !strings.HasPrefix(de.Name(), prefix) || !de.Type().IsRegular() {
			continue
		}
		if fi, err := de.Info(); err != nil || fi.Size() != int64(len(data)) {
			continue
		}
		if b, err := root.ReadFile(de.Name()); err == nil && bytes.Equal(b, data) {
			return de.Name()
		}
	}
	return ""
}

// openConfigFolder opens dir, the config file's folder, as an [os.Root],
// making it (0700) when create is set and it is missing. A dir that is a
// symbolic link or not a folder is refused.
func openConfigFolder(dir string, create bool) (*os.Root, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s is a symbolic link; skilljack never writes through a link", errConfigRefused, dir)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a folder", errConfigRefused, dir)
	}
	return os.OpenRoot(dir)
}

// writeConfigFile replaces the config file at path with data atomically:
// a temporary file in the same folder, mode 0600, synced, then renamed over
// it (a rename replaces a link put there meanwhile; it never writes through
// it). The temporary file is removed on failure.
func writeConfigFile(path string, data []byte) error {
	root, err := openConfigFolder(filepath.Dir(path), true)
	if err != nil {
		return err
	}
	defer root.Close()
	name := filepath.Base(path)
	if fi, err := root.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (%s)", errConfigRefused, path, fileKind(fi.Mode()))
	}
	tmp := fmt.Sprintf(".%s.tmp-%016x", name, rand.Uint64())
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600) // whatever the umask
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// marshalConfig renders the config object as the file holds it.
func marshalConfig(top map[string]json.RawMessage) ([]byte, error) {
	b, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// applyCommand edits top, the config file's keys, as cmd asks. Only the key
// cmd names is touched; in it, entries this release would ignore (a
// non-string directory) are kept. It fails, changing nothing, when the
// arguments are wrong or the key holds a value of another type.
func (e configEdit) applyCommand(top map[string]json.RawMessage, cmd events.ConfigCommand) error {
	switch cmd.Op {
	case events.ConfigAddDirectory:
		return e.addDirectory(top, strings.TrimSpace(cmd.Directory))
	case events.ConfigRemoveDirectory:
		d := strings.TrimSpace(cmd.Directory)
		return editList(top, "skillDirectories", func(list []json.RawMessage) ([]json.RawMessage, error) {
			out := slices.DeleteFunc(slices.Clone(list), func(raw json.RawMessage) bool { return e.sameDirectory(raw, d) })
			if len(out) == len(list) {
				return nil, fmt.Errorf("%q is not in skillDirectories of the config file", d)
			}
			return out, nil
		})
	case events.ConfigAddAllowedOrg, events.ConfigRemoveAllowedOrg:
		org := strings.TrimSpace(cmd.Org)
		if !ghName.MatchString(org) {
			return fmt.Errorf("%q is not a GitHub organisation or user name", cmd.Org)
		}
		same := func(raw json.RawMessage) bool {
			var s string
			return json.Unmarshal(raw, &s) == nil && strings.EqualFold(strings.TrimSpace(s), org)
		}
		return editSet(top, "githubAllowedOrgs", org, same, cmd.Op == events.ConfigAddAllowedOrg)
	case events.ConfigAddAllowedOrigin, events.ConfigRemoveAllowedOrigin:
		add := cmd.Op == events.ConfigAddAllowedOrigin
		origin, err := e.origin(cmd.Origin, add)
		if err != nil {
			return err
		}
		same := func(raw json.RawMessage) bool {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return false
			}
			o, err := e.origin(s, false)
			return err == nil && o == origin
		}
		return editSet(top, "wellKnownAllowedOrigins", origin, same, add)
	case events.ConfigSetOverride:
		if cmd.Value == nil {
			return errors.New("set-override needs a value (true or false)")
		}
		return editOverride(top, cmd.Skill, cmd.Setting, cmd.Value)
	case events.ConfigResetOverride:
		return editOverride(top, cmd.Skill, cmd.Setting, nil)
	case events.ConfigSetStaticMode:
		if cmd.Value == nil {
			return errors.New("set-static-mode needs a value (true or false)")
		}
		top["staticMode"] = json.RawMessage(fmt.Sprint(*cmd.Value))
		return nil
	}
	return fmt.Errorf("unknown config command %q", cmd.Op)
}

// addDirectory appends d to skillDirectories: a local folder, which must
// exist and is stored absolute, or a GitHub repository or publisher URL,
// which must parse and is stored as given (reference §7). A name given as
// name=source is kept in front of what is stored (issue 13 item 9).
func (e configEdit) addDirectory(top map[string]json.RawMessage, d string) error {
	if d == "" {
		return errors.New("add-directory needs a directory")
	}
	name, d, ok := cutSourceName(d)
	if !ok {
		return fmt.Errorf("%q is not a valid source name: use letters, digits, '.', '_' and '-', starting with a letter or digit, without \"__\"", name)
	}
	store := d
	switch lower := strings.ToLower(d); {
	case isGitHubSource(d):
		if _, err := ParseGitHubURL(d); err != nil {
			return err
		}
	case strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "http://"):
		if _, err := ParseWellKnownURL(d, e.allowHTTP); err != nil {
			return err
		}
	case schemeRe.MatchString(lower):
		return fmt.Errorf("unsupported scheme in %s: a source is a folder, a GitHub repository or an https:// publisher", d)
	default:
		store = resolvePath(d, e.home, e.cwd)
		fi, err := os.Stat(store)
		if err != nil {
			return fmt.Errorf("directory %s: %w", store, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", store)
		}
	}
	return editList(top, "skillDirectories", func(list []json.RawMessage) ([]json.RawMessage, error) {
		for _, raw := range list {
			if e.sameDirectory(raw, d) {
				return nil, fmt.Errorf("%s: Already configured", d)
			}
		}
		if name != "" {
			store = name + "=" + store // issue 13 item 9: the name fixes the prefix
		}
		return append(slices.Clone(list), jsonString(store)), nil
	})
}

// sameDirectory reports whether raw, a skillDirectories entry, names d: the
// same text, or the same local folder once both are resolved.
func (e configEdit) sameDirectory(raw json.RawMessage, d string) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	s = strings.TrimSpace(s)
	if s == d {
		return true
	}
	_, s, _ = cutSourceName(s)
	local := func(x string) bool {
		return !isGitHubSource(x) && !schemeRe.MatchString(strings.ToLower(x))
	}
	return local(s) && local(d) && resolvePath(s, e.home, e.cwd) == resolvePath(d, e.home, e.cwd)
}

// origin reduces raw, an origin or any URL on it, to "scheme://host[:port]"
// (reference §7). http:// needs WELL_KNOWN_ALLOW_HTTP when strict.
func (e configEdit) origin(raw string, strict bool) (string, error) {
	spec, err := ParseWellKnownURL(raw, e.allowHTTP || !strict)
	if err != nil {
		return "", err
	}
	return spec.Origin, nil
}

// editList replaces the list under key with edit's result. A missing or
// null key is an empty list; another type refuses the edit.
func editList(top map[string]json.RawMessage, key string, edit func([]json.RawMessage) ([]json.RawMessage, error)) error {
	var list []json.RawMessage
	if raw, ok := top[key]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &list) != nil {
			return fmt.Errorf("%w: %s in the config file is not a list; fix it by hand", errConfigRefused, key)
		}
	}
	out, err := edit(list)
	if err != nil {
		return err
	}
	if out == nil {
		out = []json.RawMessage{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	top[key] = b
	return nil
}

// editSet adds v to the list under key, or removes every entry that is the
// same; adding what is there ("Already allowed") and removing what is not
// are errors.
func editSet(top map[string]json.RawMessage, key, v string, same func(json.RawMessage) bool, add bool) error {
	return editList(top, key, func(list []json.RawMessage) ([]json.RawMessage, error) {
		if add {
			// Compared case-insensitively (reference §1.2), and refused as
			// add-directory refuses a duplicate, not answered "Added".
			if i := slices.IndexFunc(list, same); i >= 0 {
				return nil, fmt.Errorf("%s: Already allowed (%s holds %s)", v, key, list[i])
			}
			return append(slices.Clone(list), jsonString(v)), nil
		}
		out := slices.DeleteFunc(slices.Clone(list), same)
		if len(out) == len(list) {
			return nil, fmt.Errorf("%s is not in %s of the config file", v, key)
		}
		return out, nil
	})
}

// editOverride sets skillInvocationOverrides[skill][setting] to *value, or
// with a nil value removes it (setting "" removes both flags); an override
// left with no key is removed (reference §2.3).
func editOverride(top map[string]json.RawMessage, skill, setting string, value *bool) error {
	skill = strings.TrimSpace(skill)
	if skill == "" {
		return errors.New("an override needs a skill (its qualified name)")
	}
	if setting != "assistant" && setting != "user" && (value != nil || setting != "") {
		return fmt.Errorf("setting %q is not assistant or user", setting)
	}
	all := map[string]json.RawMessage{}
	if raw, ok := top["skillInvocationOverrides"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &all) != nil || all == nil {
			return fmt.Errorf("%w: skillInvocationOverrides in the config file is not an object; fix it by hand", errConfigRefused)
		}
	}
	entry := map[string]json.RawMessage{}
	if raw, ok := all[skill]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &entry) != nil || entry == nil {
			if value == nil && setting == "" {
				entry = map[string]json.RawMessage{} // replaced by nothing below
			} else {
				return fmt.Errorf("%w: skillInvocationOverrides[%q] in the config file is not an object; fix it by hand", errConfigRefused, skill)
			}
		}
	}
	switch {
	case value != nil:
		entry[setting] = json.RawMessage(fmt.Sprint(*value))
	case setting == "":
		delete(entry, "assistant")
		delete(entry, "user")
	default:
		delete(entry, setting)
	}
	if len(entry) == 0 {
		delete(all, skill)
	} else {
		b, err := json.Marshal(entry)
		if err != nil {
			return err
		}
		all[skill] = b
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	top["skillInvocationOverrides"] = b
	return nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
