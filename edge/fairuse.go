package edge

import (
	"net/netip"
	"sync"
	"time"
)

// FairUse limits each address to a rate of requests with a burst (a token
// bucket). Idle addresses are forgotten, so memory follows the active
// callers. It is safe for concurrent use.
type FairUse struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[netip.Addr]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewFairUse returns a limiter of rate requests a second with the given
// burst; rate 0 turns it off.
func NewFairUse(rate float64, burst int) *FairUse {
	return &FairUse{rate: rate, burst: float64(max(burst, 1)), now: time.Now, buckets: map[netip.Addr]*bucket{}}
}

// Allow takes a token for a, or says how long until one is free.
func (f *FairUse) Allow(a netip.Addr) (bool, time.Duration) {
	if f == nil || f.rate <= 0 {
		return true, 0
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.swept) > time.Minute {
		f.sweep(now)
	}
	b := f.buckets[a]
	if b == nil {
		b = &bucket{tokens: f.burst, at: now}
		f.buckets[a] = b
	}
	b.tokens = min(f.burst, b.tokens+now.Sub(b.at).Seconds()*f.rate)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / f.rate * float64(time.Second))
	return false, wait
}

// sweep forgets buckets that have refilled completely.
func (f *FairUse) sweep(now time.Time) {
	full := time.Duration(f.burst / f.rate * float64(time.Second))
	for a, b := range f.buckets {
		if now.Sub(b.at) > full {
			delete(f.buckets, a)
		}
	}
	f.swept = now
}
