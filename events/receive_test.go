package events_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// acked encodes ev and returns the message with a check of whether it was acked.
func acked(t *testing.T, ev any) (isAcked func() bool, msg *message.Message) {
	t.Helper()
	msg, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return func() bool {
		select {
		case <-msg.Acked():
			return true
		default:
			return false
		}
	}, msg
}

// TestReceive checks that Receive decodes a message of the right type and
// acks every message, also one of another type, which it logs.
func TestReceive(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	isAcked, msg := acked(t, events.SourcesConfigured{Seq: 3})
	ev, ok := events.Receive[events.SourcesConfigured](log, msg)
	if !ok || ev.Seq != 3 || !isAcked() {
		t.Errorf("Receive(sources.configured) = %+v, %v, acked %v; want Seq 3, true, acked", ev, ok, isAcked())
	}

	isAcked, msg = acked(t, events.OverridesChanged{Seq: 1})
	if _, ok := events.Receive[events.SourcesConfigured](log, msg); ok || !isAcked() {
		t.Errorf("Receive(overrides.changed as sources.configured) ok = %v, acked %v; want false, acked", ok, isAcked())
	}
	if !strings.Contains(logs.String(), "handling message") {
		t.Errorf("log = %q, want the decode error logged", logs.String())
	}
}

// TestSourcesConfiguredHas checks Has on the kinds present and absent.
func TestSourcesConfiguredHas(t *testing.T) {
	c := events.SourcesConfigured{Sources: []events.Source{{Kind: events.SourceLocal}, {Kind: events.SourceGitHub}}}
	for _, tc := range []struct {
		kind events.SourceKind
		want bool
	}{
		{events.SourceLocal, true},
		{events.SourceGitHub, true},
		{events.SourceWellKnown, false},
	} {
		if got := c.Has(tc.kind); got != tc.want {
			t.Errorf("Has(%s) = %v, want %v", tc.kind, got, tc.want)
		}
	}
}
