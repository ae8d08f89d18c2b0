package answer

import (
	"sync"
	"sync/atomic"
)

// A doorkeeper remembers the queries of the long tail asked once and not
// kept (Cache.SetMinUses), as TinyLFU's doorkeeper does: two Bloom
// filters, the current one and the one before it. A query is remembered
// from its first ask until doorkeeperFill more first asks have filled
// the current filter and the one after it: 100,000 to 200,000 distinct
// queries later. A Bloom filter forgets nothing before that (no two
// queries can push each other out, as they did in a table of one query
// a slot); a false positive (about 1% when full) keeps an answer on its
// first ask, which only costs the cache what it cost before there was a
// doorkeeper.
type doorkeeper struct {
	mu        sync.Mutex // held to replace the filters
	cur, prev atomic.Pointer[bloom]
}

// bloom is a Bloom filter of doorkeeperBits bits probed doorkeeperProbes
// times a query, with the number of queries added to it.
type bloom struct {
	words [doorkeeperBits / 64]atomic.Uint64
	added atomic.Int64
}

const (
	doorkeeperBits   = 1 << 20 // 128 KiB a filter
	doorkeeperProbes = 4
	doorkeeperFill   = 100_000 // queries a filter takes: about 1% false positives when full
)

func newDoorkeeper() *doorkeeper {
	d := &doorkeeper{}
	d.cur.Store(new(bloom))
	d.prev.Store(new(bloom))
	return d
}

// askedBefore reports whether the query whose key hashes to (h, check)
// was asked before, and remembers that it has been asked now. It is safe
// for concurrent use.
func (d *doorkeeper) askedBefore(h, check uint64) bool {
	cur := d.cur.Load()
	if cur.has(h, check) || d.prev.Load().has(h, check) {
		return true
	}
	cur.add(h, check)
	if cur.added.Add(1) == doorkeeperFill {
		d.mu.Lock()
		if d.cur.Load() == cur {
			d.prev.Store(cur)
			d.cur.Store(new(bloom))
		}
		d.mu.Unlock()
	}
	return false
}

// probe returns the i-th bit of a query in a filter: double hashing
// (Kirsch and Mitzenmacher) of the key's two independent hashes.
func probe(h, check uint64, i int) (word int, bit uint64) {
	p := (h + uint64(i)*(check|1)) % doorkeeperBits
	return int(p / 64), 1 << (p % 64)
}

func (b *bloom) has(h, check uint64) bool {
	for i := range doorkeeperProbes {
		w, bit := probe(h, check, i)
		if b.words[w].Load()&bit == 0 {
			return false
		}
	}
	return true
}

func (b *bloom) add(h, check uint64) {
	for i := range doorkeeperProbes {
		w, bit := probe(h, check, i)
		b.words[w].Or(bit)
	}
}
