package answer

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/missgate"
)

// jsonBody returns a JSON array of n objects, some kilobytes that
// compress as answers do.
func jsonBody(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"listing-%d","name":"Listing %d","size":%d,"rating":%d.%d}`, i, i*7919%1000, i*104729%99991, i%5, i%10)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// TestVariantsCountAgainstTheCache: each variant made for a cached answer
// adds its bytes to what the answer costs the cache, and an answer of a
// state the cache was emptied of is not brought back by a late variant.
func TestVariantsCountAgainstTheCache(t *testing.T) {
	ac, err := NewCache(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	var buf [64]byte
	body := jsonBody(300)
	a, err := ac.Get(NewKey(buf[:0], "/x", 1), func() (*Answer, error) { return New(body, "application/json"), nil })
	if err != nil {
		t.Fatal(err)
	}
	ac.Wait()
	used := func() int64 { return ac.c.MaxCost() - ac.c.RemainingCost() }
	if got, want := used(), int64(len(body)+128); got != want {
		t.Fatalf("identity answer costs %d, want %d", got, want)
	}
	total := int64(len(body) + 128)
	for _, c := range []coding.Coding{coding.Gzip, coding.Brotli, coding.Zstd} {
		v, err := a.variant(c)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := a.variant(c); again != v {
			t.Fatalf("%v compressed twice", c)
		}
		ac.Wait()
		total += int64(len(v.body) + 32)
		if got := used(); got != total {
			t.Errorf("after the %v variant (%d bytes): the cache holds %d, want %d", c, len(v.body), got, total)
		}
		if plain := decodeForTest(t, c, v.body); !bytes.Equal(plain, body) {
			t.Errorf("%v variant does not decode to the answer", c)
		}
	}

	b, _ := ac.Get(NewKey(buf[:0], "/y", 1), func() (*Answer, error) { return New(jsonBody(200), "application/json"), nil })
	ac.Wait()
	ac.Drop()
	ac.Wait()
	if _, err := b.variant(coding.Gzip); err != nil {
		t.Fatal(err)
	}
	ac.Wait()
	if got := used(); got != 0 {
		t.Errorf("a variant made after the cache was emptied brought %d bytes back", got)
	}
}

// TestPrecompressor: an answer gets every coding at the best level; an
// equal answer of the next round takes the same variants without
// compressing; small and no-store answers get none.
func TestPrecompressor(t *testing.T) {
	var p Precompressor
	body := jsonBody(400)
	a := New(body, "application/json")
	p.Round()
	if did, err := p.Compress(a); err != nil || !did {
		t.Fatalf("first answer: compressed %v, %v", did, err)
	}
	for c := coding.Brotli; c < coding.Count; c++ {
		want, err := coding.Compress(c, coding.Best, body)
		if err != nil {
			t.Fatal(err)
		}
		if v := a.vars[c].Load(); v == nil || !bytes.Equal(v.body, want) {
			t.Errorf("%v: not the best level's bytes", c)
		}
	}
	if did, _ := p.Compress(a); did {
		t.Error("an answer with its best variants was compressed again")
	}

	p.Round()
	same := New(bytes.Clone(body), "application/json")
	if did, err := p.Compress(same); err != nil || did {
		t.Fatalf("an unchanged answer: compressed %v, %v; want its variants reused", did, err)
	}
	for c := coding.Brotli; c < coding.Count; c++ {
		if same.vars[c].Load() != a.vars[c].Load() {
			t.Errorf("%v: the unchanged answer's variant is not the one made before", c)
		}
	}
	changed := New(jsonBody(401), "application/json")
	if did, _ := p.Compress(changed); !did {
		t.Error("a changed answer was not compressed")
	}
	// Two rounds on, the first round's answers are forgotten.
	p.Round()
	p.Round()
	if did, _ := p.Compress(New(bytes.Clone(body), "application/json")); !did {
		t.Error("an answer two rounds old was reused: the precompressor keeps more than one round")
	}

	small := New([]byte(`{"a":1}`), "application/json")
	cut, _ := Search(map[string]any{"items": jsonBody(100)}, true)
	for _, x := range []*Answer{small, cut} {
		if did, _ := p.Compress(x); did || x.best.Load() {
			t.Errorf("%d-byte answer (no-store %v) was precompressed", len(x.Body), x.NoStore)
		}
	}
}

// decodeForTest undoes coding c.
func decodeForTest(t *testing.T, c coding.Coding, b []byte) []byte {
	t.Helper()
	out, err := coding.Decode(c.String(), b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConcurrentMissesBuildOnce: requests that miss the same answer of a
// query while it is being built wait for that build instead of each
// taking a turn of the miss gate (a hot page after a state is published,
// asked by many at once): one build, no refusal, one answer for all.
func TestConcurrentMissesBuildOnce(t *testing.T) {
	c, err := NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	c.SetGate(missgate.New(missgate.Config{Share: 0.0001, Wait: time.Millisecond, Queue: 1}))
	var builds atomic.Int32
	started := make(chan struct{})
	build := func() (*Answer, error) {
		if builds.Add(1) == 1 {
			close(started)
		}
		time.Sleep(50 * time.Millisecond)
		return New([]byte(`{"page":1}`), "application/json"), nil
	}
	var wg sync.WaitGroup
	answers := make([]*Answer, 20)
	errs := make([]error, 20)
	var buf [64]byte
	wg.Go(func() {
		answers[0], errs[0] = c.GetQuery(NewKey(buf[:0], "/q", 1).Str("a", "b"), missgate.Caller{}, false, build)
	})
	<-started
	for i := 1; i < len(answers); i++ {
		wg.Go(func() {
			var buf [64]byte
			answers[i], errs[i] = c.GetQuery(NewKey(buf[:0], "/q", 1).Str("a", "b"), missgate.Caller{}, false, build)
		})
	}
	wg.Wait()
	for i := range answers {
		if errs[i] != nil || answers[i] != answers[0] {
			t.Fatalf("request %d: %v (the same answer: %v)", i, errs[i], answers[i] == answers[0])
		}
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}

// TestPrecompressWhileAsked: a round of the Precompressor replaces the
// variants that requests made at the fast level, and reuses a round's
// variants in the next, while requests keep asking for every coding. Each
// request gets a variant that decodes to the body, and at the end the
// answer holds the best level's bytes. (The edge's test of a whole round,
// TestPrecompressedOnPublish, runs without the race detector: its
// compression at the best level is most of a minute under it. This is
// the part only the race detector checks.)
func TestPrecompressWhileAsked(t *testing.T) {
	ac, err := NewCache(8 << 20)
	if err != nil {
		t.Fatal(err)
	}
	body := jsonBody(300)
	var buf [64]byte
	first, err := ac.Get(NewKey(buf[:0], "/x", 1), func() (*Answer, error) { return New(body, "application/json"), nil })
	if err != nil {
		t.Fatal(err)
	}
	next, err := ac.Get(NewKey(buf[:0], "/x", 2), func() (*Answer, error) { return New(bytes.Clone(body), "application/json"), nil })
	if err != nil {
		t.Fatal(err)
	}
	var p Precompressor
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 4 {
		wg.Go(func() {
			for n := 0; !stop.Load() || n < 3; n++ {
				for _, a := range []*Answer{first, next} {
					c := coding.Coding(1 + (i+n)%int(coding.Count-1))
					v, err := a.variant(c)
					if err != nil {
						errs <- err
						return
					}
					if got, err := coding.Decode(c.String(), v.body); err != nil || !bytes.Equal(got, body) {
						errs <- fmt.Errorf("%v variant does not decode to the body: %v", c, err)
						return
					}
				}
			}
		})
	}
	p.Round()
	if did, err := p.Compress(first); err != nil || !did {
		t.Errorf("first round: compressed %v, %v", did, err)
	}
	p.Round()
	if did, err := p.Compress(next); err != nil || did {
		t.Errorf("second round, the same bytes: compressed %v, %v; want the first round's variants", did, err)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for c := coding.Identity + 1; c < coding.Count; c++ {
		want, err := coding.Compress(c, coding.Best, body)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []*Answer{first, next} {
			if v := a.vars[c].Load(); v == nil || !bytes.Equal(v.body, want) {
				t.Errorf("%v: not the best level's bytes after the rounds", c)
			}
		}
	}
}
