package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/seed"
)

// seedArgs is what seed's flags say.
type seedArgs struct {
	ch                   analytics.Config
	o                    seed.Options
	appendF, reset, skip bool
	workers              int
}

func runSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a, err := parseSeed(args, stderr)
	if err != nil {
		return err
	}
	ch, o := a.ch, a.o
	if _, err := analytics.Migrate(ctx, ch, newQuietLogger()); err != nil {
		return err
	}
	conn, err := analytics.Open(ctx, ch)
	if err != nil {
		return err
	}
	defer conn.Close()
	if a.skip && !a.reset {
		empty, err := analytics.IsEmpty(ctx, conn)
		if err != nil {
			return err
		}
		if !empty {
			fmt.Fprintf(stdout, "%s already holds listings: not seeding\n", ch.Database)
			return nil
		}
	}
	w := seed.WriteOptions{Append: a.appendF, Reset: a.reset, Workers: a.workers}
	tty := reportProgress(&w, stderr)
	fmt.Fprintf(stderr, "seeding %s: %d listings, %d days, seed %d, ending %s\n", ch.Database, o.Listings, o.Days, o.Seed, o.End.Format(time.RFC3339))
	p, err := seed.Write(ctx, conn, o, w)
	if tty {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	counts, err := analytics.TableCounts(ctx, conn)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %d listings, %d rows in %s (%.0f rows/s); tables now hold: listings %d, snapshots %d, reviews %d\n",
		p.Listings, p.Rows, p.Elapsed.Round(time.Millisecond), p.RowsPerSecond(), counts["listings"], counts["snapshots"], counts["reviews"])
	return nil
}

// parseSeed reads seed's flags and environment.
func parseSeed(args []string, stderr io.Writer) (seedArgs, error) {
	f := newFlags("seed", `Write a synthetic dataset into the upstream tables (listings, snapshots, reviews).
The data is a deterministic function of --seed, --listings, --days, --reviews-per-listing and --end.
It refuses to write into tables that hold data unless --append, --reset or --if-empty is given.
The schema is created first if missing.`)
	a := seedArgs{o: seed.DefaultOptions()}
	o := &a.o
	var end string
	shares := string(o.Shares)
	f.clickhouse(&a.ch)
	f.Uint64(&o.Seed, "seed", o.Seed, "random seed; the same seed and sizes give the same rows")
	f.Int(&o.Listings, "listings", o.Listings, "number of listings across the five stores")
	f.Int(&o.Days, "days", o.Days, "days of history before --end")
	f.Int(&o.ReviewsPerListing, "reviews-per-listing", o.ReviewsPerListing, "average stored reviews per listing (none on chrome)")
	f.String(&shares, "shares", shares, "how the listings are spread over the stores: real (each store's share of their real size: 44% apple, 49% googleplay, 4.4% chrome, 0.9% firefox, 0.7% edge) or test (40% chrome, 10% edge, 10% firefox, 18% apple, 22% googleplay, as the tests use)")
	f.String(&end, "end", "", "time of the newest crawl, RFC 3339 or yyyy-MM-dd (default: the start of the current UTC hour)")
	// What to do with existing data is a flag only, never a variable.
	f.fs.BoolVar(&a.appendF, "append", false, "write even if the tables hold data (use another --seed to add new listings)")
	f.fs.BoolVar(&a.reset, "reset", false, "empty the upstream tables first")
	f.fs.BoolVar(&a.skip, "if-empty", false, "do nothing, successfully, if the tables hold data")
	f.Int(&a.workers, "workers", 0, "generating and writing goroutines (0: one per core, plus one)")
	f.fs.SetOutput(stderr)
	if err := f.parse(args); err != nil {
		return a, err
	}
	switch shares {
	case "real":
		o.Shares = seed.SharesReal
	case "test":
		o.Shares = seed.SharesTest
	default:
		return a, fmt.Errorf("--shares %q: use real or test", shares)
	}
	if end != "" {
		t, err := parseEnd(end)
		if err != nil {
			return a, err
		}
		o.End = t
	}
	return a, o.Validate()
}

// reportProgress sets how w reports on stderr: a bar redrawn every 200 ms
// on a terminal (it reports true), a line every 5 s elsewhere.
func reportProgress(w *seed.WriteOptions, stderr io.Writer) (tty bool) {
	if fd, ok := stderr.(*os.File); ok {
		tty = isatty.IsTerminal(fd.Fd())
	}
	if tty {
		w.Every, w.Progress = 200*time.Millisecond, func(p seed.Progress) { fmt.Fprint(stderr, "\r"+bar(p)) }
	} else {
		w.Every, w.Progress = 5*time.Second, func(p seed.Progress) { fmt.Fprintln(stderr, line(p)) }
	}
	return tty
}

func parseEnd(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--end %q: use RFC 3339 (2026-11-01T12:00:00Z) or yyyy-MM-dd", s)
}

// bar renders a one-line progress bar with throughput.
func bar(p seed.Progress) string {
	const width = 30
	frac := float64(p.Listings) / float64(max(p.TotalListings, 1))
	n := int(frac * width)
	return fmt.Sprintf("[%s%s] %5.1f%%  %d/%d listings  %s rows  %s rows/s  %s ",
		strings.Repeat("#", n), strings.Repeat(" ", width-n), frac*100, p.Listings, p.TotalListings,
		human(float64(p.Rows)), human(p.RowsPerSecond()), p.Elapsed.Round(time.Second))
}

// line renders a plain progress line for logs.
func line(p seed.Progress) string {
	return fmt.Sprintf("seed: %d/%d listings, %d rows, %.0f rows/s, %s", p.Listings, p.TotalListings,
		p.Rows, p.RowsPerSecond(), p.Elapsed.Round(time.Second))
}

func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
