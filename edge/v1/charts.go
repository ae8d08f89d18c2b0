package v1

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/page"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// chartEntry is one listing in a chart answer. The charts of a window
// (trending, rising, climbers) give the figure each entry was ranked by,
// between the chart's from and to; the others leave those fields out.
type chartEntry struct {
	Position int              `json:"position"`
	From     *time.Time       `json:"from,omitempty"`
	To       *time.Time       `json:"to,omitempty"`
	Change   *int64           `json:"change,omitempty"`  // trending, rising: the size change from from to to
	Percent  *float64         `json:"percent,omitempty"` // trending, rising: of the size at from, two decimals
	Climb    *int             `json:"climb,omitempty"`   // climbers: the store-rank climb from from to to
	Listing  document.Listing `json:"listing"`
}

// chartAnswer is the answer of /api/v1/charts/{store}.
type chartAnswer struct {
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
	Entries    []chartEntry `json:"entries"`
}

// chartNote says what a chart's entries rank by, over which instants, and
// why it has fewer than ChartSize entries when it does: n entries of
// considered listings looked at, in where (a store, or a store's
// category).
func chartNote(chart, where string, n, considered int) string {
	floor := fmt.Sprintf("of size %s or more (%s ratings on %s)", page.Int(views.RisingMinSize(views.Chrome)), page.Int(views.RisingMinSize(views.Apple)), views.Apple)
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

// getChart answers GET /api/v1/charts/{store}?chart=&category=. The chart
// defaults to top; an unknown chart name is a 400 listing the names; a
// category the store does not have is a 404.
func (s *API) getChart(c *fiber.Ctx) (answer.Reply, error) {
	store, chart, category, f, gen, err := s.chartParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/charts/:store", gen).Int("s", int64(store)).Str("chart", chart).Str("c", category)
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any { return chartDoc(f, store, chart, category) })
}

// chartParams reads a chart's store, name (top by default; another name
// is a 400 listing the names) and category (a category the store does not
// have is a 404), with the published figures.
func (s *API) chartParams(c *fiber.Ctx) (store views.Store, chart, category string, f *figures.Figures, gen uint64, err error) {
	if store, err = storeParam(c); err != nil {
		return
	}
	chart = c.Query("chart", figures.ChartTop)
	if !slices.Contains(figures.Charts, chart) {
		err = problem.Newf(http.StatusBadRequest, "chart: %q is not a chart; use one of %s.", chart, strings.Join(figures.Charts, ", ")).
			ForReaders(fmt.Sprintf("There is no chart %.40q. A store's page links to each of its charts.", chart))
		return
	}
	if f, gen, err = s.figures("Charts are"); err != nil {
		return
	}
	if v := c.Query("category"); v != "" {
		category, err = categoryArg(f, &store, v)
	}
	return
}

// chartDoc is the chart answer of store's chart (of category, "" for the
// whole store), as the API and the chart's page give it.
func chartDoc(f *figures.Figures, store views.Store, chart, category string) chartAnswer {
	k := figures.ChartKey{Store: store, Chart: chart, Category: category}
	a := chartAnswer{Store: store.String(), Chart: chart, Entries: []chartEntry{}, DataNow: f.Replica().Info().ReadingsMark.UTC(),
		Considered: f.Considered(k)}
	if category != "" {
		a.Category = &category
	}
	if from, to, ok := f.Window(chart); ok {
		a.From, a.To = document.UnixPtr(from), document.UnixPtr(to)
	}
	for i, l := range f.Chart(k) {
		e := chartEntry{Position: i + 1, Listing: document.NewListing(l, f)}
		if r, ok := f.RankedBy(chart, l); ok {
			e.From, e.To = a.From, a.To
			if chart == figures.ChartClimbers {
				e.Climb = &r.Climb
			} else {
				e.Change, e.Percent = &r.Change, document.Percent2(r.Percent)
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

// tagCount is a topic with its live listings per store.
type tagCount struct {
	Slug     string         `json:"slug"`
	Listings map[string]int `json:"listings"`
}

// getTags answers GET /api/v1/tags.
func (s *API) getTags(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	return s.figuresAnswer(c, f, answer.NewKey(buf[:0], "/api/v1/tags", gen), func(f *figures.Figures) any {
		out := []tagCount{}
		for _, t := range f.Topics() {
			tc := tagCount{Slug: t.Slug, Listings: map[string]int{}}
			for _, st := range views.Stores {
				tc.Listings[st.String()] = t.Count(st)
			}
			out = append(out, tc)
		}
		return fiber.Map{"tags": out}
	})
}

// getTag answers GET /api/v1/tags/{slug}/{store}: the topic's live listings
// in the store, largest first (at most 200).
func (s *API) getTag(c *fiber.Ctx) (answer.Reply, error) {
	store, err := storeParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	slug, err := tagArg(f, c.Params("slug"))
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/tags/:slug/:store", gen).Str("tag", slug).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any {
		ls, _ := f.TopicListings(slug, store)
		docs := []document.Listing{}
		for _, l := range ls[:min(len(ls), 200)] {
			docs = append(docs, document.NewListing(l, f))
		}
		return fiber.Map{"tag": slug, "store": store.String(), "total": len(ls), "listings": docs}
	})
}
