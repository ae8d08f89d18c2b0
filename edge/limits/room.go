package limits

import (
	"time"
)

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
				if c.unsent == 0 && c.inflight == 0 && c.sent == 0 && c.rsv.held == 0 && c.rsv.waiting == 0 &&
					(pass == 1 || c.minute.total == 0 && c.rsv.avail == 0) {
					u.drop(k.(Subject), c)
				}
				c.mu.Unlock()
			}
			return u.active.Load() > target
		})
	}
}
