// Package served holds what the edge serves: a replica and, once built,
// its figures, published together.
package served

import (
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
)

// State is everything the edge serves at one moment. It is immutable once
// published. Figures is nil until the first build after a restart: the
// replica is served first, the computed figures follow.
type State struct {
	Replica *replica.Replica
	Figures *figures.Figures // computed from Replica; nil until built
}
