package limits

import (
	"context"
	"time"

	"github.com/edge-stats/edge/edge/ratelimit"
)

// A keyed subject's calls are admitted against reservations, so that no
// admission is forgotten by a kill and no fleet admits a key past its
// day. An edge admits a key's call only against calls it has already
// written to the usage log for that key (a reservation: ordinary calls
// of the key in a batch, which every edge, and the release before, reads
// as used) and read back. A reservation is usable once a read of the log
// brings it back, and then only as far as the key's total right after
// that read leaves room under the day's limit: of a reservation of r
// calls with the total read at T, r − max(0, T − limit). Any read that
// holds a batch holds every batch written before it, so the reservations
// of the fleet's edges, taken in the order of their writes, are each
// usable only within the limit less all those before it: the fleet
// admits at most the day's limit, whatever the edges' views, and a kill
// loses only reserved calls not used yet (counted, never admitted).
//
// The size of a reservation is what the key used on this edge over the
// last interval (or the one before) for the next ahead intervals (about
// 16 s at the default 2 s: what a key goes on with while the log is out
// of reach), at least minReservation
// or the calls waiting for it, and at most the key's per-minute limit
// (what it may use on this edge in a minute), a tenth of its day, this
// edge's share of what is left of the day (the remainder over the edges
// that wrote usage in the last minute) and what is left. A Sync writes it when a call waits for one, or ahead of need when
// the key's rate would use what is left of the last one within the next
// interval. A call that finds nothing reserved asks Run for a Sync at
// once (one batch for every key waiting, then a read of the log itself)
// and waits for it, at most reserveWait (not at all while the last Sync
// failed); if none brings a reservation (the log cannot be written or
// read), it is refused for a moment
// (ratelimit.Unsettled: 503, Retry-After: 5). Reserved calls not used by
// the end of the day count as used: about two intervals of a key's rate
// an edge at most.
type reservations struct {
	keyed   bool
	limit   uint64 // the day's limit, as the key's last call gave it
	minute  uint64 // and its per-minute limit: the most one reservation holds
	avail   uint64 // reserved and confirmed, not used yet: admits calls
	held    uint64 // reserved (being written or written), not confirmed yet
	waiting int    // calls waiting for a reservation
	// Calls admitted in the window starting at win (Unix nanoseconds)
	// and in the one before, each one of Run's intervals long.
	win       int64
	cur, prev uint64
}

// ahead is how many of Run's intervals of a key's rate a reservation
// holds.
const ahead = 8

// minReservation is the smallest reservation: a key's first calls on an
// edge, one interval's worth for a slow caller.
const minReservation = 4

// idle reports whether r holds nothing that would be lost if its entry
// were let go.
func (r *reservations) idle() bool { return r.avail == 0 && r.held == 0 && r.waiting == 0 }

// newDay forgets what r reserved for a day past; the calls waiting stay.
func (r *reservations) newDay() { r.avail, r.held, r.win, r.cur, r.prev = 0, 0, 0, 0, 0 }

// roll moves r's rate windows to now, of width every.
func (r *reservations) roll(now int64, every int64) {
	switch {
	case now-r.win < every:
	case now-r.win < 2*every:
		r.win, r.prev, r.cur = now, r.cur, 0
	default:
		r.win, r.prev, r.cur = now, 0, 0
	}
}

// spent returns the calls of e's subject on e's day, less those this
// edge reserved and has not used yet (confirmed, or on their way): the
// calls its RateLimit-Remaining counts as made. e must be locked.
func (e *entry) spent() uint64 {
	used, unused := e.used(), e.rsv.avail+e.rsv.held
	return used - min(used, unused)
}

// lower cuts what e reserved and has not used to a day's limit lowered
// since its reservations were confirmed (edge key limit): of the calls
// confirmed usable, those the new limit leaves no room for beside the
// day's total, as confirm would have cut them at that limit. They stay
// counted, never admitted. A raised limit changes nothing here (new
// reservations bring its room). e must be locked.
func (e *entry) lower(limit uint64) {
	r := &e.rsv
	if r.limit == 0 || limit >= r.limit || r.avail == 0 {
		return
	}
	used := e.used()
	over := (used - min(used, limit)) - (used - min(used, r.limit))
	r.avail -= min(r.avail, over)
	r.limit = limit
}

// reservation returns the calls of e's subject to reserve now (see
// reservations), 0 when none: one reservation at a time. e must be
// locked.
func (e *entry) reservation(now time.Time, fleet uint64, every time.Duration) uint64 {
	r := &e.rsv
	if r.held > 0 {
		return 0
	}
	r.roll(now.UnixNano(), int64(every))
	rate := max(r.cur, r.prev)
	var want uint64
	switch {
	case r.waiting > 0:
		want = max(ahead*rate, uint64(r.waiting), minReservation)
	case rate > 0 && r.avail < rate:
		want = max(ahead*rate, minReservation)
	default:
		return 0
	}
	want -= min(want, r.avail)
	used := e.used()
	if used >= r.limit {
		return 0
	}
	left := r.limit - used
	if r.minute > 0 {
		want = min(want, r.minute) // no more than the key may use here in a minute
	}
	// Nor more than a tenth of the key's day: what a kill or a stop
	// loses of a small key's day stays small.
	want = min(want, max(r.limit/10, 1))
	return min(want, max(left/fleet, 1), left)
}

