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
// listing). On a VM whose host takes back the pages its guest frees,
// every page first written costs a fault, and at millions of listings
// those faults are seconds on the path from the leader's publish to the
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

// NewSpare returns a spare for states of up to n listings. Its pages
// are not written yet (Write): it can be given to an apply at once.
func NewSpare(n int) *Spare {
	return &Spare{listings: make([]views.Listing, 0, n)}
}

// Write writes every page of the spare's array once, a batch of pages at
// a time under its lock, and stops when the spare is taken or dropped
// meanwhile (a delta that comes while the spare is being made takes it
// as it is: pages not yet written cost the apply a fault each, as a new
// array's all would). It reports whether it wrote every page.
//
// Each write is of the zero the array holds anyway, to a field that
// holds no pointer: a store of a whole listing (its strings) runs under
// the collector's write barrier, where a goroutine cannot be preempted,
// and a collection that started meanwhile would wait for the loop's end
// to scan its stack, stalling every allocation behind a long mark (the
// figures are in bench/README.md, The time to a follower's publish).
func (s *Spare) Write() bool {
	step := max(1, pageBytes/int(unsafe.Sizeof(views.Listing{})))
	const batch = 256 // pages written between two looks at the lock: 1 MiB
	for i := 0; ; {
		s.mu.Lock()
		ls := s.listings[:cap(s.listings)]
		if len(ls) == 0 {
			s.mu.Unlock()
			return false // taken or dropped
		}
		for end := min(len(ls), i+batch*step); i < end; i += step {
			ls[i].FirstSeen = 0
		}
		s.mu.Unlock()
		if i >= len(ls) {
			return true
		}
	}
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
