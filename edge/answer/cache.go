package answer

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/transport"
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
	c        *ristretto.Cache[uint64, *cached]
	modified func() time.Time // the Last-Modified of answers built now; nil: none
	seed     maphash.Seed
	hits     prometheus.Counter
	misses   prometheus.Counter
	aliases  *[aliasSlots]atomic.Pointer[aliasEntry]
	epoch    atomic.Uint64  // Drops so far
	gate     *missgate.Gate // the turns of GetQuery's misses; nil: none
	// building holds GetQuery's misses being built, by key: a request
	// that misses while the same answer is being built waits for it
	// instead of taking a turn of its own (a hot page after a state is
	// published, asked by many at once).
	building singleflight.Group
	// asked remembers the queries of the long tail asked once and not
	// kept (minUses 2).
	asked   *doorkeeper
	minUses int
}

// cached is an answer in the cache under its key's first hash h, with the
// key's second hash, and the cache's epoch when it was kept.
type cached struct {
	h, check, epoch uint64
	a               *Answer
	cache           *Cache
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
		c:       c,
		seed:    maphash.MakeSeed(),
		aliases: new([aliasSlots]atomic.Pointer[aliasEntry]),
		asked:   newDoorkeeper(),
		minUses: 2,
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

// HitCounter returns the counter of the answers the cache has given
// without building them (its hits), for a sampler (the miss gate's).
func (ac *Cache) HitCounter() prometheus.Counter { return ac.hits }

// Crowded returns the problem to answer when who's queue at the cache's
// gate is full (missgate.Gate.Crowded), nil otherwise or without a gate.
// A handler asks it once the request as sent is not cached, before it
// reads the query.
func (ac *Cache) Crowded(who missgate.Caller) error {
	if ac.gate == nil {
		return nil
	}
	return ac.gate.Crowded(who)
}

// SetMinUses sets how many times a query of the long tail (GetQuery)
// must be asked before its answer is kept: 1 keeps every answer; 2, the
// default, keeps an answer on its second ask (nginx's
// proxy_cache_min_uses), so that the distinct queries an analyst or a
// flood asks once cost no copy, no cache memory and no evictions of the
// answers dashboards ask again. Other values are 2. Call it before the
// cache is used.
func (ac *Cache) SetMinUses(n int) {
	ac.minUses = 2
	if n == 1 {
		ac.minUses = 1
	}
}

// SetGate makes g the gate that GetQuery's misses pass (package
// missgate). Call it before the cache is used.
func (ac *Cache) SetGate(g *missgate.Gate) { ac.gate = g }

// Get returns the cached answer for key, or builds, caches and returns it.
// key is only read during the call. Its misses are few (an answer of a
// published state: summary, categories, a week): they pass no gate.
// Every read of ClickHouse a page or an API answer makes (a listing's
// page and history, its growth, reviews and review search, a comparison)
// is GetQuery's.
func (ac *Cache) Get(key Key, build func() (*Answer, error)) (*Answer, error) {
	return ac.get(key, missgate.Caller{}, build, false, true)
}

// GetQuery is Get for the answer to one query of the long tail (filters,
// sorts, pages, searches): a miss is computed only in a turn of the
// cache's gate, or refused (503, Retry-After: 1) when none comes in time,
// so that a flood of distinct queries cannot take the CPU from the
// answers cached (docs/operations.md, Overload). who is the caller the
// miss is computed for: turns are shared fairly between callers.
//
// build may return a Draft. Its answer is kept when its query was asked
// before (SetMinUses) or when first is set (the server's own requests
// for the pages dashboards open with); otherwise the Responder sends it
// and recycles its buffer.
func (ac *Cache) GetQuery(key Key, who missgate.Caller, first bool, build func() (*Answer, error)) (*Answer, error) {
	return ac.get(key, who, build, true, first)
}

func (ac *Cache) get(key Key, who missgate.Caller, build func() (*Answer, error), gated, first bool) (*Answer, error) {
	h, check := xxhash.Sum64(key.b), maphash.Bytes(ac.seed, key.b)
	if e, ok := ac.c.Get(h); ok && e.check == check {
		ac.hits.Inc()
		return e.a, nil
	}
	ac.misses.Inc()
	if gated && ac.gate != nil {
		var id [16]byte
		binary.LittleEndian.PutUint64(id[:8], h)
		binary.LittleEndian.PutUint64(id[8:], check)
		v, err, shared := ac.building.Do(string(id[:]), func() (any, error) {
			leave, err := ac.gate.Enter(who)
			if err != nil {
				return nil, err
			}
			defer leave()
			return ac.made(h, check, build, true, first)
		})
		if err != nil {
			return nil, err
		}
		a := v.(*Answer)
		// An unkept draft given to several requests at once is never
		// recycled: its buffer goes with the answer. Every caller of Do
		// sees the same shared, and none is added once it returns, so
		// only a draft's one request writes once.
		if a.scratch != nil && !shared {
			a.once = true
		}
		return a, nil
	}
	a, err := ac.made(h, check, build, gated, first)
	if err == nil && a.scratch != nil {
		a.once = true
	}
	return a, err
}

// made builds the answer of the key hashed (h, check) and keeps it; an
// answer to a query (gated) is sent from memory. A draft of a query
// asked for the first time is not kept (SetMinUses), nor is a NoStore
// answer.
func (ac *Cache) made(h, check uint64, build func() (*Answer, error), gated, first bool) (*Answer, error) {
	a, err := build()
	if err != nil {
		return nil, err
	}
	if a.NoStore {
		return a, nil
	}
	if ac.modified != nil && a.modified == 0 {
		a.SetModified(ac.modified())
	}
	if a.scratch != nil {
		if !first && ac.minUses > 1 && !ac.asked.askedBefore(h, check) {
			return a, nil
		}
		a.keep()
	}
	if gated {
		// An answer of the long tail is asked again seldom: it is sent
		// from memory, with no memfd to make (and no file descriptor
		// held) for it.
		a.file = transport.NewStream(a.Body)
	} else {
		a.file = transport.NewFile(a.Body)
	}
	a.home = &cached{h: h, check: check, epoch: ac.epoch.Load(), a: a, cache: ac}
	ac.c.Set(h, a.home, cost(a))
	return a, nil
}

// SetModified makes modified the source of the Last-Modified of every
// answer built from now on (one that has none of its own): the time of
// the newest data the published state holds, which is the same on every
// edge of a fleet, so a CDN may revalidate against any of them. Call it
// before the cache is used.
func (ac *Cache) SetModified(modified func() time.Time) { ac.modified = modified }

// An alias is a second key of an answer: the request as it came (route,
// generation and raw query), so that asking again the same way skips
// parsing the query and building its canonical key. Each spelling of a
// query gets its own alias to the one answer of its canonical key
// (bench/README.md#the-cached-hot-path).
//
// Aliases live apart from the answers, in a fixed table of aliasSlots
// entries (direct-mapped by the alias key's hash) that point to the
// canonical key, never to an answer: endless spellings of one answer
// (?pageSize=200&x=1, &x=2, …) overwrite one another's slots and cost the
// answers nothing, as ristretto never sees them. An alias whose answer was
// evicted finds nothing, and the request takes the canonical path.

// aliasSlots is the size of the alias table: 1 MiB of pointers, and 32
// bytes an alias set.
const aliasSlots = 1 << 17

// aliasEntry maps an alias key (by its two hashes) to its canonical key's.
type aliasEntry struct {
	alias, aliasCheck uint64
	h, check          uint64
}

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

// Aliased returns the answer cached under the alias key, counted as a
// hit; a miss is not counted, as the canonical lookup that follows it
// counts. key is only read during the call.
func (ac *Cache) Aliased(key Key) (*Answer, bool) {
	if key.b == nil {
		return nil, false
	}
	h := xxhash.Sum64(key.b)
	e := ac.aliases[h%aliasSlots].Load()
	if e == nil || e.alias != h || e.aliasCheck != maphash.Bytes(ac.seed, key.b) {
		return nil, false
	}
	c, ok := ac.c.Get(e.h)
	if !ok || c.check != e.check {
		return nil, false
	}
	ac.hits.Inc()
	return c.a, true
}

// Alias makes alias a second key of the answer cached under canonical.
// It costs the answer cache nothing (see aliasSlots).
func (ac *Cache) Alias(alias, canonical Key) {
	if alias.b == nil || canonical.b == nil {
		return
	}
	h := xxhash.Sum64(alias.b)
	slot := &ac.aliases[h%aliasSlots]
	if e := slot.Load(); e != nil && e.alias == h {
		return // set already (a second hash collision only costs a miss)
	}
	slot.Store(&aliasEntry{alias: h, aliasCheck: maphash.Bytes(ac.seed, alias.b),
		h: xxhash.Sum64(canonical.b), check: maphash.Bytes(ac.seed, canonical.b)})
}

// Drop removes every answer and alias, freeing their memory (memfds
// included) once nothing sends them. Answers are keyed by view
// generation: when a new state is about to replace the one they were
// computed from, they will soon be dead weight, and the memory is better
// spent on the new state. Answers asked for meanwhile are computed and
// cached again.
func (ac *Cache) Drop() {
	ac.epoch.Add(1)
	ac.c.Clear()
	for i := range ac.aliases {
		ac.aliases[i].Store(nil)
	}
}

// Wait waits until every answer set so far is in the cache or refused
// (ristretto sets asynchronously); for tests.
func (ac *Cache) Wait() { ac.c.Wait() }
