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
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"net/netip"
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
// it (reading the query, writing a 40 KB answer, the collections of its
// garbage: measured on a flood of distinct queries at 1M listings), so a
// flooding caller that computed in every one of its turns took 1.6 cores
// of two, and another caller's queries waited 20–75 ms to be read at all.
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

// Enter waits for a turn for a miss of who, at most the gate's Wait, and
// returns the func to call when the miss is computed; or, once the
// refusal has been held (Config.Hold), the problem to answer (503,
// Retry-After: 1).
func (g *Gate) Enter(who Caller) (func(), error) {
	now := time.Now()
	g.mu.Lock()
	g.sweep(now)
	c := g.callers[who]
	if c == nil {
		c = &caller{who: who}
		g.callers[who] = c
	}
	if g.waiting == 0 && g.canRun(now) && g.mayRun(c, now) {
		g.start(c)
		g.mu.Unlock()
		return g.admit(c, now), nil
	}
	if len(c.waiters) >= g.cfg.Queue {
		c.overflowed = now
		g.forget(c)
		g.mu.Unlock()
		return nil, g.refuse("caller", now, true)
	}
	if g.waiting >= g.maxWaiting && !g.makeRoom(c) {
		flood := flooding(c, now)
		g.forget(c)
		g.mu.Unlock()
		return nil, g.refuse("queue", now, flood)
	}
	w := &waiter{turn: make(chan bool, 1)}
	if len(c.waiters) == 0 {
		g.ring = append(g.ring, c)
	}
	c.waiters = append(c.waiters, w)
	g.waiting++
	g.waitingN.Store(int64(g.waiting))
	g.dispatch(now)
	g.mu.Unlock()

	timer := time.NewTimer(g.cfg.Wait)
	defer timer.Stop()
	select {
	case ok := <-w.turn:
		return g.answer(c, ok, now)
	case <-timer.C:
	}
	g.mu.Lock()
	if w.answered { // its turn came as the wait ran out
		g.mu.Unlock()
		return g.answer(c, <-w.turn, now)
	}
	g.drop(c, w)
	why := "wait"
	if g.Contended(time.Now()) && g.running < g.shared {
		why = "share" // turns were free: the budget was spent
	}
	flood := flooding(c, time.Now())
	g.forget(c)
	g.mu.Unlock()
	return nil, g.refuse(why, now, flood)
}

// Crowded returns the problem to answer (503, Retry-After: 1, counted as
// why="caller") when who's queue is full, once the refusal has been held
// (Config.Hold), and nil at once otherwise: a handler asks it before it
// reads a query, so that a caller flooding misses is refused for the
// price of a lookup, not of a query read, keyed and looked up.
func (g *Gate) Crowded(who Caller) error {
	now := time.Now()
	g.mu.Lock()
	c := g.callers[who]
	full := c != nil && len(c.waiters) >= g.cfg.Queue
	if full {
		c.overflowed = now
	}
	g.mu.Unlock()
	if full {
		return g.refuse("caller", now, true)
	}
	return nil
}

// answer is what a waiting miss of c that arrived at since gets: its
// turn, or its place taken.
func (g *Gate) answer(c *caller, ok bool, since time.Time) (func(), error) {
	if !ok {
		g.mu.Lock()
		flood := flooding(c, time.Now())
		g.forget(c)
		g.mu.Unlock()
		return nil, g.refuse("queue", since, flood)
	}
	return g.admit(c, time.Now()), nil
}

// refuse counts a refusal of a miss that arrived at since, holds it until
// between half the Hold and the Hold after since (unless maxHeld are held
// already), and returns the problem to answer. The end is drawn at random:
// a flood's connections, refused together, would otherwise wake together
// a Hold later, ask again together and be refused together, every Hold,
// and each wave of hundreds of goroutines made ready at once delays the
// reading of every other query (by 175 ms in a trace).
//
// A flooding caller's refusals are held floodHold times longer: its
// connections, each asking again at once, would otherwise be refused
// every 125-250 ms each, which from thousands of connections is tens of
// thousands of reads and writes a second (15,000 took 0.4 of a core).
func (g *Gate) refuse(why string, since time.Time, flood bool) error {
	g.refused.WithLabelValues(why).Inc()
	full := g.cfg.Hold
	if flood && full > 0 {
		full *= floodHold
	}
	hold := full/2 + rand.N(full/2+1)
	if d := hold - time.Since(since); d > 0 {
		if g.held.Add(1) <= maxHeld {
			g.sleep(d)
		}
		g.held.Add(-1)
	}
	return busy()
}

