package replica

import (
	"sync"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// A Spare is room made ahead for the listings of the state a delta will
// give (ReadOptions.Spare): an array of listings, every page of it
// written once, so that the delta's apply copies into memory the system
// has already given.
//
// The apply of a delta writes a new array of every listing (448 bytes a
// listing: 2.2 GB at 5M). On a VM whose host takes back the pages its
// guest frees, every page first written costs a fault of about 15 µs:
// about 8 s at 5M, on the path from the leader's publish to the
// follower's. A follower makes its spare in the minutes between two
// deltas, where that cost delays nothing.
//
// A Spare is given to one apply: the apply takes it whole, and a
// spare too small for the state is left alone. It is safe for use by
// several goroutines.
type Spare struct {
	mu       sync.Mutex
	listings []views.Listing
}

// NewSpare returns a spare for states of up to n listings, its pages
// written.
func NewSpare(n int) *Spare {
	s := make([]views.Listing, n)
	// One write a page, of the zero the array holds anyway, to a field
	// that holds no pointer: a store of a whole listing (its strings)
	// runs under the collector's write barrier, where a goroutine cannot
	// be preempted, and a collection that started meanwhile waited for
	// the loop's end to scan its stack (at 5M listings, a mark of 34 s
	// on a busy follower, whose allocations stalled behind it; 4 s with
	// this store, bench/README.md, *fifth round*).
	step := max(1, pageBytes/int(unsafe.Sizeof(views.Listing{})))
	for i := 0; i < n; i += step {
		s[i].FirstSeen = 0
	}
	return &Spare{listings: s[:0]}
}

// pageBytes is the size of a page of memory the spare writes once.
const pageBytes = 4096

// Cap returns the count of listings the spare has room for (0 once
// taken).
func (s *Spare) Cap() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return cap(s.listings)
}

// Drop gives the spare's room back to the heap (a whole state is read,
// which has no use for it): the spare is empty after it, whoever holds
// it.
func (s *Spare) Drop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listings = nil
}

// take returns the spare's array, empty, if it has room for n listings,
// and leaves the spare empty; else nil, and the spare as it was.
func (s *Spare) take(n int) []views.Listing {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cap(s.listings) < n {
		return nil
	}
	out := s.listings
	s.listings = nil
	return out
}
