package actors

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// DefaultNotifyDebounce is how long the notifier holds a resource URI's
// update before sending it. Saving a file is often several writes (an
// editor's temp file and rename, a formatter run on save) that the
// watcher's 500 ms window can split over two catalog versions; 100 ms
// merges those into one notice per URI, so a subscriber re-reads once,
// while staying well under the delay a person notices after saving.
const DefaultNotifyDebounce = 100 * time.Millisecond

// NotifierOptions configure a [Notifier]. A nil *NotifierOptions means
// defaults.
type NotifierOptions struct {
	// Debounce is how long an update of one URI is held: changes of that
	// URI within the window are sent once, at its end. If zero, defaults to
	// [DefaultNotifyDebounce].
	Debounce time.Duration
	// Logger receives the notifier's log lines. If nil, they are discarded.
	Logger *slog.Logger
}

// Notifier is the actor that turns catalog versions into resource update
// notices (DESIGN "notifier"): the file URIs whose digest changed or that
// vanished between the catalog it holds and the next one, debounced per
// URI.
type Notifier struct {
	in       <-chan *message.Message
	pub      message.Publisher
	log      *slog.Logger
	debounce time.Duration

	// State owned by Run.
	prev    *events.Catalog
	pending map[string]pendingUpdate
}

// pendingUpdate is one URI's update waiting for its debounce window to end.
type pendingUpdate struct {
	due     time.Time
	version uint64 // the newest catalog version the URI changed in
}

// NewNotifier returns a notifier reading catalog.changed messages from
// changed and publishing through pub, with the default debounce. It panics
// if changed or pub is nil; a nil log discards.
func NewNotifier(changed <-chan *message.Message, pub message.Publisher, log *slog.Logger) *Notifier {
	return NewNotifierWithOptions(changed, pub, &NotifierOptions{Logger: log})
}

// NewNotifierWithOptions is [NewNotifier] with options; opts is copied and
// nil means defaults. It panics if changed or pub is nil.
func NewNotifierWithOptions(changed <-chan *message.Message, pub message.Publisher, opts *NotifierOptions) *Notifier {
	if changed == nil || pub == nil {
		panic("actors.NewNotifier: nil inbox or publisher")
	}
	var o NotifierOptions
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultNotifyDebounce
	}
	return &Notifier{in: changed, pub: pub, log: ensureLogger(o.Logger), debounce: o.Debounce}
}

// Run handles catalog.changed messages until ctx is done or the inbox is
// closed, then returns nil; updates still held are dropped (nobody is left
// to send them to). Each message is acked once, never nacked
// ([events.Handle]). A catalog whose Version is not above the one held is
// dropped. For a newer one, every served file URI whose digest changed or
// that vanished, plus [events.IndexURI] when a skill was added or removed
// or a SKILL.md changed (the index lists them), starts a debounce window
// of its own unless one is already open; nothing for the first catalog.
// When windows end, their URIs are published together as one
// [events.ResourcesUpdated] (sorted), with Version the newest catalog
// version any of them changed in, so the facade sends them only once it
// serves that version. On [events.Bus] publishing does not wait for the
// facade. Run owns its one timer and starts no goroutine.
func (n *Notifier) Run(ctx context.Context) error {
	n.pending = map[string]pendingUpdate{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var timerC <-chan time.Time
	arm := func() {
		timerC = nil
		var first time.Time
		for _, p := range n.pending {
			if first.IsZero() || p.due.Before(first) {
				first = p.due
			}
		}
		if !first.IsZero() {
			timer.Reset(time.Until(first))
			timerC = timer.C
		}
	}
	for {
		var msg *message.Message
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case <-timerC:
			n.flush(time.Now())
			arm()
			continue
		case msg, ok = <-n.in:
			if !ok {
				return nil
			}
		}
		var next *events.Catalog
		events.Handle(n.log, msg, func(m *message.Message) error {
			ev, err := events.Decode[events.CatalogChanged](m)
			if err != nil {
				return err
			}
			if ev.Catalog != nil && (n.prev == nil || ev.Catalog.Version > n.prev.Version) {
				next = ev.Catalog
			}
			return nil
		})
		if next == nil {
			continue
		}
		prev := n.prev
		n.prev = next
		if prev == nil {
			continue
		}
		uris := updatedURIs(prev, next)
		if len(uris) == 0 {
			continue
		}
		due := time.Now().Add(n.debounce)
		for _, u := range uris {
			p, held := n.pending[u]
			if !held {
				p.due = due
			}
			p.version = next.Version
			n.pending[u] = p
		}
		arm()
	}
}

// flush publishes, as one event, every held URI whose window ended by now.
func (n *Notifier) flush(now time.Time) {
	var ev events.ResourcesUpdated
	for u, p := range n.pending {
		if p.due.After(now) {
			continue
		}
		ev.URIs = append(ev.URIs, u)
		ev.Version = max(ev.Version, p.version)
		delete(n.pending, u)
	}
	if len(ev.URIs) == 0 {
		return
	}
	slices.Sort(ev.URIs)
	if err := events.Publish(n.pub, ev); err != nil {
		n.log.Error("publishing resource updates", "version", ev.Version, "error", err)
	}
}

// updatedURIs lists, sorted, the file URIs of prev that changed digest or
// vanished in next, and the index URI when the skill set changed.
func updatedURIs(prev, next *events.Catalog) []string {
	var uris []string
	index := false
	for i := range prev.Skills {
		s := &prev.Skills[i]
		if next.SkillByURI(s.URI) == nil {
			index = true
		}
		for _, f := range s.Files {
			uri := s.FileURI(f.Path)
			ref, ok := next.File(uri)
			if !ok || ref.File.Digest != f.Digest {
				uris = append(uris, uri)
				if f.Path == "SKILL.md" {
					index = true
				}
			}
		}
	}
	for i := range next.Skills {
		if prev.SkillByURI(next.Skills[i].URI) == nil {
			index = true
		}
	}
	if index {
		uris = append(uris, events.IndexURI)
	}
	slices.Sort(uris)
	return slices.Compact(uris)
}
