// Package listq answers queries of listings (the filters, sorts and pages
// of /api/extensions and /api/v1/listings) over one replica: a columnar
// copy of what queries filter on, an order per sort, and walks or sorts
// of the matches, so that a page costs far less than a scan. Its sorts
// are one catalogue (Sort) from which every surface that offers them is
// derived or checked.
package listq

import (
	"sync"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/textindex"
)

// Engine answers listing queries over one replica. It is immutable once
// built, and safe for concurrent queries.
type Engine struct {
	replica    *replica.Replica
	ls         []views.Listing // the replica's listings
	storeStart [views.NumStores + 1]int
	ranks      Ranks
	topics     Topics
	orders     sortOrders
	cols       filterCols
	recent     *textindex.Recent // the matches of recent text searches
	// nulNames says a crawled listing's name may hold a NUL byte, which
	// the sort of names orders as its padding: BuildFrom sorts names
	// whole then.
	nulNames bool
	merged   bool // the sort orders were merged (BuildFrom)
}

// Ranks are the figures package figures computes that sorts read, one
// entry per replica listing.
type Ranks struct {
	Store    []int32 // the store rank, views.NoRank when unranked (storerank)
	Climb    []int32 // the 7-day store-rank climb, valid where HasClimb (rankclimb)
	HasClimb []bool
}

// Topics returns the live listings of the tag slug by store, as replica
// indexes (package figures); ok is false when no live listing has it.
type Topics func(slug string) (byStore *[views.NumStores][]int32, ok bool)

// Build builds the engine of r: an order per sort and the filter columns.
// ranks, links and topics are r's (package figures, package links).
func Build(r *replica.Replica, ranks Ranks, links *links.Set, topics Topics) *Engine {
	e := &Engine{replica: r, ls: r.All(), ranks: ranks, topics: topics}
	// Recent searches keep up to 64 bitmaps of every listing's worth (8
	// MiB at 1M listings); a store's search takes a store's share.
	e.recent = textindex.NewRecent(max(8*len(e.ls), 1<<20))
	for _, s := range views.Stores {
		e.storeStart[s], e.storeStart[s+1] = r.StoreRange(s)
	}
	// The filter columns read the listings alone: built beside the sorts.
	var cols sync.WaitGroup
	cols.Go(func() { e.buildFilterCols(links) })
	e.buildSortOrders()
	cols.Wait()
	e.buildHasValue()
	return e
}

// TextCache returns what the engine's memory of recent text searches
// holds, and how often it answered.
func (e *Engine) TextCache() textindex.RecentStats { return e.recent.Stats() }
