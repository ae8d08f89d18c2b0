// Package missgate bounds the work of cache misses: answers to queries
// of the long tail (filters, sorts, pages: URLs a CDN does not absorb).
// While answers that need no computing (cached answers, replays, 304s)
// are delayed by the CPU, misses are computed a few at a time and within
// a share of the CPU, so that a flood of distinct misses takes only its
// share; while they are not (no cached answer served, or none waiting for
// a core), misses take the whole machine, one a core. Turns go to the
// caller (a key, an address, an IPv6 /64) with the fewest misses being
// computed, so that one caller flooding misses cannot take the turns of
// the others; each miss waits a bounded time for its turn. A caller that
// overflows its queue is taken to be flooding: for a second it runs at
// most half the turns, within half their time, so that a core stays free
// for the others (and for reading their queries at all). Every refusal
// is held before it is answered (a flooding caller's eight times as
// long), so that a client that asks again at once costs the edge one read
// and one write a connection every half Hold to Hold, not a core.
package missgate

import (
	"math"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config sets a gate's bounds.
type Config struct {
	// Share is the part of the CPU (GOMAXPROCS cores) misses may take
	// while cached answers are delayed: they are computed at most
	// ceil(GOMAXPROCS × Share) at a time, and spend at most GOMAXPROCS ×
	// Share seconds of computing a second, with a burst of Burst.
	// Otherwise misses take the CPU: up to GOMAXPROCS at a time (or the
	// share's turns, if more), at full speed.
	Share float64
	// Burst is the computing time misses may spend at once past their
	// share after a quiet while: a dashboard's few queries, or an
	// analyst's, run at full speed.
	Burst time.Duration
	// Wait is the longest a miss waits for its turn before it is refused
	// (503, Retry-After: 1).
	Wait time.Duration
	// Queue is the most misses of one caller waiting at once; past it a
	// miss of that caller is refused at once. All callers' together wait
	// at most Queue × GOMAXPROCS at once; past that a newcomer takes the
	// place of the newest miss of the longest queue.
	Queue int
	// Hold is how long after it arrived a refused miss is answered at
	// most, at least half of it (the HAProxy "tarpit"): a client that
	// asks again at once, whatever Retry-After says, sends at most a miss
	// a connection every half Hold, and a flood of refusals cannot take
	// the CPU. A flooding caller's refusals are held floodHold times as
	// long. At most maxHeld refusals are held at once; past that they are
	// answered at once. Negative: refusals are answered at once.
	Hold time.Duration
}

// maxHeld is the most refusals held at once (Config.Hold): each holds
// its connection's goroutine, parked, and a timer; its connection's
// buffers are held by the connection anyway.
const maxHeld = 1 << 16

// floodingFor is how long a caller whose queue overflowed is taken to be
// flooding: it runs at most half the turns (Gate.flooding), within
// floodShare of their time.
const floodingFor = time.Second

// floodShare is the share of its turns' time a flooding caller may spend
// computing: Gate.flooding × floodShare seconds a second, with a burst
// of floodBurst. A miss costs about as much again outside its turn as in
// it (reading the query, writing its answer, collecting its garbage), so
// a flooding caller that computed in every one of its turns would take
// most of the cores, and another caller's queries would wait to be read
// at all (bench/README.md, Held refusals and flooding callers).
const (
	floodShare = 0.5
	floodBurst = 50 * time.Millisecond
)

// floodHold is how many times longer than Config.Hold the refusals of a
// flooding caller are held (Gate.refuse): 1-2 s by default.
const floodHold = 8

// DefaultConfig returns the defaults: 15% of the CPU while cached answers
// are delayed, with a burst of a second of computing, 25 ms of waiting at
// most, 8 waiting a caller, refusals held 250 ms.
func DefaultConfig() Config {
	return Config{Share: 0.15, Burst: time.Second, Wait: 25 * time.Millisecond, Queue: 8, Hold: 250 * time.Millisecond}
}

// Caller is who a miss is computed for: a key, or an address (an IPv6
// address cut to its /64, as the limits count it).
type Caller struct {
	Key  string
	Addr netip.Addr
}

// Gate admits misses. It is safe for concurrent use.
type Gate struct {
	cfg        Config
	procs      int // turns while cached answers are not delayed
	shared     int // turns while they are: ceil(GOMAXPROCS × Share)
	flooding   int // turns of a caller taken to be flooding: half the procs
	maxWaiting int
	floodRate  float64 // a flooding caller's computing budget: nanoseconds a nanosecond

	// The computing budget while cached answers are delayed (budget)
	// grows by rate (nanoseconds of computing a nanosecond) up to burst,
	// and each miss spends its time.
	rate  float64
	burst time.Duration

	mu       sync.Mutex
	budget   bucket // the computing budget while cached answers are delayed (rate, burst)
	running  int
	waiting  int
	callers  map[Caller]*caller // callers with misses running or waiting
	ring     []*caller          // callers with misses waiting
	next     int                // where the ring's turns go on
	retimer  *time.Timer        // dispatches when the budget has credit again
	retiming bool
	retryAt  time.Time // when the retimer dispatches, while retiming
	swept    time.Time // when sweep last ran

	// contended is the time (unix nanoseconds) until which cached
	// answers are taken to be delayed: the share applies until then.
	contended atomic.Int64
	// cached counts the answers that needed no computing (SetCached).
	cached func() uint64
	// sleep holds a refusal (time.Sleep; a recorder in tests).
	sleep func(time.Duration)
	held  atomic.Int64 // refusals being held

	runningN, waitingN atomic.Int64
	runningG           prometheus.GaugeFunc
	queued             prometheus.GaugeFunc
	heldG              prometheus.GaugeFunc
	admitted           prometheus.Counter
	refused            *prometheus.CounterVec
	busy               prometheus.Counter
}

// caller is one caller's misses: running, and waiting in order.
type caller struct {
	who     Caller
	running int
	waiters []*waiter
	// overflowed is when the caller's queue was last found full: it is
	// taken to be flooding for floodingFor after.
	overflowed time.Time
	// budget is the caller's computing budget while it floods: it grows
	// by Gate.floodRate up to floodBurst, and each miss of its that ends
	// while it floods spends its time (floodDue).
	budget bucket
}

// bucket is a computing budget (g.mu held): its credit at at grows by a
// rate (nanoseconds of computing a nanosecond) up to a burst, and misses
// spend their time from it. The zero bucket is full.
type bucket struct {
	credit time.Duration
	at     time.Time
}

// due returns how long until b has credit at now (0: it has).
func (b *bucket) due(now time.Time, rate float64, burst time.Duration) time.Duration {
	if b.at.IsZero() {
		b.credit = burst
	} else {
		b.credit = min(burst, b.credit+time.Duration(float64(now.Sub(b.at))*rate))
	}
	b.at = now
	if b.credit > 0 {
		return 0
	}
	return time.Duration(float64(-b.credit)/rate) + time.Microsecond
}

// waiter is a miss waiting for its turn. turn receives true when it is
// given one, false when a newcomer took its place.
type waiter struct {
	turn     chan bool
	answered bool // a value is in turn (guarded by Gate.mu)
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
	if cfg.Hold == 0 {
		cfg.Hold = d.Hold
	}
	procs := runtime.GOMAXPROCS(0)
	rate := float64(procs) * cfg.Share
	n := max(1, int(math.Ceil(rate-1e-9)))
	flooding := max(1, max(n, procs)/2)
	g := &Gate{cfg: cfg, procs: max(n, procs), shared: n, flooding: flooding, floodRate: float64(flooding) * floodShare, maxWaiting: cfg.Queue * procs,
		rate: rate, burst: cfg.Burst, callers: make(map[Caller]*caller), sleep: time.Sleep}
	g.contended.Store(math.MaxInt64) // until Watch samples the scheduler: the share applies
	g.runningG = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_running",
		Help: "Uncached answers to queries being computed."}, func() float64 { return float64(g.runningN.Load()) })
	g.queued = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_waiting",
		Help: "Uncached answers to queries waiting for their turn."}, func() float64 { return float64(g.waitingN.Load()) })
	g.heldG = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_miss_gate_held",
		Help: "Refusals (503) held before they are answered, so that a client asking again at once cannot take the CPU."}, func() float64 { return float64(g.held.Load()) })
	g.admitted = prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_miss_gate_admitted_total",
		Help: "Uncached answers to queries computed."})
	g.refused = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_miss_gate_refused_total",
		Help: "Uncached answers to queries refused (503): why is caller (the caller's queue was full), queue (every queue was full, or a newcomer took its place), wait (no turn came in time) or share (the share of the CPU was spent while cached answers were delayed)."}, []string{"why"})
	g.busy = prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_miss_gate_compute_seconds_total",
		Help: "Time spent computing uncached answers to queries."})
	return g
}

// Slots returns the misses computed at once at most while cached answers
// are delayed.
func (g *Gate) Slots() int { return g.shared }

// SetCached gives the gate the count of answers that needed no computing
// (cached answers, replays, 304s; a count that only grows): Watch takes
// the CPU to be contended only while such answers are served. Call it
// before Watch.
func (g *Gate) SetCached(count func() uint64) { g.cached = count }

// Collectors returns the gate's metrics.
func (g *Gate) Collectors() []prometheus.Collector {
	slots := prometheus.NewGauge(prometheus.GaugeOpts{Name: "edge_miss_gate_slots", Help: "Uncached answers to queries computed at once at most while cached answers are delayed."})
	slots.Set(float64(g.shared))
	return []prometheus.Collector{g.runningG, g.queued, g.heldG, g.admitted, g.refused, g.busy, slots}
}

// due returns how long until the budget has credit at now (0: it has;
// g.mu held).
func (g *Gate) due(now time.Time) time.Duration { return g.budget.due(now, g.rate, g.burst) }
