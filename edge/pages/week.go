package pages

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// weekHandler answers GET /week/{id} and GET /week (the newest
// edition): the v1 edition's read, from the same edition as
// /api/v1/week/{id}, written as the edition's page, public as every
// page is. An edition is a document of several lists: it has no files.
func (s *Pages) weekHandler() read.Handler {
	rd := *s.api.WeekRead()
	rd.Route, rd.CacheControl, rd.Page = "/week/:id", pageCacheControl, answer.NoPage
	return read.Serve(s.api.Env(), &rd, read.Codec[v1.Week]{Name: "html", Type: fiber.MIMETextHTML, Encode: s.weekHTML})
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

// weekHTML writes w as its edition's page: each listing is shown with
// its developer, as the published state names it now (an edition keeps
// names, not developers).
func (s *Pages) weekHTML(_ *fiber.Ctx, w *v1.Week) (*answer.Answer, error) {
	e := w.Edition
	d := render.WeekPage{Week: e.Week, Start: e.Start, End: e.Last, From: e.ChangeFrom, To: e.ChangeTo, JSONURL: "/api/v1/week/" + e.Week,
		FullSize: editions.Size}
	d.Prev, d.Next = neighbours(w.Set, e.Week)
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
		minSize := render.Int(views.RisingMinSize(st))
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
			{"gainersPercent", "Fastest growing, from " + minSize + " " + st.SizeMeasure(), se.GainersPercent, []string{"percent", "size"}},
			{"topClimbers", "Climbers in the store's ranks, from " + minSize + " " + st.SizeMeasure(), se.TopClimbers, []string{"rank", "previousRank"}},
			{"newcomers", "Newcomers", se.Newcomers, []string{"size"}},
			{"departures", "Departures", se.Departures, []string{"size"}},
			{"bestRatedNewcomers", "Best rated newcomers, rated by " + strconv.Itoa(editions.MinRatings) + " or more", se.BestRatedNewcomers, []string{"rating", "ratingCount"}},
		} {
			if len(l.entries) == 0 {
				ws.Empty = append(ws.Empty, strings.ToLower(l.caption[:1])+l.caption[1:])
				continue
			}
			ws.Lists = append(ws.Lists, weekList(st, l.name, l.caption, l.entries, l.cols, w.Replica))
		}
		d.Stores = append(d.Stores, ws)
	}
	body, err := render.RenderWeek(d)
	if err != nil {
		return nil, err
	}
	return pageAnswer(answer.NewKey(nil, "/week/:id", 0), htmlType, body), nil
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
// page shows: each list whole, as the JSON has it (editions.Size).
const weekPageListSize = editions.Size

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