// canRun reports whether a miss may start at now (g.mu held): a turn is
// free and, while cached answers are delayed, the budget has credit.
func (g *Gate) canRun(now time.Time) bool {
	if !g.Contended(now) {
		return g.running < g.procs
	}
	return g.running < g.shared && g.due(now) == 0
}

// mayRun reports whether c may start one more miss at now (g.mu held): a
// caller whose queue overflowed in the last floodingFor runs at most
// g.flooding misses at once, within its computing budget (floodDue), so
// that the others' queries find a core free, and are read at all, while
// it floods.
func (g *Gate) mayRun(c *caller, now time.Time) bool {
	if !flooding(c, now) {
		return true
	}
	return c.running < g.flooding && g.floodDue(c, now) == 0
}

// flooding reports whether c is taken to be flooding at now.
func flooding(c *caller, now time.Time) bool { return now.Sub(c.overflowed) < floodingFor }

// floodDue returns how long until c, flooding, has computing budget at
// now (0: it has; g.mu held).
func (g *Gate) floodDue(c *caller, now time.Time) time.Duration {
	return c.budget.due(now, g.floodRate, floodBurst)
}

// start counts a miss of c as running (g.mu held).
func (g *Gate) start(c *caller) {
	c.running++
	g.running++
	g.runningN.Store(int64(g.running))
}

// dispatch gives the free turns to the misses waiting (g.mu held): each
// to the caller with the fewest misses running, the ring's order between
// equals, none to a flooding caller past its turns (mayRun). While the
// budget has no credit, it looks again when it has.
func (g *Gate) dispatch(now time.Time) {
	for len(g.ring) > 0 {
		if !g.canRun(now) {
			if g.Contended(now) && g.running < g.shared {
				g.retryIn(g.due(now))
			}
			return
		}
		best := -1
		for k := range g.ring {
			i := (g.next + k) % len(g.ring)
			if g.mayRun(g.ring[i], now) && (best < 0 || g.ring[i].running < g.ring[best].running) {
				best = i
			}
		}
		if best < 0 {
			// Only flooding callers wait: the free turns stay free, until
			// one has budget again.
			var soon time.Duration
			for _, c := range g.ring {
				if c.running < g.flooding {
					if d := g.floodDue(c, now); d > 0 && (soon == 0 || d < soon) {
						soon = d
					}
				}
			}
			if soon > 0 {
				g.retryIn(soon)
			}
			return
		}
		c := g.ring[best]
		w := c.waiters[0]
		c.waiters = c.waiters[1:]
		g.waiting--
		g.waitingN.Store(int64(g.waiting))
		g.start(c)
		w.answered = true
		w.turn <- true
		if len(c.waiters) == 0 {
			g.ring = append(g.ring[:best], g.ring[best+1:]...)
			if len(g.ring) > 0 {
				g.next = best % len(g.ring)
			}
		} else {
			g.next = (best + 1) % len(g.ring)
		}
	}
}

// retryIn dispatches again after d, unless a dispatch is due sooner
// (g.mu held).
func (g *Gate) retryIn(d time.Duration) {
	at := time.Now().Add(d)
	if g.retiming && !at.Before(g.retryAt) {
		return // a dispatch comes sooner
	}
	g.retiming, g.retryAt = true, at
	if g.retimer == nil {
		g.retimer = time.AfterFunc(d, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.retiming = false
			g.dispatch(time.Now())
		})
		return
	}
	g.retimer.Reset(d)
}

// makeRoom takes the place of the newest miss of the longest queue for a
// miss of c, when that queue is longer than c's would be (g.mu held).
func (g *Gate) makeRoom(c *caller) bool {
	var longest *caller
	for _, q := range g.ring {
		if longest == nil || len(q.waiters) > len(longest.waiters) {
			longest = q
		}
	}
	if longest == nil || len(longest.waiters) <= len(c.waiters)+1 {
		return false
	}
	w := longest.waiters[len(longest.waiters)-1]
	g.drop(longest, w)
	w.answered = true
	w.turn <- false
	return true
}

// drop removes w from c's waiting misses (g.mu held).
func (g *Gate) drop(c *caller, w *waiter) {
	for i, x := range c.waiters {
		if x == w {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			g.waiting--
			g.waitingN.Store(int64(g.waiting))
			break
		}
	}
	if len(c.waiters) == 0 {
		for i, q := range g.ring {
			if q == c {
				g.ring = append(g.ring[:i], g.ring[i+1:]...)
				if g.next > i {
					g.next--
				}
				if len(g.ring) > 0 {
					g.next %= len(g.ring)
				} else {
					g.next = 0
				}
				break
			}
		}
	}
}

