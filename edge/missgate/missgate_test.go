package missgate

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/problem"
)

var (
	alice = Caller{Addr: netip.MustParseAddr("192.0.2.1")}
	bob   = Caller{Addr: netip.MustParseAddr("2001:db8::")}
	carol = Caller{Key: "key-carol"}
)

func TestSlotsFollowTheShare(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		share float64
		want  int
	}{
		{0.0001, 1}, // never none
		{1, procs},
		{2, 2 * procs},
		{0.6 / float64(procs), 1},
		{1.5, (3*procs + 1) / 2},
		{0, max(1, int(math.Ceil(float64(procs)*DefaultConfig().Share-1e-9)))}, // the default
	} {
		if got := New(Config{Share: tc.share}).Slots(); got != tc.want {
			t.Errorf("share %v on %d procs: %d slots, want %d", tc.share, procs, got, tc.want)
		}
	}
}

func refusal(t *testing.T, err error) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) || p.Status != http.StatusServiceUnavailable {
		t.Fatalf("refusal: %v, want a 503 problem", err)
	}
}

// idle returns a gate whose CPU is not contended (what Watch keeps while
// no cached answer is delayed): misses take GOMAXPROCS turns.
func idle(cfg Config) *Gate {
	g := New(cfg)
	g.contended.Store(0)
	return g
}

// fill takes every turn of g for who and returns the funcs that free them.
func fill(t *testing.T, g *Gate, who Caller) []func() {
	t.Helper()
	return take(t, g, who, g.procs)
}

// take takes n free turns of g for who and returns the funcs that free
// them.
func take(t *testing.T, g *Gate, who Caller, n int) []func() {
	t.Helper()
	var leaves []func()
	for range n {
		l, err := g.Enter(who)
		if err != nil {
			t.Fatalf("a free turn: %v", err)
		}
		leaves = append(leaves, l)
	}
	return leaves
}

// waitFor waits until g has n misses waiting.
func waitFor(t *testing.T, g *Gate, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for g.waitingN.Load() != int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("%d misses waiting, want %d", g.waitingN.Load(), n)
		}
		runtime.Gosched()
	}
}

type entered struct {
	leave func()
	err   error
}

// enter starts a miss of who that waits for its turn; its outcome comes
// on the channel.
func enter(g *Gate, who Caller) chan entered {
	ch := make(chan entered, 1)
	go func() {
		l, err := g.Enter(who)
		ch <- entered{l, err}
	}()
	return ch
}

// TestWaitAndQueue: a miss waits for a turn at most the gate's Wait, at
// most Queue of one caller wait at once (the next is refused at once),
// and a turn freed goes to one waiting.
func TestWaitAndQueue(t *testing.T) {
	g := idle(Config{Share: 0.0001, Wait: 20 * time.Millisecond, Queue: 1})
	leaves := fill(t, g, alice)
	_, err := g.Enter(alice) // waits 20 ms, then refused
	refusal(t, err)

	long := idle(Config{Share: 0.0001, Wait: time.Minute, Queue: 1, Hold: -1})
	holds := fill(t, long, alice)
	waiting := enter(long, alice)
	waitFor(t, long, 1)
	_, err = long.Enter(alice) // alice's queue is full: refused at once (no hold), not after a minute
	refusal(t, err)
	// Her queue overflowed: she is taken to be flooding and runs at most
	// half the turns. The turn freed that brings her below that goes to
	// her waiting miss.
	free := long.procs - long.flooding + 1
	for _, l := range holds[:free] {
		l()
	}
	if e := <-waiting; e.err != nil {
		t.Fatalf("the waiting miss: %v", e.err)
	} else {
		e.leave()
	}
	for _, l := range holds[free:] {
		l()
	}
	for _, l := range leaves {
		l()
	}
	if l, err := g.Enter(alice); err != nil {
		t.Fatalf("a turn freed: %v", err)
	} else {
		l()
	}
	if len(g.callers) != 0 {
		t.Errorf("callers kept with nothing running or waiting: %d", len(g.callers))
	}
	// alice flooded long: she is kept while she floods, and swept after.
	long.mu.Lock()
	defer long.mu.Unlock()
	a := long.callers[alice]
	if a == nil {
		t.Fatal("a flooding caller with nothing running or waiting was forgotten")
	}
	a.overflowed = time.Now().Add(-floodingFor)
	long.swept = time.Time{} // a sweep is due
	long.sweep(time.Now())
	if len(long.callers) != 0 {
		t.Errorf("callers kept after the sweep: %d", len(long.callers))
	}
}

