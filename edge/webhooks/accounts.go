package webhooks

import (
	"hash/maphash"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// TestsPerMinute and TestBurst bound the test deliveries one account may
// ask for (POST /account/webhooks/{id}/test) on one edge: each sends a
// POST to a receiver on demand and may hold a request for the delivery's
// whole timeout. At most one runs at once per account.
const (
	TestsPerMinute = 6
	TestBurst      = 3
)

// accountLocks serializes the creates of one account on this edge, so
// that two of them cannot both count the same endpoints (the count is
// checked again after the write, for the other edges of a fleet: create).
type accountLocks struct{ stripes [64]sync.Mutex }

var lockSeed = maphash.MakeSeed()

func (l *accountLocks) lock(email string) func() {
	m := &l.stripes[maphash.String(lockSeed, email)%uint64(len(l.stripes))]
	m.Lock()
	return m.Unlock
}

// testBudget is each account's allowance of test deliveries.
type testBudget struct {
	mu       sync.Mutex
	accounts map[string]*testAllowance
	swept    time.Time
	// runs is the longest a test delivery may run (the delivery's
	// timeout): while one runs, the next may be asked for once it ends.
	runs time.Duration
}

type testAllowance struct {
	limiter *rate.Limiter
	busy    bool
	used    time.Time
}

// maxAccounts bounds the allowances held: past it those idle for a
// minute (full again) are dropped.
const maxAccounts = 1 << 14

// take reserves a test delivery for email: ok, and a release to call
// when it ends; or how long to wait before asking again.
func (b *testBudget) take(email string, now time.Time) (release func(), wait time.Duration, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.accounts == nil {
		b.accounts = map[string]*testAllowance{}
	}
	if len(b.accounts) >= maxAccounts && now.Sub(b.swept) > time.Second {
		b.swept = now
		for k, a := range b.accounts {
			if !a.busy && now.Sub(a.used) > time.Minute {
				delete(b.accounts, k)
			}
		}
	}
	a := b.accounts[email]
	if a == nil {
		if len(b.accounts) >= maxAccounts {
			return nil, time.Second, false
		}
		a = &testAllowance{limiter: rate.NewLimiter(rate.Every(time.Minute/TestsPerMinute), TestBurst)}
		b.accounts[email] = a
	}
	if a.busy {
		return nil, max(time.Second, a.used.Add(b.runs).Sub(now)), false
	}
	r := a.limiter.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return nil, d, false
	}
	a.busy, a.used = true, now
	return func() {
		b.mu.Lock()
		a.busy = false
		b.mu.Unlock()
	}, 0, true
}
