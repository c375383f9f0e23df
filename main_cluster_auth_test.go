package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Secured NATS (issue 16 follow-up): the replica's NATS options
// (--cluster-token, --cluster-tls-ca, --cluster-tls-cert/--cluster-tls-key,
// --cluster-creds) against an embedded nats-server that demands them. Each
// replica runs the real run, so the options go through the settings table,
// joinCluster and cluster.Connect as in the binary.

// authWait bounds every wait of these tests: far above a connect, a lease
// and the first catalog, so a slow machine does not fail them.
const authWait = 20 * time.Second

// startSecuredNATS starts an embedded JetStream nats-server on loopback
// with opts' security settings: on opts.Port (0: a random port, retrying
// the bind for a few seconds after a restart) and opts.StoreDir (""): a
// temp folder). It is shut down at the end of the test.
func startSecuredNATS(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	if opts.Port == 0 {
		opts.Port = -1
	}
	if opts.StoreDir == "" {
		opts.StoreDir = t.TempDir()
	}
	opts.Host, opts.JetStream, opts.NoSigs, opts.NoLog = "127.0.0.1", true, true, true
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ns, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go ns.Start()
		if ns.ReadyForConnections(5 * time.Second) {
			t.Cleanup(ns.Shutdown)
			return ns
		}
		ns.Shutdown()
		if time.Now().After(deadline) {
			t.Fatalf("nats-server did not listen on port %d", opts.Port)
		}
	}
}

// natsPort is ns's client port, for URLs of another host name or scheme.
func natsPort(ns *server.Server) string { return strconv.Itoa(natsPortNumber(ns)) }

// natsPortNumber is ns's client port.
func natsPortNumber(ns *server.Server) int { return ns.Addr().(*net.TCPAddr).Port }

// clusterReplica is one in-process replica: run with --http=0 and a
// cluster flag set, its stderr, and its end.
type clusterReplica struct {
	errs   *lockedBuffer
	cancel context.CancelFunc
	done   chan error
}

// startReplica runs run(--http=0 --cluster-name=sec --cluster-lease=1s
// args… LIB) with env (HOME a fresh folder) in a goroutine, LIB a folder
// of one skill "ok"; it is stopped at the end of the test.
func startReplica(t *testing.T, env map[string]string, args ...string) *clusterReplica {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(dir, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	return startReplicaOf(t, dir, env, args...)
}

// startReplicaOf is startReplica serving the folder dir.
func startReplicaOf(t *testing.T, dir string, env map[string]string, args ...string) *clusterReplica {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	env["HOME"] = t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	r := &clusterReplica{errs: &lockedBuffer{}, cancel: cancel, done: make(chan error, 1)}
	args = append(append([]string{"--http=0", "--cluster-name=sec", "--cluster-lease=1s"}, args...), dir)
	go func() {
		r.done <- run(ctx, args, io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, r.errs, func(k string) string { return env[k] })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(authWait):
			t.Errorf("run did not return within %v of cancel", authWait)
		}
	})
	return r
}

// listenRe finds the base URL in the "listening" line.
var listenRe = regexp.MustCompile(`msg=listening url=(http://\S+)/mcp`)

// replicaHealth is the body of the replica's GET /healthz.
type replicaHealth struct {
	Status         string `json:"status"`
	CatalogVersion uint64 `json:"catalogVersion"`
	Skills         int    `json:"skills"`
	Cluster        struct {
		Name   string `json:"name"`
		Leader bool   `json:"leader"`
	} `json:"cluster"`
}

// base waits for the replica's listening line (it comes with the first
// catalog) and returns its http://127.0.0.1:PORT.
func (r *clusterReplica) base(t *testing.T) string {
	t.Helper()
	for deadline := time.Now().Add(authWait); ; time.Sleep(20 * time.Millisecond) {
		if m := listenRe.FindStringSubmatch(r.errs.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening line within %v:\n%s", authWait, r.errs.String())
		}
	}
}

// health reads the replica's /healthz; the HTTP status is 200 or the
// test fails.
func (r *clusterReplica) health(t *testing.T) replicaHealth {
	t.Helper()
	var h replicaHealth
	resp, err := http.Get(r.base(t) + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: HTTP %d, %v", resp.StatusCode, err)
	}
	return h
}

