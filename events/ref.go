package events

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"sync"

	json "github.com/segmentio/encoding/json"
)

// By reference. The two big events, [CatalogChanged] and [SourceScanned]
// (at 10,000 skills a catalog is about 25 MiB of JSON and a scan, with
// every SKILL.md, 34 MB), do not travel as JSON: [Encode] keeps the event
// value in a process-local store under a fresh handle and the message
// payload is only {"ref":<handle>,…} with the version (or seq) for people
// reading a trace. [Decode] resolves the handle to that same value, so every
// subscriber gets the same *Catalog, the same SKILL.md bytes and manifests:
// one copy in memory however many subscribers there are, and no encoding
// or decoding. Consumers already treat events as immutable; here it is a
// must, as they share the value with the publisher and each other.
//
// Lifetime: a value stays in the store exactly as long as some message
// payload naming its handle is reachable. Encode allocates the payload
// itself and attaches a cleanup ([runtime.AddCleanup]) to its bytes, which
// removes the entry once the garbage collector finds the payload
// unreachable. Every message copy a publisher makes shares those bytes
// ([message.Message.Copy] and [Bus.Publish] copy the slice header, not the
// bytes), so the value outlives every queued, delivered or recorded copy,
// however slow a subscriber, and goes with the last one: no reference counts
// to keep right across acks, drops, closed subscriptions and topics nobody
// subscribes to, and no "newest N" window a lagging subscriber could fall
// out of. A consumer that keeps the value (the facade's current catalog)
// keeps it alive by its own pointer, as with any Go value. The store costs a
// map entry per live message.
//
// The flip side: a payload is only meaningful in the process that encoded
// it, while that message lives. Bytes copied out of it (to another process,
// or into a new slice that outlives the message) resolve to nothing, and
// Decode says so. The trace recorder therefore writes the value itself, as
// content-addressed snapshots ([TracePublisher]), and [Replay] registers
// what it reads anew. A payload holding the whole event as JSON (a trace
// recorded before this existed, a hand-made message) still decodes.

// refPrefix starts every by-reference payload; no JSON encoding of an event
// starts so (their first fields are named otherwise).
var refPrefix = []byte(`{"ref":`)

// byRef reports whether events of the type named name travel by reference.
func byRef(name string) bool {
	return name == nameOf[CatalogChanged]() || name == nameOf[SourceScanned]()
}

// refPayload is the payload of a by-reference message.
type refPayload struct {
	// Ref is the handle in this process's store.
	Ref uint64 `json:"ref"`
	// Version is the catalog version of a CatalogChanged.
	Version uint64 `json:"version,omitempty"`
	// Seq, ConfigSeq and Source (its ID) are those of a SourceScanned.
	Seq       uint64 `json:"seq,omitempty"`
	ConfigSeq uint64 `json:"config_seq,omitempty"`
	Source    string `json:"source,omitempty"`
}

// refs is the process-local store of by-reference event values.
var refs = refStore{vals: map[uint64]any{}}

// refStore maps handles to event values (never pointers to events: the
// value itself, so that Decode returns it as is).
type refStore struct {
	mu   sync.Mutex
	next uint64
	vals map[uint64]any
}

func (s *refStore) put(v any) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.vals[s.next] = v
	return s.next
}

func (s *refStore) get(h uint64) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.vals[h]
	return v, ok
}

func (s *refStore) drop(h uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.vals, h)
}

func (s *refStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals)
}

// encodeRef stores ev (a value or pointer of a by-reference event type) and
// returns the payload naming it, whose bytes hold the value in the store.
func encodeRef(ev any) ([]byte, error) {
	v := reflect.ValueOf(ev)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, fmt.Errorf("events: encoding a nil %T", ev)
		}
		v = v.Elem()
	}
	val := v.Interface()
	p := refPayload{}
	switch e := val.(type) {
	case CatalogChanged:
		if e.Catalog != nil {
			p.Version = e.Catalog.Version
		}
	case SourceScanned:
		p.Seq, p.ConfigSeq, p.Source = e.Seq, e.ConfigSeq, e.Source.ID
	default:
		return nil, fmt.Errorf("events: %T does not travel by reference", ev)
	}
	p.Ref = refs.put(val)
	b, err := json.Marshal(p)
	if err != nil {
		refs.drop(p.Ref)
		return nil, err
	}
	// A fresh allocation of exactly these bytes (always over 16 bytes, so
	// not batched by the tiny allocator with anything else): the entry lives
	// as long as it does.
	payload := append(make([]byte, 0, len(b)), b...)
	runtime.AddCleanup(&payload[0], refs.drop, p.Ref)
	return payload, nil
}

// isRef reports whether payload names a stored value rather than holding an
// event as JSON.
func isRef(payload []byte) bool { return bytes.HasPrefix(payload, refPrefix) }

// decodeRef returns the value payload names.
func decodeRef(payload []byte) (any, error) {
	var p refPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return nil, err
	}
	v, ok := refs.get(p.Ref)
	if !ok {
		return nil, fmt.Errorf("events: reference %s is not held in this process (a payload outlived its message or came from another process)", strconv.FormatUint(p.Ref, 10))
	}
	return v, nil
}
