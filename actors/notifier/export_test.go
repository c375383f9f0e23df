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

// UpdatedURIsSlow exposes updatedURIsSlow, the file-by-file diff, with
// each URI's owner after a space.
func UpdatedURIsSlow(prev, next *events.Catalog) []string {
	return render(updatedURIsSlow(prev, next))
}

// UpdatedURIsOwners is UpdatedURIs with each URI's owner after a space.
func UpdatedURIsOwners(prev, next *events.Catalog) []string {
	return render(updatedURIs(prev, next))
}

func render(cs []change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.uri+" "+c.skill)
	}
	return out
}
