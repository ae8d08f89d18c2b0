package v1

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/page"
	"github.com/edge-stats/edge/views"
)

// pageDays is how many days of size a listing's page charts.
const pageDays = 365

// getPage answers GET /listings/{store}/{id}: the listing's HTML page
// (package page), from its document in the published state and its last
// 365 days of daily sizes (read as its history is, within the read
// budget), cached per view generation like every answer.
func (s *API) getPage(c *fiber.Ctx) (answer.Reply, error) {
	st, l, err := s.listingParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	store, id := l.Store, l.ID
	last := views.DayOf(st.Replica.Info().ReadingsMark)
	from := last - pageDays + 1
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/listings/:store/:id", st.Replica.Info().Generation).Int("s", int64(store)).Str("id", id)
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget)
		defer cancel()
		h, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (analytics.DailyHistory, error) {
			return analytics.LoadDailyHistory(ctx, conn, store, id, from.Time(), historyMaxCrawls)
		})
		if err != nil {
			return nil, s.readProblem("the history", err)
		}
		body, err := page.Render(pageData(NewListingDoc(l, st.Figures), h.Snapshots, from, last))
		if err != nil {
			return nil, err
		}
		return answer.New(body, fiber.MIMETextHTMLCharsetUTF8), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// pageData is what the page of the listing of document d shows, with its
// daily snapshots from day from to day last.
func pageData(d ListingDoc, snaps []analytics.Snapshot, from, last views.Day) page.Data {
	doc := "/api/v1/listings/" + d.Store + "/" + url.PathEscape(d.ID)
	out := page.Data{Store: d.Store, ID: d.ID, Name: d.Name, Developer: d.Developer, Category: d.Category, SizeMeasure: d.SizeMeasure,
		Live: d.Live, DocumentURL: doc, HistoryURL: doc + "/history.csv", DefinitionsURL: "/api/v1/definitions"}
	if out.Name == "" {
		out.Name = d.ID
	}
	num := func(def, label string, v *int64) {
		f := page.Figure{Definition: def, Label: label}
		if v != nil {
			f.Raw, f.Text = strconv.FormatInt(*v, 10), page.Int(*v)
		}
		out.Figures = append(out.Figures, f)
	}
	rank := func(def, label string, v *int) {
		if v == nil {
			num(def, label, nil)
			return
		}
		n := int64(*v)
		num(def, label, &n)
	}
	num("size", "Size ("+d.SizeMeasure+")", d.Size)
	if d.Store != views.Apple.String() {
		num("usage", "Users or installs", d.Usage)
	}
	if d.WeeklyDownloads != nil {
		num("weeklyDownloads", "Weekly downloads", d.WeeklyDownloads)
	}
	rating := page.Figure{Definition: "rating", Label: "Rating"}
	if d.Rating != nil {
		rating.Raw, rating.Text = strconv.FormatFloat(*d.Rating, 'f', -1, 64), strconv.FormatFloat(*d.Rating, 'f', 2, 64)+" ★"
	}
	out.Figures = append(out.Figures, rating)
	num("ratingCount", "Ratings", d.RatingCount)
	rank("storeRank", "Rank in the store", d.StoreRank)
	rank("categoryRank", "Rank in its category", d.CategoryRank)
	rank("rankClimb7d", "Rank climb, 7 days", d.RankClimb7d)
	for _, w := range []struct {
		label string
		c     *ChangeDoc
	}{{"1 day", d.Growth.D1}, {"7 days", d.Growth.D7}, {"30 days", d.Growth.D30}, {"365 days", d.Growth.D365}} {
		f := page.Figure{Definition: "growth", Label: "Growth, " + w.label}
		if w.c != nil {
			f.Raw, f.Text = strconv.FormatInt(w.c.Change, 10), signed(w.c.Change)
			if w.c.Percent != nil {
				f.Text += " (" + strconv.FormatFloat(*w.c.Percent, 'f', 1, 64) + "%)"
			}
		}
		out.Figures = append(out.Figures, f)
	}
	if d.ReadAt != nil {
		out.Figures = append(out.Figures, page.Figure{Definition: "readAt", Label: "Read at", Raw: d.ReadAt.Format(time.RFC3339), Text: d.ReadAt.Format("2006-01-02 15:04 UTC")})
	}
	byDay := make(map[string]int64, len(snaps))
	for _, sn := range snaps {
		if sn.Size != nil {
			byDay[sn.Day] = *sn.Size
		}
	}
	// The chart starts at the first day with a size in the year (a listing
	// first read three weeks ago gets three weeks of chart, not a line
	// squeezed against the right edge), or shows the year when none has.
	for day := from; day <= last; day++ {
		if _, ok := byDay[day.String()]; ok {
			from = day
			break
		}
	}
	for day := from; day <= last; day++ {
		v, ok := byDay[day.String()]
		out.Points = append(out.Points, page.Point{Day: day.String(), Size: v, Has: ok})
	}
	return out
}

// signed formats a change with its sign.
func signed(n int64) string {
	if n > 0 {
		return "+" + page.Int(n)
	}
	return page.Int(n)
}
