package answer

import (
	"fmt"
	"hash/maphash"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/transport"
	"github.com/edge-stats/edge/views"
)

// Cache keeps encoded answers, bounded in bytes. ristretto may drop or
// refuse an item: a miss just encodes the answer again from the views.
//
// An answer is found by two independent 64-bit hashes of its key (as
// ristretto does for string keys): the first is ristretto's key, the
// second is checked against the one stored with the answer. The key's
// bytes are neither kept nor copied, so a caller builds them in a buffer
// of its own, on its stack (bench/README.md#the-cached-hot-path).
type Cache struct {
	c      *ristretto.Cache[uint64, *cached]
	seed   maphash.Seed
	hits   prometheus.Counter
	misses prometheus.Counter
}

// cached is an answer in the cache with its key's second hash.
type cached struct {
	check uint64
	a     *Answer
}

// NewCache returns a cache of at most maxBytes of answers.
func NewCache(maxBytes int64) (*Cache, error) {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, *cached]{
		NumCounters:        max(maxBytes/1000, 1000), // about 10x the answers that fit (answers ~10 KB)
		MaxCost:            maxBytes,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("answer cache: %w", err)
	}
	return &Cache{
		c:    c,
		seed: maphash.MakeSeed(),
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_answer_cache_hits_total",
			Help: "Answers served from the answer cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_answer_cache_misses_total",
			Help: "Answers encoded because the cache did not hold them."}),
	}, nil
}

// Collectors returns the cache's metrics: its hits and misses.
func (ac *Cache) Collectors() []prometheus.Collector {
	return []prometheus.Collector{ac.hits, ac.misses}
}

// Get returns the cached answer for key, or builds, caches and returns it.
// key is only read during the call.
func (ac *Cache) Get(key Key, build func() (*Answer, error)) (*Answer, error) {
	h, check := xxhash.Sum64(key.b), maphash.Bytes(ac.seed, key.b)
	if e, ok := ac.c.Get(h); ok && e.check == check {
		ac.hits.Inc()
		return e.a, nil
	}
	ac.misses.Inc()
	a, err := build()
	if err != nil {
		return nil, err
	}
	if a.NoStore {
		return a, nil
	}
	a.file = transport.NewFile(a.Body)
	ac.c.Set(h, &cached{check: check, a: a}, cost(a))
	return a, nil
}

// cost is what keeping a costs the cache: its body and bookkeeping, and
// the body again when a large answer is also in a memfd.
func cost(a *Answer) int64 {
	n := int64(len(a.Body) + 128)
	if a.file != nil {
		n += int64(len(a.Body))
	}
	return n
}

// An alias is a second key of an answer: the request as it came (route,
// generation and raw query), so that asking again the same way skips
// parsing the query and building its canonical key. Each spelling of a
// query gets its own alias to the one answer of its canonical key
// (bench/README.md#the-cached-hot-path).

// AliasKey returns the alias key of a request for route at generation gen
// with the raw query string raw, built in buf. It is the zero Key, which
// finds nothing, for a query too long to be worth an alias.
func AliasKey(buf []byte, route string, gen uint64, raw []byte) Key {
	if len(raw) > 512 {
		return Key{}
	}
	b := append(append(buf[:0], route...), '?')
	b = appendUint(b, gen)
	return Key{append(append(b, ':'), raw...)}
}

// RequestAlias returns the alias key of the request rc on route over the
// published state, built in buf; the zero Key until figures are published.
func RequestAlias(buf []byte, route string, state *views.Published[views.State], rc *fasthttp.RequestCtx) Key {
	st := state.Load()
	if st == nil || st.Figures == nil {
		return Key{}
	}
	return AliasKey(buf, route, st.Replica.Info().Generation, rc.URI().QueryString())
}

// Aliased returns the answer cached under the alias key, counted as a
// hit; a miss is not counted, as the canonical lookup that follows it
// counts. key is only read during the call.
func (ac *Cache) Aliased(key Key) (*Answer, bool) {
	if key.b == nil {
		return nil, false
	}
	e, ok := ac.c.Get(xxhash.Sum64(key.b))
	if !ok || e.check != maphash.Bytes(ac.seed, key.b) {
		return nil, false
	}
	ac.hits.Inc()
	return e.a, true
}

// Alias caches a under the alias key too. It costs as much as the answer
// itself, as if it were a copy: should the canonical key be evicted, the
// alias alone keeps the answer alive, and the cache's bound in bytes
// must still hold.
func (ac *Cache) Alias(key Key, a *Answer) {
	if key.b == nil || a.NoStore {
		return
	}
	ac.c.Set(xxhash.Sum64(key.b), &cached{check: maphash.Bytes(ac.seed, key.b), a: a}, cost(a))
}

// Wait waits until every answer set so far is in the cache or refused
// (ristretto sets asynchronously); for tests.
func (ac *Cache) Wait() { ac.c.Wait() }
