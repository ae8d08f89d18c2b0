package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/views"
)

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("export", "Build one day's exports into the exports directory now (as the serve's exports job does), and print the day's manifest.\nA day already there is not built again: remove its directory first to rebuild it.")
	var (
		ch     analytics.Config
		dir    string
		day    string
		grace  time.Duration
		latest bool
	)
	f.clickhouse(&ch)
	f.String(&dir, "exports-dir", "data/exports", "directory of the daily exports")
	f.String(&day, "day", "", "the UTC day to export, yyyy-MM-dd (default: the newest closed day)")
	f.Duration(&grace, "exports-grace", 2*time.Hour, "how long after a day's end its late readings are awaited (for the default day)")
	f.Bool(&latest, "latest", false, "also build the day's latest set (each lake table whole as of the day), as the job does for its newest day")
	f.fs.SetOutput(stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	conn, err := analytics.Open(ctx, ch)
	if err != nil {
		return err
	}
	defer conn.Close()
	var d views.Day
	if day != "" {
		t, err := time.Parse(time.DateOnly, day)
		if err != nil {
			return fmt.Errorf("--day %q: send yyyy-MM-dd", day)
		}
		d = views.DayOf(t)
	} else {
		w, err := analytics.ReadWatermarks(ctx, conn)
		if err != nil {
			return err
		}
		d = views.DayOf(w.Readings.Add(-grace)) - 1
	}
	m, built, err := exports.Build(ctx, conn, dir, d)
	if err != nil {
		return err
	}
	if !built {
		fmt.Fprintf(stderr, "export: %s was there already\n", m.Day)
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	fmt.Fprintln(stdout, string(b))
	if latest {
		m, built, err := exports.BuildLatest(ctx, conn, dir, d)
		if err != nil {
			return err
		}
		if !built {
			fmt.Fprintf(stderr, "export: the latest set of %s was there already\n", m.Day)
		}
		b, _ := json.MarshalIndent(m, "", "  ")
		fmt.Fprintln(stdout, string(b))
	}
	return nil
}
