package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/cron/every"
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

// Usage counts each subject's calls: those of the last minute, on this
// edge, and those of the UTC day, across the fleet. Day calls are counted
// in memory at once and flushed to the store by Sync as a batch; Sync
// then reads the batches the fleet added since its last read (its own
// included) and adds them to the day's totals. A subject's count is the
// fleet's total as of the last Sync plus what this edge counted since.
//
// One Sync costs what changed since the last one — the batches written in
// a few seconds — whatever the number of callers the day has had; the day
// is read whole only when an edge starts or a day begins. The totals of
// every subject of the day are held in memory, by a 64-bit hash of the
// subject (bench/README.md#usage-sync: about 40 bytes a caller).
//
// Both counts of a subject sit under one lock, so an admitted call takes
// one lock and one lookup (see bench/README.md#the-cached-hot-path). It is
// safe for concurrent use.
type Usage struct {
	store      usagelog.Store
	now        func() time.Time
	staleAfter time.Duration
	name       string // this edge's name in the store's batches

	totals  atomic.Pointer[dayTotals]
	entries sync.Map     // Subject → *entry
	active  atomic.Int64 // entries held
	evictMu sync.Mutex   // one eviction of entries at a time
	// full is set when an eviction could not bring the entries under
	// their bound (every entry held calls not yet in the fleet's totals):
	// until the next Sync, which may let some go, a new caller waits for
	// it (room) instead of scanning every entry again.
	full atomic.Bool
	// room is closed, and replaced, by each Sync: new callers waiting at
	// the bound wake and try again.
	room atomic.Pointer[chan struct{}]
	// every is how often Sync runs (Run's interval; 0 before Run).
	every atomic.Int64
	// sooner asks Run for a Sync now: a keyed call waits for a
	// reservation (reserve.go); running says Run is there to take it.
	sooner  chan struct{}
	running atomic.Bool
	// failing is set while the last Sync failed (the log out of reach):
	// a keyed call with nothing reserved is refused at once rather than
	// wait for a reservation that cannot come (reserve.go).
	failing atomic.Bool

	// maxActive bounds the entries (callers of the last minute, or with
	// calls not yet in the totals); maxSubjects bounds the day's totals.
	maxActive, maxSubjects int

	carryMu sync.Mutex
	carry   []analytics.UsageDelta // counts of past days still to write

	// fleet is the number of edges seen writing usage in the last
	// FleetWindow, this one included: while the totals are stale, each
	// caller's remainder of the day is shared among them.
	fleet atomic.Int64
	// activeEdges is the number of edges seen writing usage in the last
	// activeWindow, this one included: a key's reservation is at most its
	// share of what is left of the day.
	activeEdges atomic.Int64
	// sumsRefused counts the answers as sums that could not be applied
	// exactly (SummingStore), read again as rows.
	sumsRefused atomic.Int64

	syncMu  sync.Mutex // one Sync or Flush at a time; guards the fields below
	seq     uint64
	pending map[analytics.UsageBatch][]pending // own batches written, not yet read back
	applied map[analytics.UsageBatch]time.Time // batches added to the totals, and when
	retry   *failedBatch                       // a batch whose write failed, its outcome unknown
	edges   map[string]time.Time               // edges seen writing usage, and when
	// urgent is set by a flush that found keyed calls waiting for a
	// reservation: the read that follows is asked fresh
	// (usagelog.FreshStore), not answered from a leader's last read.
	urgent bool
}

// failedBatch is a batch whose write failed. The insert may have landed
// all the same (a connection cut after the server took it), so its calls
// stay counted as in flight, and the next sync asks the store whether it
// holds the batch before writing it again under the same name: no call
// is lost, and none is counted twice.
type failedBatch struct {
	id     analytics.UsageBatch
	deltas []analytics.UsageDelta
	taken  []pending
}

// NewUsage returns a Usage that syncs with store. Until its first successful
// Sync the day's counts are unknown and the Limiter refuses every call
// (UsageUnknown). Whenever the last Sync is older than staleAfter, the
// Limiter goes on from the last totals read and this edge's own counts,
// admitting each caller at most its share of what was left of its day
// (Usage.dayLimit). now may be nil (time.Now).
func NewUsage(store usagelog.Store, staleAfter time.Duration, now func() time.Time) *Usage {
	if now == nil {
		now = time.Now
	}
	var name [8]byte
	_, _ = rand.Read(name[:])
	u := &Usage{store: store, now: now, staleAfter: staleAfter, name: hex.EncodeToString(name[:]),
		maxActive: DefaultMaxActive, maxSubjects: DefaultMaxSubjects,
		pending: map[analytics.UsageBatch][]pending{}, applied: map[analytics.UsageBatch]time.Time{},
		edges: map[string]time.Time{}, sooner: make(chan struct{}, 1)}
	u.fleet.Store(1)
	u.activeEdges.Store(1)
	room := make(chan struct{})
	u.room.Store(&room)
	return u
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
	return t != nil && now.UnixNano()-t.read.Load() <= int64(u.staleAfter)
}

