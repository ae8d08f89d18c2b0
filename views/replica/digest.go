package replica

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// A Digest names a state by its content: the SHA-256 of its Info's
// watermarks and load figures (not its generation, which is each edge's
// own), the count of readings its figures report, every listing's binary
// form in key order, and its change log. Two edges holding states of one
// digest serve the same figures, bytes and ETags. A fleet's follower
// names the state it holds by its digest, and checks that a state it
// built from deltas has the digest its leader signed (WriteDelta).
//
// The listings are hashed in groups whose ends their keys choose (a group
// ends after each listing whose key hashes to 0 in groupEvery), and the
// groups' hashes are hashed in order: a listing added, changed or
// removed changes its own group's hash alone, so the digest of a state
// made from another by a delta (or a refresh's merge) hashes again only
// the groups the change touched (about groupEvery listings each) and
// takes the others' from the state before.
type Digest [sha256.Size]byte

// groupEvery is how many listings a group holds on average: 1 in
// groupEvery keys ends a group. A refresh of 1 listing in 288 at 5M
// listings hashes again about 5% of them.
const groupEvery = 16

// groups is a replica's listings' groups: ends[g] is the index past
// group g's last listing (ascending; the last is the count of listings)
// and hashes[g] its hash. open says the last group ends with the
// listings rather than at a listing that ends a group.
type groups struct {
	ends   []int32
	hashes [][sha256.Size]byte
	open   bool
}

// digestCache holds a replica's groups once computed: replicas that share
// listings (WithInfo, WithChanges) share it.
type digestCache struct {
	once  sync.Once
	ready atomic.Bool
	g     groups
}

// DigestOf returns the digest of r with snapshots, the count of readings
// its figures report.
func DigestOf(r *Replica, snapshots int64) Digest {
	return digestOf(r, r.digestGroups(), snapshots)
}

// digestOf returns the digest of r with snapshots, whose listings' groups
// are g.
func digestOf(r *Replica, g *groups, snapshots int64) Digest {
	h := sha256.New()
	h.Write(infoBytes(r.info, snapshots, len(r.listings)))
	for i := range g.hashes {
		h.Write(g.hashes[i][:])
	}
	changes.WriteLog(h, r.changes) // a hash's Write never fails
	var d Digest
	h.Sum(d[:0])
	return d
}

// digestGroups returns r's groups, computing them once: from those of a
// base r was made from by a delta or a merge (when that base is live and
// its groups computed), else from every listing.
func (r *Replica) digestGroups() *groups {
	c := r.digests
	if c == nil { // a Replica made outside newSortedFrom: not cached
		g := groupsOf(r.listings)
		return &g
	}
	c.once.Do(func() {
		defer c.ready.Store(true)
		for i := range r.applied {
			if b := r.applied[i].base.Value(); b != nil && b.digests != nil && b.digests.ready.Load() {
				if g, ok := groupsFrom(r.listings, &b.digests.g, r.applied[i].Applied); ok {
					c.g = g
					return
				}
			}
		}
		c.g = groupsOf(r.listings)
	})
	return &c.g
}

// endsGroup reports whether l's key ends a group: a hash of its store
// and id (FNV-1a, then mixed so that its low bits depend on every byte)
// that is 0 in groupEvery.
func endsGroup(l *views.Listing) bool {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	h = (h ^ uint64(l.Store)) * prime
	for i := 0; i < len(l.ID); i++ {
		h = (h ^ uint64(l.ID[i])) * prime
	}
	h ^= h >> 33 // murmur3's finalizer
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h%groupEvery == 0
}

// groupsOf computes the groups of listings from every listing, on every
// core: the ends first, a part of the listings a core, then the hashes.
func groupsOf(listings []views.Listing) groups {
	n := len(listings)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/65536))
	parts := make([][]int32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			lo, hi := n*w/workers, n*(w+1)/workers
			ends := make([]int32, 0, (hi-lo)/groupEvery+16)
			for i := lo; i < hi; i++ {
				if endsGroup(&listings[i]) {
					ends = append(ends, int32(i+1))
				}
			}
			parts[w] = ends
		})
	}
	wg.Wait()
	var g groups
	total := 1
	for _, p := range parts {
		total += len(p)
	}
	g.ends = make([]int32, 0, total)
	for _, p := range parts {
		g.ends = append(g.ends, p...)
	}
	if len(g.ends) == 0 || g.ends[len(g.ends)-1] != int32(n) {
		if n > 0 {
			g.ends = append(g.ends, int32(n))
			g.open = true
		}
	}
	g.hashes = make([][sha256.Size]byte, len(g.ends))
	all := make([]int32, len(g.ends))
	for i := range all {
		all[i] = int32(i)
	}
	g.hash(listings, all)
	return g
}

