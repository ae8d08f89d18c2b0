package limits

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
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

// Usage counts each subject's calls: those of the last minute, on this
// edge, and those of the UTC day, across the fleet. Day calls are counted
// in memory at once and flushed to ClickHouse as deltas by Sync, which
// then reads the whole fleet's totals back; a subject's count is the
// fleet's total as of the last Sync plus what this edge counted since.
// Both counts of a subject sit under one lock, so an admitted call takes
// one lock and one lookup (see bench/README.md#the-cached-hot-path). It is
// safe for concurrent use.
type Usage struct {
	store      Store
	now        func() time.Time
	staleAfter time.Duration

	totals  atomic.Pointer[totals]
	entries sync.Map // Subject → *entry

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

// minuteWidth is the width of one part of a minute window.
const minuteWidth = int64(time.Minute) / parts

// entry holds a subject's calls of the last minute and what this edge
// counted for it on one day that the published totals do not hold yet.
type entry struct {
	mu       sync.Mutex
	day      int64
	unsent   uint64 // not written yet
	inflight uint64 // being written by Sync
	sent     uint64 // written, not yet in the published totals
	dead     bool   // removed from the map: look it up again
	// seen is the totals base was read from, for day seenDay: a call
	// reads the fleet's total from the map only when the totals change.
	seen    *totals
	seenDay int64
	base    uint64
	minute  ring // calls of the last minute, admitted or refused for the day
}

// NewUsage returns a Usage that syncs with store. Until its first successful
// Sync, and whenever the last one is older than staleAfter, the day's
// counts cannot be trusted and the Limiter refuses every call
// (UsageUnknown). now may be nil (time.Now).
func NewUsage(store Store, staleAfter time.Duration, now func() time.Time) *Usage {
	if now == nil {
		now = time.Now
	}
	return &Usage{store: store, now: now, staleAfter: staleAfter}
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

// entryOf returns s's entry, locked, moved to today.
func (u *Usage) entryOf(s Subject, today int64) *entry {
	for {
		v, ok := u.entries.Load(s)
		if !ok {
			v, _ = u.entries.LoadOrStore(s, &entry{day: today})
		}
		c := v.(*entry)
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

// take counts a call for e if e's subject has made fewer than limit calls
// on the day of e and reports the day's count including it. A call
// refused is not counted. e must be locked.
func (e *entry) take(limit uint64) (count uint64, ok bool) {
	used := e.used()
	if used >= limit {
		return used, false
	}
	e.unsent++
	return used + 1, true
}

// used returns the calls of e's subject on e's day: the fleet's total read
// at the last sync plus what this edge has counted since. e must be
// locked.
func (e *entry) used() uint64 {
	return e.base + e.unsent + e.inflight + e.sent
}

// lock returns s's entry for the day of now, locked, its fleet total
// taken from the published totals.
func (u *Usage) lock(s Subject, now time.Time) *entry {
	today := dayOf(now)
	e := u.entryOf(s, today)
	// Loaded under e's lock: a Sync publishes its totals before it takes
	// what they hold out of e, so e never pairs old totals with a sent
	// count already taken out.
	t := u.totals.Load()
	if e.seen != t || e.seenDay != today {
		e.seen, e.seenDay, e.base = t, today, 0
		if t != nil && t.day == today {
			e.base = t.m[s]
		}
	}
	return e
}

type pending struct {
	c     *entry
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
	// Everything sent so far is written: the read below holds it.
	sentBefore := map[*entry]uint64{}
	u.each(func(_ Subject, c *entry) {
		c.mu.Lock()
		if c.sent > 0 {
			sentBefore[c] = c.sent
		}
		c.mu.Unlock()
	})
	now := u.now()
	today := dayOf(now)
	raw, err := u.store.Day(ctx, dayTime(today))
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	m := make(map[Subject]uint64, len(raw))
	for k, n := range raw {
		if s, ok := parseSubject(k); ok {
			m[s] = n
		}
	}
	// Publish first, then take the counted calls out of the entries: in
	// between a call sees them twice, which can only refuse, never admit
	// too many.
	u.totals.Store(&totals{day: today, m: m, read: now})
	u.each(func(s Subject, c *entry) {
		c.mu.Lock()
		if c.day == today {
			c.sent -= min(c.sent, sentBefore[c])
		} else {
			c.sent = 0
		}
		c.mu.Unlock()
	})
	u.forget(now)
	return nil
}

// forget drops the entries that hold nothing at now: no call of the last
// minute, and no call of the day the published totals do not hold.
func (u *Usage) forget(now time.Time) {
	part := now.UnixNano() / minuteWidth
	u.each(func(s Subject, c *entry) {
		c.mu.Lock()
		c.minute.advance(part)
		if c.unsent == 0 && c.inflight == 0 && c.sent == 0 && c.minute.total == 0 {
			c.dead = true
			u.entries.CompareAndDelete(s, c)
		}
		c.mu.Unlock()
	})
}

// Flush writes the calls counted since the last write. A graceful stop
// calls it after the last request, so no counted call is lost.
func (u *Usage) Flush(ctx context.Context) error {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	return u.flush(ctx)
}

func (u *Usage) each(f func(Subject, *entry)) {
	u.entries.Range(func(k, v any) bool {
		f(k.(Subject), v.(*entry))
		return true
	})
}

func (u *Usage) flush(ctx context.Context) error {
	var batch []analytics.UsageDelta
	var taken []pending
	u.each(func(s Subject, c *entry) {
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
	if err := u.store.Add(ctx, batch); err != nil {
		return fmt.Errorf("write usage: %w", err)
	}
	return nil
}

// Run syncs u every interval until ctx ends, each Sync within timeout;
// it logs the first failure of a run of them, and the recovery.
func (u *Usage) Run(ctx context.Context, every, timeout time.Duration, log *slog.Logger) {
	cron.Every(ctx, every, log, "usage", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return u.Sync(ctx)
	})
}
