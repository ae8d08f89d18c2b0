package replica

import "weak"

// Applied says how a replica read from a delta (ReadDelta) differs from
// the replica the delta was applied to, its base: what a build of its
// figures needs to redo only what changed (package figures).
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

// AppliedTo returns how r was made from base by a delta, and false when
// r was not read from a delta applied to base (a whole state, a load
// from ClickHouse, or a delta of another base).
func (r *Replica) AppliedTo(base *Replica) (Applied, bool) {
	if r.applied == nil || base == nil || r.applied.base.Value() != base {
		return Applied{}, false
	}
	return r.applied.Applied, true
}
