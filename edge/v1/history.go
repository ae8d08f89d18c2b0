package v1

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/series"
	"github.com/edge-stats/edge/views/served"
)

// HistoryMaxCrawls is the most crawls a history answer covers; past it the
// newest days that fit are kept and the answer says truncated.
const HistoryMaxCrawls = 2000

// History is a listing's daily history over a window ending with the
// data's newest day (GET /api/v1/listings/{store}/{id}/history): one
// snapshot a day, oldest first. The listing, the state it was read
// against and the window's days are not in the JSON: the listing's page
// writes its figures and chart from them.
type History struct {
	Store     string               `json:"store"`
	ID        string               `json:"id"`
	Days      int                  `json:"days"` // the window asked for, in UTC days ending with the data's newest day
	From      string               `json:"from"` // first day of the window (yyyy-MM-dd)
	Truncated bool                 `json:"truncated"`
	Snapshots []analytics.Snapshot `json:"snapshots"`

	Listing  *views.Listing `json:"-"`
	State    *served.State  `json:"-"`
	FirstDay views.Day      `json:"-"`
	LastDay  views.Day      `json:"-"`
}

// HistoryParams are a history's listing and window, in days.
type HistoryParams struct {
	Listing *views.Listing
	Days    int
}

// HistoryRead is the read of a listing's history, days from its days
// parameter (1 to analytics.HistoryDays, default 365).
func (s *API) HistoryRead() *read.Read[HistoryParams, History] { return s.history }

// YearRead is the read of a listing's document with its year of
// history, as the listing's page shows it: the history read, its window
// fixed at 365 days (a days parameter is not read).
func (s *API) YearRead() *read.Read[HistoryParams, History] {
	rd := *s.history
	rd.Parse = func(c *fiber.Ctx, st *served.State, _ read.Needs) (HistoryParams, error) {
		l, err := parseListing(c, st)
		return HistoryParams{Listing: l, Days: 365}, err
	}
	return &rd
}

// newHistoryRead declares the history read: read from ClickHouse under
// the read budget (a miss waits for a turn of the miss gate, as every
// query of the long tail does), kept on its first ask.
func (s *API) newHistoryRead() *read.Read[HistoryParams, History] {
	return &read.Read[HistoryParams, History]{
		Route: "/api/v1/listings/:store/:id/history",
		Page:  answer.ParentPage,
		Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (HistoryParams, error) {
			l, err := parseListing(c, st)
			if err != nil {
				return HistoryParams{}, err
			}
			days := 365
			if raw := c.Query("days"); raw != "" {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 1 || n > analytics.HistoryDays {
					return HistoryParams{}, problem.Newf(http.StatusBadRequest, "days: %q is not a whole number of days from 1 to %d (default 365).", raw, analytics.HistoryDays)
				}
				days = n
			}
			return HistoryParams{Listing: l, Days: days}, nil
		},
		Key: func(k answer.Key, p *HistoryParams) answer.Key {
			return listingKey(k, p.Listing).Int("days", int64(p.Days))
		},
		First: func(*fiber.Ctx, *HistoryParams) bool { return true },
		Run:   s.runHistory,
	}
}

// runHistory reads p's history and the listing's relistings in its
// window, and flags each day (FlagHistory). The window ends with the
// data's newest day, so that answers are the same on every edge of one
// generation.
func (s *API) runHistory(c *fiber.Ctx, st *served.State, p *HistoryParams, _ read.Needs) (*History, error) {
	store, id := p.Listing.Store, p.Listing.ID
	last := views.DayOf(st.Replica.Info().ReadingsMark)
	from := last - views.Day(p.Days-1)
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget)
	defer cancel()
	type result struct {
		h        analytics.DailyHistory
		relisted []views.Day
	}
	r, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (result, error) {
		h, err := analytics.LoadDailyHistory(ctx, conn, store, id, from.Time(), HistoryMaxCrawls)
		if err != nil {
			return result{}, err
		}
		relisted, err := analytics.LoadRelistings(ctx, conn, store, id, from)
		return result{h, relisted}, err
	})
	if err != nil {
		return nil, s.readProblem("the history", err)
	}
	FlagHistory(store, r.h.Snapshots, r.relisted)
	out := &History{Store: store.String(), ID: id, Days: p.Days, From: from.Time().Format(time.DateOnly),
		Truncated: r.h.Truncated, Snapshots: r.h.Snapshots, Listing: p.Listing, State: st, FirstDay: from, LastDay: last}
	if out.Snapshots == nil {
		out.Snapshots = []analytics.Snapshot{}
	}
	return out, nil
}

// The history's codecs: JSON, CSV (one row a day) and NDJSON (one
// snapshot a line).
var (
	historyJSON = read.Codec[History]{Name: "json", Type: fiber.MIMEApplicationJSON,
		Encode: func(_ *fiber.Ctx, h *History) (*answer.Answer, error) { return answer.JSON(h) }}
	historyCSVCodec = read.Codec[History]{Name: "csv", Type: "text/csv",
		Encode: func(_ *fiber.Ctx, h *History) (*answer.Answer, error) { return historyCSV(h) }}
	historyNDJSON = read.Codec[History]{Name: "ndjson", Type: NDJSONContentType,
		Encode: func(_ *fiber.Ctx, h *History) (*answer.Answer, error) {
			return ndjsonFile("history.ndjson", h.Snapshots)
		}}
)

// FlagHistory sets each snapshot's flags (package series): the listing's
// page marks its jumps as the history's answer flags them.
func FlagHistory(store views.Store, snaps []analytics.Snapshot, relisted []views.Day) {
	rs := make([]series.Reading, len(snaps))
	for i := range snaps {
		rs[i] = snaps[i].Reading()
	}
	for i, f := range series.Flag(store, rs, relisted) {
		snaps[i].DaysSincePrevious, snaps[i].Flags = f.DaysSincePrevious, f.Flags
		if snaps[i].Flags == nil {
			snaps[i].Flags = []string{}
		}
	}
}

// historyCSV is a history as a table: one row a day.
func historyCSV(h *History) (*answer.Answer, error) {
	rows := make([][]string, len(h.Snapshots))
	for i, s := range h.Snapshots {
		rows[i] = []string{s.Day, h.Store, answer.CSVText(h.ID), s.ReadAt.Format(time.RFC3339), strconv.Itoa(s.Crawls),
			csvw.Int(s.Size), csvw.Int(s.Usage), csvw.Int(s.WeeklyDownloads), csvw.Float(s.Rating), csvw.Int(s.RatingCount),
			csvw.Int(s.StoreRank), strconv.Itoa(s.DaysSincePrevious), strings.Join(s.Flags, " "), csvw.Int(s.CategoryRank)}
	}
	return answer.CSV([]string{"day", "store", "id", "read_at", "crawls", "size", "usage", "weekly_downloads",
		"rating", "rating_count", "store_rank", "days_since_previous", "flags", "category_rank"}, rows)
}
