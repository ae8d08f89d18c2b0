package answer

import (
	"weak"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/replay"
	"github.com/edge-stats/edge/edge/transport"
)

// ReplaySource returns the source of a's body in content coding variant
// for a record of the replay path (package replay), chosen while a's best
// variants were made (best) or not. It holds a weakly: a record keeps no
// answer alive that the cache let go.
func (a *Answer) ReplaySource(variant int, best bool) replay.Source {
	return &replaySource{a: weak.Make(a), enc: coding.Coding(variant), best: best}
}

// replaySource is an answer's body in one coding, as a record sees it.
type replaySource struct {
	a    weak.Pointer[Answer]
	enc  coding.Coding
	best bool
}

// Payload returns the body to send, unless the answer is gone or was
// given its best variants since (its coding may then be chosen
// otherwise, and its variant's bytes are others).
func (s *replaySource) Payload() ([]byte, *transport.File, bool) {
	a := s.a.Value()
	if a == nil || a.best.Load() != s.best {
		return nil, nil, false
	}
	if s.enc == coding.Identity {
		return a.Body, a.file, true
	}
	v := a.vars[s.enc].Load()
	if v == nil {
		return nil, nil, false
	}
	return v.body, v.file, true
}

// Hit counts a hit of the cache that holds the answer.
func (s *replaySource) Hit() {
	if a := s.a.Value(); a != nil && a.home != nil {
		a.home.cache.hits.Inc()
	}
}
