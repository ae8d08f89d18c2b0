package document

import (
	"fmt"
	"time"

	"github.com/edge-stats/edge/internal/numfmt"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// ChartEntry is one listing of a chart. The charts of a window
// (trending, rising, climbers) give the figure each entry was ranked by,
// between the chart's from and to; the others leave those fields out.
type ChartEntry struct {
	Position int        `json:"position"`
	From     *time.Time `json:"from,omitempty"`
	To       *time.Time `json:"to,omitempty"`
	Change   *int64     `json:"change,omitempty"`  // trending, rising: the size change from from to to
	Percent  *float64   `json:"percent,omitempty"` // trending, rising: of the size at from, two decimals
	Climb    *int       `json:"climb,omitempty"`   // climbers: the store-rank climb from from to to
	Listing  Listing    `json:"listing"`
}

// Chart is a chart of a store or of one of its categories, as
// /api/v1/charts/{store}, the chart's page, the store's and the home page
// give it.
type Chart struct {
	Store    string     `json:"store"`
	Chart    string     `json:"chart"`
	Category *string    `json:"category"`
	From     *time.Time `json:"from"` // the charts of a window: the instants every entry is ranked between; else null
	To       *time.Time `json:"to"`
	DataNow  time.Time  `json:"dataNow"` // the data's newest reading
	// Considered counts the live listings the chart's rule looked at (with
	// its figure, past its floor); Note says in words what the entries'
	// figures cover, and why the chart is short or empty when it is.
	Considered int          `json:"considered"`
	Note       string       `json:"note"`
	Entries    []ChartEntry `json:"entries"`
}

// chartNote says what a chart's entries rank by, over which instants, and
// why it has fewer than ChartSize entries when it does: n entries of
// considered listings looked at, in where (a store, or a store's
// category).
func chartNote(chart, where string, n, considered int) string {
	floor := fmt.Sprintf("of size %s or more (%s ratings on %s)", numfmt.Int(views.RisingMinSize(views.Chrome)), numfmt.Int(views.RisingMinSize(views.Apple)), views.Apple)
	lag := fmt.Sprintf("the %d days ending %d days before the data's newest reading (dataNow), the same two instants for every entry, so that listings read every third day have readings around both ends. It is not the listing's own growth.7d, which ends at its newest reading.", views.ChartDays, int(views.ChartLag.Hours()/24))
	// pool is the listings the rule looks at; cond what makes one an entry
	// ("" when every one is).
	var what, pool, cond string
	switch chart {
	case figures.ChartTop:
		what, pool = "Live listings by size.", "with a size"
	case figures.ChartTrending:
		what = "Each entry's change is its size change from from to to: " + lag
		pool, cond = "with a size at both ends of the window", "grew"
	case figures.ChartRising:
		what = "Each entry's percent is its size change from from to to as a percent of its size at from, ranked as published (two decimals), then by size: " + lag
		pool, cond = "with a size at both ends of the window and "+floor, "grew by 0.01% or more"
	case figures.ChartNew:
		what, pool = fmt.Sprintf("Listings first seen in the %d days up to the data's newest reading, by size.", figures.NewDays), fmt.Sprintf("first seen in the last %d days", figures.NewDays)
	case figures.ChartTopRated:
		what, pool = "Live listings by rating, then ratings count.", fmt.Sprintf("with %d ratings or more", figures.TopRatedMinRatings)
	case figures.ChartClimbers:
		what = "Each entry's climb is its store rank at from (7 days before the data's newest reading) minus its rank at to (dataNow)."
		pool, cond = "ranked at both instants and "+floor, "climbed"
	}
	listings := func(k int) string {
		if k == 1 {
			return "1 live listing of " + where + " is"
		}
		return fmt.Sprintf("%d live listings of %s are", k, where)
	}
	switch {
	case n >= figures.ChartSize:
		return what
	case considered == 0:
		return what + " It is empty: no live listing of " + where + " is " + pool + "."
	case n == 0:
		return what + " It is empty: " + listings(considered) + " " + pool + ", and none " + cond + "."
	case cond == "":
		return what + fmt.Sprintf(" It has %d entries: %s %s.", n, listings(considered), pool)
	}
	return what + fmt.Sprintf(" It has %d entries: %s %s, and %d of them %s.", n, listings(considered), pool, n, cond)
}

// NewChart returns store's chart (of category, "" for the whole store)
// from the published figures f.
func NewChart(f *figures.Figures, store views.Store, chart, category string) Chart {
	k := figures.ChartKey{Store: store, Chart: chart, Category: category}
	a := Chart{Store: store.String(), Chart: chart, Entries: []ChartEntry{}, DataNow: f.Replica().Info().ReadingsMark.UTC(),
		Considered: f.Considered(k)}
	if category != "" {
		a.Category = &category
	}
	if from, to, ok := f.Window(chart); ok {
		a.From, a.To = UnixPtr(from), UnixPtr(to)
	}
	for i, l := range f.Chart(k) {
		e := ChartEntry{Position: i + 1, Listing: NewListing(l, f)}
		if r, ok := f.RankedBy(chart, l); ok {
			e.From, e.To = a.From, a.To
			if chart == figures.ChartClimbers {
				e.Climb = &r.Climb
			} else {
				e.Change, e.Percent = &r.Change, Percent2(r.Percent)
			}
		}
		a.Entries = append(a.Entries, e)
	}
	where := store.String()
	if category != "" {
		where += " in " + category
	}
	a.Note = chartNote(chart, where, len(a.Entries), a.Considered)
	return a
}
