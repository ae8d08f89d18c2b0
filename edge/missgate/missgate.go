// Package missgate bounds the work of cache misses: answers to queries
// of the long tail (filters, sorts, pages: URLs a CDN does not absorb)
// are computed a few at a time and within a share of the CPU, each
// waiting a bounded time for its turn, so that a flood of distinct misses
// takes only its share and a cached answer never queues behind one.
package missgate

import (
	"context"
	"math"
	"net/http"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/edge/problem"
)

// Config sets a gate's bounds.
type Config struct {
	// Share is the part of the CPU (GOMAXPROCS cores) misses may take
	// while other work waits for a core: they are computed at most
	// ceil(GOMAXPROCS × Share) at a time, and spend at most GOMAXPROCS ×
	// Share seconds of computing a second, with a burst of Burst. While no
	// goroutine waits for a core (Go's scheduler latencies, sampled every
	// 10 ms), misses take the idle CPU: up to GOMAXPROCS at a time, at
	// full speed.
	Share float64
	// Burst is the computing time misses may spend at once past their
	// share after a quiet while: a dashboard's few queries, or an
	// analyst's, run at full speed.
	Burst time.Duration
	// Wait is the longest a miss waits for its turn before it is refused
	// (503, Retry-After: 1).
	Wait time.Duration
	// Queue is the most misses waiting at once, per turn; past it a miss
	// is refused at once.
	Queue int
}

// DefaultConfig returns the defaults: 15% of the CPU under contention
// with a burst of a second of computing, 25 ms of waiting at most, 8
// waiting a turn.
func DefaultConfig() Config {
	return Config{Share: 0.15, Burst: time.Second, Wait: 25 * time.Millisecond, Queue: 8}
}

// Gate admits misses. It is safe for concurrent use.
type Gate struct {
	cfg     Config
	slots   chan struct{}
	waiting atomic.Int64
	maxWait int64

	// The computing budget: credit grows by rate (nanoseconds of computing
	// a nanosecond) up to burst, and each miss spends its time. shared
	// are the turns under contention (ceil(rate)); the slots' capacity
	// (GOMAXPROCS, or shared if more) is the turns while the CPU is idle.
	rate   float64
	burst  time.Duration
	shared int
	mu     sync.Mutex
	credit time.Duration
	at     time.Time

	// contended is the time (unix nanoseconds) until which other work is
	// taken to wait for a core: the share applies until then.
	contended atomic.Int64

	running  prometheus.GaugeFunc
	queued   prometheus.GaugeFunc
	admitted prometheus.Counter
	refused  *prometheus.CounterVec
	busy     prometheus.Counter
}

// New returns a gate with cfg's bounds (DefaultConfig's where a bound is
// not positive).
func New(cfg Config) *Gate {
	d := DefaultConfig()
	if cfg.Share <= 0 {
		cfg.Share = d.Share
	}
	if cfg.Burst <= 0 {
		cfg.Burst = d.Burst
	}
	if cfg.Wait <= 0 {
		cfg.Wait = d.Wait
	}
	if cfg.Queue <= 0 {
		cfg.Queue = d.Queue
	}
	procs := runtime.GOMAXPROCS(0)
	rate := float64(procs) * cfg.Share
	n := max(1, int(math.Ceil(rate-1e-9)))
	g := &Gate{cfg: cfg, slots: make(chan struct{}, max(n, procs)), maxWait: int64(n * cfg.Queue),
		rate: rate, burst: cfg.Burst, shared: n, credit: cfg.Burst, at: time.Now()}
	g.contended.Store(math.MaxInt64) // until Watch samples the scheduler: the share applies
	g.running = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_running",
		Help: "Uncached answers to queries being computed (at most edge_miss_gate_slots)."}, func() float64 { return float64(len(g.slots)) })
	g.queued = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_waiting",
		Help: "Uncached answers to queries waiting for their turn."}, func() float64 { return float64(g.waiting.Load()) })
	g.admitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_miss_gate_admitted_total",
		Help: "Uncached answers to queries computed."})
	g.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_miss_gate_refused_total",
		Help: "Uncached answers to queries refused (503): the queue was full, or the wait ran out."}, []string{"why"})
	g.busy = prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_miss_gate_compute_seconds_total",
		Help: "Time spent computing uncached answers to queries (their share of the CPU)."})
	return g
}

