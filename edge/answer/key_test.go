package answer

import (
	"testing"
)

// TestKeyFieldsCannotSpellEachOther checks that quoted string values keep
// fields apart: a value that contains another field's text is not that
// field.
func TestKeyFieldsCannotSpellEachOther(t *testing.T) {
	a := NewKey(nil, "/r", 1).Str("c", `x"&t=1`).String()
	b := NewKey(nil, "/r", 1).Str("c", "x").Int("t", 1).String()
	if a == b {
		t.Fatalf("%s spells %s", a, b)
	}
	if NewKey(nil, "/r", 1).String() == NewKey(nil, "/r", 2).String() || NewKey(nil, "/r", 1).String() == NewKey(nil, "/s", 1).String() {
		t.Error("route or generation do not change the key")
	}
	if AliasKey(nil, "/r", 1, []byte("a=1")).String() == NewKey(nil, "/r", 1).String() {
		t.Error("an alias key equals a canonical key")
	}
}

func TestETagMatches(t *testing.T) {
	for _, c := range []struct {
		header, etag string
		want         bool
	}{
		{`W/"abc"`, `W/"abc"`, true},
		{`"abc"`, `W/"abc"`, true}, // weak comparison
		{`W/"x", W/"abc"`, `W/"abc"`, true},
		{`*`, `W/"abc"`, true},
		{`W/"abd"`, `W/"abc"`, false},
		{``, `W/"abc"`, false},
		{`W/"ab"`, `W/"abc"`, false},
	} {
		if got := ETagMatches(c.header, c.etag); got != c.want {
			t.Errorf("ETagMatches(%q, %q) = %v", c.header, c.etag, got)
		}
	}
}

// TestCacheGetAndAlias checks that an answer is built once, found again by
// its key and by its alias, and that a partial answer is never kept.
func TestCacheGetAndAlias(t *testing.T) {
	c, err := NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	builds := 0
	build := func() (*Answer, error) { builds++; return JSON(map[string]int{"n": builds}) }
	key := NewKey(nil, "/r", 1).Str("a", "b")
	first, err := c.Get(key, build)
	if err != nil {
		t.Fatal(err)
	}
	c.Wait()
	again, _ := c.Get(key, build)
	if again != first || builds != 1 {
		t.Fatalf("the second Get built again (%d builds)", builds)
	}
	alias := AliasKey(nil, "/r", 1, []byte("a=b&x=1"))
	if _, ok := c.Aliased(alias); ok {
		t.Fatal("an alias never set was found")
	}
	c.Alias(alias, key)
	c.Wait()
	if a, ok := c.Aliased(alias); !ok || a != first {
		t.Fatal("the alias does not find its answer")
	}
	partial := func() (*Answer, error) { builds++; return Search(map[string]bool{"partial": true}, true) }
	pk := NewKey(nil, "/r", 1).Str("q", "slow")
	p, _ := c.Get(pk, partial)
	c.Wait()
	if !p.NoStore || p.ETag != "" {
		t.Fatalf("a partial answer is cacheable: %+v", p)
	}
	c.Get(pk, partial)
	if builds != 3 {
		t.Fatalf("%d builds; a partial answer must be built again each time", builds)
	}
}

// TestCacheDrop checks that Drop empties the cache and its aliases, and
// that answers asked for afterwards are built and cached again.
func TestCacheDrop(t *testing.T) {
	c, err := NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	builds := 0
	build := func() (*Answer, error) { builds++; return JSON(map[string]int{"n": builds}) }
	key := NewKey(nil, "/r", 1).Str("a", "b")
	alias := AliasKey(nil, "/r", 1, []byte("a=b"))
	c.Get(key, build)
	c.Wait()
	c.Alias(alias, key)
	c.Drop()
	if _, ok := c.Aliased(alias); ok {
		t.Fatal("an alias outlived Drop")
	}
	c.Get(key, build)
	c.Wait()
	if builds != 2 {
		t.Fatalf("%d builds: the answer outlived Drop", builds)
	}
	c.Get(key, build)
	if builds != 2 {
		t.Fatal("after Drop an answer is not cached again")
	}
}
