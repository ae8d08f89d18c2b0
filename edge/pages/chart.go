package pages

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// chartTitles are the charts' names for people.
var chartTitles = map[string]string{figures.ChartTop: "Largest", figures.ChartTrending: "Trending", figures.ChartRising: "Rising",
	figures.ChartNew: "New", figures.ChartTopRated: "Top rated", figures.ChartClimbers: "Climbers"}

// chartHandler answers GET /charts/{store}?chart=&category=: the
// chart's page, a codec of the read of /api/v1/charts/{store}; or its
// files.
func (s *Pages) chartHandler() read.Handler {
	return figuresPage(s, *v1.ChartRead(), "/charts/:store", func(v *v1.Chart) ([]byte, error) {
		return render.RenderChart(chartPageData(v.Figures, v.Doc, v.Store))
	}, v1.ChartFiles()...)
}

// chartQuery is the query of a chart's addresses.
func chartQuery(chart, category string) string {
	q := url.Values{"chart": {chart}}
	if category != "" {
		q.Set("category", category)
	}
	return "?" + q.Encode()
}

// chartPageData is what the page of chart answer a shows.
func chartPageData(f *figures.Figures, a document.Chart, store views.Store) render.ChartPage {
	category := ""
	if a.Category != nil {
		category = *a.Category
	}
	d := render.ChartPage{Store: a.Store, Chart: a.Chart, Title: chartTitles[a.Chart], Category: category, Note: readerNote(a.Note),
		JSONURL: "/api/v1/charts/" + a.Store + chartQuery(a.Chart, category)}
	for _, ch := range figures.Charts {
		d.Charts = append(d.Charts, render.Link{Label: chartTitles[ch], URL: "/charts/" + a.Store + chartQuery(ch, category), Current: ch == a.Chart})
	}
	for _, cat := range f.Categories(store) {
		d.Categories = append(d.Categories, render.Link{Label: cat.Name, Current: cat.Name == category})
	}
	if a.From != nil && a.To != nil {
		what := "Ranked by the size change"
		if a.Chart == figures.ChartClimbers {
			what = "Ranked by the store-rank climb"
		}
		d.Window = what + " from " + a.From.UTC().Format("2006-01-02 15:04") + " to " + a.To.UTC().Format("2006-01-02 15:04 UTC") +
			"; the data's newest reading is " + a.DataNow.UTC().Format("2006-01-02 15:04 UTC") + "."
	}
	d.List = chartList(a, store, "")
	return d
}

// chartList is chart answer a of store as a list of a page, its whole
// chart at all ("" on the chart's own page).
func chartList(a document.Chart, store views.Store, all string) render.List {
	size := render.Column{Label: "Size (" + store.SizeMeasure() + ")", Definition: "size"}
	var cols []render.Column
	switch a.Chart {
	case figures.ChartTop, figures.ChartNew:
		cols = []render.Column{size}
	case figures.ChartTrending:
		cols = []render.Column{{Label: "Change", Definition: "charts"}, {Label: "Change (%)", Definition: "charts"}, size}
	case figures.ChartRising:
		cols = []render.Column{{Label: "Change (%)", Definition: "charts"}, {Label: "Change", Definition: "charts"}, size}
	case figures.ChartTopRated:
		cols = []render.Column{{Label: "Rating", Definition: "rating"}, {Label: "Ratings", Definition: "ratingCount"}}
	case figures.ChartClimbers:
		cols = []render.Column{{Label: "Climb", Definition: "charts"}, {Label: "Rank", Definition: "storeRank"}}
	}
	// An empty chart says why: in its note, below it on its own page
	// (all == ""), else in the list's place.
	empty := readerNote(a.Note)
	if all == "" {
		empty = "No listing is in this chart now: the note below says why."
	}
	l := render.List{Caption: chartTitles[a.Chart] + ", " + a.Store, URL: all, Columns: cols, Empty: empty}
	if all != "" && a.From != nil && a.To != nil {
		// Away from its page, a chart of a window says which: a change
		// over it can differ from the 7 days up to the newest reading.
		what := "Size change"
		if a.Chart == figures.ChartClimbers {
			what = "Rank climb"
		}
		l.Window = what + " from " + a.From.UTC().Format("2 Jan") + " to " + a.To.UTC().Format("2 Jan 2006")
	}
	for _, e := range a.Entries {
		doc := e.Listing
		sz := render.IntFigure("listing.size", doc.Size)
		var figs []render.Figure
		switch a.Chart {
		case figures.ChartTop, figures.ChartNew:
			figs = []render.Figure{sz}
		case figures.ChartTrending:
			figs = []render.Figure{render.ChangeFigure("change", e.Change), render.PercentFigure("percent", e.Percent), sz}
		case figures.ChartRising:
			figs = []render.Figure{render.PercentFigure("percent", e.Percent), render.ChangeFigure("change", e.Change), sz}
		case figures.ChartTopRated:
			figs = []render.Figure{render.RatingFigure("listing.rating", doc.Rating), render.IntFigure("listing.ratingCount", doc.RatingCount)}
		case figures.ChartClimbers:
			cl := render.Figure{Definition: "climb"}
			if e.Climb != nil {
				cl.Raw, cl.Text = strconv.Itoa(*e.Climb), render.Signed(int64(*e.Climb))
			}
			rk := render.Figure{Definition: "listing.storeRank"}
			if doc.StoreRank != nil {
				rk.Raw, rk.Text = strconv.Itoa(*doc.StoreRank), render.Int(int64(*doc.StoreRank))
			}
			figs = []render.Figure{cl, rk}
		}
		name := doc.Name
		if name == "" {
			name = doc.ID
		}
		l.Entries = append(l.Entries, render.Entry{Position: e.Position, Name: name, Developer: doc.Developer,
			URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID), Figures: figs})
	}
	return l
}

// trimChart keeps the first n entries of chart answer a.
func trimChart(a document.Chart, n int) document.Chart {
	a.Entries = a.Entries[:min(n, len(a.Entries))]
	return a
}

// readerWords turns a chart's note, written in the API's field names
// (from, to, dataNow, growth.7d), into a reader's words for its page.
var readerWords = strings.NewReplacer(
	"size change from from to to", "size change between the window's start and its end",
	"store rank at from (7 days before the data's newest reading) minus its rank at to (dataNow)", "store rank 7 days before the newest data minus its rank now",
	"the data's newest reading (dataNow), the same two instants", "the newest data, the same two instants",
	"its size at from", "its size at the window's start",
	"It is not the listing's own growth.7d, which ends at its newest reading.", "It is not the listing's own 7-day growth, which ends at its newest reading.",
)

// readerNote is note in a reader's words.
func readerNote(note string) string { return readerWords.Replace(note) }
