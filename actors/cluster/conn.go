package cluster

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

// reconnectWait is the pause between attempts to reach NATS: short, as a
// replica that lost NATS serves a catalog that may be going stale.
const reconnectWait = 500 * time.Millisecond

// reconnectJitter is the most added at random to reconnectWait, so that
// replicas that lost NATS together do not all come back at once.
const reconnectJitter = 100 * time.Millisecond

// Connect returns a NATS connection for cfg, named after node. It does not
// wait for the server: one that cannot be reached, or that refuses this
// replica (its credentials, its certificate), is retried forever (every
// JetStream call failing meanwhile), so a replica started before NATS, or
// before its credentials are accepted, joins once they are, and a lost
// connection is re-established. It fails only on settings that cannot
// work (a credentials or TLS file that cannot be read or parsed, a client
// certificate without its key, a malformed URL). Disconnects, reconnects
// and why an attempt failed (once per reason until a connection works) are
// logged to log. The caller closes the connection.
func Connect(cfg config.Cluster, node string, log *slog.Logger) (*nats.Conn, error) {
	opts, err := tlsAndAuthOptions(cfg)
	if err != nil {
		return nil, err
	}
	var conn atomic.Pointer[nats.Conn]
	why := &refusals{log: log}
	opts = append(opts,
		nats.Name("skilljack-mcp "+node),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		// Without it, the second refusal of the same credentials closes
		// the connection for good: the replica would never join, even
		// once NATS accepts them.
		nats.IgnoreAuthErrorAbort(),
		// Called before each pause between rounds of attempts: the last
		// round's error, if NATS refused it (TLS, credentials), is only in
		// LastError; a failed dial comes to ReconnectErrHandler.
		nats.CustomReconnectDelay(func(int) time.Duration {
			if nc := conn.Load(); nc != nil {
				why.note(cannotConnect, nc.LastError())
			}
			return reconnectWait + mrand.N(reconnectJitter)
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { why.note(cannotConnect, err) }),
		// Refusals after the first connection (credentials revoked, a
		// permission missing), slow consumers.
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { why.note("cluster: NATS reported an error", err) }),
		nats.ConnectHandler(func(*nats.Conn) { why.reset() }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("cluster: NATS disconnected; serving the last catalog until it is back", "error", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			why.reset()
			log.Info("cluster: NATS reconnected", "url", c.ConnectedUrlRedacted())
		}),
	)
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	conn.Store(nc)
	return nc, nil
}

// tlsAndAuthOptions are the NATS options of cfg's credentials and TLS
// files, each checked now: a file that cannot be read or parsed is an
// error here rather than a refusal retried forever.
func tlsAndAuthOptions(cfg config.Cluster) ([]nats.Option, error) {
	var opts []nats.Option
	if cfg.Creds != "" {
		if err := checkCreds(cfg.Creds); err != nil {
			return nil, err
		}
		// The file is read again at every connection: rotated
		// credentials are used from the next reconnect.
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.Token != "" {
		opts = append(opts, nats.Token(cfg.Token))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("--cluster-tls-cert and --cluster-tls-key go together: the client certificate and its key")
	}
	if cfg.TLSCert != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	return opts, nil
}

// checkCreds reports whether the file at path is a NATS credentials file:
// a user JWT and a user NKey seed. The error never quotes the file.
func checkCreds(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading --cluster-creds: %w", err)
	}
	jwt, err := nkeys.ParseDecoratedJWT(b)
	if err == nil && strings.Count(jwt, ".") != 2 {
		err = errors.New("no user JWT in it")
	}
	if err == nil {
		var kp nkeys.KeyPair
		if kp, err = nkeys.ParseDecoratedUserNKey(b); err == nil {
			kp.Wipe()
		}
	}
	if err != nil {
		return fmt.Errorf("--cluster-creds %s is not a NATS credentials file (a user JWT and NKey seed, as `nsc generate creds` writes): %w", path, err)
	}
	return nil
}

// cannotConnect is the message of a failed attempt to connect.
const cannotConnect = "cluster: cannot connect to NATS (retrying)"

// refusals logs why attempts to connect fail, and errors NATS reports:
// once per reason until a connection works, so a replica retrying every
// half second logs its reason once, not every time.
type refusals struct {
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

// note logs msg and err, unless err is nil or its reason was logged since
// the last connection (at most 16 reasons between two connections).
func (r *refusals) note(msg string, err error) {
	if err == nil {
		return
	}
	reason := refusalReason(err)
	key := reason
	if key == "" {
		key = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[key] || len(r.seen) >= 16 {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[key] = true
	if reason != "" {
		msg += ": " + reason
	}
	r.log.Warn(msg, "error", err)
}

// reset forgets the reasons logged: a connection works.
func (r *refusals) reset() {
	r.mu.Lock()
	r.seen = nil
	r.mu.Unlock()
}

// refusalReason says, for the operator, why NATS refused a connection
// (err): which setting to check; "" when err is none of those (a dial
// error, say, which speaks for itself).
func refusalReason(err error) string {
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	msg := err.Error()
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired),
		errors.Is(err, nats.ErrAuthRevoked), errors.Is(err, nats.ErrAccountAuthExpired):
		return "NATS refused this replica's credentials (check --cluster-token, --cluster-creds or the client certificate)"
	case errors.As(err, &unknownCA):
		return "the NATS server's certificate is not signed by a CA this replica trusts (check --cluster-tls-ca)"
	case errors.As(err, &badHost):
		return "the NATS server's certificate is not for the host named in --cluster"
	case strings.Contains(msg, "certificate required"), strings.Contains(msg, "bad certificate"),
		strings.Contains(msg, "unknown certificate authority"), strings.Contains(msg, "closed by remote after TLS handshake"):
		return "the NATS server refused this replica's client certificate (check --cluster-tls-cert and --cluster-tls-key)"
	case errors.Is(err, nats.ErrSecureConnRequired):
		return "the NATS server requires TLS (use a tls:// URL, with --cluster-tls-ca for a private CA)"
	case errors.Is(err, nats.ErrTLS), errors.Is(err, nats.ErrSecureConnWanted):
		return "TLS with the NATS server failed"
	}
	return ""
}

// NodeID returns a fresh identifier for this replica: the host name (any
// character but a letter, digit, '-' or '_' made '-', as it names NATS
// consumers) and 6 random hex digits, so that a restarted replica is a new
// node.
func NodeID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	host = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, host)
	var b [3]byte
	rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}
