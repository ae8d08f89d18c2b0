package listq

import (
	"strconv"

	"github.com/edge-stats/edge/views"
)

// Sort is an order of the listing query engine (Query.Sort). Its
// specs are one table, catalogue: the name each API gives it, whether it
// is a growth sort, whether a floor applies. Every surface (the v1
// parameter and its error text, the legacy mapping, the tool's enum, the
// OpenAPI description's enum, the benches) takes its names from it, so a
// new sort is a constant, a line in catalogue and its key in sortKeyOf
// (or in Engine.sortKey for a figure package figures computes: Ranks).
type Sort int

// The sorts. The legacy API's come first, in the order of its contract;
// those after them are the v1 API's own.
const (
	SortInstalls Sort = iota // the usage figure (legacy "installs")
	SortName
	SortCategory
	SortRating
	SortRatingCount
	SortUpdated
	SortFirstSeen
	SortAccess
	SortGrowth1d
	SortGrowth7d
	SortGrowth30d
	SortGrowth365d
	SortGrowthPct1d
	SortGrowthPct7d
	SortGrowthPct30d
	SortGrowthPct365d
	SortRatingGrowth1d
	SortRatingGrowth7d
	SortRatingGrowthPct1d
	SortRatingGrowthPct7d
	// SortSize is the size: the usage figure, or the rating count on
	// apple (v1's installs).
	SortSize
	// SortCreated is the store's creation date.
	SortCreated
	// SortRankClimb is the 7-day store-rank climb, among listings of at
	// least RisingMinSize.
	SortRankClimb
	// SortStoreRank is the position within the listing's own store (rank
	// 1 of every store first, then every rank 2, ...): the order by size
	// across stores, whose sizes count different things.
	SortStoreRank
	numSorts
)

// SortSpec is what the catalogue says of a sort.
type SortSpec struct {
	Sort Sort
	// Legacy is its name on /api/extensions; "" when not offered there.
	Legacy string
	// V1 is its name on /api/v1/listings and the search_listings tool;
	// "" when not offered there.
	V1 string
	// Growth: a growth sort. On the legacy API a growth sort lists only
	// the listings that have its figure (Query.OnlyWithValue); on v1 every
	// sort lists every listing, those without a value last.
	Growth bool
	// Floor: only listings of at least RisingMinSize have a value (a
	// percent or a climb of a tiny listing is noise).
	Floor bool
	// NeedsStore: on v1, the sort needs a store (ranks are per store).
	NeedsStore bool
	// ByText: the sort orders text (names, categories), A to Z when
	// ascending, and v1 lists it A to Z unless asked otherwise.
	ByText bool

	def sortDef // how it reads a listing, for the legacy keys
}

