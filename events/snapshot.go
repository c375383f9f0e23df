package events

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	json "github.com/segmentio/encoding/json"
)

// Snapshots in a trace. A by-reference event (see ref.go) is recorded as its
// value, not its handle, and content-addressed so that a trace holds each
// distinct piece once: every element of its big lists (a catalog's skills
// and diagnostics, a scan's skills and diagnostics) is written once as a
// blob line ([TraceLine.Blob]) named by the SHA-256 of its JSON; the
// element digests are grouped into chunks, themselves blobs, cut after
// every element whose digest's last byte is a multiple of 64 (content-
// defined, so adding or removing one element changes the chunk around it
// only, about 64 elements on average); and the message line carries the
// event with those lists left out, plus the chunk digests of each
// ([TraceLine.Lists]). A new catalog version that changed one skill adds
// that skill, one chunk and a message line of about 160 chunk digests at
// 10,000 skills — some 20 KB instead of 25 MiB.

// The list names of [TraceLine.Lists].
const (
	listSkills      = "skills"
	listDiagnostics = "diagnostics"
)

// chunkMask cuts a chunk after an element whose digest's last byte & mask
// is 0: 64 elements per chunk on average.
const chunkMask = 63

// snapshotWriter writes the blobs of a trace, each once.
type snapshotWriter struct {
	seen map[[sha256.Size]byte]bool
	// blob is called for every blob not written before, in the order it
	// must appear in the trace (an element before the chunk naming it).
	blob func(digest string, data []byte) error
}

func digestName(sum [sha256.Size]byte) string { return "sha256:" + hex.EncodeToString(sum[:]) }

// put writes data as a blob unless the trace has it, and returns its name.
func (w *snapshotWriter) put(data []byte) (string, [sha256.Size]byte, error) {
	sum := sha256.Sum256(data)
	name := digestName(sum)
	if !w.seen[sum] {
		if err := w.blob(name, data); err != nil {
			return "", sum, err
		}
		w.seen[sum] = true
	}
	return name, sum, nil
}

// list writes the elements of items and their chunks as blobs, and returns
// the chunk digests.
func snapshotList[T any](w *snapshotWriter, items []T) ([]string, error) {
	chunks := []string{}
	var chunk []string
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		data, err := json.Marshal(chunk)
		if err != nil {
			return err
		}
		name, _, err := w.put(data)
		if err != nil {
			return err
		}
		chunks, chunk = append(chunks, name), chunk[:0]
		return nil
	}
	for i := range items {
		data, err := json.Marshal(&items[i])
		if err != nil {
			return nil, err
		}
		name, sum, err := w.put(data)
		if err != nil {
			return nil, err
		}
		chunk = append(chunk, name)
		if sum[sha256.Size-1]&chunkMask == 0 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return chunks, nil
}

// snapshot returns the trace form of a by-reference event value: its JSON
// without the big lists, and their chunk digests, writing the blobs that
// are new.
func (w *snapshotWriter) snapshot(val any) ([]byte, map[string][]string, error) {
	var (
		head  any
		lists = map[string][]string{}
		err   error
	)
	switch e := val.(type) {
	case CatalogChanged:
		if e.Catalog == nil {
			return nil, nil, errors.New("events: tracing a CatalogChanged without a catalog")
		}
		if lists[listSkills], err = snapshotList(w, e.Catalog.Skills); err != nil {
			return nil, nil, err
		}
		if lists[listDiagnostics], err = snapshotList(w, e.Catalog.Diagnostics); err != nil {
			return nil, nil, err
		}
		head = CatalogChanged{Catalog: &Catalog{Version: e.Catalog.Version, Static: e.Catalog.Static}}
	case SourceScanned:
		if lists[listSkills], err = snapshotList(w, e.Skills); err != nil {
			return nil, nil, err
		}
		if lists[listDiagnostics], err = snapshotList(w, e.Diagnostics); err != nil {
			return nil, nil, err
		}
		e.Skills, e.Diagnostics = nil, nil
		head = e
	default:
		return nil, nil, fmt.Errorf("events: cannot trace a %T by snapshot", val)
	}
	b, err := json.Marshal(head)
	return b, lists, err
}

// snapshotReader rebuilds by-reference events from the blobs of a trace,
// or from blobs fetched by digest ([ReadCatalogSnapshot]).
type snapshotReader struct {
	blobs map[string][]byte
	// fetch, when set, gets a blob blobs lacks.
	fetch func(digest string) ([]byte, error)
}