// TestTurnsAreFair: while one caller holds every turn and has misses
// waiting, another caller's miss gets the next turn freed; one caller's
// full queue does not refuse another's; and when every queue is full, a
// newcomer takes the place of the newest miss of the longest queue.
func TestTurnsAreFair(t *testing.T) {
	g := idle(Config{Share: 0.0001, Wait: time.Minute, Queue: 2})
	holds := fill(t, g, alice)
	a1, a2 := enter(g, alice), enter(g, alice)
	waitFor(t, g, 2)
	if _, err := g.Enter(alice); err == nil {
		t.Fatal("alice's third waiting miss was not refused")
	}
	// A handler asks before it reads a query: alice's is refused, bob's
	// goes on.
	refusal(t, g.Crowded(alice))
	if err := g.Crowded(bob); err != nil {
		t.Fatalf("bob, with nothing waiting, crowded: %v", err)
	}
	b := enter(g, bob) // alice's full queue does not refuse bob
	waitFor(t, g, 3)

	holds[0]() // bob runs none, alice all the others: bob's turn
	e := <-b
	if e.err != nil {
		t.Fatalf("bob: %v", e.err)
	}
	select {
	case <-a1:
		t.Fatal("alice's waiting miss took the turn before bob's")
	case <-a2:
		t.Fatal("alice's waiting miss took the turn before bob's")
	default:
	}

	// Every queue full (Queue × GOMAXPROCS waiting): a newcomer takes the
	// place of the newest miss of the longest queue.
	var fillers []chan entered
	for k := 0; int(g.waitingN.Load()) < g.maxWaiting; k++ {
		who := Caller{Key: "filler-" + string(rune('a'+k%20))}
		fillers = append(fillers, enter(g, who))
		waitFor(t, g, 2+len(fillers))
	}
	c := enter(g, carol)
	aliceLeft := []chan entered{a1, a2}
	if g.maxWaiting > 2 {
		// alice's queue (2) is the longest: her newest miss makes room.
		select {
		case e := <-a2:
			refusal(t, e.err)
			aliceLeft = aliceLeft[:1]
		case e := <-a1:
			refusal(t, e.err)
			aliceLeft = aliceLeft[1:]
		case <-time.After(10 * time.Second):
			t.Fatal("no miss made room for the newcomer")
		}
	}
	waitFor(t, g, g.maxWaiting)

	// Free every turn: every miss still waiting gets one.
	e.leave()
	for _, l := range holds[1:] {
		l()
	}
	drain := func(ch chan entered) {
		select {
		case e := <-ch:
			if e.err == nil {
				e.leave()
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting miss never got its turn")
		}
	}
	for _, ch := range append(append(fillers, c), aliceLeft...) {
		drain(ch)
	}
	if g.waitingN.Load() != 0 || g.runningN.Load() != 0 {
		t.Errorf("after all: %d waiting, %d running", g.waitingN.Load(), g.runningN.Load())
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.callers) != 0 || len(g.ring) != 0 {
		t.Errorf("after all: %d callers and %d queues kept (a caller refused or made room of must not stay)", len(g.callers), len(g.ring))
	}
}

// TestShareOfTheCPU: while cached answers are delayed, misses spend their
// computing time from a budget that grows at the share's rate up to the
// burst: once a miss has spent more than the budget holds, the next waits
// for the budget (refused when that is longer than the gate's Wait), and
// the budget grows back.
func TestShareOfTheCPU(t *testing.T) {
	g := New(Config{Share: 0.01 / float64(runtime.GOMAXPROCS(0)), Burst: 10 * time.Millisecond, Wait: 5 * time.Millisecond, Queue: 1})
	leave, err := g.Enter(alice)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // a miss of 30 ms: 20 ms past the burst
	leave()
	// At 1% of a core, 20 ms of computing takes 2 s to earn back.
	_, err = g.Enter(alice)
	refusal(t, err)
	// Time passes (as the budget sees it): the credit is back, up to the
	// burst, whatever the sleep above overran by on a loaded machine.
	g.mu.Lock()
	g.budget.at = g.budget.at.Add(-time.Hour)
	g.mu.Unlock()
	if l, err := g.Enter(alice); err != nil {
		t.Fatalf("after the budget grew back: %v", err)
	} else {
		l()
	}
	// A wide share never waits: a burst of misses runs at once.
	wide := New(Config{Share: 1, Burst: time.Second, Wait: time.Millisecond})
	for range 100 {
		l, err := wide.Enter(bob)
		if err != nil {
			t.Fatal(err)
		}
		l()
	}
}

// TestWaitingMissesGetTheBudgetBack: a miss waiting while the budget has
// no credit gets its turn when the credit comes back, with no other miss
// leaving to hand it over.
func TestWaitingMissesGetTheBudgetBack(t *testing.T) {
	g := New(Config{Share: 0.5 / float64(runtime.GOMAXPROCS(0)), Burst: time.Millisecond, Wait: time.Minute, Queue: 1})
	g.mu.Lock()
	g.budget = bucket{credit: -20 * time.Millisecond, at: time.Now()} // 40 ms at half a core
	g.mu.Unlock()
	if e := <-enter(g, alice); e.err != nil {
		t.Fatalf("the budget back: %v", e.err)
	} else {
		e.leave()
	}
}

// busyCores keeps every core busy four times over until the returned func
// is called.
func busyCores() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
					_ = i * i
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }
}

