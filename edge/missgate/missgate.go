// Package missgate bounds the work of cache misses: answers to queries
// of the long tail (filters, sorts, pages: URLs a CDN does not absorb)
// are computed at most a few at a time, each waiting a bounded time for
// its turn, so that a flood of distinct misses takes only its share of
// the CPU and a cached answer never queues behind one.
package missgate

import (
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/edge/problem"
)

// Config sets a gate's bounds.
type Config struct {
	// Share is the part of the CPU (GOMAXPROCS) misses may take: the gate
	// lets max(1, round(GOMAXPROCS × Share)) compute at once.
	Share float64
	// Wait is the longest a miss waits for its turn before it is refused
	// (503, Retry-After: 1).
	Wait time.Duration
	// Queue is the most misses waiting at once, per slot; past it a miss
	// is refused at once.
	Queue int
}

// DefaultConfig returns the defaults: half of the CPU, 25 ms of waiting
// at most, 8 waiting a slot.
func DefaultConfig() Config { return Config{Share: 0.5, Wait: 25 * time.Millisecond, Queue: 8} }

// Gate admits misses. It is safe for concurrent use.
type Gate struct {
	cfg      Config
	slots    chan struct{}
	waiting  atomic.Int64
	maxWait  int64
	running  prometheus.GaugeFunc
	queued   prometheus.GaugeFunc
	admitted prometheus.Counter
	refused  *prometheus.CounterVec
}

// New returns a gate with cfg's bounds (DefaultConfig's where a bound is
// not positive).
func New(cfg Config) *Gate {
	d := DefaultConfig()
	if cfg.Share <= 0 {
		cfg.Share = d.Share
	}
	if cfg.Wait <= 0 {
		cfg.Wait = d.Wait
	}
	if cfg.Queue <= 0 {
		cfg.Queue = d.Queue
	}
	n := max(1, int(float64(runtime.GOMAXPROCS(0))*cfg.Share+0.5))
	g := &Gate{cfg: cfg, slots: make(chan struct{}, n), maxWait: int64(n * cfg.Queue)}
	g.running = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_running",
		Help: "Uncached answers to queries being computed (at most edge_miss_gate_slots)."}, func() float64 { return float64(len(g.slots)) })
	g.queued = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_waiting",
		Help: "Uncached answers to queries waiting for their turn."}, func() float64 { return float64(g.waiting.Load()) })
	g.admitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_miss_gate_admitted_total",
		Help: "Uncached answers to queries computed."})
	g.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_miss_gate_refused_total",
		Help: "Uncached answers to queries refused (503): the queue was full, or the wait ran out."}, []string{"why"})
	return g
}

// Slots returns the misses computed at once at most.
func (g *Gate) Slots() int { return cap(g.slots) }

// Collectors returns the gate's metrics.
func (g *Gate) Collectors() []prometheus.Collector {
	slots := prometheus.NewGauge(prometheus.GaugeOpts{Name: "edge_miss_gate_slots", Help: "Uncached answers to queries computed at once at most."})
	slots.Set(float64(cap(g.slots)))
	return []prometheus.Collector{g.running, g.queued, g.admitted, g.refused, slots}
}

// Enter waits for a slot, at most the gate's Wait, and returns the func
// that frees it; or the problem to answer (503, Retry-After: 1).
func (g *Gate) Enter() (func(), error) {
	select {
	case g.slots <- struct{}{}:
		g.admitted.Inc()
		return g.leave, nil
	default:
	}
	if g.waiting.Add(1) > g.maxWait {
		g.waiting.Add(-1)
		g.refused.WithLabelValues("queue").Inc()
		return nil, busy()
	}
	t := time.NewTimer(g.cfg.Wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		g.waiting.Add(-1)
		g.admitted.Inc()
		return g.leave, nil
	case <-t.C:
		g.waiting.Add(-1)
		g.refused.WithLabelValues("wait").Inc()
		return nil, busy()
	}
}

func (g *Gate) leave() { <-g.slots }

func busy() error {
	return problem.New(http.StatusServiceUnavailable,
		"The edge is computing as many uncached answers as it allows. Retry in a second; answers asked before come from the cache at once.").RetryAfter(1)
}