// blob returns the blob named digest.
func (r *snapshotReader) blob(digest, what string) ([]byte, error) {
	if data, ok := r.blobs[digest]; ok {
		return data, nil
	}
	if r.fetch == nil {
		return nil, fmt.Errorf("%s %s not recorded before its use", what, digest)
	}
	data, err := r.fetch(digest)
	if err != nil {
		return nil, fmt.Errorf("fetching %s %s: %w", what, digest, err)
	}
	return data, nil
}

// list decodes the elements the chunks name.
func readList[T any](r *snapshotReader, chunks []string) ([]T, error) {
	var out []T
	for _, c := range chunks {
		data, err := r.blob(c, "chunk")
		if err != nil {
			return nil, err
		}
		var names []string
		if err := json.Unmarshal(data, &names); err != nil {
			return nil, fmt.Errorf("chunk %s: %w", c, err)
		}
		for _, n := range names {
			data, err := r.blob(n, "element")
			if err != nil {
				return nil, err
			}
			var v T
			if err := json.Unmarshal(data, &v); err != nil {
				return nil, fmt.Errorf("element %s: %w", n, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// event rebuilds the event named name from its trace form.
func (r *snapshotReader) event(name string, head []byte, lists map[string][]string) (any, error) {
	switch name {
	case nameOf[CatalogChanged]():
		var e CatalogChanged
		if err := json.Unmarshal(head, &e); err != nil {
			return nil, err
		}
		if e.Catalog == nil {
			return nil, errors.New("catalog snapshot without a catalog")
		}
		skills, err := readList[*Skill](r, lists[listSkills])
		if err != nil {
			return nil, err
		}
		diags, err := readList[Diagnostic](r, lists[listDiagnostics])
		if err != nil {
			return nil, err
		}
		return CatalogChanged{Catalog: NewCatalog(e.Catalog.Version, e.Catalog.Static, skills, diags)}, nil
	case nameOf[SourceScanned]():
		var e SourceScanned
		if err := json.Unmarshal(head, &e); err != nil {
			return nil, err
		}
		var err error
		if e.Skills, err = readList[ScannedSkill](r, lists[listSkills]); err != nil {
			return nil, err
		}
		if e.Diagnostics, err = readList[Diagnostic](r, lists[listDiagnostics]); err != nil {
			return nil, err
		}
		return e, nil
	}
	return nil, fmt.Errorf("%q is not recorded by snapshot", name)
}

// CatalogSnapshot is the content-addressed form of a [Catalog] that a
// cluster leader stores and its replicas rebuild (issue 16): the catalog's
// JSON without its skills and diagnostics (Head), and the digests of the
// chunks listing their elements (Lists, by "skills" and "diagnostics"),
// each element and chunk a blob named by the SHA-256 of its bytes, as in a
// trace. A catalog that changed in one skill shares every blob but that
// skill, its chunk and the snapshot itself with the one before.
type CatalogSnapshot struct {
	Head  json.RawMessage     `json:"head"`
	Lists map[string][]string `json:"lists"`
}

// WriteCatalogSnapshot returns the snapshot of c, calling blob with the
// digest ("sha256:<hex>") and bytes of every element and chunk blob that
// has reports absent, each once, an element before the chunk naming it.
// It returns the first error of blob. c is only read.
func WriteCatalogSnapshot(c *Catalog, has func(digest string) bool, blob func(digest string, data []byte) error) (CatalogSnapshot, error) {
	w := &snapshotWriter{seen: map[[sha256.Size]byte]bool{}, blob: func(name string, data []byte) error {
		if has(name) {
			return nil
		}
		return blob(name, data)
	}}
	head, lists, err := w.snapshot(CatalogChanged{Catalog: c})
	if err != nil {
		return CatalogSnapshot{}, err
	}
	return CatalogSnapshot{Head: head, Lists: lists}, nil
}

// ReadCatalogSnapshot rebuilds the catalog of snap with version version,
// getting each blob by digest through get (which must return the bytes
// the digest names; it is called once per distinct blob at most). It
// returns the first error of get, or of a blob that does not decode.
func ReadCatalogSnapshot(snap CatalogSnapshot, version uint64, get func(digest string) ([]byte, error)) (*Catalog, error) {
	r := &snapshotReader{fetch: get}
	ev, err := r.event(nameOf[CatalogChanged](), snap.Head, snap.Lists)
	if err != nil {
		return nil, err
	}
	c := ev.(CatalogChanged).Catalog
	c.Version = version // a new value, not yet shared
	return c, nil
}
