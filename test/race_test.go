package test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/watch"
)

// raceDuration bounds each run of TestRaceSkillFolderSwap: long enough for
// thousands of reads, short enough for CI under -race.
const raceDuration = 3 * time.Second

// TestRaceSkillFolderSwap is issue 10 F2: a served skill folder is swapped,
// again and again, with a symbolic link to a canary folder outside the
// source (rename dance: real folder renamed away, link in, link out, folder
// back), and single files of it with links to a canary file outside and to
// the skill's own hidden .env, while readers hammer resources/read,
// load-skill and skill-resource. No answer may carry a canary byte and no
// catalog or skills/list may carry a canary digest — with the watcher only
// and with a 10 ms reconcile that rescans while the links are in place.
// Before the fix the hasher hashed through os.DirFS (links followed) and
// reads opened the skill folder by path, so both leaked.
func TestRaceSkillFolderSwap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reconcile time.Duration
	}{{"watcher", -1}, {"reconcile-10ms", 10 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) { raceSkillFolderSwap(t, tc.reconcile) })
	}
}

// raceFixture is the disk layout of the race: a source lib/ with the skill
// race/, and secrets outside (canary/) and inside it (.env, never served).
type raceFixture struct {
	base, root, skill, away, canary string
	secrets                         [][]byte // bytes no answer may hold
	digests                         map[string]bool
}

func newRaceFixture(t *testing.T) *raceFixture {
	base := t.TempDir()
	fx := &raceFixture{base: base, root: filepath.Join(base, "lib"), away: filepath.Join(base, "away"),
		canary: filepath.Join(base, "canary"), digests: map[string]bool{}}
	fx.skill = filepath.Join(fx.root, "race")
	writeFile(t, filepath.Join(fx.skill, "SKILL.md"), skillBody("race", "Swapped under the server."))
	writeFile(t, filepath.Join(fx.skill, "passwd"), "decoy passwd of the skill\n")
	writeFile(t, filepath.Join(fx.skill, "f.md"), "served file\n")
	// The canary folder has no SKILL.md, like /etc: a link to it in the
	// source root is never a skill folder.
	for _, c := range []struct{ path, body string }{
		{filepath.Join(fx.canary, "passwd"), "root:x:0:0:CANARY-PASSWD:/root:/bin/sh\n"},
		{filepath.Join(fx.canary, "f.md"), "CANARY-FILE outside the source\n"},
		{filepath.Join(fx.skill, ".env"), "TOKEN=CANARY-DOTENV\n"},
	} {
		writeFile(t, c.path, c.body)
		fx.secrets = append(fx.secrets, []byte(c.body))
		fx.digests[digestOf([]byte(c.body))] = true
	}
	return fx
}

// leak returns the secret b holds, or "". Every secret holds "CANARY".
func (fx *raceFixture) leak(b []byte) string {
	for _, s := range fx.secrets {
		if bytes.Contains(b, s) {
			return string(s)
		}
	}
	if bytes.Contains(b, []byte("CANARY")) {
		return string(b)
	}
	return ""
}

// swap runs the rename dance until ctx is done. Errors are ignored: a step
// may find the previous one undone by nothing but itself.
func (fx *raceFixture) swap(ctx context.Context, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	pause := func() { time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond) }
	for ctx.Err() == nil {
		switch rng.IntN(3) {
		case 0: // the whole skill folder
			if os.Rename(fx.skill, fx.away) == nil {
				os.Symlink(fx.canary, fx.skill)
				pause()
				os.Remove(fx.skill)
				os.Rename(fx.away, fx.skill)
			}
		case 1: // one file, with a link out of the source
			fx.swapFile(filepath.Join(fx.skill, "f.md"), filepath.Join(fx.canary, "f.md"), "served file\n", pause)
		case 2: // one file, with a link that stays inside the skill
			fx.swapFile(filepath.Join(fx.skill, "passwd"), ".env", "decoy passwd of the skill\n", pause)
		}
		pause()
	}
	// Leave the real folder in place for the cleanup.
	if _, err := os.Lstat(fx.away); err == nil {
		os.Remove(fx.skill)
		os.Rename(fx.away, fx.skill)
	}
}

