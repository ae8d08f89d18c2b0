package pages

import (
	"net/url"
	"slices"
	"strconv"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
)

// How many of its newest takeovers and changes a store's page lists.
const (
	storeTakeovers = 5
	storeChanges   = 10
)

// newestEvents returns the newest limit events of r's change log that f
// keeps, as the pages show them.
func newestEvents(r *replica.Replica, f changes.Filter, limit int) []render.Event {
	cs, _ := r.Changes().Before(&f, changes.Pos{}, limit)
	out := make([]render.Event, len(cs))
	for i, c := range cs {
		out[i] = pageEvent(document.NewEvent(c, r), r)
	}
	return out
}

// weekTotals are store's totals at the end of each edition of eds,
// oldest first, each step of the total size that stands out from the
// others told (stepOf).
func weekTotals(eds *editions.Set, store views.Store) []render.WeekTotal {
	weeks := eds.Weeks() // newest first
	out := make([]render.WeekTotal, 0, len(weeks))
	var steps []int64
	var ses []*editions.StoreEdition
	for i := len(weeks) - 1; i >= 0; i-- {
		e := eds.Get(weeks[i])
		if se := e.Stores[store.String()]; se != nil {
			out = append(out, render.WeekTotal{Day: e.Last, Week: e.Week, Live: int64(se.Totals.Live), TotalSize: se.Totals.TotalSize})
			ses = append(ses, se)
			if len(out) > 1 {
				steps = append(steps, abs(se.Totals.TotalSizeChange))
			}
		}
	}
	if len(steps) < 4 {
		return out
	}
	slices.Sort(steps)
	usual := steps[len(steps)/2]
	for i := 1; i < len(out); i++ {
		change := ses[i].Totals.TotalSizeChange
		if abs(change) >= stepFactor*usual && abs(change)*100 >= out[i-1].TotalSize {
			out[i].Step = stepOf(store, ses[i], change)
		}
	}
	return out
}

// stepFactor is how many times the median weekly change of a store's
// total size a week's change must be to stand out (and at least 1% of
// the total): the week a listing of a million users arrives, not a week
// of ordinary growth.
const stepFactor = 5

// stepOf says a week's change of store's total size that stands out,
// and names the listing that makes most of it where one does (at least
// 40% of it, the same way): a newcomer by its size, a departure by its
// size the week before, a gainer by its change.
func stepOf(store views.Store, se *editions.StoreEdition, change int64) *render.Step {
	step := &render.Step{Change: render.Signed(change)}
	var best *editions.Entry
	var how string
	var most int64
	consider := func(es []editions.Entry, sign int64, verb string, by func(e *editions.Entry) *int64) {
		for i := range es {
			if v := by(&es[i]); v != nil && sign**v*change > 0 && abs(*v) > abs(most) {
				best, how, most = &es[i], verb+" "+render.Int(abs(*v)), sign**v
			}
		}
	}
	size := func(e *editions.Entry) *int64 { return e.Size }
	consider(se.Newcomers, 1, "new, at", size)
	consider(se.Departures, -1, "gone, from", size)
	consider(se.Gainers, 1, "grew by", func(e *editions.Entry) *int64 { return e.Change })
	if best != nil && abs(most)*10 >= abs(change)*4 {
		step.Name, step.How, step.URL = best.Name, how, "/listings/"+store.String()+"/"+url.PathEscape(best.ID)
		if step.Name == "" {
			step.Name = best.ID
		}
	}
	return step
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// bars is a distribution of the store's statistics (its JSON field
// path) as bars, each as long as its share of the largest group.
func bars(path string, shares []figures.Share) []render.Bar {
	most := 1
	for _, sh := range shares {
		most = max(most, sh.Listings)
	}
	out := make([]render.Bar, len(shares))
	for i, sh := range shares {
		out[i] = render.Bar{Name: sh.Name, Path: path + "." + strconv.Itoa(i) + ".listings", Listings: sh.Listings, Length: sh.Listings * 100 / most}
	}
	return out
}

// storeHandler answers GET /stores/{store}: the store's statistics (a
// codec of the read of /api/v1/stores/{store}/stats), the top of each
// chart, its categories, its weeks and its newest changes. The page's
// key holds how many editions there are, which its weeks list.
func (s *Pages) storeHandler() read.Handler {
	rd := *v1.StatsRead()
	key := rd.Key
	rd.Key = func(k answer.Key, p *v1.StoreParams) answer.Key {
		return key(k, p).Int("e", int64(s.editions.Load().Len()))
	}
	return figuresPage(s, rd, "/stores/:store", s.storeHTML)
}

// storeHTML is the page of a store's statistics doc.
func (s *Pages) storeHTML(doc *v1.Stats) ([]byte, error) {
	store, f, eds := doc.Store, doc.State.Figures, s.editions.Load()
	st := doc.Stats
	d := render.StorePage{Store: store.String(), AsOf: st.AsOf.UTC().Format("2006-01-02 15:04 UTC"), JSONURL: "/api/v1/stores/" + store.String() + "/stats"}
	d.Manifests, d.SizeMeasure = store.ReadsManifests(), st.SizeMeasure
	d.Lake = render.LakeOf(s.cfg.PublicURL, store.String(), "")
	d.Weeks = weekTotals(eds, store)
	d.Ratings, d.Sizes = bars("ratingDistribution", st.RatingDistribution), bars("sizeBuckets", st.SizeBuckets)
	d.Takeovers = newestEvents(doc.State.Replica, changes.Filter{Stores: []views.Store{store}, Kinds: []changes.Kind{changes.Takeover}}, storeTakeovers)
	d.Changes = newestEvents(doc.State.Replica, changes.Filter{Stores: []views.Store{store}}, storeChanges)
	n := func(def, label string, v int64) {
		d.Figures = append(d.Figures, render.IntFigure(def, &v).Labelled(label, ""))
	}
	// A count whose listings a page lists links it.
	link := func(u string) { d.Figures[len(d.Figures)-1].Link = u }
	n("live", "Live listings", int64(st.Live))
	link("/listings?store=" + store.String())
	n("known", "Known listings", int64(st.Known))
	n("delisted", "Delisted", int64(st.Delisted))
	n("pending", "Found, not read yet", int64(st.Pending)) // known = live + delisted + these
	n("newThisWeek", "New in the last 7 days", int64(st.NewThisWeek))
	link("/listings?store=" + store.String() + "&sort=firstseen")
	n("delistedThisWeek", "Delisted in the last 7 days", int64(st.DelistedThisWeek))
	link("/events?store=" + store.String() + "&kind=delisted")
	n("totalSize", "Total size ("+st.SizeMeasure+")", st.TotalSize)
	n("totalSizeChange7d", "Total size, change over 7 days", st.TotalSizeChange7d)
	d.Figures[len(d.Figures)-1].Text = render.Signed(st.TotalSizeChange7d)
	d.Figures = append(d.Figures, render.RatingFigure("averageRating", st.AverageRating).Labelled("Average rating", "no rated listing"))
	n("rated", "Rated listings (the average's)", int64(st.Rated))
	for _, ch := range figures.Charts {
		d.Charts = append(d.Charts, chartList(trimChart(document.NewChart(f, store, ch, ""), storeTop), store, "/charts/"+store.String()+chartQuery(ch, "")))
	}
	for _, cat := range f.Categories(store) {
		d.Categories = append(d.Categories, render.Category{Name: cat.Name, Listings: cat.Listings,
			URL: "/charts/" + store.String() + chartQuery(figures.ChartTop, cat.Name)})
	}
	return render.RenderStore(d)
}