// Slots returns the misses computed at once at most while other work
// waits for a core.
func (g *Gate) Slots() int { return g.shared }

// Collectors returns the gate's metrics.
func (g *Gate) Collectors() []prometheus.Collector {
	slots := prometheus.NewGauge(prometheus.GaugeOpts{Name: "edge_miss_gate_slots", Help: "Uncached answers to queries computed at once at most."})
	slots.Set(float64(g.shared))
	return []prometheus.Collector{g.running, g.queued, g.admitted, g.refused, g.busy, slots}
}

// Enter waits for a turn, at most the gate's Wait, and returns the func
// to call when the miss is computed; or the problem to answer (503,
// Retry-After: 1). A turn is a slot free and, while other work waits for
// a core, one of the share's turns with the computing budget not spent.
func (g *Gate) Enter() (func(), error) {
	deadline := time.Now().Add(g.cfg.Wait)
	queued := false
	defer func() {
		if queued {
			g.waiting.Add(-1)
		}
	}()
	for {
		wait, why := time.Millisecond, "wait"
		select {
		case g.slots <- struct{}{}:
			now := time.Now()
			if !g.Contended(now) {
				return g.admit(now), nil
			}
			if len(g.slots) <= g.shared {
				if wait = g.due(now); wait == 0 {
					return g.admit(now), nil
				}
				why = "share"
			}
			<-g.slots
		default:
		}
		if !queued {
			if g.waiting.Add(1) > g.maxWait {
				g.refused.WithLabelValues("queue").Inc()
				g.waiting.Add(-1)
				return nil, busy()
			}
			queued = true
		}
		wait = min(wait, 2*time.Millisecond)
		if time.Now().Add(wait).After(deadline) {
			g.refused.WithLabelValues(why).Inc()
			return nil, busy()
		}
		time.Sleep(wait)
	}
}

// admit starts a miss at now, in the slot it holds.
func (g *Gate) admit(now time.Time) func() {
	g.admitted.Inc()
	return func() { g.leave(now) }
}

// Contended reports whether other work waited for a core recently, at
// now: then misses take only their share.
func (g *Gate) Contended(now time.Time) bool { return now.UnixNano() < g.contended.Load() }

// contendedFor is how long the share applies after work was last seen
// waiting for a core.
const contendedFor = 500 * time.Millisecond

// Watch samples Go's scheduler latencies every 10 ms until ctx ends: when
// more than 1% of the goroutines that ran in a sample waited 1 ms or more
// for a core, the CPU is contended and misses take only their share for
// the next contendedFor. Without Watch, the share always applies.
func (g *Gate) Watch(ctx context.Context) {
	g.contended.Store(0)
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	var last []uint64
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
			g.contended.Store(math.MaxInt64) // no such metric: the share always applies
			return
		}
		h := sample[0].Value.Float64Histogram()
		if len(last) == len(h.Counts) {
			var all, late uint64
			for i, c := range h.Counts {
				d := c - last[i]
				all += d
				if h.Buckets[i] >= 0.001 {
					late += d
				}
			}
			if all > 0 && late*100 > all {
				g.contended.Store(time.Now().Add(contendedFor).UnixNano())
			}
		}
		last = append(last[:0], h.Counts...)
	}
}

// due returns how long until the budget has credit at now (0: it has).
func (g *Gate) due(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.credit = min(g.burst, g.credit+time.Duration(float64(now.Sub(g.at))*g.rate))
	g.at = now
	if g.credit > 0 {
		return 0
	}
	return time.Duration(float64(-g.credit)/g.rate) + time.Microsecond
}

// leave frees the turn of a miss that started at start and spends its
// time from the budget (the wall time it took: computing, or waiting for
// a core, which the share then counts against misses).
func (g *Gate) leave(start time.Time) {
	now := time.Now()
	took := now.Sub(start)
	g.mu.Lock()
	g.credit -= took
	if !g.Contended(now) {
		g.credit = max(g.credit, 0) // idle CPU taken is no debt
	}
	g.mu.Unlock()
	g.busy.Add(took.Seconds())
	<-g.slots
}

func busy() error {
	return problem.New(http.StatusServiceUnavailable,
		"The edge is computing as many uncached answers as it allows. Retry in a second; answers asked before come from the cache at once.").RetryAfter(1)
}
