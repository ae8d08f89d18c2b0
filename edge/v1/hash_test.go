package v1

import (
	"hash/fnv"
	"testing"
)

// TestFNV64a checks that a cursor's query hash is hash/fnv's FNV-1a, the
// one cursors issued before were made with.
func TestFNV64a(t *testing.T) {
	for _, s := range []string{"", "&sort=0&asc=false", `s=chrome&c="Productivity"&minSize=10&sort=2&asc=true&q="ad blocker"`} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := fnv64a([]byte(s)), h.Sum64(); got != want {
			t.Errorf("fnv64a(%q) = %x, want %x", s, got, want)
		}
	}
}