// TestContendedOnlyWhileCachedAnswersWait: misses alone, however many
// wait for a core, never make the CPU contended (they get every turn);
// once cached answers are served while goroutines wait for a core, the
// share applies.
func TestContendedOnlyWhileCachedAnswersWait(t *testing.T) {
	g := New(Config{Share: 0.0001, Burst: time.Millisecond, Wait: time.Millisecond, Queue: 1})
	if !g.Contended(time.Now()) {
		t.Fatal("a gate nobody watches is not contended: the share must apply")
	}
	var cached atomic.Uint64
	g.SetCached(cached.Load)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.Watch(ctx)
	for g.Contended(time.Now()) {
		runtime.Gosched()
	}

	// Every core busy four times over, no cached answer served, or one
	// now and then (a health check): 50 samples of the scheduler, never
	// contended.
	stop := busyCores()
	for i := range 50 {
		time.Sleep(10 * time.Millisecond)
		if i%10 == 0 {
			cached.Add(1)
		}
		if g.Contended(time.Now()) {
			stop()
			t.Fatal("misses alone made the CPU contended")
		}
	}
	leaves := fill(t, g, alice) // every turn, past the budget: the CPU is theirs
	for _, l := range leaves {
		l()
	}

	// Cached answers served meanwhile: contended.
	serve, served := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(served)
		for {
			select {
			case <-serve:
				return
			default:
				cached.Add(minCached) // a sample that sees it counts, however late the sleep ends
				time.Sleep(time.Millisecond)
			}
		}
	}()
	// Seen while the answers are served: once they stop, the next sample
	// may rightly find the CPU free again.
	contended := false
	for deadline := time.Now().Add(10 * time.Second); !contended && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		contended = g.Contended(time.Now())
	}
	close(serve)
	<-served
	stop()
	if !contended {
		t.Fatal("cached answers served on busy cores never made the CPU contended")
	}
}

// recordSleeps makes g's holds record their durations instead of
// sleeping.
func recordSleeps(g *Gate) *[]time.Duration {
	var mu sync.Mutex
	var slept []time.Duration
	g.sleep = func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
	}
	return &slept
}

// crowdedGate returns an idle gate holding refusals hold, whose holds
// are recorded, with alice's queue (of one) full, and the func that ends
// her misses.
func crowdedGate(t *testing.T, hold time.Duration) (*Gate, *[]time.Duration, func()) {
	t.Helper()
	g := idle(Config{Share: 0.0001, Wait: time.Minute, Queue: 1, Hold: hold})
	slept := recordSleeps(g)
	leaves := fill(t, g, alice)
	w := enter(g, alice)
	waitFor(t, g, 1)
	return g, slept, func() {
		for _, l := range leaves {
			l()
		}
		if e := <-w; e.err == nil {
			e.leave()
		}
	}
}

