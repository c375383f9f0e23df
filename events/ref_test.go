package events_test

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"

	"github.com/skilljack/skilljack-mcp/events"
)

// TestByReference: a catalog and a scan reach every subscriber as the very
// value published, and the payload on the bus is a small reference.
func TestByReference(t *testing.T) {
	ctx := t.Context()
	bus := events.NewBus(nil)
	defer bus.Close()
	scan := benchScan(3)
	cat := benchCatalog(7, scan)
	var cats, scans []<-chan *message.Message
	for range 3 {
		cats = append(cats, subscribe(t, bus, ctx, events.TopicCatalogChanged))
		scans = append(scans, subscribe(t, bus, ctx, events.TopicSourceScanned))
	}
	if err := events.Publish(bus, &events.CatalogChanged{Catalog: cat}); err != nil {
		t.Fatal(err)
	}
	if err := events.Publish(bus, scan); err != nil {
		t.Fatal(err)
	}
	// Nothing but the queued messages holds the references now: they must
	// survive garbage collection.
	runtime.GC()
	runtime.GC()
	for i := range 3 {
		m := <-cats[i]
		if len(m.Payload) > 100 || !strings.Contains(string(m.Payload), `"version":7`) {
			t.Errorf("catalog payload = %s, want a small reference naming version 7", m.Payload)
		}
		ev, ok := events.Receive[events.CatalogChanged](nil, m)
		if !ok || ev.Catalog != cat {
			t.Errorf("subscriber %d got catalog %p, %v; want the published %p", i, ev.Catalog, ok, cat)
		}
		got, ok := events.Receive[events.SourceScanned](nil, <-scans[i])
		if !ok || &got.Skills[0] != &scan.Skills[0] || &got.Skills[1].SkillMD[0] != &scan.Skills[1].SkillMD[0] {
			t.Errorf("subscriber %d got a copy of the scan, want the published skills and SKILL.md bytes", i)
		}
	}
}

// TestByReferenceOldPayload: a payload holding the whole event as JSON (a
// trace recorded before references) still decodes.
func TestByReferenceOldPayload(t *testing.T) {
	cat := benchCatalog(2, benchScan(2))
	b, err := json.Marshal(events.CatalogChanged{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	msg := message.NewMessage("u", b)
	msg.Metadata.Set(events.MetadataName, "CatalogChanged")
	ev, err := events.Decode[events.CatalogChanged](msg)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Catalog.Version != 2 || ev.Catalog.SkillByURI(cat.Skills[1].URI) == nil {
		t.Errorf("decoded catalog = version %d, %d skills; want version 2 with its index", ev.Catalog.Version, len(ev.Catalog.Skills))
	}
}

// TestByReferenceLifetime: the store keeps a value while a message naming
// it is reachable, however late it is decoded, and lets it go with the
// last one; a reference copied out of its message then resolves to an
// error, not to another value.
func TestByReferenceLifetime(t *testing.T) {
	cat := benchCatalog(1, benchScan(1))
	var (
		kept    *message.Message
		keptRef []byte
		dropped [][]byte
	)
	for i := range 100 {
		msg, err := events.Encode(events.CatalogChanged{Catalog: cat})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			kept, keptRef = msg, bytes.Clone(msg.Payload)
		} else {
			dropped = append(dropped, bytes.Clone(msg.Payload))
		}
	}
	// The 99 others are garbage: their entries go (cleanups run after a GC,
	// on their own goroutine: poll).
	anyHeld := func(refs [][]byte) bool {
		for _, r := range refs {
			if events.RefHeld(r) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for anyHeld(dropped) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if anyHeld(dropped) {
		t.Error("the store still holds values of messages that are gone")
	}
	ev, err := events.Decode[events.CatalogChanged](kept.Copy())
	if err != nil || ev.Catalog != cat {
		t.Fatalf("kept message decodes to %v, %v; want the catalog", ev.Catalog, err)
	}
	kept = nil
	for events.RefHeld(keptRef) && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	msg := message.NewMessage("u", keptRef)
	msg.Metadata.Set(events.MetadataName, "CatalogChanged")
	if _, err := events.Decode[events.CatalogChanged](msg); err == nil || !strings.Contains(err.Error(), "not held") {
		t.Errorf("Decode of a reference whose message is gone = %v, want an error saying it is not held", err)
	}
}

// TestTraceSnapshots records catalog versions that differ in one skill and
// scans through a trace publisher: every skill is written once, a later
// version adds only what changed, and replay rebuilds equal events.
func TestTraceSnapshots(t *testing.T) {
	ctx := t.Context()
	bus := events.NewBus(nil)
	defer bus.Close()
	var trace bytes.Buffer
	tp := events.NewTracePublisher(bus, &trace)
	scan := benchScan(500)
	cats := []*events.Catalog{benchCatalog(1, scan)}
	if err := events.Publish(tp, scan); err != nil {
		t.Fatal(err)
	}
	if err := events.Publish(tp, events.CatalogChanged{Catalog: cats[0]}); err != nil {
		t.Fatal(err)
	}
	first := trace.Len()
	for v := uint64(2); v <= 4; v++ {
		s := scan
		s.Skills = append([]events.ScannedSkill(nil), scan.Skills...)
		s.Skills[v*100].SkillMD = append(bytes.Clone(s.Skills[v*100].SkillMD), "edited\n"...)
		cats = append(cats, benchCatalog(v, s))
		if err := events.Publish(tp, &events.CatalogChanged{Catalog: cats[len(cats)-1]}); err != nil {
			t.Fatal(err)
		}
	}
	if perVersion := (trace.Len() - first) / 3; perVersion*20 > first {
		t.Errorf("a version that changed one skill adds %d bytes to the trace, over 1/20 of the first scan and catalog (%d)", perVersion, first)
	}
	if n := strings.Count(trace.String(), `"uuid"`); n != 5 {
		t.Errorf("trace has %d message lines, want 5", n)
	}

	bus2 := events.NewBus(nil)
	defer bus2.Close()
	cin := subscribe(t, bus2, ctx, events.TopicCatalogChanged)
	sin := subscribe(t, bus2, ctx, events.TopicSourceScanned)
	n, err := events.Replay(ctx, bytes.NewReader(trace.Bytes()), bus2, nil)
	if err != nil || n != 5 {
		t.Fatalf("Replay = %d, %v; want 5 messages", n, err)
	}
	gotScan, ok := events.Receive[events.SourceScanned](nil, <-sin)
	if !ok {
		t.Fatal("replayed scan does not decode")
	}
	sameJSON(t, "replayed scan", scan, gotScan)
	for _, want := range cats {
		ev, ok := events.Receive[events.CatalogChanged](nil, <-cin)
		if !ok {
			t.Fatal("replayed catalog does not decode")
		}
		if ev.Catalog.Version != want.Version || ev.Catalog.SkillByURI(want.Skills[3].URI) == nil {
			t.Errorf("replayed catalog version %d, want %d with its index", ev.Catalog.Version, want.Version)
		}
		sameJSON(t, "replayed catalog skills", want.Skills, ev.Catalog.Skills)
	}
}

// sameJSON reports a difference between the JSON encodings of want and got
// (cmp.Diff takes seconds on hundreds of skills).
func sameJSON(t *testing.T, what string, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, g) {
		t.Errorf("%s differs:\n%s", what, cmp.Diff(string(w), string(g)))
	}
}
