package limits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/edge-stats/edge/analytics"
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
	store      Store
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

	// maxActive bounds the entries (callers of the last minute, or with
	// calls not yet in the totals); maxSubjects bounds the day's totals.
	maxActive, maxSubjects int

	carryMu sync.Mutex
	carry   []analytics.UsageDelta // counts of past days still to write

	// fleet is the number of edges seen writing usage in the last
	// FleetWindow, this one included: while the totals are stale, each
	// caller's remainder of the day is shared among them.
	fleet atomic.Int64
	// sumsRefused counts the answers as sums that could not be applied
	// exactly (SummingStore), read again as rows.
	sumsRefused atomic.Int64

	syncMu  sync.Mutex // one Sync or Flush at a time; guards the fields below
	seq     uint64
	pending map[analytics.UsageBatch][]pending // own batches written, not yet read back
	applied map[analytics.UsageBatch]time.Time // batches added to the totals, and when
	retry   *failedBatch                       // a batch whose write failed, its outcome unknown
	edges   map[string]time.Time               // edges seen writing usage, and when
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

// FleetWindow is how recently an edge must have written usage to count
// as one of the fleet's edges that share a caller's day while the totals
// are stale.
const FleetWindow = time.Hour

// dayTotals are the fleet's counts of one day: the day read whole, plus
// every batch read since. Syncs add to it; calls read it.
type dayTotals struct {
	day    int64 // days since 1970-01-01
	shards [64]totalsShard
	// floor holds, once subjects have been evicted to bound the totals,
	// the largest count evicted into each slot (by subject hash): a
	// subject not in the shards counts at least its slot's floor, which
	// is at least its own count, so an eviction never admits a call past
	// a day.
	floor atomic.Pointer[[floorSlots]atomic.Uint32]
	gen   atomic.Uint64 // bumped after each Sync's additions
	read  atomic.Int64  // unix nanoseconds of the last successful read
	pos   Pos           // where the next read starts (Usage.syncMu)
}

type totalsShard struct {
	mu sync.RWMutex
	m  map[uint64]uint64 // subject hash → calls
}

func newDayTotals(day int64, totals map[string]uint64) *dayTotals {
	t := &dayTotals{day: day}
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]uint64, len(totals)/len(t.shards))
	}
	for s, n := range totals {
		h := subjectHash(s)
		t.shards[h%64].m[h] += n
	}
	return t
}

// floorSlots is the size of a dayTotals' floor: 4 MiB, made only when
// the totals pass their bound.
const floorSlots = 1 << 20

func (t *dayTotals) get(h uint64) uint64 {
	sh := &t.shards[h%64]
	sh.mu.RLock()
	n, ok := sh.m[h]
	sh.mu.RUnlock()
	if !ok {
		if f := t.floor.Load(); f != nil {
			return uint64(f[h%floorSlots].Load())
		}
	}
	return n
}

func (t *dayTotals) add(h, n uint64) {
	sh := &t.shards[h%64]
	sh.mu.Lock()
	old, ok := sh.m[h]
	if !ok {
		if f := t.floor.Load(); f != nil {
			old = uint64(f[h%floorSlots].Load()) // an evicted subject resumes from its floor
		}
	}
	sh.m[h] = old + n
	sh.mu.Unlock()
}

// bound evicts the subjects with the fewest calls until at most 7/8 of
// max remain, each into the floor. Only Sync calls it.
func (t *dayTotals) bound(max int) (evicted int) {
	if max <= 0 || t.Len() <= max {
		return 0
	}
	f := t.floor.Load()
	if f == nil {
		f = new([floorSlots]atomic.Uint32)
		t.floor.Store(f)
	}
	target := max / 8 * 7
	for fewest := uint64(1); t.Len() > target; fewest *= 2 {
		for i := range t.shards {
			sh := &t.shards[i]
			sh.mu.Lock()
			for h, n := range sh.m {
				if n > fewest {
					continue
				}
				slot := &f[h%floorSlots]
				if c := uint32(min(n, 1<<32-1)); c > slot.Load() {
					slot.Store(c)
				}
				delete(sh.m, h)
				evicted++
			}
			sh.mu.Unlock()
		}
	}
	return evicted
}