// TestRefusalsAreHeld: every refusal is held until between half the Hold
// and the Hold after the miss reached the gate (a crowded caller's at
// once, a waiting miss's for what is left after its wait), the end drawn
// at random so that a flood's connections do not wake together; none past
// maxHeld at once, none with a negative Hold; the gauge counts those being
// held.
func TestRefusalsAreHeld(t *testing.T) {
	const hold = time.Hour
	const flood = floodHold * hold // a flooding caller's
	inHold := func(t *testing.T, d, upTo time.Duration) {
		t.Helper()
		if d <= upTo/2-time.Minute || d > upTo {
			t.Errorf("held %v, want from %v to %v", d, upTo/2, upTo)
		}
	}

	t.Run("crowded", func(t *testing.T) {
		// Her queue is full: she floods, and her refusals are held
		// floodHold times the Hold.
		g, slept, end := crowdedGate(t, hold)
		defer end()
		refusal(t, g.Crowded(alice))
		_, err := g.Enter(alice)
		refusal(t, err)
		if len(*slept) != 2 {
			t.Fatalf("%d refusals held, want 2", len(*slept))
		}
		for _, d := range *slept {
			inHold(t, d, flood)
		}
		// Twenty more: their ends spread over the half hold.
		for range 20 {
			refusal(t, g.Crowded(alice))
		}
		lo, hi := slices.Min(*slept), slices.Max(*slept)
		for _, d := range *slept {
			inHold(t, d, flood)
		}
		if hi-lo < 5*time.Minute {
			t.Errorf("22 holds all within %v of each other: a flood's connections would wake together", hi-lo)
		}
	})

	t.Run("after a wait", func(t *testing.T) {
		const wait = 20 * time.Millisecond
		g := idle(Config{Share: 0.0001, Wait: wait, Queue: 1, Hold: hold})
		slept := recordSleeps(g)
		leaves := fill(t, g, alice)
		_, err := g.Enter(alice)
		refusal(t, err)
		if len(*slept) != 1 {
			t.Fatalf("%d refusals held, want 1", len(*slept))
		}
		if d := (*slept)[0]; d <= hold/2-wait-time.Minute || d > hold-wait { // not flooding: the Hold
			t.Errorf("held %v, want from %v to %v", d, hold/2-wait, hold-wait)
		}
		for _, l := range leaves {
			l()
		}
	})

	t.Run("off", func(t *testing.T) {
		g, slept, end := crowdedGate(t, -1)
		defer end()
		refusal(t, g.Crowded(alice))
		if len(*slept) != 0 {
			t.Errorf("a negative Hold held %v", *slept)
		}
	})

	t.Run("bounded", func(t *testing.T) {
		g, slept, end := crowdedGate(t, hold)
		defer end()
		g.held.Store(maxHeld)
		refusal(t, g.Crowded(alice)) // answered at once
		if len(*slept) != 0 || g.held.Load() != maxHeld {
			t.Errorf("past maxHeld: held %v, %d counted", *slept, g.held.Load())
		}
		g.held.Store(0)

		// The gauge counts the refusals being held.
		release := make(chan struct{})
		g.sleep = func(time.Duration) { <-release }
		done := make(chan error)
		for range 3 {
			go func() { done <- g.Crowded(alice) }()
		}
		for g.held.Load() != 3 {
			runtime.Gosched()
		}
		close(release)
		for range 3 {
			refusal(t, <-done)
		}
		if n := g.held.Load(); n != 0 {
			t.Errorf("%v held once answered", n)
		}
	})
}

