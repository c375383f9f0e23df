package hasher

import "maps"

// digests is the digest cache of one source root: what the last scan
// described of each file, by path in the root's file system. A value is
// never modified once stored in [scanner.cache] (a [Hasher.Scan] may read
// it while a rescan of the same root runs): a full scan stores a new one
// (base only); an incremental rescan ([scanner.scanKeep] reusing skill
// folders no change touched) stores one that shares base with the last
// and records only what it changed in delta, so that its cost follows the
// change, not the number of files.
type digests struct {
	base map[string]cacheEntry
	// delta overrides base: a nil value is a file removed.
	delta map[string]*cacheEntry
	// durable counts the entries a cache file holds ([persistable]).
	durable int
}

// maxDelta is how many entries a delta may hold before [digests.with]
// folds it into a new base: a copy of the whole cache, done once per that
// many changed files.
const maxDelta = 1024

// persistable reports whether e goes to the persistent cache file.
func persistable(e cacheEntry) bool { return e.durable && e.content == nil }

// get returns the entry of the file at p. d may be nil (an empty cache).
func (d *digests) get(p string) (cacheEntry, bool) {
	if d == nil {
		return cacheEntry{}, false
	}
	if e, ok := d.delta[p]; ok {
		if e == nil {
			return cacheEntry{}, false
		}
		return *e, true
	}
	e, ok := d.base[p]
	return e, ok
}

// all returns every entry as one map, which the caller must not modify
// (base itself when there is no delta).
func (d *digests) all() map[string]cacheEntry {
	if d == nil {
		return nil
	}
	if len(d.delta) == 0 {
		return d.base
	}
	m := make(map[string]cacheEntry, len(d.base)+len(d.delta))
	maps.Copy(m, d.base)
	for p, e := range d.delta {
		if e == nil {
			delete(m, p)
		} else {
			m[p] = *e
		}
	}
	return m
}

// with returns a new cache: d without the entries of removed, then with
// added. d is not modified; it may be nil.
func (d *digests) with(removed []string, added map[string]cacheEntry) *digests {
	n := &digests{}
	if d != nil {
		n.base, n.durable = d.base, d.durable
		n.delta = make(map[string]*cacheEntry, len(d.delta)+len(removed)+len(added))
		maps.Copy(n.delta, d.delta)
	} else {
		n.delta = make(map[string]*cacheEntry, len(added))
	}
	for _, p := range removed {
		if e, ok := n.get(p); ok {
			if persistable(e) {
				n.durable--
			}
			n.delta[p] = nil
		}
	}
	for p, e := range added {
		if old, ok := n.get(p); ok && persistable(old) {
			n.durable--
		}
		if persistable(e) {
			n.durable++
		}
		n.delta[p] = &e
	}
	if len(n.delta) > maxDelta {
		return &digests{base: n.all(), durable: n.durable}
	}
	return n
}
