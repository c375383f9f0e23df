package cluster

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

// TestRefusalReason: each way NATS refuses a replica is named with the
// setting to check; a dial error is left to speak for itself.
func TestRefusalReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nats.ErrAuthorization, "--cluster-creds"},
		{nats.ErrAuthRevoked, "--cluster-token"},
		{fmt.Errorf("%w: %w", nats.ErrTLS, x509.UnknownAuthorityError{}), "--cluster-tls-ca"},
		{fmt.Errorf("%w: %w", nats.ErrTLS, x509.HostnameError{Host: "127.0.0.1"}), "not for the host named in --cluster"},
		{errors.New("remote error: tls: certificate required"), "--cluster-tls-cert"},
		{fmt.Errorf("%w: connection closed by remote after TLS handshake: broken pipe", nats.ErrTLS), "--cluster-tls-key"},
		{nats.ErrSecureConnRequired, "tls://"},
		{fmt.Errorf("%w: handshake failure", nats.ErrTLS), "TLS with the NATS server failed"},
		{errors.New("dial tcp 127.0.0.1:4222: connect: connection refused"), ""},
	}
	for _, tc := range tests {
		got := refusalReason(tc.err)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("refusalReason(%v) = %q, want it to contain %q", tc.err, got, tc.want)
		}
	}
}

// TestRefusalsOncePerReason: a reason is logged once until a connection
// works, however often the attempt fails (every half second), and again
// after it.
func TestRefusalsOncePerReason(t *testing.T) {
	log, logs := eventstest.CaptureLog()
	r := &refusals{log: log}
	for range 10 {
		r.note(cannotConnect, nats.ErrAuthorization)
		r.note(cannotConnect, errors.New("dial tcp 127.0.0.1:4222: connect: connection refused"))
		r.note(cannotConnect, nil)
	}
	r.note("cluster: NATS reported an error", nats.ErrAuthorization) // the same reason
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("%d lines, want 2 (one per reason):\n%s", n, logs)
	}
	r.reset()
	r.note(cannotConnect, nats.ErrAuthorization)
	if n := strings.Count(logs.String(), "refused this replica's credentials"); n != 2 {
		t.Errorf("after a connection the reason is logged again: %d times\n%s", n, logs)
	}
}
