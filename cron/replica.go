package cron

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// ReplicaJob returns a job that loads every listing's current state from
// ClickHouse into a new replica and publishes it. A load that fails or is
// cut short publishes nothing: the last good state keeps serving.
func ReplicaJob(db *analytics.Lazy, pub *views.Published, schedule string, log *slog.Logger) Job {
	return Job{
		Name:     "replica",
		Schedule: schedule,
		Run: func(ctx context.Context) error {
			conn, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			var gen uint64 = 1
			if cur := pub.Load(); cur != nil {
				gen = cur.Replica.Info().Generation + 1
			}
			r, err := analytics.LoadReplica(ctx, conn, gen)
			if err != nil {
				return fmt.Errorf("replica generation %d: %w", gen, err)
			}
			pub.Publish(&views.State{Replica: r})
			info := r.Info()
			log.Info("replica published", "generation", info.Generation, "listings", r.Len(),
				"load_time", info.LoadTime.Round(1e6))
			return nil
		},
	}
}