// forget drops c from the callers once it has nothing running or
// waiting (g.mu held), unless it is flooding: a flood's queue empties
// for a moment while its connections' refusals are held, and forgetting
// it then forgot that it floods, and its budget, so that it took every
// turn again until its queue next overflowed. sweep drops it later.
func (g *Gate) forget(c *caller) {
	if c.running == 0 && len(c.waiters) == 0 && !flooding(c, time.Now()) {
		delete(g.callers, c.who)
	}
}

// sweep drops, once every floodingFor, the callers kept by forget that
// have nothing running or waiting and no longer flood (g.mu held).
func (g *Gate) sweep(now time.Time) {
	if now.Sub(g.swept) < floodingFor {
		return
	}
	g.swept = now
	for who, c := range g.callers {
		if c.running == 0 && len(c.waiters) == 0 && !flooding(c, now) {
			delete(g.callers, who)
		}
	}
}

// admit starts a miss of c at now, in the turn it holds.
func (g *Gate) admit(c *caller, now time.Time) func() {
	g.admitted.Inc()
	return func() { g.leave(c, now) }
}

// Contended reports whether other work waited for a core recently, at
// now: then misses take only their share.
func (g *Gate) Contended(now time.Time) bool { return now.UnixNano() < g.contended.Load() }

// minCached is the fewest cached answers a sample of Watch must have
// served to count: cached answers at 200 a second or more. A rare one
// among misses (a repeated query, a health check) does not hand the CPU
// back to the share for contendedFor.
const minCached = 2

// contendedFor is how long the share applies after cached answers were
// last seen delayed.
const contendedFor = 500 * time.Millisecond

// Watch samples Go's scheduler latencies every 10 ms until ctx ends: when
// cached answers were served in a sample (SetCached; at least minCached
// of them) and more than 1% of
// the goroutines that ran in it waited 1 ms or more for a core, the
// cached answers waited too: misses take only their share for the next
// contendedFor. Misses that wait only on misses (no cached answer served)
// never make the CPU contended. Without SetCached every sample counts;
// without Watch, the share always applies.
func (g *Gate) Watch(ctx context.Context) {
	g.contended.Store(0)
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	var last []uint64
	var lastCached uint64
	if g.cached != nil {
		lastCached = g.cached()
	}
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
		served := true
		if g.cached != nil {
			n := g.cached()
			served, lastCached = n-lastCached >= minCached, n
		}
		h := sample[0].Value.Float64Histogram()
		if len(last) == len(h.Counts) && served && late(h, last) {
			g.contended.Store(time.Now().Add(contendedFor).UnixNano())
		}
		last = append(last[:0], h.Counts...)
	}
}

// late reports whether more than 1% of the goroutines scheduled since
// the counts last waited 1 ms or more for a core.
func late(h *metrics.Float64Histogram, last []uint64) bool {
	var all, late uint64
	for i, c := range h.Counts {
		d := c - last[i]
		all += d
		if h.Buckets[i] >= 0.001 {
			late += d
		}
	}
	return all > 0 && late*100 > all
}

// due returns how long until the budget has credit at now (0: it has;
// g.mu held).
func (g *Gate) due(now time.Time) time.Duration { return g.budget.due(now, g.rate, g.burst) }

// leave frees the turn of a miss of c that started at start, spends its
// time from the budget (the wall time it took: computing, or waiting for
// a core, which the share then counts against misses), and gives the turn
// to a miss waiting.
func (g *Gate) leave(c *caller, start time.Time) {
	now := time.Now()
	took := now.Sub(start)
	g.busy.Add(took.Seconds())
	g.mu.Lock()
	defer g.mu.Unlock()
	g.due(now)
	g.budget.credit -= took
	if !g.Contended(now) {
		g.budget.credit = max(g.budget.credit, 0) // idle CPU taken is no debt
	}
	if flooding(c, now) {
		g.floodDue(c, now)
		c.budget.credit -= took
	}
	c.running--
	g.running--
	g.runningN.Store(int64(g.running))
	g.forget(c)
	g.dispatch(now)
}

func busy() error {
	return problem.New(http.StatusServiceUnavailable,
		"The edge is computing as many uncached answers as it allows. Retry in a second; answers asked again and again come from the cache at once.").RetryAfter(1).
		ForReaders("The server is busy making as many new pages as it can.")
}
