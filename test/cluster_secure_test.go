package test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// TestClusterSecuredNATS: two skilljack-mcp processes join a nats-server
// that requires TLS with client certificates and a token — the options
// from flags (--cluster-tls-ca, --cluster-tls-cert, --cluster-tls-key)
// and the environment (SKILLJACK_CLUSTER_TOKEN) — and serve one catalog:
// the same version and skills/list on both, and the follower reads a file
// through the object store over that connection. The token is never on
// stderr.
func TestClusterSecuredNATS(t *testing.T) {
	const token = "cluster-secret-token-2026"
	certs := newTestCerts(t)
	srv, err := natsserver.NewServer(&natsserver.Options{ServerName: "skilljack-tls", Host: "127.0.0.1", Port: -1,
		JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true, Authorization: token,
		TLS: true, TLSVerify: true, TLSTimeout: 5, TLSConfig: &tls.Config{Certificates: []tls.Certificate{certs.server},
			ClientCAs: certs.pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	url := "tls://127.0.0.1:" + strconv.Itoa(srv.Addr().(*net.TCPAddr).Port)
	c := &clusterFixture{t: t}
	var env func(string) []string
	c.gh, c.lib, env, c.args = newClusterSources(t, 0)
	for i := range 2 {
		c.replicas = append(c.replicas, &replica{t: t, name: fmt.Sprintf("replica %d", i),
			env: append(env(t.TempDir()), "SKILLJACK_CLUSTER_TOKEN="+token),
			args: append([]string{"--cluster=" + url, "--cluster-lease=" + clusterLease.String(),
				"--cluster-tls-ca=" + certs.ca, "--cluster-tls-cert=" + certs.cert, "--cluster-tls-key=" + certs.key}, c.args...)})
	}
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Go(r.start)
	}
	wg.Wait()
	c.converged("the catalog over TLS", func(list []byte) bool {
		return bytes.Contains(list, []byte(ghSkillURI)) && bytes.Contains(list, []byte("skill://lib/beta/SKILL.md"))
	})
	for _, r := range c.replicas {
		if got, err := readText(r.base(), ghSkillURI); err != nil || got != ghSkillBody {
			t.Errorf("%s: resources/read %s = %q, %v", r.name, ghSkillURI, got, err)
		}
		if strings.Contains(r.stderr(), token) {
			t.Errorf("%s: stderr has the token:\n%s", r.name, r.stderr())
		}
	}
}

// testCerts are a CA made for one test and, signed by it, a server
// certificate for 127.0.0.1 and a client certificate (PEM files).
type testCerts struct {
	server        tls.Certificate
	pool          *x509.CertPool
	ca, cert, key string
}

// newTestCerts makes the CA (ECDSA P-256) and the certificates.
func newTestCerts(t *testing.T) testCerts {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	out := testCerts{pool: x509.NewCertPool(), ca: write("ca.pem", "CERTIFICATE", caDER)}
	out.pool.AddCert(ca)
	issue := func(serial int64, usage x509.ExtKeyUsage, ips ...net.IP) ([]byte, *ecdsa.PrivateKey) {
		key := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	srvDER, srvKey := issue(2, x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	out.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	cliDER, cliKey := issue(3, x509.ExtKeyUsageClientAuth)
	keyDER, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	out.cert = write("client.pem", "CERTIFICATE", cliDER)
	out.key = write("client-key.pem", "PRIVATE KEY", keyDER)
	return out
}
