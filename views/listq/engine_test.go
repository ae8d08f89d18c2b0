package listq

import (
	"cmp"
	"slices"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/replica"
)

// build builds r's engine with plain stand-ins for the figures package
// figures computes: the store rank by size, a climb for most listings
// (with ties), and each tag's live listings. The engine's answers are
// tested against brute force over the same figures.
func build(r *replica.Replica) *Engine {
	ranks, topics := standIns(r)
	return Build(r, ranks, links.Build(r), topics)
}

// standIns returns build's stand-ins for r's ranks and topics.
func standIns(r *replica.Replica) (Ranks, Topics) {
	ls := r.All()
	n := len(ls)
	ranks := Ranks{Store: make([]int32, n), Climb: make([]int32, n), HasClimb: make([]bool, n)}
	for _, s := range views.Stores {
		lo, hi := r.StoreRange(s)
		var sized []int
		for j := lo; j < hi; j++ {
			if _, ok := ls[j].Size(); ok && ls[j].Live() {
				sized = append(sized, j)
			}
		}
		slices.SortStableFunc(sized, func(a, b int) int {
			x, _ := ls[a].Size()
			y, _ := ls[b].Size()
			return cmp.Compare(y, x)
		})
		for rank, j := range sized {
			ranks.Store[j] = int32(rank + 1)
		}
	}
	for j := range ls {
		if j%5 != 0 {
			ranks.Climb[j], ranks.HasClimb[j] = int32(j%7)-3, true
		}
	}
	topics := map[string]*[views.NumStores][]int32{}
	for j := range ls {
		if !ls[j].Live() {
			continue
		}
		for _, t := range ls[j].Topics {
			if topics[t] == nil {
				topics[t] = new([views.NumStores][]int32)
			}
			topics[t][ls[j].Store] = append(topics[t][ls[j].Store], int32(j))
		}
	}
	return ranks, func(slug string) (*[views.NumStores][]int32, bool) {
		t, ok := topics[slug]
		return t, ok
	}
}