// Len returns the number of subjects with calls in the totals.
func (t *dayTotals) Len() int {
	n := 0
	for i := range t.shards {
		t.shards[i].mu.RLock()
		n += len(t.shards[i].m)
		t.shards[i].mu.RUnlock()
	}
	return n
}

// subjectHash is a subject's key in the totals: a 64-bit hash of its
// stored form (two of a million subjects collide with odds of 1 in 30
// million; they would then share one count, refusing early).
func subjectHash(s string) uint64 { return xxhash.Sum64String(s) }

// minuteWidth is the width of one part of a minute window.
const minuteWidth = int64(time.Minute) / parts

// entry holds a subject's calls of the last minute and what this edge
// counted for it on one day that the published totals do not hold yet.
type entry struct {
	mu       sync.Mutex
	hash     uint64 // subjectHash of the subject
	day      int64
	unsent   uint64 // not written yet
	inflight uint64 // being written by Sync
	sent     uint64 // written, not yet read back into the totals
	dead     bool   // removed from the map: look it up again
	// seen and seenGen are the totals base was read from, for day seenDay:
	// a call reads the fleet's total only when the totals change.
	seen    *dayTotals
	seenGen uint64
	seenDay int64
	base    uint64
	minute  ring // calls of the last minute, admitted or refused for the day
}

// NewUsage returns a Usage that syncs with store. Until its first successful
// Sync the day's counts are unknown and the Limiter refuses every call
// (UsageUnknown). Whenever the last Sync is older than staleAfter, the
// Limiter goes on from the last totals read and this edge's own counts,
// admitting each caller at most its share of what was left of its day
// (Usage.dayLimit). now may be nil (time.Now).
func NewUsage(store Store, staleAfter time.Duration, now func() time.Time) *Usage {
	if now == nil {
		now = time.Now
	}
	var name [8]byte
	_, _ = rand.Read(name[:])
	u := &Usage{store: store, now: now, staleAfter: staleAfter, name: hex.EncodeToString(name[:]),
		maxActive: DefaultMaxActive, maxSubjects: DefaultMaxSubjects,
		pending: map[analytics.UsageBatch][]pending{}, applied: map[analytics.UsageBatch]time.Time{},
		edges: map[string]time.Time{}}
	u.fleet.Store(1)
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
	// Read under e's lock: a Sync bumps the totals' generation after it
	// adds a batch and before it takes that batch's calls out of e, so e
	// never pairs totals without the batch with a sent count already
	// taken out.
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
	return e
}

type pending struct {
	c     *entry
	day   int64
	calls uint64
}

// appliedFor is how long a batch added to the totals is remembered, so
// that reading it again (the reads overlap) does not add it twice.
const appliedFor = 3 * logOverlap