// groupsFrom computes the groups of listings from base's, where a says
// how listings were made from base's listings; ok is false when a does
// not fit the two (and the caller computes them whole). A group of the
// new listings that holds exactly a group of base's (none of its
// listings added, none of base's dropped between its first and last) has
// that group's hash; the others are hashed.
func groupsFrom(listings []views.Listing, base *groups, a Applied) (out groups, ok bool) {
	n := len(listings)
	nb := int32(0)
	if len(base.ends) > 0 {
		nb = base.ends[len(base.ends)-1]
	}
	if n-len(a.Added) != int(nb)-len(a.Dropped) {
		return groups{}, false
	}
	out.ends = make([]int32, 0, len(base.ends)+len(a.Added))
	reuse := make([]int32, 0, cap(out.ends)) // per group of out: the base group whose hash it has, or -1
	start := func(k int) int32 {
		if k == 0 {
			return 0
		}
		return base.ends[k-1]
	}
	ai, di := 0, 0
	b := int32(0) // the next listing of base not yet placed
	k := 0        // base's group of b
	first := int32(-1)
	clean := true
	for p := range n {
		var ends bool
		if ai < len(a.Added) && int(a.Added[ai]) == p {
			ai++
			clean = false
			ends = endsGroup(&listings[p])
		} else {
			for di < len(a.Dropped) && a.Dropped[di] == b {
				di++
				b++
				if first >= 0 {
					clean = false // one of base's listings dropped inside the group
				}
			}
			if b >= nb {
				return groups{}, false
			}
			for base.ends[k] <= b {
				k++
			}
			if first < 0 {
				first = b
			}
			ends = b == base.ends[k]-1 && !(k == len(base.ends)-1 && base.open)
			b++
		}
		if ends || p == n-1 {
			r := int32(-1)
			if clean && first >= 0 && first == start(k) && b == base.ends[k] {
				r = int32(k)
			}
			out.ends = append(out.ends, int32(p+1))
			reuse = append(reuse, r)
			out.open = !ends
			first, clean = -1, true
		}
	}
	for di < len(a.Dropped) && a.Dropped[di] == b { // base's last listings dropped
		di++
		b++
	}
	if ai != len(a.Added) || di != len(a.Dropped) || b != nb {
		return groups{}, false
	}
	out.hashes = make([][sha256.Size]byte, len(out.ends))
	var todo []int32
	for g, r := range reuse {
		if r >= 0 {
			out.hashes[g] = base.hashes[r]
		} else {
			todo = append(todo, int32(g))
		}
	}
	out.hash(listings, todo)
	return out, true
}

// hashBatch is how many groups a core hashes at a time.
const hashBatch = 256

// hash computes the hashes of the groups todo (ascending) of listings,
// on every core.
func (g *groups) hash(listings []views.Listing, todo []int32) {
	var next atomic.Int64
	batches := (len(todo) + hashBatch - 1) / hashBatch
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(1, batches)) {
		wg.Go(func() {
			var buf []byte
			var size [binary.MaxVarintLen64]byte
			h := sha256.New()
			for {
				bt := int(next.Add(1)) - 1
				if bt >= batches {
					return
				}
				for _, gi := range todo[bt*hashBatch : min(len(todo), (bt+1)*hashBatch)] {
					lo := int32(0)
					if gi > 0 {
						lo = g.ends[gi-1]
					}
					h.Reset()
					for i := lo; i < g.ends[gi]; i++ {
						buf = views.AppendListing(buf[:0], &listings[i])
						h.Write(size[:binary.PutUvarint(size[:], uint64(len(buf)))])
						h.Write(buf)
					}
					h.Sum(g.hashes[gi][:0])
				}
			}
		})
	}
	wg.Wait()
}

// infoBytes is the binary form of what a state's header says besides
// its generation: its watermarks, load figures, history flag, count of
// readings and of listings.
func infoBytes(info Info, snapshots int64, n int) []byte {
	var b []byte
	for _, t := range [...]int64{unixNano(info.ListingsMark), unixNano(info.ReadingsMark), unixNano(info.ClimbAt),
		unixNano(info.ChartTo), unixNano(info.LoadedAt), int64(info.LoadTime), snapshots} {
		b = binary.AppendVarint(b, t)
	}
	hist := byte(0)
	if info.HasHistory {
		hist = 1
	}
	b = append(b, hist)
	return binary.AppendUvarint(b, uint64(n))
}
