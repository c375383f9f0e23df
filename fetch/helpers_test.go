package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// rec is one request a test server saw.
type rec struct {
	Host, Path, Query string
	Header            http.Header
}

// recorder records the requests of one test server.
type recorder struct {
	mu   sync.Mutex
	reqs []rec
}

func (r *recorder) add(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, rec{Host: req.Host, Path: req.URL.Path, Query: req.URL.RawQuery, Header: req.Header.Clone()})
}

func (r *recorder) all() []rec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rec(nil), r.reqs...)
}

func (r *recorder) n() int { return len(r.all()) }

// server is a test server that records its requests.
type server struct {
	*httptest.Server
	rec *recorder
}

func newServer(t *testing.T, tlsOn bool, h http.HandlerFunc) *server {
	t.Helper()
	rc := &recorder{}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.add(r)
		h(w, r)
	})
	var s *httptest.Server
	if tlsOn {
		s = httptest.NewTLSServer(wrapped)
	} else {
		s = httptest.NewServer(wrapped)
	}
	t.Cleanup(s.Close)
	return &server{Server: s, rec: rc}
}

// hostsClient returns a client whose dialer maps "name:port" to the given
// servers' listeners and that trusts the httptest certificate whatever the
// name (BR-24 setup).
func hostsClient(t *testing.T, hosts map[string]*server) *http.Client {
	t.Helper()
	var base *http.Transport
	for _, s := range hosts {
		if s.TLS != nil {
			base = s.Client().Transport.(*http.Transport)
			break
		}
	}
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	tr := base.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = &tls.Config{}
	}
	tr.TLSClientConfig.ServerName = "example.com" // in the httptest certificate
	addrs := map[string]string{}
	for name, s := range hosts {
		addrs[name] = s.Listener.Addr().String()
	}
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if a, ok := addrs[addr]; ok {
			return d.DialContext(ctx, network, a)
		}
		if strings.HasPrefix(addr, "127.0.0.1:") || strings.HasPrefix(addr, "[::1]:") {
			return d.DialContext(ctx, network, addr)
		}
		return nil, fmt.Errorf("test dialer: unknown host %s", addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

// truncated answers 200 with a Content-Length of len(full) but sends only
// n bytes, then closes the connection.
func truncated(t *testing.T, w http.ResponseWriter, full []byte, n int) {
	conn, bw, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n", len(full))
	bw.Write(full[:n])
	bw.Flush()
}

// fast returns options for a test server: its client, short backoff.
func fast(s *server) *Options {
	return &Options{HTTPClient: s.Client(), Backoff: 2 * time.Millisecond}
}