// swapFile replaces file by a link to target and back, atomically each way.
func (fx *raceFixture) swapFile(file, target, body string, pause func()) {
	tmp := file + ".swap"
	if os.Symlink(target, tmp) != nil || os.Rename(tmp, file) != nil {
		os.Remove(tmp)
		return
	}
	pause()
	if os.WriteFile(tmp, []byte(body), 0o644) == nil {
		os.Rename(tmp, file)
	}
}

func raceSkillFolderSwap(t *testing.T, reconcile time.Duration) {
	fx := newRaceFixture(t)
	st := startStack(t, &actors.PipelineOptions{Watch: true,
		Watcher: watch.Options{Debounce: 5 * time.Millisecond, Reconcile: reconcile}}, fx.root)
	defer st.stop(t)
	first := st.connectServer(t, legacyVersion, newNotes(), &syncBuffer{})
	if e := first.entry("skill://lib/race/SKILL.md"); e == nil {
		t.Fatal("skill race not listed before the race")
	}

	ctx, cancel := context.WithTimeout(t.Context(), raceDuration)
	defer cancel()
	var (
		reads, served atomic.Int64
		mu            sync.Mutex
		leaks         []string
	)
	report := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		if len(leaks) < 20 {
			leaks = append(leaks, what)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { fx.swap(ctx, 1) })
	for i := range 4 {
		s := st.connectServer(t, legacyVersion, newNotes(), &syncBuffer{})
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				what, b, ok := raceRead(ctx, s.cs, i+n)
				reads.Add(1)
				if ok {
					served.Add(1)
				}
				if secret := fx.leak(b); secret != "" {
					report(fmt.Sprintf("%s returned %q", what, secret))
				}
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			fx.checkDigests(ctx, st, first.cs, report)
		}
	})
	wg.Wait()
	t.Logf("%d reads, %d served", reads.Load(), served.Load())
	if len(leaks) > 0 {
		t.Fatalf("leaked through a swapped link:\n%s", strings.Join(leaks, "\n"))
	}
	if reads.Load() < 100 {
		t.Errorf("only %d reads in %v; the race was not exercised", reads.Load(), raceDuration)
	}
}

// raceRead does one read of the rotation and returns what it was, every
// byte of the answer (error text included) and whether it served content.
func raceRead(ctx context.Context, cs *mcp.ClientSession, n int) (string, []byte, bool) {
	uris := []string{"skill://lib/race/passwd", "skill://lib/race/f.md", "skill://lib/race/SKILL.md"}
	switch n % 3 {
	case 0:
		uri := uris[n/3%len(uris)]
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return uri, []byte(err.Error()), false
		}
		var b []byte
		for _, c := range res.Contents {
			b = append(append(b, c.Text...), c.Blob...)
		}
		return uri, b, true
	case 1:
		return callForRace(ctx, cs, "load-skill", map[string]any{"name": "lib__race"})
	default:
		path := []string{"passwd", "f.md"}[n/3%2]
		return callForRace(ctx, cs, "skill-resource", map[string]any{"skill": "lib__race", "path": path})
	}
}

func callForRace(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, []byte, bool) {
	what := fmt.Sprintf("%s %v", tool, args)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return what, []byte(err.Error()), false
	}
	var b []byte
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			b = append(b, c.Text...)
		case *mcp.EmbeddedResource:
			b = append(append(b, c.Resource.Text...), c.Resource.Blob...)
		}
	}
	return what, b, !res.IsError
}

// checkDigests looks for a secret's digest in the catalog being served and
// in skills/list.
func (fx *raceFixture) checkDigests(ctx context.Context, st *stack, cs *mcp.ClientSession, report func(string)) {
	if cat := st.facade.Catalog(); cat != nil {
		for _, sk := range cat.Skills {
			for _, f := range sk.Files {
				if fx.digests[f.Digest] {
					report(fmt.Sprintf("catalog v%d lists %s/%s with a secret's digest", cat.Version, sk.SkillPath, f.Path))
				}
			}
		}
	}
	res, err := mcp.CallCustomMethod[*skillsParams, *skillsResult](ctx, cs, "skills/list", &skillsParams{})
	if err != nil {
		return
	}
	for _, e := range res.Skills {
		for _, r := range e.Resources {
			if fx.digests[r.Digest] {
				report(fmt.Sprintf("skills/list lists %s with a secret's digest", r.URI))
			}
		}
	}
}
