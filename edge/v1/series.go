package v1

import (
	"context"
	"math"
	"net/http"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/series"
	"github.com/edge-stats/edge/views/served"
)

// maxSpanDays is the most days a growth's two dates and a comparison's
// window may span.
const maxSpanDays = analytics.HistoryDays

// endFigures are a listing's figures at one end of a growth.
type endFigures struct {
	Size        *int64   `json:"size"`
	Usage       *int64   `json:"usage"`
	RatingCount *int64   `json:"ratingCount"`
	Rating      *float64 `json:"rating"`
}

// growthChange is each figure's change from one end of a growth to the
// other.
type growthChange struct {
	Size        *figureChange `json:"size"`
	Usage       *figureChange `json:"usage"`
	RatingCount *figureChange `json:"ratingCount"`
	Rating      *figureChange `json:"rating"`
}

// changeBetween returns each figure's change from start to end (the
// rating to two decimals).
func changeBetween(start, end endFigures) growthChange {
	return growthChange{
		Size:        change(series.Delta(start.Size, end.Size), 0),
		Usage:       change(series.Delta(start.Usage, end.Usage), 0),
		RatingCount: change(series.Delta(start.RatingCount, end.RatingCount), 0),
		Rating:      change(series.Delta(start.Rating, end.Rating), 2),
	}
}

// growthEnd is one end of a growth between two dates.
type growthEnd struct {
	Day    string     `json:"day"`    // the date asked for
	ReadAt *time.Time `json:"readAt"` // the reading that stands for it; null when none
	endFigures
}

// figureChange is a figure's change between two readings.
type figureChange struct {
	Change  float64  `json:"change"`
	Percent *float64 `json:"percent"`
}

// growthAnswer is the answer of GET /api/v1/listings/{store}/{id}/growth.
type growthAnswer struct {
	Store       string       `json:"store"`
	ID          string       `json:"id"`
	SizeMeasure string       `json:"sizeMeasure"`
	From        string       `json:"from"`
	To          string       `json:"to"`
	Days        int          `json:"days"`
	Start       growthEnd    `json:"start"`
	End         growthEnd    `json:"end"`
	Change      growthChange `json:"change"`
}

// change converts a series change, rounding it to places decimals.
func change(c *series.Change, places int) *figureChange {
	if c == nil {
		return nil
	}
	f := math.Pow10(places)
	return &figureChange{Change: math.Round(c.Change*f) / f, Percent: c.Percent}
}

// endOf returns the growth end of day from the listing's readings.
func endOf(s views.Store, rs []series.Reading, day views.Day) growthEnd {
	e := growthEnd{Day: day.String()}
	if r := series.At(rs, day); r != nil {
		at := r.At
		e.ReadAt, e.endFigures = &at, endFigures{r.Size(s), r.Usage, r.RatingCount, r.Rating}
	}
	return e
}

// dateParam reads a yyyy-MM-dd query parameter; ok is false when absent.
func dateParam(c *fiber.Ctx, name string) (d views.Day, ok bool, err error) {
	raw := c.Query(name)
	if raw == "" {
		return 0, false, nil
	}
	t, perr := time.Parse(time.DateOnly, raw)
	if perr != nil || t.Year() < 2000 {
		return 0, false, problem.Newf(http.StatusBadRequest, "%s: %q is not a date: send yyyy-MM-dd (UTC), such as 2026-01-31.", name, raw)
	}
	return views.DayOf(t), true, nil
}

// instantParam reads an RFC 3339 query parameter; ok is false when it is
// absent or not an instant (a date, which dateParam reads).
func instantParam(c *fiber.Ctx, name string) (t time.Time, ok bool, err error) {
	return parseInstant(name, c.Query(name))
}

// parseInstant parses the value raw of parameter name as instantParam
// does: values no longer than a date are left to dateParam.
func parseInstant(name, raw string) (t time.Time, ok bool, err error) {
	if len(raw) <= len(time.DateOnly) {
		return time.Time{}, false, nil
	}
	t, perr := time.Parse(time.RFC3339, raw)
	if perr != nil || t.Year() < 2000 || t.Year() > 9999 {
		return time.Time{}, false, problem.Newf(http.StatusBadRequest,
			"%s: %q is neither a date nor an instant: send yyyy-MM-dd (UTC), such as 2026-01-31, or an RFC 3339 time, such as 2026-01-31T12:00:00Z.", name, raw)
	}
	return t.UTC().Truncate(time.Second), true, nil
}

