// Command fleetcost measures what each role of an edge costs ClickHouse:
// rows and bytes read and CPU time, from system.query_log (every server
// of a cluster), for the first load (the same as a full reload), an
// incremental refresh, the ranks job, one weekly edition, one day's
// exports, a key reload and a usage sync. It runs each role as the edge
// does, tags its queries with a quota key and sums their log rows; then
// it prints the cost of one edge an hour at the default schedules and of
// a fleet of N edges, each doing every role, as today's design has it.
//
//	go run ./bench/fleetcost --ch-addr 127.0.0.1:19000 --ch-database bench_100k --edges 20
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/views"
)

// cost is what a role's queries cost ClickHouse.
type cost struct {
	queries         uint64
	rows, bytes     uint64
	cpuMicroseconds uint64
	took            time.Duration
}

func (c cost) cpu() float64 { return float64(c.cpuMicroseconds) / 1e6 }

func main() {
	cfg := analytics.DefaultConfig()
	flag.StringVar(&cfg.Addr, "ch-addr", cfg.Addr, "ClickHouse native address (several, comma separated, for a cluster)")
	flag.StringVar(&cfg.Database, "ch-database", "bench_100k", "database")
	flag.StringVar(&cfg.Cluster, "ch-cluster", "", "the cluster the database lives on, if any")
	flag.IntVar(&cfg.PartSize, "part-size", analytics.DefaultPartSize, "listings a part of a full load")
	edges := flag.Int("edges", 20, "edges in the fleet to report")
	flag.Parse()
	if err := run(cfg, *edges); err != nil {
		fmt.Fprintln(os.Stderr, "fleetcost:", err)
		os.Exit(1)
	}
}

func run(cfg analytics.Config, edges int) error {
	ctx := context.Background()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	db := analytics.NewLazy(cfg)
	defer db.Close()

	var r interface{ Len() int }
	roles := []struct {
		name string
		run  func(context.Context) error
	}{
		{"first load = full reload", func(ctx context.Context) error {
			rep, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1, History: true, PartSize: cfg.PartSize})
			r = rep
			return err
		}},
		{"refresh (nothing changed)", func(ctx context.Context) error {
			rep, err := analytics.LoadReplica(context.Background(), conn, analytics.ReplicaOptions{Generation: 1, History: true, PartSize: cfg.PartSize})
			if err != nil {
				return err
			}
			_, _, err = analytics.RefreshReplica(ctx, conn, rep, 2)
			return err
		}},
		{"ranks (a day)", func(ctx context.Context) error {
			wm, err := analytics.ReadWatermarks(ctx, conn)
			if err != nil {
				return err
			}
			days, err := analytics.DaysToRank(ctx, conn, views.DayOf(wm.Readings).Time())
			if err != nil {
				return err
			}
			day := analytics.RankDay{Day: views.DayOf(wm.Readings).Time()}
			if len(days) > 0 {
				day = days[len(days)-1]
			}
			return analytics.RankOneDay(ctx, conn, day, cfg.PartSize)
		}},
		{"edition (two week states)", func(ctx context.Context) error {
			wm, err := analytics.ReadWatermarks(ctx, conn)
			if err != nil {
				return err
			}
			end := views.DayOf(wm.Readings).Time()
			for _, at := range []time.Time{end, end.AddDate(0, 0, -7)} {
				if _, err := analytics.LoadWeekState(ctx, conn, at, cfg.PartSize); err != nil {
					return err
				}
			}
			return nil
		}},
		{"exports (a day, 5 stores)", func(ctx context.Context) error {
			wm, err := analytics.ReadWatermarks(ctx, conn)
			if err != nil {
				return err
			}
			for _, s := range views.Stores {
				err := analytics.StreamExportRows(ctx, conn, s, views.DayOf(wm.Readings)-1, func(*analytics.ExportRow) error { return nil })
				if err != nil {
					return err
				}
			}
			return nil
		}},
		{"key reload", func(ctx context.Context) error { return keys.NewRegistry(db).Load(ctx) }},
		{"usage sync", func(ctx context.Context) error {
			_, err := analytics.LoadUsageSince(ctx, conn, time.Now(), time.Now().Add(-2*time.Second))
			return err
		}},
	}
	costs := map[string]cost{}
	fmt.Printf("%-28s %8s %14s %12s %10s %9s\n", "role", "queries", "rows read", "MiB read", "CPU ms", "took")
	for _, role := range roles {
		tag := fmt.Sprintf("fleetcost-%d", time.Now().UnixNano())
		tagged := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"log_queries": 1}), clickhouse.WithQuotaKey(tag))
		start := time.Now()
		if err := role.run(tagged); err != nil {
			return fmt.Errorf("%s: %w", role.name, err)
		}
		c, err := measure(ctx, cfg, tag)
		if err != nil {
			return fmt.Errorf("%s: %w", role.name, err)
		}
		c.took = time.Since(start)
		costs[role.name] = c
		fmt.Printf("%-28s %8d %14d %12.1f %10.0f %9s\n", role.name, c.queries, c.rows, float64(c.bytes)/(1<<20), c.cpu()*1000, c.took.Round(time.Millisecond))
	}
	if r != nil {
		fmt.Printf("\nlistings: %d\n", r.Len())
	}
	// The data's span decides what a new edge catches up on: every week's
	// edition, the kept days of exports, and the days of ranks.
	wm, err := analytics.ReadWatermarks(ctx, conn)
	if err != nil {
		return err
	}
	first, err := analytics.FirstReadingDay(ctx, conn)
	if err != nil {
		return err
	}
	days := int(views.DayOf(wm.Readings)-first) + 1
	weeks, exportDays, rankDays := days/7, min(days-1, 30), min(days, analytics.HistoryDays)
	c := func(name string) float64 { return costs[name].cpu() }
	// A new edge of a running fleet finds the days ranked (the ranks live
	// in ClickHouse) and the editions kept (it loads them), but builds,
	// without a shared exports volume, the kept days of exports. The
	// fleet's first edge builds every edition and ranks every day too.
	start := c("first load = full reload") + float64(exportDays)*c("exports (a day, 5 stores)")
	firstOfFleet := start + float64(weeks)*c("edition (two week states)")/2 + float64(rankDays)*c("ranks (a day)")
	// An hour at the default schedules: a full reload (hourly), 11
	// refreshes (every 5 minutes but the reload's), the ranks of the
	// current day (hourly), a key reload every 10 s, a usage sync every
	// 2 s; a day's exports once a day and an edition once a week.
	hour := c("first load = full reload") + 11*c("refresh (nothing changed)") + c("ranks (a day)") +
		360*c("key reload") + 1800*c("usage sync") + c("exports (a day, 5 stores)")/24 + c("edition (two week states)")/168
	fmt.Printf("\ndata: %d days (%d weeks); the fleet's first edge builds %d editions (a week state each, the previous one shared) and ranks %d days; every edge builds %d days of exports\n",
		days, weeks, weeks, rankDays, exportDays)
	fmt.Printf("a new edge's start: %.1f CPU s of ClickHouse (the fleet's first edge: %.1f)\n", start, firstOfFleet)
	fmt.Printf("one edge, an hour at the default schedules: %.1f CPU s (%.2f%% of a core)\n", hour, hour/36)
	fmt.Printf("%d edges, each doing every role (today's design): start %.1f CPU s; an hour %.1f CPU s (%.1f%% of a core), %.1fx one edge\n",
		edges, float64(edges)*start, float64(edges)*hour, float64(edges)*hour/36, float64(edges))
	return nil
}

