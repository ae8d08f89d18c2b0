package missgate

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/edge-stats/edge/edge/problem"
)

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
// reading of every other query.
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
