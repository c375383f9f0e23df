package mcpface

import (
	"bytes"
	"encoding/json"
	"slices"

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

// SkillEditor gives, for editing, the skill of a slice cloned from a
// catalog's that a match picks: a copy put in its place the first time
// since the last Reset, so that the catalog the slice was cloned from
// keeps its own (catalog versions share unchanged skills by pointer).
type SkillEditor struct{ copied map[*events.Skill]bool }

// NewSkillEditor returns an editor with nothing copied yet.
func NewSkillEditor() *SkillEditor { return &SkillEditor{copied: map[*events.Skill]bool{}} }

// Reset starts a new version: every skill is copied again when edited.
func (e *SkillEditor) Reset() { clear(e.copied) }

// At returns the first skill of s that match picks, copied into s once.
func (e *SkillEditor) At(s []*events.Skill, match func(*events.Skill) bool) *events.Skill {
	i := slices.IndexFunc(s, match)
	if !e.copied[s[i]] {
		cp := *s[i]
		s[i] = &cp
		e.copied[&cp] = true
	}
	return s[i]
}
