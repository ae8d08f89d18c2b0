package pages

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// getWeekPage answers GET /week/{id}: an edition's page, from the same
// edition as /api/v1/week/{id}.
func (s *Pages) getWeekPage(c *fiber.Ctx) (answer.Reply, error) {
	w, err := editions.ParseWeek(c.Params("id"))
	if err != nil {
		return answer.Reply{}, problem.New(http.StatusBadRequest, err.Error()).
			ForReaders(fmt.Sprintf("There is no week %.40q: a week is written as its year and number, such as 2026-W05. The page of weeks lists every edition.", c.Params("id")))
	}
	eds := s.editions.Load()
	if err := weeksNotReady(eds); err != nil {
		return answer.Reply{}, err
	}
	e := eds.Get(w)
	if e == nil {
		return answer.Reply{}, problem.Newf(http.StatusNotFound, "There is no edition of week %s: the editions are listed at /weeks.", w).
			ForReaders(fmt.Sprintf("There is no edition of week %s. The page of weeks lists every edition.", w))
	}
	return s.weekPage(eds, e)
}

// getLatestWeekPage answers GET /week: the newest edition's page, as
// /api/v1/week is the newest edition.
func (s *Pages) getLatestWeekPage(c *fiber.Ctx) (answer.Reply, error) {
	eds := s.editions.Load()
	if err := weeksNotReady(eds); err != nil {
		return answer.Reply{}, err
	}
	return s.weekPage(eds, eds.Latest())
}

// neighbours returns the links to the editions of eds just before and
// just after week (nil where there is none).
func neighbours(eds *editions.Set, week string) (prev, next *render.Link) {
	weeks := eds.Weeks() // newest first
	for i, w := range weeks {
		if w.String() != week {
			continue
		}
		if i+1 < len(weeks) {
			prev = &render.Link{Label: "Week " + weeks[i+1].String(), URL: "/week/" + weeks[i+1].String()}
		}
		if i > 0 {
			next = &render.Link{Label: "Week " + weeks[i-1].String(), URL: "/week/" + weeks[i-1].String()}
		}
	}
	return prev, next
}

// weekPage is the page of edition e of eds.
func (s *Pages) weekPage(eds *editions.Set, e *editions.Edition) (answer.Reply, error) {
	// Each listing is shown with its developer, as the published state
	// names it now (an edition keeps names, not developers).
	cur, err := s.api.Current()
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/week/:id", uint64(eds.Len())).Str("w", e.Week).Int("g", int64(cur.Replica.Info().Generation))
	return s.cached(key, htmlType, func() ([]byte, error) {
		d := render.WeekPage{Week: e.Week, Start: e.Start, End: e.Last, From: e.ChangeFrom, To: e.ChangeTo, JSONURL: "/api/v1/week/" + e.Week,
			ListSize: weekPageListSize, FullSize: editions.Size}
		d.Prev, d.Next = neighbours(eds, e.Week)
		for _, st := range views.Stores {
			se := e.Stores[st.String()]
			if se == nil {
				continue
			}
			ws := render.WeekStore{Store: st.String()}
			fig := func(def, label string, v int64, sign bool) {
				f := render.IntFigure(st.String()+".totals."+def, &v).Labelled(label, "")
				if sign {
					f.Text = render.Signed(v)
				}
				ws.Figures = append(ws.Figures, f)
			}
			t := se.Totals
			fig("live", "Live listings at the week's end", int64(t.Live), false)
			fig("liveChange", "Live listings, change", int64(t.LiveChange), true)
			fig("totalSize", "Total size ("+st.SizeMeasure()+")", t.TotalSize, false)
			fig("totalSizeChange", "Total size, change", t.TotalSizeChange, true)
			fig("newcomers", "Newcomers", int64(t.Newcomers), false)
			for _, l := range []struct {
				name, caption string
				entries       []editions.Entry
				cols          []string
			}{
				{"gainers", "Biggest gainers", se.Gainers, []string{"change", "size"}},
				{"gainersPercent", "Fastest growing", se.GainersPercent, []string{"percent", "size"}},
				{"topClimbers", "Climbers in the store's ranks", se.TopClimbers, []string{"rank", "previousRank"}},
				{"newcomers", "Newcomers", se.Newcomers, []string{"size"}},
				{"departures", "Departures", se.Departures, []string{"size"}},
				{"bestRatedNewcomers", "Best rated newcomers", se.BestRatedNewcomers, []string{"rating", "ratingCount"}},
			} {
				ws.Lists = append(ws.Lists, weekList(st, l.name, l.caption, l.entries, l.cols, cur.Replica))
			}
			d.Stores = append(d.Stores, ws)
		}
		return render.RenderWeek(d)
	})
}