// catalogue is every sort, in Sort order.
var catalogue = [numSorts]SortSpec{
	{Sort: SortInstalls, Legacy: "installs", def: sortDef{plain: "installs"}},
	{Sort: SortName, Legacy: "name", V1: "name", ByText: true, def: sortDef{plain: "name"}},
	{Sort: SortCategory, Legacy: "category", ByText: true, def: sortDef{plain: "category"}},
	{Sort: SortRating, Legacy: "rating", V1: "rating", def: sortDef{plain: "rating"}},
	{Sort: SortRatingCount, Legacy: "ratingcount", V1: "ratingcount", def: sortDef{plain: "ratingcount"}},
	{Sort: SortUpdated, Legacy: "updated", V1: "updated", def: sortDef{plain: "updated"}},
	{Sort: SortFirstSeen, Legacy: "firstseen", V1: "firstseen", def: sortDef{plain: "firstseen"}},
	{Sort: SortAccess, Legacy: "access", def: sortDef{plain: "access"}},
	{Sort: SortGrowth1d, Legacy: "growth1d", Growth: true, def: sortDef{window: views.Window1d}},
	{Sort: SortGrowth7d, Legacy: "growth7d", V1: "growth7d", Growth: true, def: sortDef{window: views.Window7d}},
	{Sort: SortGrowth30d, Legacy: "growth30d", V1: "growth30d", Growth: true, def: sortDef{window: views.Window30d}},
	{Sort: SortGrowth365d, Legacy: "growth365d", Growth: true, def: sortDef{window: views.Window365d}},
	{Sort: SortGrowthPct1d, Legacy: "growthpct1d", Growth: true, Floor: true, def: sortDef{window: views.Window1d, pct: true}},
	{Sort: SortGrowthPct7d, Legacy: "growthpct7d", V1: "growthpct7d", Growth: true, Floor: true, def: sortDef{window: views.Window7d, pct: true}},
	{Sort: SortGrowthPct30d, Legacy: "growthpct30d", Growth: true, Floor: true, def: sortDef{window: views.Window30d, pct: true}},
	{Sort: SortGrowthPct365d, Legacy: "growthpct365d", Growth: true, Floor: true, def: sortDef{window: views.Window365d, pct: true}},
	{Sort: SortRatingGrowth1d, Legacy: "ratinggrowth1d", Growth: true, def: sortDef{window: views.Window1d, rating: true}},
	{Sort: SortRatingGrowth7d, Legacy: "ratinggrowth7d", V1: "ratinggrowth7d", Growth: true, def: sortDef{window: views.Window7d, rating: true}},
	{Sort: SortRatingGrowthPct1d, Legacy: "ratinggrowthpct1d", Growth: true, Floor: true, def: sortDef{window: views.Window1d, rating: true, pct: true}},
	{Sort: SortRatingGrowthPct7d, Legacy: "ratinggrowthpct7d", Growth: true, Floor: true, def: sortDef{window: views.Window7d, rating: true, pct: true}},
	{Sort: SortSize, V1: "installs"},
	{Sort: SortCreated, V1: "created"},
	{Sort: SortRankClimb, V1: "rankclimb", Floor: true, NeedsStore: true},
	{Sort: SortStoreRank},
}

// String names s: its legacy name, else its v1 name ("size" for v1's
// installs), else "storerank".
func (s Sort) String() string {
	switch {
	case s < 0 || s >= numSorts:
		return "sort(" + strconv.Itoa(int(s)) + ")"
	case s == SortSize:
		return "size"
	case catalogue[s].Legacy != "":
		return catalogue[s].Legacy
	case catalogue[s].V1 != "":
		return catalogue[s].V1
	}
	return "storerank"
}

// Spec returns the catalogue's spec of s.
func (s Sort) Spec() SortSpec { return catalogue[s] }

// Sorts returns every sort's spec, in Sort order.
func Sorts() []SortSpec { return catalogue[:] }

// LegacySort returns the sort /api/extensions names name, and false for
// an unknown name (the legacy contract then sorts by installs).
func LegacySort(name string) (Sort, bool) {
	for _, s := range catalogue {
		if s.Legacy != "" && s.Legacy == name {
			return s.Sort, true
		}
	}
	return SortInstalls, false
}

// V1Sort returns the sort /api/v1 names name, and false for an unknown
// name.
func V1Sort(name string) (Sort, bool) {
	for _, s := range catalogue {
		if s.V1 != "" && s.V1 == name {
			return s.Sort, true
		}
	}
	return 0, false
}

// V1SortNames returns the names /api/v1 offers, in the catalogue's order
// of the v1 table (its parameter's enum, error text and tool enum).
func V1SortNames() []string { return v1SortNames }

// v1SortNames is the v1 API's order of its sorts, as its contract lists
// them; TestSortCatalogue checks that it holds every V1 name once.
var v1SortNames = []string{"installs", "ratingcount", "rating", "growth7d", "growthpct7d", "growth30d",
	"ratinggrowth7d", "updated", "created", "firstseen", "name", "rankclimb"}

// SortNames are the sort keys of /api/extensions, in the order of its
// contract (each sort's Legacy name, in Sort order).
var SortNames = func() []string {
	var out []string
	for _, s := range catalogue {
		if s.Legacy != "" {
			out = append(out, s.Legacy)
		}
	}
	return out
}()

// growthSort reports whether s is a growth sort (SortSpec.Growth).
func growthSort(s Sort) bool { return s >= 0 && s < numSorts && catalogue[s].Growth }

// sortDef says how one legacy sort key reads a listing.
type sortDef struct {
	plain  string // a non-growth key, or ""
	window views.Window
	rating bool // rating-count growth rather than size growth
	pct    bool // the percent rather than the change
}
