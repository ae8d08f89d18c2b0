package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// reloadOnHangup runs the full views job (every listing, its history and
// every figure, from ClickHouse) each time the process gets SIGHUP, until
// ctx ends: an operator's way to reload now rather than at the next
// scheduled run. A reload already running is waited for, not doubled.
func reloadOnHangup(ctx context.Context, runNow func(string) error, log *slog.Logger) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
				log.Info("SIGHUP: full reload")
				if err := runNow("views"); err != nil {
					log.Error("full reload on SIGHUP failed", "err", err)
				}
			}
		}
	}()
}
