package limits

import (
	"context"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
)

// since reads the log from pos on, as sums when the store offers them
// and they can be applied exactly: every batch they bring again was
// applied, and none they bring first was. Otherwise it reads the rows
// (Since), whose batches are applied one by one. When the last flush
// found keyed calls waiting for a reservation (u.urgent), the read is
// asked fresh (usagelog.FreshStore): a leader's record of its reads may
// not hold the reservation just written yet. u.syncMu must be held.
func (u *Usage) since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, *usagelog.Sums, usagelog.Pos, error) {
	if s, ok := u.store.(usagelog.SummingStore); ok {
		read := s.SinceSums
		if f, ok := u.store.(usagelog.FreshStore); ok && u.urgent {
			read = f.SinceFresh
		}
		changes, sums, next, err := read(ctx, day, pos)
		if err != nil || sums == nil || u.exact(sums) {
			return changes, sums, next, err
		}
		u.sumsRefused.Add(1)
	}
	changes, next, err := u.store.Since(ctx, day, pos)
	return changes, nil, next, err
}

// exact reports whether sums can be added to the totals as they are.
func (u *Usage) exact(sums *usagelog.Sums) bool {
	for _, b := range sums.Seen {
		if _, ok := u.applied[b]; !ok {
			return false
		}
	}
	for _, b := range sums.New {
		if _, ok := u.applied[b]; ok {
			return false
		}
	}
	return true
}

// addSums adds sums to t and returns the batches added.
func (u *Usage) addSums(t *dayTotals, sums *usagelog.Sums, now time.Time) []analytics.UsageBatch {
	for s, n := range sums.Totals {
		t.add(subjectHash(s), n)
	}
	for _, b := range sums.New {
		u.edges[b.Edge] = now
	}
	return sums.New
}

// addChanges adds the rows of the batches not applied yet to t, each
// (batch, subject) row once, and returns the batches added.
func (u *Usage) addChanges(t *dayTotals, changes []analytics.UsageChange, now time.Time) []analytics.UsageBatch {
	var added []analytics.UsageBatch
	fresh := map[analytics.UsageBatch]bool{}
	type row struct {
		batch   analytics.UsageBatch
		subject string
	}
	// A batch written again whose first write arrived too comes twice:
	// each of its rows counts once.
	rows := map[row]bool{}
	for _, c := range changes {
		if _, done := u.applied[c.Batch]; done && !fresh[c.Batch] {
			continue
		}
		if !fresh[c.Batch] {
			fresh[c.Batch] = true
			added = append(added, c.Batch)
		}
		r := row{c.Batch, c.Subject}
		if rows[r] {
			continue
		}
		rows[r] = true
		t.add(subjectHash(c.Subject), c.Calls)
		u.edges[c.Batch.Edge] = now
	}
	return added
}

// SumsRefused returns how many answers as sums the edge could not apply
// exactly, and read again as rows.
func (u *Usage) SumsRefused() int64 { return u.sumsRefused.Load() }
