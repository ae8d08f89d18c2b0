package limits

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// Subject is who a day's calls are counted for: a key (by its public id)
// or, without a key, an address.
type Subject struct {
	Key  string
	Addr netip.Addr
}

// String returns the subject as stored in the usage table.
func (s Subject) String() string {
	if s.Key != "" {
		return "key:" + s.Key
	}
	return "addr:" + s.Addr.String()
}

func parseSubject(s string) (Subject, bool) {
	if k, ok := strings.CutPrefix(s, "key:"); ok && k != "" {
		return Subject{Key: k}, true
	}
	if a, ok := strings.CutPrefix(s, "addr:"); ok {
		addr, err := netip.ParseAddr(a)
		return Subject{Addr: addr}, err == nil
	}
	return Subject{}, false
}

// Usage counts each subject's calls of the UTC day. Calls are counted in
// memory at once and flushed to ClickHouse as deltas by Sync, which then
// reads the whole fleet's totals back; a subject's count is the fleet's
// total as of the last Sync plus what this edge counted since. It is safe
// for concurrent use.
type Usage struct {
	db         *analytics.Lazy
	now        func() time.Time
	staleAfter time.Duration

	totals   atomic.Pointer[totals]
	counters sync.Map // Subject → *counter

	carryMu sync.Mutex
	carry   []analytics.UsageDelta // counts of past days still to write

	syncMu sync.Mutex // one Sync or Flush at a time
}

// totals are the fleet's counts of one day, as read by a Sync.
type totals struct {
	day  int64 // days since 1970-01-01
	m    map[Subject]uint64
	read time.Time
}

// counter holds what this edge counted for a subject on one day that the
// published totals do not hold yet.
type counter struct {
	mu       sync.Mutex
	day      int64
	unsent   uint64 // not written yet
	inflight uint64 // being written by Sync
	sent     uint64 // written, not yet in the published totals
	dead     bool   // removed from its shard: look it up again
}

// NewUsage returns a Usage that syncs with db. Until its first successful
// Sync, and whenever the last one is older than staleAfter, the day's
// counts cannot be trusted and the Limiter refuses every call
// (UsageUnknown). now may be nil (time.Now).
func NewUsage(db *analytics.Lazy, staleAfter time.Duration, now func() time.Time) *Usage {
	if now == nil {
		now = time.Now
	}
	return &Usage{db: db, now: now, staleAfter: staleAfter}
}

func dayOf(t time.Time) int64 { return t.UTC().Unix() / 86400 }

func dayTime(d int64) time.Time { return time.Unix(d*86400, 0).UTC() }

// UntilMidnight returns the time from t to the next 00:00 UTC.
func UntilMidnight(t time.Time) time.Duration {
	return dayTime(dayOf(t) + 1).Sub(t)
}

// fresh reports whether the fleet's totals were read recently enough, at
// now, to check a day's limit.
func (u *Usage) fresh(now time.Time) bool {
	t := u.totals.Load()
	return t != nil && now.Sub(t.read) <= u.staleAfter
}

// ReadAt returns when the fleet's totals were last read; zero before the
// first read.
func (u *Usage) ReadAt() time.Time {
	if t := u.totals.Load(); t != nil {
		return t.read
	}
	return time.Time{}
}

// counterOf returns s's counter, locked, moved to today.
func (u *Usage) counterOf(s Subject, today int64) *counter {
	for {
		v, ok := u.counters.Load(s)
		if !ok {
			v, _ = u.counters.LoadOrStore(s, &counter{day: today})
		}
		c := v.(*counter)
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			continue
		}
		if c.day != today {
			// A new day: what is left of the old one is written later.
			if c.unsent > 0 {
				u.carryMu.Lock()
				u.carry = append(u.carry, analytics.UsageDelta{Day: dayTime(c.day), Subject: s.String(), Calls: c.unsent})
				u.carryMu.Unlock()
			}
			c.day, c.unsent, c.sent = today, 0, 0
			// inflight stays: the Sync writing it settles it.
		}
		return c
	}
}

// take counts a call for s if s has made fewer than limit calls on the day
// of now and reports the day's count including it. A call refused is not
// counted.
func (u *Usage) take(s Subject, limit uint64, now time.Time) (count uint64, ok bool) {
	c, used := u.used(s, now)
	defer c.mu.Unlock()
	if used >= limit {
		return used, false
	}
	c.unsent++
	return used + 1, true
}

