package mcpface

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
