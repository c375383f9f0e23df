package actors

import (
	"context"
	"log/slog"
	"slices"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/events"
)

// Notifier is the actor that turns catalog versions into resource update
// notices (DESIGN "notifier"): the file URIs whose digest changed or that
// vanished between the catalog it holds and the next one.
type Notifier struct {
	in  <-chan *message.Message
	pub message.Publisher
	log *slog.Logger

	prev *events.Catalog // owned by Run
}

// NewNotifier returns a notifier reading catalog.changed messages from
// changed and publishing through pub. It panics if changed or pub is nil; a
// nil log discards.
func NewNotifier(changed <-chan *message.Message, pub message.Publisher, log *slog.Logger) *Notifier {
	if changed == nil || pub == nil {
		panic("actors.NewNotifier: nil inbox or publisher")
	}
	return &Notifier{in: changed, pub: pub, log: ensureLogger(log)}
}

// Run handles catalog.changed messages until ctx is done or the inbox is
// closed, then returns nil. Each message is acked once, never nacked
// ([events.Handle]), before anything is published. A catalog whose Version
// is not above the one held is dropped. For a newer one it publishes
// [events.ResourcesUpdated] with the sorted URIs of every served file whose
// digest changed or that vanished, plus [events.IndexURI] when a skill was
// added or removed or a SKILL.md changed (the index lists them); nothing
// for the first catalog or when nothing changed. Publishing blocks as the
// bus does. Updates are not debounced.
func (n *Notifier) Run(ctx context.Context) error {
	for {
		var msg *message.Message
		var ok bool
		select {
		case <-ctx.Done():
			return nil
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
		if uris := updatedURIs(prev, next); len(uris) > 0 {
			if err := events.Publish(n.pub, events.ResourcesUpdated{Version: next.Version, URIs: uris}); err != nil {
				n.log.Error("publishing resource updates", "version", next.Version, "error", err)
			}
		}
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
