package views

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"
)

// Replica is an immutable copy of every listing's current state, sorted by
// store and id. It is never modified after NewReplica returns.
type Replica struct {
	listings   []Listing
	storeStart [NumStores + 1]int // listings of store s are listings[storeStart[s]:storeStart[s+1]]
	generation uint64
	loadedAt   time.Time
	loadTime   time.Duration
}

// ReplicaInfo describes where a replica came from.
type ReplicaInfo struct {
	Generation uint64        // increases with every published replica
	LoadedAt   time.Time     // when loading finished
	LoadTime   time.Duration // how long loading took
}

// NewReplica takes ownership of listings, sorts them by store and id, and
// keeps the last one of any duplicate (store, id).
func NewReplica(listings []Listing, info ReplicaInfo) *Replica {
	slices.SortStableFunc(listings, compareKey)
	// Keep the last of equal keys: the loader hands rows in arrival order.
	out := listings[:0]
	for i := range listings {
		if i+1 < len(listings) && compareKey(listings[i], listings[i+1]) == 0 {
			continue
		}
		out = append(out, listings[i])
	}
	clear(listings[len(out):])
	r := &Replica{
		listings:   slices.Clip(out),
		generation: info.Generation,
		loadedAt:   info.LoadedAt,
		loadTime:   info.LoadTime,
	}
	for s := range NumStores + 1 {
		r.storeStart[s], _ = slices.BinarySearchFunc(r.listings, Store(s), func(l Listing, st Store) int {
			return cmp.Compare(l.Store, st)
		})
	}
	return r
}

func compareKey(a, b Listing) int {
	if c := cmp.Compare(a.Store, b.Store); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Info returns the replica's generation and load figures.
func (r *Replica) Info() ReplicaInfo {
	return ReplicaInfo{Generation: r.generation, LoadedAt: r.loadedAt, LoadTime: r.loadTime}
}

// Len returns the number of listings in the replica, live or not.
func (r *Replica) Len() int { return len(r.listings) }

// All returns every listing, sorted by store and id. The slice is shared:
// callers must not modify it.
func (r *Replica) All() []Listing { return r.listings }

// OfStore returns the listings of one store, sorted by id. The slice is
// shared: callers must not modify it.
func (r *Replica) OfStore(s Store) []Listing {
	if !s.Valid() {
		return nil
	}
	return r.listings[r.storeStart[s]:r.storeStart[s+1]]
}

// Lookup returns the listing with the given store and id, or nil.
func (r *Replica) Lookup(s Store, id string) *Listing {
	ls := r.OfStore(s)
	i, ok := slices.BinarySearchFunc(ls, id, func(l Listing, id string) int { return cmp.Compare(l.ID, id) })
	if !ok {
		return nil
	}
	return &ls[i]
}

// Counts returns the number of listings per store, live or not.
func (r *Replica) Counts() [NumStores]int {
	var c [NumStores]int
	for s := range NumStores {
		c[s] = r.storeStart[s+1] - r.storeStart[s]
	}
	return c
}

// State is everything the edge serves at one moment. It is immutable once
// published.
type State struct {
	Replica *Replica
}

// Published holds the current State. The zero value holds none. Readers
// call Load without locking; a builder calls Publish with a complete new
// state.
type Published struct {
	p atomic.Pointer[State]
}

// Load returns the current state, or nil before the first publish.
func (p *Published) Load() *State { return p.p.Load() }

// Publish makes s the current state.
func (p *Published) Publish(s *State) { p.p.Store(s) }

// Interner shares one copy of equal strings, such as category names,
// developers, permissions and topics, across the listings of a replica.
// It is not safe for concurrent use.
type Interner struct {
	m map[string]string
}

// NewInterner returns an empty interner.
func NewInterner() *Interner { return &Interner{m: make(map[string]string)} }

// String returns the shared copy of s.
func (in *Interner) String(s string) string {
	if v, ok := in.m[s]; ok {
		return v
	}
	in.m[s] = s
	return s
}

// Strings replaces every element of ss by its shared copy and returns ss;
// an empty slice becomes nil.
func (in *Interner) Strings(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	for i, s := range ss {
		ss[i] = in.String(s)
	}
	return slices.Clip(ss)
}
