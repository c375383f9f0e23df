package catalog_test

import (
	"path/filepath"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/skilljack/skilljack-mcp/actors/hasher"
	"github.com/skilljack/skilljack-mcp/events"
	"github.com/skilljack/skilljack-mcp/events/eventstest"
)

func newTestHasher(opts *hasher.Options) *hasher.Hasher {
	return hasher.New(hasher.Inboxes{Configured: make(chan *message.Message)}, eventstest.NewPublisher(), opts)
}

func localSource(root string) events.Source {
	return events.Source{ID: "0", Kind: events.SourceLocal, Location: root, Root: root, Prefix: filepath.Base(root)}
}