// GrowthParams are a growth as asked: the listing, and two dates or
// (Instants) two instants; Gap is how far apart the readings around an
// instant may lie.
type GrowthParams struct {
	Listing    *views.Listing
	Instants   bool
	From, To   views.Day
	FromT, ToT time.Time
	Gap        int64
}

// Growth is a growth's result: between two dates or two instants, each
// with its own JSON.
type Growth struct {
	dates    *growthAnswer
	instants *instantGrowth
}

// newGrowthRead declares the growth read (GET
// /api/v1/listings/{store}/{id}/growth): the listing's figures at two
// dates (each the latest reading on or before the date, at most
// series.Lookback days before it), or at two instants (each by the one
// rule, views.ValueAt), and their change, read from ClickHouse under the
// read budget (a miss waits for a turn of the miss gate), kept on its
// first ask.
func (s *API) newGrowthRead() *read.Read[GrowthParams, Growth] {
	return &read.Read[GrowthParams, Growth]{
		Route: "/api/v1/listings/:store/:id/growth",
		Page:  answer.ParentPage,
		Parse: parseGrowth,
		Key: func(k answer.Key, p *GrowthParams) answer.Key {
			k = listingKey(k, p.Listing)
			if p.Instants {
				return k.Int("fromT", p.FromT.Unix()).Int("toT", p.ToT.Unix())
			}
			return k.Int("from", int64(p.From)).Int("to", int64(p.To))
		},
		First: func(*fiber.Ctx, *GrowthParams) bool { return true },
		Run:   s.runGrowth,
	}
}

// growthJSON writes a growth as JSON.
var growthJSON = read.Codec[Growth]{Name: "json", Type: fiber.MIMEApplicationJSON, Encode: func(_ *fiber.Ctx, g *Growth) (*answer.Answer, error) {
	if g.instants != nil {
		return answer.JSON(g.instants)
	}
	return answer.JSON(g.dates)
}}

// parseGrowth reads from and to, both dates or both instants, against
// the data's newest day or reading.
func parseGrowth(c *fiber.Ctx, st *served.State, _ read.Needs) (GrowthParams, error) {
	l, err := parseListing(c, st)
	if err != nil {
		return GrowthParams{}, err
	}
	p := GrowthParams{Listing: l}
	fromT, fromInstant, err := instantParam(c, "from")
	if err != nil {
		return p, err
	}
	toT, toInstant, err := instantParam(c, "to")
	if err != nil {
		return p, err
	}
	switch {
	case fromInstant:
		return instantsParams(st, l, fromT, toT, toInstant)
	case toInstant:
		return p, problem.New(http.StatusBadRequest, "to is an instant and from a date: send both as dates (yyyy-MM-dd) or both as RFC 3339 instants.")
	}
	newest := views.DayOf(st.Replica.Info().ReadingsMark)
	from, ok, err := dateParam(c, "from")
	if err != nil {
		return p, err
	}
	if !ok {
		return p, problem.New(http.StatusBadRequest, "from: send the first date, yyyy-MM-dd (UTC); to defaults to the data's newest day.")
	}
	to, ok, err := dateParam(c, "to")
	if err != nil {
		return p, err
	}
	if !ok {
		to = newest
	}
	switch {
	case to > newest:
		return p, problem.Newf(http.StatusBadRequest, "to: %s is after the data's newest day, %s; send that day or an earlier one.", to, newest)
	case from > to:
		return p, problem.Newf(http.StatusBadRequest, "from: %s is after to (%s); send from on or before to.", from, to)
	case int(to-from) > maxSpanDays:
		return p, problem.Newf(http.StatusBadRequest, "from and to are %d days apart; at most %d are allowed: move from to %s or later.", int(to-from), maxSpanDays, to-maxSpanDays)
	}
	p.From, p.To = from, to
	return p, nil
}