// TestFloodingCallerRunsHalfTheTurns: a caller may take every turn until
// its queue overflows; then, for floodingFor, it runs at most half of
// them: a turn freed beyond that stays free for another caller, and its
// waiting misses get turns only below it. Once floodingFor has passed, it
// takes every turn again.
func TestFloodingCallerRunsHalfTheTurns(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	g := idle(Config{Share: 0.0001, Wait: time.Minute, Queue: 1, Hold: -1})
	if g.procs != 4 || g.flooding != 2 {
		t.Fatalf("%d turns, %d for a flooding caller; want 4 and 2", g.procs, g.flooding)
	}
	holds := fill(t, g, alice) // all four: she has not overflowed
	w := enter(g, alice)
	waitFor(t, g, 1)
	if _, err := g.Enter(alice); err == nil {
		t.Fatal("alice's second waiting miss was not refused")
	}
	holds[0]()
	holds[1]() // two turns free; alice runs two: hers stay free
	select {
	case <-w:
		t.Fatal("a flooding caller's waiting miss got a third turn")
	case <-time.After(20 * time.Millisecond):
	}
	if r := g.runningN.Load(); r != 2 {
		t.Fatalf("%d running, want alice's 2", r)
	}
	b, err := g.Enter(bob) // a free turn for bob at once
	if err != nil {
		t.Fatalf("bob, with a turn free: %v", err)
	}
	holds[2]() // alice runs one: her waiting miss runs
	e := <-w
	if e.err != nil {
		t.Fatalf("alice below half the turns: %v", e.err)
	}

	// A second on, alice is no longer taken to be flooding.
	g.mu.Lock()
	g.callers[alice].overflowed = time.Now().Add(-floodingFor)
	g.mu.Unlock()
	a3, err := g.Enter(alice)
	if err != nil {
		t.Fatalf("alice a second after her overflow, with a turn free: %v", err)
	}
	for _, l := range []func(){holds[3], e.leave, a3, b} {
		l()
	}
	if g.runningN.Load() != 0 || len(g.callers) != 0 {
		t.Errorf("after all: %d running, %d callers kept", g.runningN.Load(), len(g.callers))
	}
}

// TestFloodingCallerComputesWithinItsBudget: a flooding caller computes
// within Gate.flooding × floodShare seconds a second. In debt, its
// waiting miss gets no free turn while another caller's gets one at
// once; its miss runs once the budget has grown back, on a timer, with
// no other miss leaving; and a flood's queue that empties for a moment
// (its refusals held) keeps it flooding, with its budget, rather than
// handing it every turn again.
func TestFloodingCallerComputesWithinItsBudget(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	g := idle(Config{Share: 0.0001, Wait: time.Minute, Queue: 1, Hold: -1})
	if g.floodRate != 1 {
		t.Fatalf("a flooding caller's budget: %v s a second, want 1 (2 turns × %v)", g.floodRate, floodShare)
	}
	holds := fill(t, g, alice)
	w := enter(g, alice)
	waitFor(t, g, 1)
	if _, err := g.Enter(alice); err == nil {
		t.Fatal("alice's second waiting miss was not refused")
	}
	g.mu.Lock()
	g.callers[alice].budget = bucket{credit: -time.Hour, at: time.Now()} // in debt for an hour
	g.mu.Unlock()
	for _, l := range holds[:3] {
		l() // one of hers runs: her waiting miss may run by turns, not by budget
	}
	select {
	case <-w:
		t.Fatal("a flooding caller in debt got a turn")
	case <-time.After(20 * time.Millisecond):
	}
	b, err := g.Enter(bob)
	if err != nil {
		t.Fatalf("bob, with turns free: %v", err)
	}
	b()
	g.mu.Lock()
	g.callers[alice].budget.credit = -time.Millisecond // 1 ms of debt: 1 ms at 1 s a second
	g.dispatch(time.Now())                             // what a miss leaving does: arms the timer
	g.mu.Unlock()
	e := <-w // the timer gives her the turn; no miss leaves meanwhile
	if e.err != nil {
		t.Fatalf("alice with her budget back: %v", e.err)
	}
	e.leave()
	holds[3]()

	// Nothing of hers runs or waits, but she still floods: kept, and
	// held to her turns (2 of 4) at once.
	g.mu.Lock()
	a := g.callers[alice]
	g.mu.Unlock()
	if a == nil {
		t.Fatal("a flooding caller whose queue emptied was forgotten")
	}
	runs := take(t, g, alice, g.flooding) // within her turns
	third := enter(g, alice)
	select {
	case <-third:
		t.Fatal("a flooding caller whose queue emptied got a third turn")
	case <-time.After(20 * time.Millisecond):
	}
	runs[0]()
	if e := <-third; e.err == nil {
		e.leave()
	}
	runs[1]()
}
