package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileSource: bytes come from the object store by digest, checked; a
// cached copy is served while the store lacks the object, a tampered one
// never; the cache keeps under its cap (issue 16).
func TestFileSource(t *testing.T) {
	n, res := openTest(t)
	ctx := t.Context()
	put := func(name string, data []byte) {
		t.Helper()
		if _, err := res.blobs.PutBytes(ctx, name, data); err != nil {
			t.Fatal(err)
		}
	}
	hello, other, third := []byte("hello!!!"), []byte("another!"), []byte("3rd one!")
	dh, do, d3 := digestOf(hello), digestOf(other), digestOf(third)
	put(dh, hello)
	put(do, other)
	put(d3, third)
	put(digestOf([]byte("claimed")), []byte("but not"))
	dir := filepath.Join(t.TempDir(), "cache")
	src, err := NewFileSource(n.nc, "f", dir, 20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, err := src.Bytes(dh, int64(len(hello))); err != nil || string(got) != string(hello) {
		t.Fatalf("Bytes = %q, %v", got, err)
	}
	if _, err := src.Bytes(digestOf([]byte("claimed")), 7); err == nil {
		t.Error("an object whose bytes are not its digest was served")
	}
	if _, err := src.Bytes("sha256:../../etc/passwd", 3); err == nil || !strings.Contains(err.Error(), "not a sha256 digest") {
		t.Errorf("a malformed digest: %v", err)
	}
	// Cached: served without the store.
	if err := res.blobs.Delete(ctx, dh); err != nil {
		t.Fatal(err)
	}
	if got, err := src.Bytes(dh, int64(len(hello))); err != nil || string(got) != string(hello) {
		t.Errorf("cached Bytes = %q, %v", got, err)
	}
	// Tampered: refetched, and the store no longer has it.
	cached := filepath.Join(dir, strings.TrimPrefix(dh, "sha256:"))
	if err := os.WriteFile(cached, []byte("HELLO!!!"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := src.Bytes(dh, int64(len(hello))); err == nil {
		t.Errorf("a tampered cache file was served: %q", got)
	}
	// Three 8-byte files under a 20-byte cap: the oldest goes.
	for _, d := range []string{do, d3} {
		if _, err := src.Bytes(d, 8); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, _ := e.Info()
		total += fi.Size()
	}
	if total > 20 {
		t.Errorf("cache holds %d bytes, over its 20-byte cap", total)
	}
	if _, err := os.Stat(filepath.Join(dir, strings.TrimPrefix(d3, "sha256:"))); err != nil {
		t.Errorf("the newest file was evicted: %v", err)
	}
}
