package hasher

import (
	"fmt"
	"maps"
	"testing"
)

// TestDigestsWith checks the digest cache an incremental rescan stores:
// the old one without the removed files, with the added ones, its durable
// count kept right, the old value untouched, and a delta grown past
// maxDelta folded into a new base with the same entries.
func TestDigestsWith(t *testing.T) {
	entry := func(digest string, durable bool) cacheEntry {
		return cacheEntry{digest: digest, durable: durable}
	}
	base := map[string]cacheEntry{"a": entry("a1", true), "b": entry("b1", true), "c": entry("c1", false)}
	old := &digests{base: base, durable: 2}
	next := old.with([]string{"a", "b", "gone"}, map[string]cacheEntry{"b": entry("b2", false), "d": entry("d1", true)})
	want := map[string]cacheEntry{"b": entry("b2", false), "c": entry("c1", false), "d": entry("d1", true)}
	same := func(a, b cacheEntry) bool { return a.digest == b.digest && a.durable == b.durable }
	if got := next.all(); !maps.EqualFunc(got, want, same) {
		t.Errorf("with() = %v, want %v", got, want)
	}
	if next.durable != 1 {
		t.Errorf("durable = %d, want 1 (d)", next.durable)
	}
	if _, ok := next.get("a"); ok {
		t.Error(`get("a") found a removed file`)
	}
	if got := old.all(); len(got) != 3 || got["a"].digest != "a1" || old.durable != 2 {
		t.Errorf("the old cache changed: %v, durable %d", got, old.durable)
	}

	added := map[string]cacheEntry{}
	for i := range maxDelta + 1 {
		added[fmt.Sprint("f", i)] = entry(fmt.Sprint(i), true)
	}
	folded := next.with(nil, added)
	if folded.delta != nil || len(folded.base) != 3+maxDelta+1 || folded.durable != 1+maxDelta+1 {
		t.Errorf("past maxDelta: delta %d, base %d, durable %d; want none, %d, %d", len(folded.delta), len(folded.base), folded.durable, 3+maxDelta+1, 1+maxDelta+1)
	}
	var none *digests
	if got := none.with([]string{"x"}, map[string]cacheEntry{"y": entry("y", true)}); got.durable != 1 || len(got.all()) != 1 {
		t.Errorf("nil.with() = %v, durable %d; want y only, 1", got.all(), got.durable)
	}
}
