package mcpface

import (
	"bytes"
	"encoding/json"

	"github.com/skilljack/skilljack-mcp/events"
)

// SetPanicHook installs fn to run at the top of every request, so tests can
// make a handler path panic.
func SetPanicHook(f *Facade, fn func(method string)) { f.panicHook = fn }

// SubscriptionCount returns how many (session, URI) subscriptions the facade
// tracks.
func SubscriptionCount(f *Facade) int {
	f.subMu.Lock()
	defer f.subMu.Unlock()
	n := 0
	for _, m := range f.subs {
		n += len(m)
	}
	return n
}

// BuildHTTPServer builds the HTTP server of f's current catalog, as a
// request of a new catalog version does.
func BuildHTTPServer(f *Facade) { f.newServer(f.current(), true) }

// SetFastLane turns the stdio fast lane of f on or off (fastlane.go); call
// it before any session starts.
func SetFastLane(f *Facade, on bool) { f.fastOff = !on }

// FastAnswers returns how many requests the fast lane of f answered.
func FastAnswers(f *Facade) int64 { return f.fastAnswers.Load() }

// AppendEntry is appendEntry (the direct encoding of a skill's entry).
func AppendEntry(b []byte, sk *events.Skill) ([]byte, error) { return appendEntry(b, sk) }

// EncoderEntry is a skill's entry as encoding/json writes newEntry(sk)
// with HTML escaping off: what AppendEntry must equal byte for byte.
func EncoderEntry(sk *events.Skill) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(newEntry(sk)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