// weekColumns are the columns of an edition's lists, by their entries'
// JSON field.
var weekColumns = map[string]render.Column{
	"change": {Label: "Change", Definition: "growth"}, "percent": {Label: "Change (%)", Definition: "growth"},
	"size": {Label: "Size", Definition: "size"}, "rank": {Label: "Rank", Definition: "storeRank"},
	"previousRank": {Label: "Rank a week before", Definition: "storeRank"}, "rating": {Label: "Rating", Definition: "rating"},
	"ratingCount": {Label: "Ratings", Definition: "ratingCount"},
}

// weekPageListSize is how many entries of each of an edition's lists its
// page shows: five stores of six lists stay a phone's few screens (and a
// fast page: bench/README.md, Pages for people). The JSON has each list
// whole (editions.Size).
const weekPageListSize = 5

// weekList is one list of a store's part of an edition (its first
// weekPageListSize entries), each listing with its developer in r, its figures
// named "<store>.<list>.<field>" for the tests.
func weekList(st views.Store, name, caption string, entries []editions.Entry, cols []string, r interface {
	Lookup(views.Store, string) *views.Listing
}) render.List {
	l := render.List{Caption: caption + ", " + st.String(), Empty: "None this week."}
	for _, c := range cols {
		l.Columns = append(l.Columns, weekColumns[c])
	}
	i64 := func(v *int64) (string, string) {
		if v == nil {
			return "", ""
		}
		return strconv.FormatInt(*v, 10), render.Int(*v)
	}
	for i, e := range entries[:min(len(entries), weekPageListSize)] {
		entry := render.Entry{Position: i + 1, Name: e.Name, URL: "/listings/" + st.String() + "/" + url.PathEscape(e.ID)}
		if entry.Name == "" {
			entry.Name = e.ID
		}
		if l := r.Lookup(st, e.ID); l != nil {
			entry.Developer = l.Developer
		}
		for _, c := range cols {
			f := render.Figure{Definition: st.String() + "." + name + "." + c}
			switch c {
			case "change":
				f.Raw, f.Text = i64(e.Change)
				if e.Change != nil {
					f.Text = render.Signed(*e.Change)
				}
			case "size":
				f.Raw, f.Text = i64(e.Size)
			case "ratingCount":
				f.Raw, f.Text = i64(e.RatingCount)
			case "percent":
				if e.Percent != nil {
					f.Raw, f.Text = strconv.FormatFloat(*e.Percent, 'f', -1, 64), strconv.FormatFloat(*e.Percent, 'f', 2, 64)+"%"
				}
			case "rating":
				if e.Rating != nil {
					f.Raw, f.Text = strconv.FormatFloat(*e.Rating, 'f', -1, 64), render.Stars(*e.Rating)
				}
			case "rank", "previousRank":
				r := e.Rank
				if c == "previousRank" {
					r = e.PreviousRank
				}
				if r != nil {
					f.Raw, f.Text = strconv.Itoa(*r), render.Int(int64(*r))
				}
			}
			entry.Figures = append(entry.Figures, f)
		}
		l.Entries = append(l.Entries, entry)
	}
	return l
}
