package cron

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// RanksJob returns the job that computes the daily store ranks listing
// histories show: every day of the last analytics.HistoryDays days of data that is
// not ranked yet or has gained crawls since it was ranked, newest first
// (so recent history is complete first after a fresh start). The ranks
// live in ClickHouse, so every edge shares them; edges that run the job
// at once compute the same figures.
func RanksJob(db *analytics.Lazy, schedule string, log *slog.Logger) Job {
	return Job{Name: "ranks", Schedule: schedule, Run: func(ctx context.Context) error {
		conn, _, last, err := dataSpan(ctx, db)
		if err != nil || conn == nil {
			return err // nil: no data yet
		}
		from := last.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(analytics.HistoryDays - 1))
		days, err := analytics.DaysToRank(ctx, conn, from)
		if err != nil {
			return err
		}
		start := time.Now()
		for i, d := range days {
			if err := analytics.RankOneDay(ctx, conn, d, db.PartSize()); err != nil {
				return fmt.Errorf("ranked %d of %d days: %w", i, len(days), err)
			}
		}
		if len(days) > 0 {
			log.Info("daily ranks computed", "days", len(days), "took", time.Since(start).Round(time.Millisecond))
		}
		return nil
	}}
}
