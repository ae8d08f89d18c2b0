package limits

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
)

// Sync writes the calls counted since the last Sync as one batch, then
// reads what the fleet added since the last read and adds it to the day's
// totals (the whole day when the edge starts or a day begins).
func (u *Usage) Sync(ctx context.Context) (err error) {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	defer func() { u.failing.Store(err != nil) }()
	// Whatever it achieves, a Sync may let entries go: the callers
	// waiting at the bound, and the next new one, try an eviction again
	// (one scan a Sync).
	defer func() {
		u.full.Store(false)
		room := make(chan struct{})
		close(*u.room.Swap(&room))
	}()
	if err := u.flush(ctx, true); err != nil {
		return err
	}
	now := u.now()
	today := dayOf(now)
	t := u.totals.Load()
	if t == nil || t.day != today {
		read, err := u.store.Day(ctx, dayTime(today))
		if err != nil {
			return fmt.Errorf("read usage: %w", err)
		}
		nt := newDayTotals(today, read.Totals)
		nt.bound(u.maxSubjects)
		nt.pos = read.Pos
		nt.read.Store(now.UnixNano())
		clear(u.applied)
		for _, b := range read.Included {
			u.applied[b] = now
		}
		u.totals.Store(nt)
		for _, e := range read.Edges {
			u.edges[e] = now
		}
		u.countFleet(now)
		// Every batch this edge wrote is in a day read after it.
		for b, ps := range u.pending {
			settle(nt, ps)
			delete(u.pending, b)
		}
		u.forget(now)
		return nil
	}
	changes, sums, pos, err := u.since(ctx, dayTime(today), t.pos)
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	var added []analytics.UsageBatch
	if sums != nil {
		added = u.addSums(t, sums, now)
	} else {
		added = u.addChanges(t, changes, now)
	}
	u.countFleet(now)
	for _, b := range added {
		u.applied[b] = now
	}
	// Bump first, then take the added batches out of the entries: in
	// between a call sees them twice, which can only refuse, never admit
	// too many.
	t.bound(u.maxSubjects)
	t.pos = pos
	t.gen.Add(1)
	t.read.Store(now.UnixNano())
	for _, b := range added {
		if ps, ok := u.pending[b]; ok {
			settle(t, ps)
			delete(u.pending, b)
		}
	}
	for b, at := range u.applied {
		if now.Sub(at) > appliedFor {
			delete(u.applied, b)
		}
	}
	u.forget(now)
	return nil
}

// countFleet forgets the edges not seen for usagelog.FleetWindow and counts the
// others, this one included. u.syncMu must be held.
func (u *Usage) countFleet(now time.Time) {
	n, active := int64(1), int64(1)
	for e, at := range u.edges {
		switch {
		case now.Sub(at) > usagelog.FleetWindow:
			delete(u.edges, e)
		case e != u.name:
			n++
			if now.Sub(at) <= activeWindow {
				active++
			}
		}
	}
	u.fleet.Store(n)
	u.activeEdges.Store(active)
}

// activeWindow is how recently an edge must have written usage to share
// a key's reservations (reserve.go): an edge stopped or restarted
// under another name stops counting within a minute, not the hour of
// FleetWindow (which bounds what the stale share of an outage admits).
const activeWindow = time.Minute

// settle takes the calls of a batch read back into t out of its entries'
// sent counts, and confirms the reservations it held (reserve.go).
func settle(t *dayTotals, ps []pending) {
	for _, p := range ps {
		p.c.mu.Lock()
		if p.c.day == p.day {
			p.c.sent -= min(p.c.sent, p.calls)
			if p.rsv > 0 {
				p.c.confirm(t, p)
			}
		}
		p.c.mu.Unlock()
	}
}

// forget drops the entries that hold nothing at now: no call of the last
// minute, and no call of the day the published totals do not hold.
func (u *Usage) forget(now time.Time) {
	part := now.UnixNano() / minuteWidth
	u.each(func(s Subject, c *entry) {
		c.mu.Lock()
		c.minute.advance(part)
		if c.unsent == 0 && c.inflight == 0 && c.sent == 0 && c.minute.total == 0 && c.rsv.idle() {
			u.drop(s, c)
		}
		c.mu.Unlock()
	})
}

