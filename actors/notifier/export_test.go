package notifier

import "github.com/skilljack/skilljack-mcp/events"

// UpdatedURIs exposes updatedURIs to benchmarks: the changed URIs, sorted.
func UpdatedURIs(prev, next *events.Catalog) []string {
	var out []string
	for _, c := range updatedURIs(prev, next) {
		out = append(out, c.uri)
	}
	return out
}