// Sync writes the calls counted since the last Sync as one batch, then
// reads what the fleet added since the last read and adds it to the day's
// totals (the whole day when the edge starts or a day begins).
func (u *Usage) Sync(ctx context.Context) error {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	// Whatever it achieves, a Sync may let entries go: the callers
	// waiting at the bound, and the next new one, try an eviction again
	// (one scan a Sync).
	defer func() {
		u.full.Store(false)
		room := make(chan struct{})
		close(*u.room.Swap(&room))
	}()
	if err := u.flush(ctx); err != nil {
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
			settle(ps)
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
			settle(ps)
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

// countFleet forgets the edges not seen for FleetWindow and counts the
// others, this one included. u.syncMu must be held.
func (u *Usage) countFleet(now time.Time) {
	n := int64(1)
	for e, at := range u.edges {
		switch {
		case now.Sub(at) > FleetWindow:
			delete(u.edges, e)
		case e != u.name:
			n++
		}
	}
	u.fleet.Store(n)
}

// settle takes the calls of a batch read back out of its entries' sent
// counts.
func settle(ps []pending) {
	for _, p := range ps {
		p.c.mu.Lock()
		if p.c.day == p.day {
			p.c.sent -= min(p.c.sent, p.calls)
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
		if c.unsent == 0 && c.inflight == 0 && c.sent == 0 && c.minute.total == 0 {
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

// Bounds of a Usage's memory (see bench/README.md#usage-sync).
const (
	// DefaultMaxActive is the most callers held with their minute's
	// window: about 512 bytes each, 128 MiB in all.
	DefaultMaxActive = 1 << 18
	// DefaultMaxSubjects is the most callers of the day held in the
	// totals: about 31 bytes each (40 while a map grows), 320 MiB in all.
	DefaultMaxSubjects = 8 << 20
)

// makeRoom makes room for a new entry when the entries are at their
// bound, and reports whether there is room. One new caller in an eighth
// of the bound pays for a scan of the entries (evict brings them down to
// 7/8). When a scan cannot get under the bound (every entry holds calls
// the fleet's totals lack), the entries are full until the next Sync: a
// new caller then costs a look at a flag, and, when wait is set, waits
// for that Sync (at most roomWait) and tries once more; still none, it
// is refused (Crowded). It never spins: the caller that found no room
// in an outage waits, then gets its answer.
func (u *Usage) makeRoom(wait bool) bool {
	if u.tryRoom() {
		return true
	}
	if !wait {
		return false
	}
	// Load the channel before looking at the flag: a Sync clears the
	// flag, then closes the channel it replaces.
	room := *u.room.Load()
	if u.full.Load() {
		t := time.NewTimer(u.roomWait())
		select {
		case <-room:
		case <-t.C:
		}
		t.Stop()
	}
	return u.tryRoom()
}

// roomWait is how long a new caller at the bound waits for a Sync: two
// of Run's intervals (a second before Run), within 100 ms and 5 s.
func (u *Usage) roomWait() time.Duration {
	every := time.Duration(u.every.Load())
	if every <= 0 {
		return time.Second
	}
	return min(max(2*every, 100*time.Millisecond), 5*time.Second)
}

// tryRoom is one attempt of makeRoom, without waiting.
func (u *Usage) tryRoom() bool {
	if u.full.Load() {
		return false
	}
	u.evictMu.Lock()
	defer u.evictMu.Unlock()
	if u.active.Load() < int64(u.maxActive) {
		return true // another caller made room
	}
	if u.full.Load() {
		return false
	}
	u.evict()
	if u.active.Load() < int64(u.maxActive) {
		return true
	}
	u.full.Store(true)
	return false
}

// evict brings the entries down to 7/8 of their bound: first those with
// no call in the last minute and none the totals lack (what a Sync
// forgets), then those with no call the totals lack. An entry whose day
// calls are not all in the fleet's totals is never evicted, so an
// eviction cannot admit a call past a day; an evicted caller's minute
// window restarts. u.evictMu must be held.
func (u *Usage) evict() {
	target := int64(u.maxActive / 8 * 7)
	part := u.now().UnixNano() / minuteWidth
	for pass := 0; pass < 2 && u.active.Load() > target; pass++ {
		u.entries.Range(func(k, v any) bool {
			c := v.(*entry)
			if c.mu.TryLock() { // a busy entry is in use: leave it
				c.minute.advance(part)
				if c.unsent == 0 && c.inflight == 0 && c.sent == 0 && (pass == 1 || c.minute.total == 0) {
					u.drop(k.(Subject), c)
				}
				c.mu.Unlock()
			}
			return u.active.Load() > target
		})
	}
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
	if u.retry != nil {
		if err := u.resolve(ctx); err != nil {
			return err
		}
	}
	var batch []analytics.UsageDelta
	var taken []pending
	u.each(func(s Subject, c *entry) {
		c.mu.Lock()
		if c.unsent > 0 {
			batch = append(batch, analytics.UsageDelta{Day: dayTime(c.day), Subject: s.String(), Calls: c.unsent})
			taken = append(taken, pending{c, c.day, c.unsent})
			c.inflight += c.unsent
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
		settle(taken)
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

// Run syncs u every interval until ctx ends, each Sync within timeout;
// it logs the first failure of a run of them, and the recovery.
func (u *Usage) Run(ctx context.Context, interval, timeout time.Duration, log *slog.Logger) {
	u.every.Store(int64(interval))
	every.Run(ctx, interval, log, "usage", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return u.Sync(ctx)
	})
}
