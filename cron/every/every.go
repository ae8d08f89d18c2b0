// Package every runs a function at an interval until its context ends,
// logging a run of failures once: the short loops that keep an edge's
// copies fresh (the key list, the fleet's usage), too frequent and too
// cheap for a scheduled job of package cron. It is a leaf: the packages
// that loop need not import the jobs.
package every

import (
	"context"
	"log/slog"
	"time"
)

// Run runs fn every interval until ctx ends. It logs the first failure
// of a run of failures, and the recovery that ends it, naming them what.
func Run(ctx context.Context, interval time.Duration, log *slog.Logger, what string, fn func(context.Context) error) {
	RunOrSooner(ctx, interval, nil, log, what, fn)
}

// RunOrSooner is Run that also runs fn as soon as a value arrives on
// sooner (nil: never): a run asked for while one is under way is the
// next, once. After a failure only the interval's tick runs fn again, so
// that what fails is not asked again at every request.
func RunOrSooner(ctx context.Context, interval time.Duration, sooner <-chan struct{}, log *slog.Logger, what string, fn func(context.Context) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	soon := sooner
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-soon:
		}
		err := fn(ctx)
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Warn("sync failing; will retry", "what", what, "err", err)
		case err == nil && failing:
			log.Info("sync recovered", "what", what)
		}
		failing = err != nil
		soon = sooner
		if failing {
			soon = nil
		}
	}
}
