package hasher

import "testing"

// TestUnderRoot pins the path test [walker.identify] uses to take a skill
// folder's identity from the walk's remembered Lstat.
func TestUnderRoot(t *testing.T) {
	for _, tc := range []struct {
		real, root, dir string
		want            bool
	}{
		{"/r", "/r", ".", true},
		{"/r/a/b", "/r", "a/b", true},
		{"/r/a/b", "/r", "a", false},
		{"/ra/b", "/r", "a/b", false},
		{"/x/a/b", "/r", "a/b", false},
		{"/r/a/c", "/r", "a/b", false},
	} {
		if got := underRoot(tc.real, tc.root, tc.dir); got != tc.want {
			t.Errorf("underRoot(%q, %q, %q) = %v, want %v", tc.real, tc.root, tc.dir, got, tc.want)
		}
	}
}