// count returns s's calls on the day of now.
func (u *Usage) count(s Subject, now time.Time) uint64 {
	c, used := u.used(s, now)
	c.mu.Unlock()
	return used
}

// used returns s's counter for the day of now, locked, and s's calls that
// day: the fleet's total read at the last sync plus what this edge has
// counted since.
func (u *Usage) used(s Subject, now time.Time) (*counter, uint64) {
	today := dayOf(now)
	var base uint64
	if t := u.totals.Load(); t != nil && t.day == today {
		base = t.m[s]
	}
	c := u.counterOf(s, today)
	return c, base + c.unsent + c.inflight + c.sent
}

type pending struct {
	c     *counter
	s     string
	day   int64
	calls uint64
}

// Sync writes the calls counted since the last Sync, then reads the
// fleet's totals of the day and publishes them.
func (u *Usage) Sync(ctx context.Context) error {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	if err := u.flush(ctx); err != nil {
		return err
	}
	conn, err := u.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	// Everything sent so far is written: the read below holds it.
	sentBefore := map[*counter]uint64{}
	u.each(func(_ Subject, c *counter) {
		c.mu.Lock()
		if c.sent > 0 {
			sentBefore[c] = c.sent
		}
		c.mu.Unlock()
	})
	now := u.now()
	today := dayOf(now)
	raw, err := analytics.LoadUsage(ctx, conn, dayTime(today))
	if err != nil {
		return err
	}
	m := make(map[Subject]uint64, len(raw))
	for k, n := range raw {
		if s, ok := parseSubject(k); ok {
			m[s] = n
		}
	}
	// Publish first, then take the counted calls out of the counters: in
	// between a call sees them twice, which can only refuse, never admit
	// too many.
	u.totals.Store(&totals{day: today, m: m, read: now})
	u.each(func(s Subject, c *counter) {
		c.mu.Lock()
		if c.day == today {
			c.sent -= min(c.sent, sentBefore[c])
		} else {
			c.sent = 0
		}
		if c.unsent == 0 && c.inflight == 0 && c.sent == 0 {
			c.dead = true
			u.counters.CompareAndDelete(s, c)
		}
		c.mu.Unlock()
	})
	return nil
}

// Flush writes the calls counted since the last write. A graceful stop
// calls it after the last request, so no counted call is lost.
func (u *Usage) Flush(ctx context.Context) error {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	return u.flush(ctx)
}

func (u *Usage) each(f func(Subject, *counter)) {
	u.counters.Range(func(k, v any) bool {
		f(k.(Subject), v.(*counter))
		return true
	})
}

func (u *Usage) flush(ctx context.Context) error {
	var batch []analytics.UsageDelta
	var taken []pending
	u.each(func(s Subject, c *counter) {
		c.mu.Lock()
		if c.unsent > 0 {
			batch = append(batch, analytics.UsageDelta{Day: dayTime(c.day), Subject: s.String(), Calls: c.unsent})
			taken = append(taken, pending{c, s.String(), c.day, c.unsent})
			c.inflight += c.unsent
			c.unsent = 0
		}
		c.mu.Unlock()
	})
	u.carryMu.Lock()
	carry := u.carry
	u.carry = nil
	u.carryMu.Unlock()
	batch = append(batch, carry...)
	if len(batch) == 0 {
		return nil
	}
	err := u.write(ctx, batch)
	for _, p := range taken {
		p.c.mu.Lock()
		p.c.inflight -= p.calls
		switch {
		case err == nil && p.c.day == p.day:
			p.c.sent += p.calls
		case err == nil:
			// written for a day that has passed: nothing to keep
		case p.c.day == p.day:
			p.c.unsent += p.calls
		default:
			u.carryMu.Lock()
			u.carry = append(u.carry, analytics.UsageDelta{Day: dayTime(p.day), Subject: p.s, Calls: p.calls})
			u.carryMu.Unlock()
		}
		p.c.mu.Unlock()
	}
	if err != nil {
		u.carryMu.Lock()
		u.carry = append(u.carry, carry...)
		u.carryMu.Unlock()
		return err
	}
	return nil
}

func (u *Usage) write(ctx context.Context, batch []analytics.UsageDelta) error {
	conn, err := u.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("write usage: %w", err)
	}
	return analytics.WriteUsage(ctx, conn, batch)
}
