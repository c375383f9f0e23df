package cluster

import (
	"time"

	"github.com/skilljack/skilljack-mcp/events"
)

// Remote sources at a leader change (issue 16). A replica that becomes
// leader has not polled while it followed: its copy of a GitHub repository
// or a publisher is empty, or as old as its last term. Its first catalogs
// would drop or roll back those skills cluster-wide until its fetchers
// catch up — or for good while upstream is down, where a single process
// keeps its last good copy. So the exporter holds each remote source's
// skills as the cluster serves them until the leader has confirmed the
// source in this term: its fetcher synced it (a sync that found nothing
// new publishes nothing, and then the copies agree anyway), and the local
// catalog was built from a scan made after that sync.

// sourceKey identifies a configured source across replicas: its kind and
// location as written (the ID is an index, and roots differ per replica).
func sourceKey(s events.Source) string { return string(s.Kind) + " " + s.Location }

// remote reports whether skills of s come from a fetcher's cache.
func remote(s events.Source) bool {
	return s.Kind == events.SourceGitHub || s.Kind == events.SourceWellKnown
}

// holding is the exporter's view of the remote sources in one term.
type holding struct {
	// configured are the remote sources of the last configuration, by
	// sourceKey; nil before the first.
	configured map[string]events.Source
	// synced is the latest sync of each remote source in this term.
	synced map[string]time.Time
}

// configure takes a new configuration.
func (h *holding) configure(ev events.SourcesConfigured) {
	h.configured = map[string]events.Source{}
	for _, s := range ev.Sources {
		if remote(s) {
			h.configured[sourceKey(s)] = s
		}
	}
}

// sync takes a sync of a remote source.
func (h *holding) sync(ev events.SourceSynced) {
	if h.synced == nil {
		h.synced = map[string]time.Time{}
	}
	k := sourceKey(ev.Source)
	if ev.SyncedAt.After(h.synced[k]) {
		h.synced[k] = ev.SyncedAt
	}
}

// confirmed reports whether the local catalog cat holds what the sync of
// the remote source k brought in this term.
func (h *holding) confirmed(k string, cat *events.Catalog) bool {
	at, ok := h.synced[k]
	if !ok {
		return false
	}
	src, ok := h.configured[k]
	return ok && cat.Scanned[src.ID].After(at)
}

// merge returns the skills to export: local's, except that for every
// configured remote source not confirmed in cat (the local catalog) and of
// which the cluster serves skills, the cluster's skills of that source
// (from cluster, the skills exported last) replace the local ones. A
// cluster skill whose URI or qualified name a local skill took is left
// out.
func (h *holding) merge(cat *events.Catalog, local, cluster []*events.Skill) (out []*events.Skill, held []string) {
	byKey := map[string][]*events.Skill{}
	for _, s := range cluster {
		k := sourceKey(s.Source)
		if _, ok := h.configured[k]; ok && remote(s.Source) && !h.confirmed(k, cat) {
			byKey[k] = append(byKey[k], s)
		}
	}
	taken := map[string]bool{}
	for _, s := range local {
		if _, hold := byKey[sourceKey(s.Source)]; hold && remote(s.Source) {
			continue
		}
		out = append(out, s)
		taken[s.URI], taken["name "+s.QualifiedName] = true, true
	}
	for k, skills := range byKey {
		held = append(held, k)
		for _, s := range skills {
			if !taken[s.URI] && !taken["name "+s.QualifiedName] {
				out = append(out, s)
			}
		}
	}
	return out, held
}
