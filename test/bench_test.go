package test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/config"
	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/actors/watch"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/mcpface"
)

// scientificCorpus returns the scientific-skills corpus path or skips.
func scientificCorpus(b *testing.B) string {
	root, err := filepath.Abs(filepath.Join(sharedDir, "corpora", "scientific-skills"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(root); err != nil {
		b.Skipf("scientific corpus not present (%v): ../shared is only in the workplace checkout", err)
	}
	return root
}

// BenchmarkStartupToFirstCatalog measures the pipeline from a fresh bus to
// the first catalog.changed for the scientific corpus (130 skills, 864
// files): config → hasher (cold digest cache; the OS page cache is warm) →
// catalog builder.
func BenchmarkStartupToFirstCatalog(b *testing.B) {
	root := scientificCorpus(b)
	home := b.TempDir()
	skills := 0
	for b.Loop() {
		ctx, cancel := context.WithCancel(b.Context())
		bus := events.NewBus(nil)
		cfg, err := config.Resolve(config.ResolveOptions{Args: []string{root}, Home: home, Getenv: func(string) string { return "" }})
		if err != nil {
			b.Fatal(err)
		}
		out, err := bus.Subscribe(ctx, events.TopicCatalogChanged)
		if err != nil {
			b.Fatal(err)
		}
		p, err := actors.NewPipeline(ctx, bus, bus, cfg, &actors.PipelineOptions{Bundled: actors.Bundled()})
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		msg := <-out
		ev, err := events.Decode[events.CatalogChanged](msg)
		msg.Ack()
		if err != nil {
			b.Fatal(err)
		}
		skills = len(ev.Catalog.Skills)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		bus.Close()
	}
	b.ReportMetric(float64(skills), "skills")
}

// BenchmarkSkillsListWalk measures a client walking every skills/list page
// (50 entries each, full manifests) of the scientific corpus through the
// facade over in-memory transports.
func BenchmarkSkillsListWalk(b *testing.B) {
	root := scientificCorpus(b)
	cfg, err := config.Resolve(config.ResolveOptions{Args: []string{root}, Home: b.TempDir(), Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := actors.Validate(b.Context(), cfg, &hasher.Options{Bundled: actors.Bundled()})
	if err != nil {
		b.Fatal(err)
	}
	facade := mcpface.New(&mcpface.Options{Tools: "always", Bundled: actors.Bundled()})
	facade.SetCatalog(cat)
	srv, err := facade.Server(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	cs := connectInMemory(b, b.Context(), srv)
	n := 0
	for b.Loop() {
		n = len(walkList(b, b.Context(), cs))
	}
	b.ReportMetric(float64(n), "entries")
}

// BenchmarkEditToNotification measures, per edit of a subscribed file, the
// time from the write to the client's notifications/resources/updated
// through the real watcher (500 ms debounce), hasher, catalog builder,
// notifier (100 ms per URI) and facade, in process. Run it with
// -benchtime=100x; it reports the median and p99 over the edits.
func BenchmarkEditToNotification(b *testing.B) {
	root := filepath.Join(b.TempDir(), "lib")
	for i := range 20 {
		name := fmt.Sprintf("s%02d", i)
		writeFile(b, filepath.Join(root, name, "SKILL.md"), skillBody(name, "Latency."))
	}
	file := filepath.Join(root, "s00", "notes.md")
	writeFile(b, file, "v0\n")
	st := startStack(b, &actors.PipelineOptions{Watch: true, Watcher: watch.Options{Reconcile: -1}}, root)
	defer st.stop(b)
	n := newNotes()
	cs, _ := st.connectNotes(b, n)
	defer cs.Close()
	uri := "skill://lib/s00/notes.md"
	if err := cs.Subscribe(b.Context(), &mcp.SubscribeParams{URI: uri}); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		writeFile(b, file, fmt.Sprintf("v%d\n", i))
		for got := ""; got != uri; {
			select {
			case got = <-n.updated:
			case <-time.After(notifyTimeout):
				b.Fatalf("edit %d: no resources/updated", i)
			}
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "median-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Milliseconds()), "p99-ms")
}

// BenchmarkInitializeWithHangingPublisher measures, per start of the built
// binary, the time from exec to the initialize result over stdio, with no
// remote source and with an allowlisted publisher that accepts the
// connection and never answers (issue 5: startup never waits for a
// publisher; the reference blocks initialize on its first sync). Compare
// the two sub-benchmarks' ns/op.
func BenchmarkInitializeWithHangingPublisher(b *testing.B) {
	hang := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{testCA()}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut short by exiting children
	srv.StartTLS()
	b.Cleanup(func() { close(hang); srv.Close() })
	origin := "https://" + srv.Listener.Addr().String()
	certFile := filepath.Join(b.TempDir(), "ca.pem")
	if err := os.WriteFile(certFile, testCAPEM(), 0o644); err != nil {
		b.Fatal(err)
	}
	lib := filepath.Join(b.TempDir(), "lib")
	writeFile(b, filepath.Join(lib, "s", "SKILL.md"), skillBody("s", "A local skill."))
	for _, c := range []struct {
		name string
		args []string
	}{
		{"local-only", []string{lib}},
		{"hanging-publisher", []string{lib, origin}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(binPath, c.args...)
				cmd.Env = []string{"HOME=" + b.TempDir(), "SSL_CERT_FILE=" + certFile, "WELL_KNOWN_ALLOWED_ORIGINS=" + origin,
					"SKILLJACK_CACHE_DIR=" + b.TempDir(), "PATH=" + os.Getenv("PATH")}
				client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
				ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
				cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				cs.Close()
			}
		})
	}
}