// runGrowth reads the growth p.
func (s *API) runGrowth(c *fiber.Ctx, st *served.State, p *GrowthParams, _ read.Needs) (*Growth, error) {
	store, id := p.Listing.Store, p.Listing.ID
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget)
	defer cancel()
	if p.Instants {
		rs, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) ([]series.Reading, error) {
			return analytics.LoadReadingsAround(ctx, conn, analytics.ListingKey{Store: store, ID: id}, p.Gap, p.FromT, p.ToT)
		})
		if err != nil {
			return nil, s.readProblem("the growth", err)
		}
		out := &instantGrowth{Store: store.String(), ID: id, SizeMeasure: store.SizeMeasure(),
			From: p.FromT, To: p.ToT, Seconds: int64(p.ToT.Sub(p.FromT) / time.Second), MaxGap: p.Gap,
			Start: instantEndOf(series.AtInstant(rs, store, p.FromT, p.Gap)), End: instantEndOf(series.AtInstant(rs, store, p.ToT, p.Gap))}
		out.Change = changeBetween(out.Start.endFigures, out.End.endFigures)
		return &Growth{instants: out}, nil
	}
	readings, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (map[analytics.ListingKey][]series.Reading, error) {
		return analytics.LoadDailyReadings(ctx, conn, []analytics.ListingKey{{Store: store, ID: id}}, p.From-series.Lookback, p.To)
	})
	if err != nil {
		return nil, s.readProblem("the growth", err)
	}
	rs := readings[analytics.ListingKey{Store: store, ID: id}]
	out := &growthAnswer{Store: store.String(), ID: id, SizeMeasure: store.SizeMeasure(),
		From: p.From.String(), To: p.To.String(), Days: int(p.To-p.From) + 1,
		Start: endOf(store, rs, p.From), End: endOf(store, rs, p.To)}
	out.Change = changeBetween(out.Start.endFigures, out.End.endFigures)
	return &Growth{dates: out}, nil
}

// instantEnd is one end of a growth between two instants.
type instantEnd struct {
	At           time.Time   `json:"at"`       // the instant asked for
	Readings     []time.Time `json:"readings"` // the readings the size comes from: one, or the two around the instant; empty for none
	Interpolated bool        `json:"interpolated"`
	endFigures
}

// instantGrowth is the answer of /growth between two instants.
type instantGrowth struct {
	Store       string       `json:"store"`
	ID          string       `json:"id"`
	SizeMeasure string       `json:"sizeMeasure"`
	From        time.Time    `json:"from"`
	To          time.Time    `json:"to"`
	Seconds     int64        `json:"seconds"` // to minus from
	MaxGap      int64        `json:"maxGap"`  // seconds: how far apart the readings around an end may lie
	Start       instantEnd   `json:"start"`
	End         instantEnd   `json:"end"`
	Change      growthChange `json:"change"`
}

// instantsParams reads a growth between the instants from (and to):
// readings around an end at most views.GapFor(to − from) apart. to
// defaults to the listing's newest reading, so from one window before it
// gives the window of the listing's document.
func instantsParams(st *served.State, l *views.Listing, from, to time.Time, hasTo bool) (GrowthParams, error) {
	p := GrowthParams{Listing: l, Instants: true}
	newest := st.Replica.Info().ReadingsMark
	if !hasTo {
		if !l.Crawled() {
			return p, problem.New(http.StatusBadRequest, "to: the listing has never been read, so it has no newest reading to default to; send to as well.")
		}
		to = time.Unix(l.ReadAt, 0).UTC()
	}
	span := to.Sub(from)
	switch {
	case to.After(newest):
		return p, problem.Newf(http.StatusBadRequest, "to: %s is after the data's newest reading, %s; send that instant or an earlier one.", to.Format(time.RFC3339), newest.Format(time.RFC3339))
	case span < 0:
		return p, problem.Newf(http.StatusBadRequest, "from: %s is after to (%s); send from on or before to.", from.Format(time.RFC3339), to.Format(time.RFC3339))
	case span > maxSpanDays*24*time.Hour:
		return p, problem.Newf(http.StatusBadRequest, "from and to are more than %d days apart; move from to %s or later.", maxSpanDays, to.Add(-maxSpanDays*24*time.Hour).Format(time.RFC3339))
	}
	p.FromT, p.ToT, p.Gap = from, to, views.GapFor(int64(span/time.Second))
	return p, nil
}

func instantEndOf(in series.Instant) instantEnd {
	e := instantEnd{At: in.At, Readings: in.Readings, Interpolated: in.Interpolated,
		endFigures: endFigures{in.Size, in.Usage, in.RatingCount, in.Rating}}
	if e.Readings == nil {
		e.Readings = []time.Time{}
	}
	return e
}
