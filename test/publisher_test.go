package test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilljack/skilljack-mcp/actors"
	"github.com/skilljack/skilljack-mcp/actors/remote/wellknown"
)

// testCA is a certificate for the fake publishers' host names (and
// 127.0.0.1), made once per test binary.
var testCA = sync.OnceValue(func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "skilljack test publisher"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"publisher.test", "cdn.publisher.test", "other.test", "evil.test", "localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
})

// testCAPEM is testCA's certificate in PEM, for SSL_CERT_FILE of a child
// process.
func testCAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: testCA().Certificate[0]})
}

// pubFile is one answer of a fake publisher.
type pubFile struct {
	body        []byte
	contentType string
	status      int           // 0 = 200 (or 304 on a matching If-None-Match)
	location    string        // with status 3xx
	hang        time.Duration // wait before answering
	truncate    bool          // announce the full length, send half, close
}

// publisher is a fake /.well-known/agent-skills/ publisher on loopback
// HTTPS under a test host name. It records every request path and answers
// conditional requests with 304 when the body's ETag matches.
type publisher struct {
	t    *testing.T
	host string // "publisher.test"
	srv  *httptest.Server

	mu    sync.Mutex
	files map[string]pubFile
	reqs  []string // request URIs, in order
	n304  int
}

// newPublisher starts a publisher answering for host.
func newPublisher(t *testing.T, host string) *publisher {
	p := &publisher{t: t, host: host, files: map[string]pubFile{}}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.TLS = &tls.Config{Certificates: []tls.Certificate{testCA()}}
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut short by a stopped client
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	return p
}

// origin is the publisher's origin as configured: https://host (port 443,
// mapped to the listener by pubClient).
func (p *publisher) origin() string { return "https://" + p.host }

func (p *publisher) set(path string, f pubFile) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.files[path] = f
}

func (p *publisher) remove(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.files, path)
}

// requests returns how many requests asked for exactly path (any query).
func (p *publisher) requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.reqs {
		if r == path || strings.HasPrefix(r, path+"?") {
			n++
		}
	}
	return n
}

// notModified returns how many answers were 304.
func (p *publisher) notModified() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n304
}

func (p *publisher) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}