// drop removes c, locked, from the entries.
func (u *Usage) drop(s Subject, c *entry) {
	c.dead = true
	if u.entries.CompareAndDelete(s, c) {
		u.active.Add(-1)
	}
}

// Flush writes the calls counted since the last write. A graceful stop
// calls it after the last request, so no counted call is lost; it
// reserves no more keyed calls (reserve.go).
func (u *Usage) Flush(ctx context.Context) error {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	return u.flush(ctx, false)
}

func (u *Usage) each(f func(Subject, *entry)) {
	u.entries.Range(func(k, v any) bool {
		f(k.(Subject), v.(*entry))
		return true
	})
}

// flush writes the calls counted since the last write, and, when
// reserve is set, the keyed calls to reserve (reserve.go).
func (u *Usage) flush(ctx context.Context, reserve bool) error {
	if u.retry != nil {
		if err := u.resolve(ctx); err != nil {
			return err
		}
	}
	var batch []analytics.UsageDelta
	var taken []pending
	now := u.now()
	today, fleet := dayOf(now), uint64(max(u.activeEdges.Load(), 1))
	u.urgent = false
	u.each(func(s Subject, c *entry) {
		c.mu.Lock()
		var rsv uint64
		if reserve && c.rsv.keyed && c.day == today {
			// The totals may have moved since c's last call (the Sync
			// before this one confirmed a reservation, and the calls
			// waiting for more have not looked again yet): a stale base
			// would reserve again what that reservation took.
			u.rebase(c, today)
			rsv = c.reservation(now, fleet, u.rateWindow())
			u.urgent = u.urgent || c.rsv.waiting > 0
		}
		if calls := c.unsent + rsv; calls > 0 {
			batch = append(batch, analytics.UsageDelta{Day: dayTime(c.day), Subject: s.String(), Calls: calls})
			taken = append(taken, pending{c: c, day: c.day, calls: calls, rsv: rsv, limit: c.rsv.limit})
			c.inflight += calls
			c.rsv.held += rsv
			c.unsent = 0
		}
		c.mu.Unlock()
	})
	u.carryMu.Lock()
	batch = append(batch, u.carry...)
	u.carry = nil
	u.carryMu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	u.seq++
	return u.write(ctx, analytics.UsageBatch{Edge: u.name, Seq: u.seq}, batch, taken, false)
}

// write writes a batch (again: after a write whose outcome was unknown).
// When the write fails its outcome is unknown: the batch is kept, its
// calls in flight, for resolve.
func (u *Usage) write(ctx context.Context, id analytics.UsageBatch, batch []analytics.UsageDelta, taken []pending, again bool) error {
	if err := u.store.Add(ctx, id, batch, again); err != nil {
		u.retry = &failedBatch{id: id, deltas: batch, taken: taken}
		return fmt.Errorf("write usage: %w", err)
	}
	u.written(id, taken)
	return nil
}

// resolve settles the batch whose write failed: written if the store
// holds it, else written again under its own name.
func (u *Usage) resolve(ctx context.Context) error {
	r := u.retry
	has, err := u.store.Has(ctx, r.id, batchDays(r.deltas))
	if err != nil {
		return fmt.Errorf("check usage batch %s/%d: %w", r.id.Edge, r.id.Seq, err)
	}
	u.retry = nil
	if has {
		u.written(r.id, r.taken)
		return nil
	}
	return u.write(ctx, r.id, r.deltas, r.taken, true)
}

// written moves the calls of a batch the store holds from in flight to
// sent, until a read brings the batch back into the totals (at once if a
// read brought it already).
func (u *Usage) written(id analytics.UsageBatch, taken []pending) {
	for _, p := range taken {
		p.c.mu.Lock()
		if p.c.day == p.day {
			p.c.inflight -= min(p.c.inflight, p.calls)
			p.c.sent += p.calls
		}
		p.c.mu.Unlock()
	}
	u.edges[u.name] = u.now()
	if _, read := u.applied[id]; read {
		settle(u.totals.Load(), taken)
		return
	}
	u.pending[id] = taken
}

// batchDays returns the days of deltas, each once.
func batchDays(deltas []analytics.UsageDelta) []time.Time {
	var days []time.Time
	for _, d := range deltas {
		if !slices.ContainsFunc(days, d.Day.Equal) {
			days = append(days, d.Day)
		}
	}
	return days
}
