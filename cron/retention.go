package cron

import (
	"context"
	"log/slog"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// WebhookLogDays is how many days of webhook delivery attempts are kept.
const WebhookLogDays = 30

// UsageRetentionJob returns the job that drops the daily usage of the days
// older than keep days (the day's count is all the limits need; older days
// serve no one), the usage and attempts logs before yesterday, and the
// webhook delivery logs older than WebhookLogDays.
// Any edge of a fleet may run it: dropping a day twice drops nothing.
func UsageRetentionJob(db *analytics.Lazy, schedule string, keep int, log *slog.Logger) Job {
	return Job{Name: "usage-retention", Schedule: schedule, Run: func(ctx context.Context) error {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		before := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -keep)
		dropped, err := analytics.DropUsageBefore(ctx, conn, before)
		if len(dropped) > 0 {
			log.Info("old usage dropped", "days", len(dropped), "before", before.Format(time.DateOnly))
		}
		if err != nil {
			return err
		}
		// The log serves syncs of today; yesterday's is kept for an edge
		// that reads across midnight.
		logBefore := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1)
		dropped, err = analytics.DropUsageLogBefore(ctx, conn, logBefore)
		if len(dropped) > 0 {
			log.Info("old usage log dropped", "days", len(dropped), "before", logBefore.Format(time.DateOnly))
		}
		if err != nil {
			return err
		}
		// The account routes' attempts count for an hour at most: the
		// log of yesterday and today is kept, as the usage log's.
		dropped, err = analytics.DropAttemptsLogBefore(ctx, conn, logBefore)
		if len(dropped) > 0 {
			log.Info("old attempts log dropped", "days", len(dropped), "before", logBefore.Format(time.DateOnly))
		}
		if err != nil {
			return err
		}
		// Webhook delivery logs are kept WebhookLogDays.
		hooksBefore := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -WebhookLogDays)
		dropped, err = analytics.DropWebhookDeliveriesBefore(ctx, conn, hooksBefore)
		if len(dropped) > 0 {
			log.Info("old webhook delivery logs dropped", "days", len(dropped), "before", hooksBefore.Format(time.DateOnly))
		}
		return err
	}}
}