// rateWindow is the width of a reservation's rate windows: Run's
// interval, 2 s (EDGE_USAGE_EVERY's default) before Run.
func (u *Usage) rateWindow() time.Duration {
	if every := time.Duration(u.every.Load()); every > 0 {
		return every
	}
	return 2 * time.Second
}

// confirm makes the calls p reserved usable as far as the subject's
// total, read into t with them, leaves room under the day's limit. e
// must be locked.
func (e *entry) confirm(t *dayTotals, p pending) {
	e.rsv.held -= min(e.rsv.held, p.rsv)
	total := e.unsent + e.inflight + e.sent
	if t != nil && t.day == p.day {
		total += t.get(e.hash)
	}
	limit := p.limit
	if e.rsv.limit > 0 {
		limit = min(limit, e.rsv.limit) // lowered since the write
	}
	over := total - min(total, limit)
	e.rsv.avail += p.rsv - min(p.rsv, over)
}

// reserved decides the day of a keyed call of s whose entry e is locked
// (by lock at now), and unlocks it: admitted against its reservation,
// refused for the day when the day's calls are used and none is on its
// way, else (when wait is set) after waiting for a reservation, at most
// reserveWait. It returns the calls left of the day as this edge knows them.
func (u *Usage) reserved(s Subject, e *entry, limit, perMinute uint64, now time.Time, wait bool) (uint64, ratelimit.Outcome) {
	var deadline time.Time
	for {
		e.lower(limit)
		r := &e.rsv
		r.keyed, r.limit, r.minute = true, limit, perMinute
		switch {
		case r.avail > 0:
			r.avail--
			r.roll(now.UnixNano(), int64(u.rateWindow()))
			r.cur++
			// What is reserved and usable is left at least: calls cut
			// from a reservation count in spent, never admitted.
			left := max(limit-min(limit, e.spent()), r.avail)
			e.mu.Unlock()
			return left, ratelimit.Admitted
		case r.held == 0 && e.used() >= limit:
			e.mu.Unlock()
			return 0, ratelimit.DayFull
		}
		left := limit - min(limit, e.spent())
		if deadline.IsZero() {
			deadline = time.Now().Add(u.reserveWait())
		}
		until := time.Until(deadline)
		if !wait || until <= 0 || u.failing.Load() && u.running.Load() {
			e.mu.Unlock()
			return left, ratelimit.Unsettled
		}
		r.waiting++
		// The channel before letting go of e: the Sync that confirms a
		// reservation closes it after.
		room := *u.room.Load()
		e.mu.Unlock()
		synced := u.soon(until, room)
		e.mu.Lock()
		e.rsv.waiting--
		e.mu.Unlock()
		if !synced {
			return left, ratelimit.Unsettled
		}
		if e = u.lock(s, now, true); e == nil {
			return left, ratelimit.Crowded
		}
	}
}

// soon asks Run for a Sync now and waits for one to end, at most wait;
// without Run (a lone Usage, tests), it syncs itself, and reports false
// when that failed (nothing more to wait for).
func (u *Usage) soon(wait time.Duration, room chan struct{}) bool {
	if !u.running.Load() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		return u.Sync(ctx) == nil
	}
	select {
	case u.sooner <- struct{}{}:
	default: // one is asked for already
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-room:
	case <-t.C:
	}
	return true
}

// Reserved returns the keyed calls this edge has written (or is writing) to the usage
// log as reservations and not used yet: confirmed, or on their way. They
// count as used in the fleet's totals; those left when the edge stops,
// or at midnight, are never admitted.
func (u *Usage) Reserved() uint64 {
	var n uint64
	u.each(func(_ Subject, c *entry) {
		c.mu.Lock()
		if c.day == dayOf(u.now()) {
			n += c.rsv.avail + c.rsv.held
		}
		c.mu.Unlock()
	})
	return n
}

// reserveWait is how long a keyed call with nothing reserved waits for
// a reservation to be written and read back: two of Run's intervals, at
// least 2 s (a write and a read of ClickHouse on a loaded server, or a
// follower's fresh read through its leader) and at most 5 s. It is
// spent only when the log is slow or out of reach: a reservation
// usually comes back within a round trip to ClickHouse.
func (u *Usage) reserveWait() time.Duration {
	return min(max(2*time.Duration(u.every.Load()), 2*time.Second), 5*time.Second)
}
