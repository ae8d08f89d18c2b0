package limits

import "time"

// A fleet's edges count a caller's calls at once and learn each other's
// only at their syncs, so two edges taking one caller's calls between two
// syncs each admit against a count that lacks the other's. While the
// fleet's totals are fresh, each edge therefore admits at most its share
// of what was left of the caller's day, as it last read it, of calls the
// totals do not hold yet: the remainder divided by the edges of the fleet
// (Usage.Fleet), and at least one. If every edge read the same totals,
// the fleet so admits no more than the day's limit, plus at most one call
// an edge when fewer calls are left than there are edges; what remains
// past it comes of edges whose reads differ (each read lags the other
// edges' last flush by at most a sync): the calls the fleet admitted
// between the two reads, each itself a share of a remainder. A caller
// that reaches its share on one edge waits for the next sync, which
// brings its calls into the totals and so gives a new share; when none
// does within the wait (roomWait), the call is refused for a moment
// (ratelimit.Unsettled: 503, Retry-After: 5). A kill of an edge loses the
// calls it counted since its last flush; the share bounds them too, per
// caller. While the totals are stale the share applies to the caller's
// whole day instead (Usage.dayLimit).

// overShare reports whether e's subject has as many calls on this edge
// not yet in the fleet's totals as its share of what is left of its day
// of limit (see above); never for an edge alone or with stale totals. e
// must be locked.
func (u *Usage) overShare(e *entry, limit uint64, now time.Time) bool {
	n := uint64(max(u.fleet.Load(), 1))
	if n == 1 || !u.fresh(now) {
		return false
	}
	base := min(e.base, limit)
	if base >= limit {
		return false // the day refuses it anyway
	}
	return e.unsent+e.inflight+e.sent >= max((limit-base)/n, 1)
}

// lockShared returns s's entry for the day of now, locked, once this
// edge's calls of s not yet in the fleet's totals are under its share of
// what is left of the day of limit (overShare), waiting for the syncs of
// at most roomWait for it; settled is false when they did not bring it
// under. e is nil (and settled true) when s has no entry and none can be
// made, as for lock.
func (u *Usage) lockShared(s Subject, limit uint64, now time.Time) (e *entry, settled bool) {
	var deadline time.Time
	for {
		// The channel before the count: a Sync that adds the calls after
		// the look closes this channel.
		room := *u.room.Load()
		if e = u.lock(s, now, true); e == nil || !u.overShare(e, limit, now) {
			return e, true
		}
		e.mu.Unlock()
		if deadline.IsZero() {
			deadline = time.Now().Add(u.roomWait())
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, false
		}
		t := time.NewTimer(wait)
		select {
		case <-room:
		case <-t.C:
		}
		t.Stop()
	}
}
