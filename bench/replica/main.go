// Command replica measures loading the listing replica from ClickHouse:
// load time, listings per second, and memory per listing (live heap after
// a forced GC, and the process's resident set). It loads the replica
// --runs times and reports each run and the best.
//
//	go run ./bench/replica --ch-addr 127.0.0.1:19000 --ch-database bench_1m
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views/replica"
)

func main() {
	cfg := analytics.DefaultConfig()
	runs := flag.Int("runs", 3, "loads to measure")
	history := flag.Bool("history", false, "also load growth bases, climb bases and sparklines")
	flag.StringVar(&cfg.Addr, "ch-addr", cfg.Addr, "ClickHouse native address")
	flag.StringVar(&cfg.Database, "ch-database", cfg.Database, "database")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the loads to this file")
	grow := flag.Bool("grow-gc", true, "collect by a memory goal while loading, as the edge does after a restart (memory.GrowGC); false: GOGC")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "replica bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(cfg, *runs, *history, *grow); err != nil {
		fmt.Fprintln(os.Stderr, "replica bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(cfg analytics.Config, runs int, history, grow bool) error {
	ctx := context.Background()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	base := heap()
	var keep *replica.Replica
	best := time.Duration(1<<63 - 1)
	for i := 1; i <= runs; i++ {
		keep = nil
		runtime.GC()
		start := time.Now()
		restore := func() {}
		o := analytics.ReplicaOptions{Generation: uint64(i), History: history}
		if grow {
			o.Counted = func(n int) { restore = memory.GrowGC(n) }
		}
		r, err := analytics.LoadReplica(ctx, conn, o)
		restore()
		if err != nil {
			return err
		}
		took := time.Since(start)
		best = min(best, took)
		keep = r
		live := heap() - base
		fmt.Printf("run %d: %d listings in %v (%.0f listings/s), live heap %.0f B/listing, RSS %.0f B/listing\n",
			i, r.Len(), took.Round(time.Millisecond), float64(r.Len())/took.Seconds(),
			float64(live)/float64(r.Len()), float64(rss())/float64(r.Len()))
	}
	fmt.Printf("best: %v (%.0f listings/s) for %d listings; peak RSS %.0f B/listing\n", best.Round(time.Millisecond),
		float64(keep.Len())/best.Seconds(), keep.Len(), float64(status("VmHWM:"))/float64(keep.Len()))
	runtime.KeepAlive(keep)
	return nil
}

// heap returns the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// rss returns the resident set size of this process in bytes.
func rss() uint64 { return status("VmRSS:") }

// status returns a size line of /proc/self/status in bytes.
func status(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