// servesAsLeader waits until /healthz says the replica leads the cluster
// "sec" and serves the skill, failing the test otherwise.
func (r *clusterReplica) servesAsLeader(t *testing.T) {
	t.Helper()
	h := r.health(t)
	for deadline := time.Now().Add(authWait); !h.Cluster.Leader; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never leader within %v: %+v\n%s", authWait, h, r.errs.String())
		}
		h = r.health(t)
	}
	if h.Status != "ok" || h.CatalogVersion == 0 || h.Skills < 1 || h.Cluster.Name != "sec" {
		t.Errorf("/healthz = %+v", h)
	}
}

// refused waits until the replica's stderr has a line with every one of
// words, in any case (the reason NATS refused it), and checks that it serves nothing
// meanwhile (no listening line) and that no secret is in its stderr.
func (r *clusterReplica) refused(t *testing.T, secrets []string, words ...string) {
	t.Helper()
	has := func() bool {
		for _, line := range strings.Split(strings.ToLower(r.errs.String()), "\n") {
			all := true
			for _, w := range words {
				all = all && strings.Contains(line, strings.ToLower(w))
			}
			if all {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(authWait); !has(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no stderr line with %q within %v:\n%s", words, authWait, r.errs.String())
		}
	}
	errs := r.errs.String()
	if listenRe.MatchString(errs) {
		t.Errorf("a refused replica serves:\n%s", errs)
	}
	for _, s := range secrets {
		if strings.Contains(errs, s) {
			t.Errorf("stderr has the secret %q:\n%s", s, errs)
		}
	}
}

// TestClusterToken: against a token-protected nats-server, a replica with
// --cluster-token (or SKILLJACK_CLUSTER_TOKEN) leads and serves; one with a
// wrong token or none is refused, says so on stderr (the NATS reason and
// the flags to check) and never logs the token. A refused replica keeps
// trying: once the server accepts its token (rotated there), it joins.
func TestClusterToken(t *testing.T) {
	const token = "s3cr3t-nats-token-4711"
	opts := &server.Options{Authorization: token}
	ns := startSecuredNATS(t, opts)
	refusedToken := []string{"cluster: cannot connect to NATS", "refused this replica's credentials", "--cluster-token", "authorization violation"}
	t.Run("flag", func(t *testing.T) {
		startReplica(t, nil, "--cluster="+ns.ClientURL(), "--cluster-token="+token).servesAsLeader(t)
	})
	t.Run("env", func(t *testing.T) {
		startReplica(t, map[string]string{"SKILLJACK_CLUSTER_TOKEN": token}, "--cluster="+ns.ClientURL()).servesAsLeader(t)
	})
	t.Run("none", func(t *testing.T) {
		startReplica(t, nil, "--cluster="+ns.ClientURL()).refused(t, []string{token}, refusedToken...)
	})
	t.Run("wrong-then-rotated", func(t *testing.T) {
		// A server of its own, restarted with another token below (a
		// reload that revokes a connected client races inside
		// nats-server 2.15.2).
		opts := &server.Options{Authorization: token}
		ns := startSecuredNATS(t, opts)
		const next = "next-nats-token-0815"
		r := startReplica(t, nil, "--cluster="+ns.ClientURL(), "--cluster-token="+next)
		r.refused(t, []string{next, token}, refusedToken...)
		// Before this fix, nats.go closed the connection for good at the
		// second refusal of the same credentials.
		time.Sleep(2 * time.Second) // several refused attempts
		rotated := *opts
		rotated.Authorization = next
		if err := ns.ReloadOptions(&rotated); err != nil {
			t.Fatal(err)
		}
		r.servesAsLeader(t)
		if errs := r.errs.String(); strings.Count(errs, "refused this replica's credentials") != 1 {
			t.Errorf("want the refusal logged once:\n%s", errs)
		}
		// Refused while running (NATS back with the old token): the
		// replica keeps serving, says why it cannot reconnect, and
		// reconnects once the token is good again.
		old := *opts
		old.Port = natsPortNumber(ns)
		ns.Shutdown()
		ns.WaitForShutdown()
		r.waitLog(t, "cluster: NATS disconnected", 1)
		ns = startSecuredNATS(t, &old)
		r.waitLog(t, "refused this replica's credentials", 2)
		if h := r.health(t); h.Status != "ok" || h.CatalogVersion == 0 {
			t.Errorf("/healthz while NATS refuses it = %+v, want its last catalog served", h)
		}
		if err := ns.ReloadOptions(&rotated); err != nil {
			t.Fatal(err)
		}
		r.waitLog(t, "cluster: NATS reconnected", 1)
		if errs := r.errs.String(); strings.Contains(errs, next) || strings.Contains(errs, token) {
			t.Errorf("stderr has a token:\n%s", errs)
		}
	})
}

// waitLog waits until the replica's stderr has s at least n times.
func (r *clusterReplica) waitLog(t *testing.T, s string, n int) {
	t.Helper()
	for deadline := time.Now().Add(authWait); strings.Count(r.errs.String(), s) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stderr has %q fewer than %d times within %v:\n%s", s, n, authWait, r.errs.String())
		}
	}
}

