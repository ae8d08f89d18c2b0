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
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/series"
)

// HistoryMaxCrawls is the most crawls a history answer covers; past it the
// newest days that fit are kept and the answer says truncated.
const HistoryMaxCrawls = 2000

// historyAnswer is the answer of GET /api/v1/listings/{store}/{id}/history.
type historyAnswer struct {
	Store     string               `json:"store"`
	ID        string               `json:"id"`
	Days      int                  `json:"days"` // the window asked for, in UTC days ending with the data's newest day
	From      string               `json:"from"` // first day of the window (yyyy-MM-dd)
	Truncated bool                 `json:"truncated"`
	Snapshots []analytics.Snapshot `json:"snapshots"`
}

// getHistory answers GET /api/v1/listings/{store}/{id}/history: one
// snapshot per UTC day (the day's latest crawl) with the day's store rank,
// oldest first, over the last days days of data (1-730, default 365). It
// is read from ClickHouse under the read budget and cached per view
// generation.
func (s *API) getHistory(c *fiber.Ctx) (answer.Reply, error) {
	st, l, err := s.ListingParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	store, id := l.Store, l.ID
	days := 365
	if raw := c.Query("days"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > analytics.HistoryDays {
			return answer.Reply{}, problem.Newf(http.StatusBadRequest, "days: %q is not a whole number of days from 1 to %d (default 365).", raw, analytics.HistoryDays)
		}
		days = n
	}
	// The window ends with the data's newest day, so that answers are the
	// same on every edge of one generation.
	last := views.DayOf(st.Replica.Info().ReadingsMark)
	from := last - views.Day(days-1)
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/listings/:store/:id/history", st.Replica.Info().Generation).
		Int("s", int64(store)).Str("id", id).Int("days", int64(days))
	asCSV := wantsCSV(c)
	key = key.Int("csv", b2i(asCSV))
	// A miss reads ClickHouse: it waits for a turn of the miss gate, as
	// every query of the long tail does.
	a, err := s.answers.GetQuery(key, s.gate.MissCaller(c), true, func() (*answer.Answer, error) {
		ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget)
		defer cancel()
		type read struct {
			h        analytics.DailyHistory
			relisted []views.Day
		}
		r, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (read, error) {
			h, err := analytics.LoadDailyHistory(ctx, conn, store, id, from.Time(), HistoryMaxCrawls)
			if err != nil {
				return read{}, err
			}
			relisted, err := analytics.LoadRelistings(ctx, conn, store, id, from)
			return read{h, relisted}, err
		})
		if err != nil {
			return nil, s.readProblem("the history", err)
		}
		h := r.h
		FlagHistory(store, h.Snapshots, r.relisted)
		out := historyAnswer{Store: store.String(), ID: id, Days: days, From: from.Time().Format(time.DateOnly),
			Truncated: h.Truncated, Snapshots: h.Snapshots}
		if out.Snapshots == nil {
			out.Snapshots = []analytics.Snapshot{}
		}
		if asCSV {
			return historyCSV(&out)
		}
		return answer.JSON(out)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private, VaryAccept: true}, nil
}

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
func historyCSV(h *historyAnswer) (*answer.Answer, error) {
	rows := make([][]string, len(h.Snapshots))
	for i, s := range h.Snapshots {
		rows[i] = []string{s.Day, h.Store, answer.CSVText(h.ID), s.ReadAt.Format(time.RFC3339), strconv.Itoa(s.Crawls),
			csvw.Int(s.Size), csvw.Int(s.Usage), csvw.Int(s.WeeklyDownloads), csvw.Float(s.Rating), csvw.Int(s.RatingCount),
			csvw.Int(s.StoreRank), strconv.Itoa(s.DaysSincePrevious), strings.Join(s.Flags, " ")}
	}
	return answer.CSV([]string{"day", "store", "id", "read_at", "crawls", "size", "usage", "weekly_downloads",
		"rating", "rating_count", "store_rank", "days_since_previous", "flags"}, rows)
}
