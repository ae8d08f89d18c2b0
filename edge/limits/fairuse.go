package limits

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// FairUse limits each address to a rate of requests with a burst: a
// token bucket per address (golang.org/x/time/rate). Addresses whose
// bucket has refilled are forgotten once a minute, so memory follows the
// active callers, and at most MaxBuckets are held. It is safe for
// concurrent use.
type FairUse struct {
	rate  rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	buckets map[netip.Addr]*rate.Limiter
	swept   time.Time
	sweeps  int // sweeps so far (tests)
}

// NewFairUse returns a limiter of perSecond requests a second per
// address with the given burst; perSecond 0 turns it off.
func NewFairUse(perSecond float64, burst int) *FairUse {
	return &FairUse{rate: rate.Limit(perSecond), burst: max(burst, 1), max: MaxBuckets, buckets: map[netip.Addr]*rate.Limiter{}}
}

// MaxBuckets is the most addresses a FairUse holds: about 120 bytes each,
// 30 MiB in all. When a new address comes to a full FairUse, the refilled
// buckets go first, then the fullest of 16 sampled: that address starts
// again with a full burst, which can admit at most the tokens it lacked,
// and only when more addresses than the bound are being limited at once.
const MaxBuckets = 1 << 18

// On reports whether f limits anything (rate above 0).
func (f *FairUse) On() bool { return f != nil && f.rate > 0 }

// Allow takes a token for a at now, or says how long until one is free.
func (f *FairUse) Allow(a netip.Addr, now time.Time) (bool, time.Duration) {
	if !f.On() {
		return true, 0
	}
	f.mu.Lock()
	if now.Sub(f.swept) > time.Minute {
		f.sweep(now)
	}
	b := f.buckets[a]
	if b == nil {
		if len(f.buckets) >= f.max {
			f.makeRoom(now)
		}
		b = rate.NewLimiter(f.rate, f.burst)
		f.buckets[a] = b
	}
	f.mu.Unlock()
	r := b.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now) // refused: the token is not taken
		return false, wait
	}
	return true, 0
}

// makeRoom frees a place: the refilled buckets, or else the fullest
// sampled one. The buckets are swept at most once a second: a flood of
// new addresses at the bound costs each a sample of 16, not a sweep of
// every bucket under the lock. f.mu is held.
func (f *FairUse) makeRoom(now time.Time) {
	if now.Sub(f.swept) >= time.Second {
		f.sweep(now)
		if len(f.buckets) < f.max {
			return
		}
	}
	var victim netip.Addr
	most, seen := -1.0, 0
	for a, b := range f.buckets { // a map's order is random: a sample
		if t := b.TokensAt(now); t > most {
			victim, most = a, t
		}
		if seen++; seen == 16 {
			break
		}
	}
	delete(f.buckets, victim)
}

// sweep forgets buckets that have refilled completely. f.mu is held.
func (f *FairUse) sweep(now time.Time) {
	for a, b := range f.buckets {
		if b.TokensAt(now) >= float64(f.burst) {
			delete(f.buckets, a)
		}
	}
	f.swept = now
	f.sweeps++
}

// Len returns the number of addresses with a bucket.
func (f *FairUse) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.buckets)
}
