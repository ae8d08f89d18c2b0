package exchange

import (
	"fmt"
)

// place is where the state a follower took last stands in the fleet's
// order: the epoch of the leader that sent it (its election node's
// sequence number and one: larger for each later leader) and the
// generation that leader gave it (larger for each of its states).
type place struct {
	epoch int64
	gen   uint64
}

// before reports whether a state at (epoch, gen) comes before h in the
// fleet's order, so that taking it would go back: from an earlier leader,
// or from the same leader and an earlier generation. An epoch that is not
// known (0) is not ordered.
func (h place) before(epoch int64, gen uint64) bool {
	switch {
	case epoch == 0 || h.epoch == 0:
		return false
	case epoch != h.epoch:
		return epoch < h.epoch
	}
	return gen < h.gen
}

// inOrder returns an error when the state of generation gen that the
// leader at addr sends would take this follower back (Config.LeaderEpoch
// names that leader's epoch): a state older than the one served, which
// only an edge of the fleet that is not the elected one, or a replay, can
// send. It counts the refusal.
func (f *Follower) inOrder(addr string, gen uint64) (int64, error) {
	epoch := f.epochOf(addr)
	f.mu.Lock()
	h := f.held
	f.mu.Unlock()
	if h.before(epoch, gen) {
		f.cfg.Metrics.refuse("older")
		return epoch, fmt.Errorf("fleet: the state from %s (leader epoch %d, generation %d) is older than the one served (epoch %d, generation %d): refused", addr, epoch, gen, h.epoch, h.gen)
	}
	return epoch, nil
}

// took records the place of a state taken.
func (f *Follower) took(epoch int64, gen uint64) {
	if epoch == 0 {
		return
	}
	f.mu.Lock()
	f.held = place{epoch, gen}
	f.mu.Unlock()
}

// epochOf returns the epoch of the leader at addr, 0 when unknown.
func (f *Follower) epochOf(addr string) int64 {
	if f.cfg.LeaderEpoch == nil {
		return 0
	}
	return f.cfg.LeaderEpoch(addr)
}
