package pages

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// pageDays is how many days of size a listing's page charts.
const pageDays = 365

// getPage answers GET /listings/{store}/{id}: the listing's HTML page
// (package page), from its document in the published state and its last
// 365 days of daily sizes (read as its history is, within the read
// budget), cached per view generation like every answer.
func (s *Pages) getPage(c *fiber.Ctx) (answer.Reply, error) {
	st, l, err := s.api.ListingParams(c)
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
			return analytics.LoadDailyHistory(ctx, conn, store, id, from.Time(), v1.HistoryMaxCrawls)
		})
		if err != nil {
			return nil, s.readProblem("the history", err)
		}
		body, err := render.RenderListing(listingData(document.NewListing(l, st.Figures), h.Snapshots, from, last))
		if err != nil {
			return nil, err
		}
		return pageAnswer(key, htmlType, body), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// pageData is what the page of the listing of document d shows, with its
// daily snapshots from day from to day last (the data's newest day).
func listingData(d document.Listing, snaps []analytics.Snapshot, from, last views.Day) render.ListingPage {
	doc := "/api/v1/listings/" + d.Store + "/" + url.PathEscape(d.ID)
	out := render.ListingPage{Store: d.Store, ID: d.ID, Name: d.Name, Developer: d.Developer, Category: d.Category, SizeMeasure: d.SizeMeasure,
		Live: d.Live, DocumentURL: doc, HistoryURL: doc + "/history", HistoryCSVURL: doc + "/history.csv", Cadence: cadence(snaps),
		ChangesFeedURL: "/listings/" + d.Store + "/" + url.PathEscape(d.ID) + "/changes.atom"}
	if out.Name == "" {
		out.Name = d.ID
	}
	if d.DelistedAt != nil {
		out.Delisted = d.DelistedAt.UTC().Format(time.DateOnly)
	}
	why := nullReasons{d: d, last: last}
	num := func(def, label string, v *int64, null string) {
		out.Figures = append(out.Figures, render.IntFigure(def, v).Labelled(label, null))
	}
	rank := func(def, label string, v *int, null string) {
		if v == nil {
			num(def, label, nil, null)
			return
		}
		n := int64(*v)
		num(def, label, &n, "")
	}
	// Size is the usage figure on every store but apple (where it is the
	// ratings count, and there is no usage): one row says it.
	num("size", "Size ("+d.SizeMeasure+")", d.Size, why.size())
	if d.Store == views.Firefox.String() {
		num("weeklyDownloads", "Weekly downloads", d.WeeklyDownloads, why.read("no weekly downloads in its newest reading"))
	}
	out.Figures = append(out.Figures, render.RatingFigure("rating", d.Rating).Labelled("Rating", why.read("no ratings yet")))
	num("ratingCount", "Ratings", d.RatingCount, why.read("the store gives no count in its newest reading"))
	rank("storeRank", "Rank in the store", d.StoreRank, why.rank())
	rank("categoryRank", "Rank in its category", d.CategoryRank, why.rank())
	rank("rankClimb7d", "Rank climb, 7 days", d.RankClimb7d, why.climb())
	for i, w := range []struct {
		label string
		c     *document.Change
	}{{"1 day", d.Growth.D1}, {"7 days", d.Growth.D7}, {"30 days", d.Growth.D30}, {"365 days", d.Growth.D365}} {
		f := render.ChangeFigure("growth", w.c.Amount())
		if w.c != nil && w.c.Percent != nil {
			f.Text += " (" + strconv.FormatFloat(*w.c.Percent, 'f', 1, 64) + "%)"
		}
		if w.c == nil {
			f = f.Labelled("", why.growth(views.Window(i), out.Cadence))
		}
		f.Label = "Growth, " + w.label
		out.Figures = append(out.Figures, f)
	}
	read := render.Figure{Definition: "readAt", Label: "Read at", Why: "never read"}
	if d.ReadAt != nil {
		read.Raw, read.Text, read.Why = d.ReadAt.Format(time.RFC3339), d.ReadAt.Format("2006-01-02 15:04 UTC"), ""
	}
	out.Figures = append(out.Figures, read)
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
		out.Points = append(out.Points, render.Point{Day: day.String(), Size: v, Has: ok})
	}
	return out
}

// cadence says how often a listing is read, from its days of the year:
// the median of its crawls a day and of the days between readings.
func cadence(snaps []analytics.Snapshot) string {
	var crawls, gaps []int
	for i, sn := range snaps {
		crawls = append(crawls, sn.Crawls)
		if i > 0 {
			a, errA := time.Parse(time.DateOnly, snaps[i-1].Day)
			b, errB := time.Parse(time.DateOnly, sn.Day)
			if errA == nil && errB == nil {
				gaps = append(gaps, int(b.Sub(a).Hours()/24))
			}
		}
	}
	if len(snaps) < 3 {
		return ""
	}
	slices.Sort(crawls)
	slices.Sort(gaps)
	switch c, g := crawls[len(crawls)/2], gaps[len(gaps)/2]; {
	case c > 1:
		return "about " + strconv.Itoa(c) + " times a day"
	case g <= 1:
		return "about once a day"
	default:
		return "about every " + strconv.Itoa(g) + " days"
	}
}