func (p *publisher) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r.URL.RequestURI())
	f, ok := p.files[r.URL.RequestURI()]
	if !ok {
		f, ok = p.files[r.URL.Path]
	}
	p.mu.Unlock()
	if f.hang > 0 {
		select {
		case <-time.After(f.hang):
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case !ok:
		http.NotFound(w, r)
		return
	case f.location != "":
		w.Header().Set("Location", f.location)
		w.WriteHeader(f.status)
		return
	case f.status != 0:
		w.WriteHeader(f.status)
		w.Write(f.body)
		return
	}
	etag := `"` + digestOf(f.body)[7:23] + `"`
	w.Header().Set("ETag", etag)
	if f.contentType != "" {
		w.Header().Set("Content-Type", f.contentType)
	}
	if r.Header.Get("If-None-Match") == etag {
		p.mu.Lock()
		p.n304++
		p.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if f.truncate {
		w.Header().Set("Content-Length", itoa(len(f.body)))
		w.WriteHeader(http.StatusOK)
		w.Write(f.body[:len(f.body)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return
	}
	w.Write(f.body)
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

// pubClient returns an HTTP client that reaches each publisher by its host
// name (any port) on its loopback listener and trusts testCA.
func pubClient(timeout time.Duration, pubs ...*publisher) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(testCA().Leaf)
	addrs := map[string]string{}
	for _, p := range pubs {
		addrs[p.host] = p.srv.Listener.Addr().String()
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, _ := net.SplitHostPort(addr)
				if a, ok := addrs[host]; ok {
					addr = a
				}
				return dialer.DialContext(ctx, network, addr)
			},
		},
	}
}

// wkIndex renders a v0.2.0 index of entries.
func wkIndex(entries ...map[string]any) []byte {
	b, _ := json.MarshalIndent(map[string]any{"$schema": wellknown.DiscoverySchemaV02, "skills": entries}, "", "  ")
	return b
}

// wkEntry is one index entry for body served at url.
func wkEntry(name, typ, url string, body []byte) map[string]any {
	return map[string]any{"name": name, "type": typ, "description": "The " + name + " skill.", "url": url, "digest": digestOf(body)}
}

// tarGz builds a .tar.gz of files (path → content), in sorted order.
func tarGz(t *testing.T, files [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f[1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

// zipOf builds a .zip of files.
func zipOf(t *testing.T, files [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wkStack is an in-process server whose only sources are publishers.
type wkStack struct {
	*stack
	s     *server
	logs  *syncBuffer
	cache string // SKILLJACK_CACHE_DIR
	home  string
	era   string
}

// startWK serves sources in process with env (allowlist, limits) on top of
// a fresh cache and home in a temporary folder, polling off: syncs run at
// start and on st.sync. The client speaks era version.
func startWK(t *testing.T, client *http.Client, env map[string]string, version string, sources ...string) *wkStack {
	t.Helper()
	return startWKWith(t, client, env, version, nil, sources...)
}

// startWKWith is startWK with opts applied to the pipeline options (to
// turn the watcher on, say).
func startWKWith(t *testing.T, client *http.Client, env map[string]string, version string, opts func(*actors.PipelineOptions), sources ...string) *wkStack {
	t.Helper()
	base := t.TempDir()
	e := map[string]string{
		"HOME":                        base + "/home",
		"SKILLJACK_CACHE_DIR":         base + "/cache",
		"WELL_KNOWN_POLL_INTERVAL_MS": "0",
	}
	for k, v := range env {
		e[k] = v
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	po := &actors.PipelineOptions{Bundled: actors.Bundled(), HTTPClient: client, RetryBackoff: 10 * time.Millisecond, Logger: log}
	if opts != nil {
		opts(po)
	}
	st := startStackEnv(t, po, e, sources...)
	t.Cleanup(func() { st.stop(t) })
	w := &wkStack{stack: st, logs: logs, cache: e["SKILLJACK_CACHE_DIR"], home: e["HOME"], era: version}
	w.s = st.connectServer(t, version, newNotes(), logs)
	// The session was initialized before the first sync: its instructions
	// hold the startup catalog (initialize fixes them; a new session gets
	// the new catalog), so the catalog check of servedEverywhere is off.
	w.s.startupInstructions = true
	return w
}

// connectServer connects an in-memory client of era version with the
// skills methods, recording notifications into n, as a *server so the
// end-to-end checks (servedEverywhere, notServed, listAll…) apply.
func (st *stack) connectServer(t *testing.T, version string, n *notes, logs *syncBuffer) *server {
	t.Helper()
	return connectServerTo(t, st.srv, version, n, logs)
}

// connectServerTo is connectServer to srv.
func connectServerTo(t *testing.T, srv *mcp.Server, version string, n *notes, logs *syncBuffer) *server {
	t.Helper()
	ct, stt := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), stt, nil); err != nil {
		t.Fatal(err)
	}
	client := newTestClient(t, n)
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cs: cs, stderr: logs, notes: n}
	t.Cleanup(func() { s.close() })
	if version == modernVersion {
		wait(t, n.acks, "the list_changed listen stream acknowledgement", logs)
	}
	return s
}

// next waits for the next source.synced or source.failed.
func (w *wkStack) next(t *testing.T) remoteEvent {
	t.Helper()
	select {
	case ev := <-w.remote:
		if ev.Err != nil {
			t.Fatalf("decoding %s: %v", ev.Topic, ev.Err)
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatalf("no source.synced or source.failed within 20 s; log:\n%s", w.logs.String())
	}
	return remoteEvent{}
}

// sync triggers a sync of every publisher and returns its event.
func (w *wkStack) sync(t *testing.T) remoteEvent {
	t.Helper()
	w.syncNow(t)
	return w.next(t)
}

// waitFor polls cond (every 20 ms, up to 20 s) until it holds.
func waitFor(t *testing.T, what string, cond func() bool, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; log:\n%s", what, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