// testPKI is a CA made for one test, and certificates it signed, as PEM
// files in a temp folder.
type testPKI struct {
	t    *testing.T
	dir  string
	ca   *x509.Certificate
	key  *ecdsa.PrivateKey
	next int64
}

// newTestPKI makes a fresh ECDSA P-256 CA; its certificate is p.file("ca.pem").
func newTestPKI(t *testing.T, name string) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{t: t, dir: t.TempDir(), ca: ca, key: key, next: 2}
	p.write("ca.pem", "CERTIFICATE", der)
	return p
}

// file is the path of the PEM file name.
func (p *testPKI) file(name string) string { return filepath.Join(p.dir, name) }

func (p *testPKI) write(name, typ string, der []byte) {
	p.t.Helper()
	if err := os.WriteFile(p.file(name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		p.t.Fatal(err)
	}
}

// issue signs a certificate for cn (a server's for hosts, names or IPs,
// or a client's when hosts is empty) and writes name.pem and name-key.pem;
// it returns the pair for a tls.Config.
func (p *testPKI) issue(name, cn string, hosts ...string) tls.Certificate {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.next), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	p.next++
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		p.t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(name+".pem", "CERTIFICATE", der)
	p.write(name+"-key.pem", "PRIVATE KEY", kder)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// pool is a pool of p's CA.
func (p *testPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	return pool
}

// TestClusterTLS: against a nats-server with a certificate of a CA made
// here, a replica with --cluster-tls-ca leads and serves (tls:// and
// nats:// URLs, an IP or a host name); without it the server's certificate
// is not trusted, and stderr says so. Against a server that requires client
// certificates, --cluster-tls-cert/--cluster-tls-key are let in and a
// replica without them, or with one of another CA, is refused with the
// reason on stderr.
func TestClusterTLS(t *testing.T) {
	pki := newTestPKI(t, "skilljack test CA")
	srvCert := pki.issue("server", "nats", "127.0.0.1", "localhost")
	ca := "--cluster-tls-ca=" + pki.file("ca.pem")
	t.Run("server", func(t *testing.T) {
		ns := startSecuredNATS(t, &server.Options{TLS: true, TLSTimeout: 5,
			TLSConfig: &tls.Config{Certificates: []tls.Certificate{srvCert}, MinVersion: tls.VersionTLS12}})
		port := natsPort(ns)
		for _, url := range []string{"tls://127.0.0.1:" + port, "nats://127.0.0.1:" + port, "tls://localhost:" + port} {
			t.Run(url[:strings.Index(url, ":")], func(t *testing.T) {
				startReplica(t, nil, "--cluster="+url, ca).servesAsLeader(t)
			})
		}
		t.Run("wrong-host", func(t *testing.T) {
			other := startSecuredNATS(t, &server.Options{TLS: true, TLSTimeout: 5,
				TLSConfig: &tls.Config{Certificates: []tls.Certificate{pki.issue("elsewhere", "nats", "nats.example")}, MinVersion: tls.VersionTLS12}})
			startReplica(t, nil, "--cluster=tls://127.0.0.1:"+natsPort(other), ca).refused(t, nil, "cluster: cannot connect to NATS", "not for the host named in --cluster", "x509")
		})
		t.Run("untrusted", func(t *testing.T) {
			startReplica(t, nil, "--cluster=tls://127.0.0.1:"+port).refused(t, nil, "cluster: cannot connect to NATS", "not signed by a CA this replica trusts", "--cluster-tls-ca", "x509")
		})
	})
	t.Run("mutual", func(t *testing.T) {
		pki.issue("client", "replica")
		other := newTestPKI(t, "another CA")
		other.issue("stranger", "stranger")
		ns := startSecuredNATS(t, &server.Options{TLS: true, TLSVerify: true, TLSTimeout: 5,
			TLSConfig: &tls.Config{Certificates: []tls.Certificate{srvCert}, ClientCAs: pki.pool(),
				ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}})
		url := "--cluster=tls://127.0.0.1:" + natsPort(ns)
		t.Run("cert", func(t *testing.T) {
			startReplica(t, nil, url, ca, "--cluster-tls-cert="+pki.file("client.pem"), "--cluster-tls-key="+pki.file("client-key.pem")).servesAsLeader(t)
		})
		t.Run("no-cert", func(t *testing.T) {
			startReplica(t, nil, url, ca).refused(t, nil, "cluster: cannot connect to NATS", "refused this replica's client certificate", "--cluster-tls-cert")
		})
		t.Run("other-ca", func(t *testing.T) {
			startReplica(t, nil, url, ca, "--cluster-tls-cert="+other.file("stranger.pem"), "--cluster-tls-key="+other.file("stranger-key.pem")).refused(t, nil, "cluster: cannot connect to NATS", "refused this replica's client certificate", "--cluster-tls-cert")
		})
	})
}

// operatorNATS is a nats-server in operator (JWT) mode: an operator, a
// system account and an account with JetStream, resolved from memory.
type operatorNATS struct {
	ns      *server.Server
	account nkeys.KeyPair
}

// startOperatorNATS starts a nats-server in operator mode (see
// [operatorNATS]).
func startOperatorNATS(t *testing.T) *operatorNATS {
	t.Helper()
	op := newNKey(t, nkeys.CreateOperator)
	opClaims := jwt.NewOperatorClaims(publicKey(t, op))
	opClaims.Name = "skilljack-test-operator"
	sys, sysJWT := newAccount(t, op, "SYS", false)
	opClaims.SystemAccount = publicKey(t, sys)
	acc, accJWT := newAccount(t, op, "SKILLJACK", true)
	resolver := &server.MemAccResolver{}
	for key, claims := range map[string]string{publicKey(t, sys): sysJWT, publicKey(t, acc): accJWT} {
		if err := resolver.Store(key, claims); err != nil {
			t.Fatal(err)
		}
	}
	ns := startSecuredNATS(t, &server.Options{TrustedOperators: []*jwt.OperatorClaims{opClaims},
		AccountResolver: resolver, SystemAccount: publicKey(t, sys)})
	return &operatorNATS{ns: ns, account: acc}
}

// newNKey makes a key pair with create, failing the test on an error.
func newNKey(t *testing.T, create func() (nkeys.KeyPair, error)) nkeys.KeyPair {
	t.Helper()
	kp, err := create()
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// publicKey is kp's public key.
func publicKey(t *testing.T, kp nkeys.KeyPair) string {
	t.Helper()
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// newAccount makes an account named name, signed by op, with unlimited
// JetStream when js; it returns its key pair and JWT.
func newAccount(t *testing.T, op nkeys.KeyPair, name string, js bool) (nkeys.KeyPair, string) {
	t.Helper()
	kp := newNKey(t, nkeys.CreateAccount)
	claims := jwt.NewAccountClaims(publicKey(t, kp))
	claims.Name = name
	if js {
		claims.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	}
	token, err := claims.Encode(op)
	if err != nil {
		t.Fatal(err)
	}
	return kp, token
}

// credsFile writes a .creds file (a user JWT signed by account, and the
// user's NKey seed) and returns its path and the seed.
func credsFile(t *testing.T, account nkeys.KeyPair) (string, string) {
	t.Helper()
	user := newNKey(t, nkeys.CreateUser)
	claims := jwt.NewUserClaims(publicKey(t, user))
	claims.Name = "replica"
	token, err := claims.Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := user.Seed()
	if err != nil {
		t.Fatal(err)
	}
	creds, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "replica.creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, string(seed)
}

// TestClusterCreds: against a nats-server in operator (JWT) mode, a
// replica with --cluster-creds (a user of the JetStream account) leads and
// serves; one with a user of an account the server does not know is
// refused with the reason on stderr, and its seed is never logged.
func TestClusterCreds(t *testing.T) {
	on := startOperatorNATS(t)
	t.Run("user", func(t *testing.T) {
		creds, _ := credsFile(t, on.account)
		startReplica(t, nil, "--cluster="+on.ns.ClientURL(), "--cluster-creds="+creds).servesAsLeader(t)
	})
	t.Run("unknown-account", func(t *testing.T) {
		stranger := newNKey(t, nkeys.CreateAccount)
		creds, seed := credsFile(t, stranger)
		startReplica(t, nil, "--cluster="+on.ns.ClientURL(), "--cluster-creds="+creds).refused(t, []string{seed}, "cluster: cannot connect to NATS", "refused this replica's credentials", "--cluster-creds", "authorization violation")
	})
}

// TestClusterSecurityUsageErrors: a credentials file that is missing or no
// credentials file, and a client certificate without its key (or the other
// way round), refuse to start (exit 2) with the flag named — rather than a
// replica refused by NATS forever — and the error quotes no secret.
func TestClusterSecurityUsageErrors(t *testing.T) {
	dir := t.TempDir()
	notCreds := filepath.Join(dir, "not.creds")
	writeFile(t, notCreds, "SUAsecretseedlikething\n")
	pki := newTestPKI(t, "usage CA")
	pki.issue("client", "replica")
	for _, tc := range []struct {
		arg, want string
	}{
		{"--cluster-creds=" + filepath.Join(dir, "missing.creds"), "--cluster-creds"},
		{"--cluster-creds=" + notCreds, "--cluster-creds"},
		{"--cluster-tls-cert=" + pki.file("client.pem"), "--cluster-tls-key"},
		{"--cluster-tls-key=" + pki.file("client-key.pem"), "--cluster-tls-cert"},
	} {
		env := map[string]string{"HOME": t.TempDir()}
		var errs lockedBuffer
		err := run(t.Context(), []string{"--http=0", "--cluster=nats://127.0.0.1:1", tc.arg, t.TempDir()},
			io.NopCloser(strings.NewReader("")), nopWriteCloser{io.Discard}, &errs, func(k string) string { return env[k] })
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: run = %v, want exit 2 naming %s\n%s", tc.arg, err, tc.want, errs.String())
		}
		if err != nil && strings.Contains(err.Error()+errs.String(), "SUAsecret") {
			t.Errorf("%s: the file's content is quoted: %v\n%s", tc.arg, err, errs.String())
		}
	}
}

// TestClusterFollowerSourcesDiffer: a follower started with other sources
// than the leader serves the leader's catalog and says so once, naming
// both; one started with the leader's sources says nothing.
func TestClusterFollowerSourcesDiffer(t *testing.T) {
	ns := startSecuredNATS(t, &server.Options{})
	dir := filepath.Join(t.TempDir(), "lib")
	writeFile(t, filepath.Join(dir, "ok", "SKILL.md"), skillBody("ok", "Fine."))
	leader := startReplicaOf(t, dir, nil, "--cluster="+ns.ClientURL())
	leader.servesAsLeader(t)
	same := startReplicaOf(t, dir, nil, "--cluster="+ns.ClientURL())
	other := startReplica(t, nil, "--cluster="+ns.ClientURL())
	const warning = "started with other sources than the leader"
	other.waitLog(t, warning, 1)
	if h := other.health(t); h.Cluster.Leader || h.CatalogVersion != leader.health(t).CatalogVersion {
		t.Errorf("the follower's /healthz = %+v, want the leader's version", h)
	}
	if errs := other.errs.String(); !strings.Contains(errs, "leader_sources="+dir+",bundled") || strings.Count(errs, warning) != 1 {
		t.Errorf("want one warning naming the leader's sources %s:\n%s", dir, errs)
	}
	if h := same.health(t); h.Cluster.Leader || strings.Contains(same.errs.String(), warning) {
		t.Errorf("a follower with the leader's sources: /healthz %+v, stderr:\n%s", h, same.errs.String())
	}
}
