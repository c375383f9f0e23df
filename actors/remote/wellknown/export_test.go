package wellknown

import "log/slog"

// IndexEntry is one entry [ParseIndex] returns: Type "" marks an entry
// skipped with a usable name.
type IndexEntry struct{ Name, Type, URL, Digest string }

// ParseIndex exposes the publisher index validation to tests.
func ParseIndex(body []byte, legacy bool, log *slog.Logger) ([]IndexEntry, bool, error) {
	es, v01, err := parseWellKnownIndex(body, legacy, log)
	var out []IndexEntry
	for _, e := range es {
		out = append(out, IndexEntry{e.name, e.typ, e.url, e.digest})
	}
	return out, v01, err
}