// loaded reports whether the day's totals were ever read.
func (u *Usage) loaded() bool { return u.totals.Load() != nil }

// Fleet returns the number of edges seen writing usage in the last
// FleetWindow, this one included.
func (u *Usage) Fleet() int { return int(u.fleet.Load()) }

// dayLimit returns the day's limit that applies to e's subject at now:
// limit while the fleet's totals are fresh. While they are stale (the
// store out of reach), it is the fleet's count as last read plus this
// edge's share of what remained of the day, the remainder divided by the
// edges of the fleet: if every edge is cut off alike, the fleet admits no
// more than the day's limit. e must be locked, by lock at now.
func (u *Usage) dayLimit(e *entry, limit uint64, now time.Time) uint64 {
	if u.fresh(now) {
		return limit
	}
	base := min(e.base, limit)
	return base + (limit-base)/uint64(max(u.fleet.Load(), 1))
}

// Stale reports whether the fleet's totals are older, at now, than the
// staleness bound (but were read once).
func (u *Usage) Stale(now time.Time) bool { return u.loaded() && !u.fresh(now) }

// ReadAt returns when the fleet's totals were last read; zero before the
// first read.
func (u *Usage) ReadAt() time.Time {
	if t := u.totals.Load(); t != nil {
		return time.Unix(0, t.read.Load())
	}
	return time.Time{}
}

// Active returns the number of subjects held with their minute's window.
func (u *Usage) Active() int { return int(u.active.Load()) }

// Subjects returns the number of subjects with calls today in the totals
// this edge holds.
func (u *Usage) Subjects() int {
	if t := u.totals.Load(); t != nil {
		return t.Len()
	}
	return 0
}

// entryOf returns s's entry, locked, moved to today; nil when s has none
// and none can be made (the entries are at their bound and none can be
// let go: see makeRoom, which waits for a Sync when wait is set).
func (u *Usage) entryOf(s Subject, today int64, wait bool) *entry {
	for {
		v, ok := u.entries.Load(s)
		if !ok {
			if u.active.Load() >= int64(u.maxActive) && !u.makeRoom(wait) {
				return nil
			}
			var loaded bool
			v, loaded = u.entries.LoadOrStore(s, &entry{day: today, hash: subjectHash(s.String())})
			if !loaded {
				u.active.Add(1)
			}
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
			// What is in flight belongs to the old day: the write of it
			// settles only entries still on that day.
			c.day, c.unsent, c.inflight, c.sent = today, 0, 0, 0
			c.rsv.newDay()
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
// taken from the totals; nil when s has no entry and none can be made
// (after waiting for a Sync to let some go, when wait is set).
func (u *Usage) lock(s Subject, now time.Time, wait bool) *entry {
	today := dayOf(now)
	e := u.entryOf(s, today, wait)
	if e == nil {
		return nil
	}
	u.rebase(e, today)
	return e
}

// rebase takes e's fleet total (base) from the totals when they changed
// since e last read them. Read under e's lock: a Sync bumps the totals'
// generation after it adds a batch and before it takes that batch's
// calls out of e, so e never pairs totals without the batch with a sent
// count already taken out. e must be locked.
func (u *Usage) rebase(e *entry, today int64) {
	t := u.totals.Load()
	var gen uint64
	if t != nil {
		gen = t.gen.Load()
	}
	if e.seen != t || e.seenGen != gen || e.seenDay != today {
		e.seen, e.seenGen, e.seenDay, e.base = t, gen, today, 0
		if t != nil && t.day == today {
			e.base = t.get(e.hash)
		}
	}
}

type pending struct {
	c     *entry
	day   int64
	calls uint64 // the batch's calls of c's subject, reserved ones included
	rsv   uint64 // of which reserved (reserve.go)
	limit uint64 // the subject's day limit when they were reserved
}

// appliedFor is how long a batch added to the totals is remembered, so
// that reading it again (the reads overlap) does not add it twice.
const appliedFor = 3 * usagelog.Overlap

// Run syncs u every interval until ctx ends, each Sync within timeout;
// it logs the first failure of a run of them, and the recovery.
func (u *Usage) Run(ctx context.Context, interval, timeout time.Duration, log *slog.Logger) {
	u.every.Store(int64(interval))
	u.running.Store(true)
	defer u.running.Store(false)
	every.RunOrSooner(ctx, interval, u.sooner, log, "usage", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return u.Sync(ctx)
	})
}
