package replica

import "weak"

// Applied says how a replica read from a delta (ReadDelta), or merged
// with a refresh's listings (Merge), differs from the replica the delta
// was applied to, its base: what a build of its figures needs to redo
// only what changed (package figures), and its digest to hash again
// (DigestOf).
//
// Every listing of the base not in Dropped is in the new replica
// unchanged, in the same key order, at an index not in Added.
type Applied struct {
	// Dropped holds the base's indexes of the listings the delta removed
	// or replaced, ascending.
	Dropped []int32
	// Added holds the new replica's indexes of the listings the delta
	// added or replaced, ascending.
	Added []int32
}

// applied is an Applied with the base it applies to, held weakly: a
// replica does not keep its predecessor alive.
type applied struct {
	base weak.Pointer[Replica]
	Applied
}

// maxApplied bounds the bases a replica read from deltas says how it was
// made from: the one its delta was applied to and, composed, the ones
// before it in a chain of deltas (as many as a follower takes in one
// ask).
const maxApplied = 16

// AppliedTo returns how r was made from base by a delta, or by a chain
// of deltas from base (of at most maxApplied, each base but the first
// still live when the next delta was read), or by a refresh's Merge, and
// false otherwise (a whole state, a full load from ClickHouse, or a delta
// of another base).
func (r *Replica) AppliedTo(base *Replica) (Applied, bool) {
	if base == nil {
		return Applied{}, false
	}
	for i := range r.applied {
		if r.applied[i].base.Value() == base {
			return r.applied[i].Applied, true
		}
	}
	return Applied{}, false
}

// appliedFrom returns what a replica read from a delta a applied to base
// says of its bases: base, with a, and each base base was made from,
// with the two composed (compose).
func appliedFrom(base *Replica, a Applied) []applied {
	out := []applied{{base: weak.Make(base), Applied: a}}
	for _, b := range base.applied {
		if len(out) == maxApplied {
			break
		}
		if b.base.Value() == nil {
			continue // collected: no build can start from it
		}
		out = append(out, applied{base: b.base, Applied: compose(b.Applied, a)})
	}
	return out
}

// compose returns how two deltas applied one after the other made their
// result from the first's base: first made r1 from b0, second made r2
// from r1. A listing of b0 is dropped when the first dropped it, or the
// second dropped it where the first had kept it; a listing of r2 is added
// when the second added it, or the first added it and the second kept it.
// The kept listings of a delta keep their order, so the k-th listing the
// first did not add is the k-th of b0 it did not drop (and so for the
// second): an index is carried from one replica to the other by its rank
// among the kept ones.
func compose(first, second Applied) Applied {
	return Applied{
		Dropped: mergeSorted(first.Dropped, carry(second.Dropped, first.Added, first.Dropped)),
		Added:   mergeSorted(second.Added, carry(first.Added, second.Dropped, second.Added)),
	}
}

// carry returns the indexes in ascending idx that are not in skip, each
// carried to the replica on the other side of the delta: the k-th index
// not in skip goes to the k-th index not in other (skip and other are the
// delta's sets on idx's side and on the other side, ascending).
func carry(idx, skip, other []int32) []int32 {
	out := make([]int32, 0, len(idx))
	s, o := 0, 0
	for _, i := range idx {
		for s < len(skip) && skip[s] < i {
			s++
		}
		if s < len(skip) && skip[s] == i {
			continue
		}
		k := i - int32(s) // i's rank among the kept on its side
		at := k + int32(o)
		for o < len(other) && other[o] <= at {
			o++
			at = k + int32(o)
		}
		out = append(out, at)
	}
	return out
}

// mergeSorted returns the union of two disjoint ascending lists, in
// ascending order.
func mergeSorted(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
