// Package notifier is the actor that turns catalog versions into resource
// update notices (DESIGN "notifier"): the one component that decides which
// resources (skill://index.json included) clients hear changed, and which
// went with their skill.
package notifier

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// DefaultDebounce is the notifier's per-URI window. The first change of a
// URI is sent at once (the watcher has already waited out its own 500 ms
// burst window, so holding it again only adds latency); further changes of
// that URI within the window after a notice are held and sent together at
// the window's end. Saving a file is often several writes (an editor's
// temp file and rename, a formatter run on save) that the watcher's window
// can split over two catalog versions: a subscriber then hears of the URI
// at most twice per window, never once per version.
const DefaultDebounce = 100 * time.Millisecond

// Inboxes are the subscriptions a [Notifier] reads.
type Inboxes struct {
	// Catalog carries catalog.changed. Required.
	Catalog <-chan *message.Message
}

// Options configure a [Notifier]. A nil *Options means defaults.
type Options struct {
	// Debounce is the per-URI window: after a notice for a URI, its further
	// changes within the window are sent once, at the window's end; a change
	// outside any window is sent at once. If zero, defaults to
	// [DefaultDebounce].
	Debounce time.Duration
	// Logger receives the notifier's log lines. If nil, they are discarded.
	Logger *slog.Logger
}

// Notifier is the actor that turns catalog versions into resource update
// notices (DESIGN "notifier"), and the only component that decides which
// resources clients hear changed: the file URIs whose digest changed or
// that vanished between the catalog it holds and the next one, and
// [events.IndexURI] when the index's body changed, debounced per URI; with
// the vanished URIs whose skill went listed as Gone.
type Notifier struct {
	in       <-chan *message.Message
	pub      message.Publisher
	log      *slog.Logger
	debounce time.Duration

	// State owned by Run.
	prev    *events.Catalog
	pending map[string]pendingUpdate
	sentAt  map[string]time.Time // URIs sent less than a window ago
}

// pendingUpdate is one URI's update waiting for its debounce window to end.
type pendingUpdate struct {
	due     time.Time
	version uint64 // the newest catalog version the URI changed in
	// skill is the SKILL.md URI of the skill that served the URI in the
	// catalog before that change ("" for the index).
	skill string
}

// New returns a notifier reading in and publishing through pub; opts is
// copied and nil means defaults. It panics if the inbox or pub is nil.
func New(in Inboxes, pub message.Publisher, opts *Options) *Notifier {
	if in.Catalog == nil || pub == nil {
		panic("notifier.New: nil inbox or publisher")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Notifier{in: in.Catalog, pub: pub, log: o.Logger, debounce: o.Debounce}
}

// Run handles catalog.changed messages until ctx is done or the inbox is
// closed, then returns nil; updates still held are dropped (nobody is left
// to send them to). Each message is acked once, never nacked
// ([events.Handle]). A catalog whose Version is not above the one held is
// dropped. For a newer one, every served file URI whose digest changed or
// that vanished, plus [events.IndexURI] when the index's body changed
// ([indexChanged]), is sent at once unless it was sent less than a window
// ago (then it is held until that window ends: one notice however many
// versions changed it meanwhile) or it vanished (held one window, in case
// it comes back); nothing for the first catalog. URIs due
// together are published as one [events.ResourcesUpdated] (sorted), with
// Version the newest catalog version any of them changed in, so the facade
// sends them only once it serves that version, and with Gone those that
// the newest catalog serves no more, nor the skill that last served them
// (the facade drops their subscriptions, so that a skill coming back later
// does not revive them). On [events.Bus] publishing does not wait for the facade. Run owns
// its one timer and starts no goroutine.
func (n *Notifier) Run(ctx context.Context) error {
	n.pending = map[string]pendingUpdate{}
	n.sentAt = map[string]time.Time{}
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
		changes := updatedURIs(prev, next)
		if len(changes) == 0 {
			continue
		}
		now := time.Now()
		n.hold(changes, next, now)
		n.flush(now)
		arm()
	}
}

// hold records the changes of catalog next: a URI already held keeps its
// due time; a URI next no longer serves is due a window from now (it may
// be back by then: an editor's rename, a folder moved and restored, and its
// subscribers then keep their subscriptions); one sent less than a window
// ago is due when that window ends; any other is due now.
func (n *Notifier) hold(changes []change, next *events.Catalog, now time.Time) {
	for _, c := range changes {
		p, held := n.pending[c.uri]
		if !held {
			p.due = now
			if at, ok := n.sentAt[c.uri]; ok && now.Sub(at) < n.debounce {
				p.due = at.Add(n.debounce)
			}
			if _, served := next.File(c.uri); !served && c.uri != events.IndexURI {
				p.due = now.Add(n.debounce)
			}
		}
		p.version, p.skill = next.Version, c.skill
		n.pending[c.uri] = p
	}
}

// flush publishes, as one event, every held URI whose window ended by now.
// A URI is Gone when the newest catalog serves neither it nor the skill that
// last served it: a skill back by now keeps its subscribers.
func (n *Notifier) flush(now time.Time) {
	var ev events.ResourcesUpdated
	for u, p := range n.pending {
		if p.due.After(now) {
			continue
		}
		ev.URIs = append(ev.URIs, u)
		ev.Version = max(ev.Version, p.version)
		if _, served := n.prev.File(u); p.skill != "" && !served && n.prev.SkillByURI(p.skill) == nil {
			ev.Gone = append(ev.Gone, u)
		}
		delete(n.pending, u)
		n.sentAt[u] = now
	}
	for u, at := range n.sentAt {
		if now.Sub(at) >= n.debounce {
			delete(n.sentAt, u)
		}
	}
	if len(ev.URIs) == 0 {
		return
	}
	slices.Sort(ev.URIs)
	slices.Sort(ev.Gone)
	if err := events.Publish(n.pub, ev); err != nil {
		n.log.Error("publishing resource updates", "version", ev.Version, "error", err)
	}
}

