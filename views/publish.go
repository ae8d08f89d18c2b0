package views

import (
	"sync"
	"sync/atomic"
)

// Published holds the current value of an immutable state (State,
// Editions). The zero value holds none. Readers call Load without locking;
// a builder calls Publish with a complete new value.
type Published[T any] struct {
	p       atomic.Pointer[T]
	seq     atomic.Uint64 // publishes so far
	mu      sync.Mutex
	changed chan struct{} // closed at the next Publish; nil until asked for
}

// Load returns the current value, or nil before the first publish.
func (p *Published[T]) Load() *T { return p.p.Load() }

// Seq returns the number of publishes so far. Read before Load, it
// tells whether what was loaded is still current: Publish stores the
// value before it counts it.
func (p *Published[T]) Seq() uint64 { return p.seq.Load() }

// Publish makes v the current value.
func (p *Published[T]) Publish(v *T) {
	p.p.Store(v)
	p.seq.Add(1)
	p.mu.Lock()
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
	p.mu.Unlock()
}

// Changed returns a channel that is closed at the next Publish: take it
// before loading the value, and a publish between the two is not missed.
func (p *Published[T]) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}
