package limits

import "golang.org/x/time/rate"

// Pool bounds the searches running at once and started a second, across
// every caller. It is safe for concurrent use.
type Pool struct {
	slots chan struct{}
	rate  *rate.Limiter
}

// NewPool returns a pool of size concurrent searches starting at most
// perSecond a second (bursts of size); perSecond 0 bounds only
// concurrency.
func NewPool(size int, perSecond float64) *Pool {
	p := &Pool{slots: make(chan struct{}, max(size, 1))}
	if perSecond > 0 {
		p.rate = rate.NewLimiter(rate.Limit(perSecond), max(size, 1))
	}
	return p
}

// TryAcquire takes a slot without waiting. It returns a release func to
// call when the search ends, or false when the pool is full.
func (p *Pool) TryAcquire() (release func(), ok bool) {
	select {
	case p.slots <- struct{}{}:
	default:
		return nil, false
	}
	if p.rate != nil && !p.rate.Allow() {
		<-p.slots
		return nil, false
	}
	return func() { <-p.slots }, true
}
