package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"

	"github.com/skilljack/skilljack-mcp/actors/config"
)

// reconnectWait is the pause between attempts to reach NATS: short, as a
// replica that lost NATS serves a catalog that may be going stale.
const reconnectWait = 500 * time.Millisecond

// Connect returns a NATS connection for cfg, named after node. It does not
// wait for the server: one that cannot be reached is retried forever
// (every JetStream call failing meanwhile), so a replica started before
// NATS joins once NATS is up, and a lost connection is re-established. It
// fails only on settings that cannot work (a credentials or TLS file that
// cannot be read, a malformed URL). Disconnects and reconnects are logged
// to log. The caller closes the connection.
func Connect(cfg config.Cluster, node string, log *slog.Logger) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name("skilljack-mcp " + node),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("cluster: NATS disconnected; serving the last catalog until it is back", "error", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			log.Info("cluster: NATS reconnected", "url", c.ConnectedUrlRedacted())
		}),
	}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.Token != "" {
		opts = append(opts, nats.Token(cfg.Token))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS: %w", err)
	}
	return nc, nil
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