// change is one URI a new catalog version changed.
type change struct {
	uri   string
	skill string // the SKILL.md URI of the skill that served uri before ("" for the index)
}

// updatedURIs lists, sorted by URI, the file URIs of prev that changed
// digest or vanished in next, each with the skill that served it in prev,
// and the index URI when [indexChanged]. It walks both skill lists in
// their URI order at once and looks at the files only of the skills whose
// manifest changed: a skill the catalog builder carried over (the very
// same *Skill) costs one pointer comparison, one sharing its manifest a
// few more, so a
// one-file edit in 10,000 skills diffs one skill's files, never the
// catalogs file by file. Catalogs not sorted by URI (never made by
// [events.NewCatalog]) are diffed file by file.
func updatedURIs(prev, next *events.Catalog) []change {
	var out []change
	index := false
	ps, ns := prev.Skills, next.Skills
	i, j := 0, 0
	for i < len(ps) || j < len(ns) {
		if i < len(ps) && j < len(ns) && ps[i] == ns[j] {
			i, j = i+1, j+1 // carried over: the very same skill
			continue
		}
		var a, b *events.Skill
		switch {
		case j == len(ns) || i < len(ps) && ps[i].URI < ns[j].URI:
			a = ps[i]
			i++
		case i == len(ps) || ns[j].URI < ps[i].URI:
			b = ns[j]
			j++
		default:
			a, b = ps[i], ns[j]
			i++
			j++
		}
		if i > 1 && i <= len(ps) && ps[i-1].URI <= ps[i-2].URI || j > 1 && j <= len(ns) && ns[j-1].URI <= ns[j-2].URI {
			return updatedURIsSlow(prev, next)
		}
		if a != nil && b != nil && unchanged(a, b) {
			continue
		}
		if !index && entryOf(a) != entryOf(b) {
			index = true
		}
		if a == nil || b != nil && sameManifest(a.Files, b.Files) {
			continue
		}
		out = fileChanges(out, prev, next, a)
	}
	if index {
		out = append(out, change{uri: events.IndexURI})
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.uri, b.uri) })
	return slices.CompactFunc(out, func(a, b change) bool { return a.uri == b.uri })
}

// unchanged reports, at the cost of a few pointer comparisons for a skill
// the builder carried over from one version to the next (the same strings,
// the same manifest array), that a and b (of the same URI) show the same
// index entry and manifest: no update for either.
func unchanged(a, b *events.Skill) bool {
	return len(a.Files) > 0 && len(a.Files) == len(b.Files) && &a.Files[0] == &b.Files[0] &&
		a.Listed == b.Listed && a.Name == b.Name && a.Description == b.Description
}

// sameManifest reports whether two manifests list the same files with the
// same digests: at once when they share their backing array.
func sameManifest(a, b []events.File) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	for k := range a {
		if a[k].Path != b[k].Path || a[k].Digest != b[k].Digest {
			return false
		}
	}
	return true
}

// fileChanges appends to out the file URIs of prev's skill s whose digest
// changed or that vanished in next. A file pending in prev (no digest yet,
// [events.Catalog.Pending]) and still served in next did not change: no
// client was served its bytes or digest before (issue 12).
func fileChanges(out []change, prev, next *events.Catalog, s *events.Skill) []change {
	for _, f := range s.Files {
		uri := s.FileURI(f.Path)
		if ref, ok := next.File(uri); ok && (ref.File.Digest == f.Digest || f.Digest == "") {
			continue
		}
		// A nested skill's files are in its parent's manifest too; the
		// skill serving the URI is the one the catalog resolves it to.
		owner := s.URI
		if ref, ok := prev.File(uri); ok {
			owner = ref.Skill.URI
		}
		out = append(out, change{uri, owner})
	}
	return out
}

// updatedURIsSlow is [updatedURIs] comparing the catalogs file by file.
func updatedURIsSlow(prev, next *events.Catalog) []change {
	var out []change
	for i := range prev.Skills {
		out = fileChanges(out, prev, next, prev.Skills[i])
	}
	if indexChanged(prev, next) {
		out = append(out, change{uri: events.IndexURI})
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.uri, b.uri) })
	return slices.CompactFunc(out, func(a, b change) bool { return a.uri == b.uri })
}

// indexEntry is what skill://index.json says of one skill: the facade
// renders the index (mcpface buildIndex, SEP2640-R88) from exactly these
// fields of the listed skills that have files, in catalog order.
type indexEntry struct {
	name, description, uri, digest string
}

// indexChanged reports whether the body of skill://index.json differs
// between prev and next: a listed skill came, went, or changed its name,
// description or SKILL.md digest (a SKILL.md edit that changes nothing the
// index shows still changes its digest), or the order changed. A change no
// entry shows (another file, a flag other than Listed) leaves it alone.
func indexChanged(prev, next *events.Catalog) bool {
	return !slices.Equal(indexEntries(prev), indexEntries(next))
}

func indexEntries(c *events.Catalog) []indexEntry {
	var out []indexEntry
	for i := range c.Skills {
		if e := entryOf(c.Skills[i]); e != (indexEntry{}) {
			out = append(out, e)
		}
	}
	return out
}

// entryOf is s's entry in the index, or the zero entry when it has none
// (s is nil, not listed, or has no files).
func entryOf(s *events.Skill) indexEntry {
	if s == nil || !s.Listed || len(s.Files) == 0 {
		return indexEntry{}
	}
	return indexEntry{s.Name, strings.TrimSpace(s.Description), s.URI, s.Files[0].Digest}
}