// measure sums the query log rows of every query tagged tag, on every
// server of the configured addresses (a cluster's shards log their part
// of a Distributed query themselves).
func measure(ctx context.Context, cfg analytics.Config, tag string) (cost, error) {
	var total cost
	for _, addr := range analytics.Addrs(cfg.Addr) {
		one := cfg
		one.Addr, one.Cluster = addr, ""
		conn, err := analytics.Open(ctx, one)
		if err != nil {
			return total, err
		}
		c, err := measureOne(ctx, conn, tag)
		conn.Close()
		if err != nil {
			return total, err
		}
		total.queries += c.queries
		total.rows += c.rows
		total.bytes += c.bytes
		total.cpuMicroseconds += c.cpuMicroseconds
	}
	return total, nil
}

func measureOne(ctx context.Context, conn driver.Conn, tag string) (cost, error) {
	var c cost
	if err := conn.Exec(ctx, "SYSTEM FLUSH LOGS"); err != nil {
		return c, fmt.Errorf("flush logs: %w", err)
	}
	cpu := func(event string) string {
		return fmt.Sprintf("sum(ProfileEvents.Values[indexOf(ProfileEvents.Names, '%s')])", event)
	}
	q := `SELECT count(), sum(read_rows), sum(read_bytes), ` + cpu("UserTimeMicroseconds") + ` + ` + cpu("SystemTimeMicroseconds") + `
		FROM system.query_log WHERE type = 2 AND (quota_key = ? OR initial_query_id IN
			(SELECT query_id FROM system.query_log WHERE quota_key = ? AND is_initial_query))`
	err := conn.QueryRow(ctx, q, tag, tag).Scan(&c.queries, &c.rows, &c.bytes, &c.cpuMicroseconds)
	if err != nil && strings.Contains(err.Error(), "doesn't exist") {
		return c, nil // a server that logged nothing yet
	}
	return c, err
}
