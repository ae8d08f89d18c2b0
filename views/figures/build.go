package figures

import (
	"sync"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/feed"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/replica"
)

// Build computes every figure of r. It is pure and deterministic.
func Build(r *replica.Replica, snapshots int64) *Figures { return build(r, snapshots, nil) }

// BuildFrom computes every figure of r as Build does, from prev, the
// figures of the replica r was read from by a delta or a chain of them
// (a fleet's follower): the listing queries' sort orders are prev's with
// the deltas' listings merged in (listq.BuildFrom), the rest is built
// whole. It is Build when prev is nil, when r was not made from prev's
// replica by deltas (replica.AppliedTo), or when the two replicas' data
// days differ (a listing's store rank, which
// a sort order reads, may then change without the listing).
func BuildFrom(prev *Figures, r *replica.Replica, snapshots int64) *Figures {
	if prev == nil {
		return Build(r, snapshots)
	}
	a, ok := r.AppliedTo(prev.replica)
	if !ok || views.DayOf(r.Info().ReadingsMark) != views.DayOf(prev.replica.Info().ReadingsMark) {
		return Build(r, snapshots)
	}
	return build(r, snapshots, &from{engine: prev.listings, applied: a})
}

// from is what BuildFrom builds from: the engine before and how the
// deltas made r from its replica.
type from struct {
	engine  *listq.Engine
	applied replica.Applied
}

func build(r *replica.Replica, snapshots int64, prev *from) *Figures {
	start := time.Now()
	n := r.Len()
	f := &Figures{
		replica:    r,
		storeRank:  make([]int32, n),
		catRank:    make([]int32, n),
		climb:      make([]int32, n),
		hasClimb:   make([]bool, n),
		charts:     map[ChartKey][]int32{},
		positions:  map[int32][]ChartPos{},
		considered: map[ChartKey]int{},
	}
	// The ranks and charts, the aggregates, the links and the change
	// feed read only the replica: they are built at once, on every core.
	// Stores are independent too: each store's ranks and charts are built
	// into its own index range of the shared slices and its own charts,
	// merged after. The listing queries read the ranks, links and topics.
	var took [numPhases]time.Duration
	timed := func(p int, run func()) func() {
		return func() {
			t := time.Now()
			run()
			took[p] = time.Since(t)
		}
	}
	parts := make([]storeCharts, views.NumStores)
	var wg sync.WaitGroup
	var stores sync.WaitGroup
	for _, s := range views.Stores {
		stores.Go(func() {
			lo, hi := r.StoreRange(s)
			byRank := f.rankStore(lo, hi)
			parts[s] = f.chartStore(s, lo, hi, byRank)
		})
	}
	wg.Go(timed(phaseRanks, func() {
		stores.Wait()
		for _, p := range parts {
			for k, idx := range p.charts {
				f.setChart(k, idx)
			}
			for k, n := range p.considered {
				f.considered[k] = n
			}
		}
		f.sortPositions()
	}))
	wg.Go(timed(phaseAggregates, func() { f.aggregate(snapshots) }))
	wg.Go(timed(phaseLinks, func() { f.links = links.Build(r) }))
	wg.Go(timed(phaseFeed, func() { f.feed = feed.Build(r); f.developers = f.developerIndex(); f.former = f.formerDevelopers() }))
	wg.Wait()
	timed(phaseListings, func() {
		ranks := listq.Ranks{Store: f.storeRank, Climb: f.climb, HasClimb: f.hasClimb}
		if prev != nil {
			f.listings = listq.BuildFrom(prev.engine, r, ranks, f.links, f.topicListings, prev.applied)
		} else {
			f.listings = listq.Build(r, ranks, f.links, f.topicListings)
		}
	})()
	for p, name := range phaseNames {
		f.phases = append(f.phases, BuildPhase{Name: name, Took: took[p]})
	}
	f.builtAt, f.buildTime = time.Now().UTC(), time.Since(start)
	return f
}

// BuildPhase is how long one phase of Build took, from its start to its
// end. The first four run at once; the listing queries after them.
type BuildPhase struct {
	Name string
	Took time.Duration
}

// The phases of a build, in phaseNames' order.
const (
	phaseRanks = iota
	phaseAggregates
	phaseLinks
	phaseFeed
	phaseListings
	numPhases
)

var phaseNames = [numPhases]string{"ranks and charts", "aggregates", "links across stores", "change feed and developers", "sort orders and filter columns"}
