package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
	"github.com/edge-stats/edge/fleet/leader"
)

// signUpLimit is the accounts one client address may make an hour
// (edge.DefaultConfig().SignUps, which no flag changes).
const signUpLimit = 5

// TestFleetHoldsThroughProcessFaults: three
// edge processes of one fleet, each reaching ZooKeeper and ClickHouse
// through a proxy of its own, through three faults of the leader in one
// run, while sign-ups come in bursts from client addresses (each burst
// over every edge that runs) and crawls arrive:
//
//  1. the leader is killed (SIGKILL) in the middle of a burst; the edge
//     next in the election cannot reach ClickHouse meanwhile, so that
//     when it takes the lead it holds an older state than the third,
//     which loaded the crawl made while no edge led; the killed edge
//     comes back as a new process, last in the election. While no edge
//     leads, a burst goes to the edges, two of which reach ClickHouse
//     and decide alone; once the next edge leads, the first burst's
//     address signs up again at the two edges that saw nothing of it
//     (the new leader and the new process): only what ClickHouse holds
//     of it can refuse them;
//  2. the new leader is stopped (SIGSTOP) in the middle of a burst and
//     goes on (SIGCONT) within the session timeout: while it is stopped,
//     the followers say leaderWorking false;
//  3. the leader is cut from ZooKeeper without a word (zkLink: no FIN, no
//     reset) in the middle of a burst: ZooKeeper ends its session a
//     session timeout later, and a follower takes over within one
//     election reread of that, every edge naming it.
//
// Through all of it no client address gets more than the limit of
// accounts in the hour (counted in the answers and in ClickHouse), every
// refusal says when to retry, and no edge's dataAsOf nor Last-Modified
// ever goes back; at the end every edge serves the newest crawl.
func TestFleetHoldsThroughProcessFaults(t *testing.T) {
	t0 := time.Now()
	defer func() { t.Logf("whole test %v", time.Since(t0)) }()
	srv := chtest.Need(t, srv)
	z := chtest.NeedZooKeeper(t)
	cfg, conn := srv.Migrated(t)
	t.Setenv("EDGE_CH_ADDR", cfg.Addr)
	t.Setenv("EDGE_CH_DATABASE", cfg.Database)
	if code, out, errs := runCmd(t, context.Background(), "seed", "--listings", "200", "--days", "22", "--end", "2026-05-01"); code != 0 {
		t.Fatalf("seed: %d %q %q", code, out, errs)
	}
	zkAddr := "127.0.0.1:" + strconv.Itoa(z.Port)
	env := append(os.Environ(), "EDGE_FLEET_TOKEN="+fleetToken)
	bin := os.Getenv(envFaultsEdge)
	if bin == "" {
		bin, env = os.Args[0], append(env, envTestAsEdge+"=1")
	}
	fl := &faultFleet{t: t, bin: bin, env: env, zkAddr: zkAddr, chAddr: cfg.Addr, zkPath: "/edge/test/faults-" + strconv.Itoa(os.Getpid())}
	began := time.Now()
	t.Logf("setup %v", began.Sub(t0))
	live := fl.start("a", "b", "c")
	a, b, c := live[0], live[1], live[2]
	logs := func() string {
		var s strings.Builder
		for _, e := range live {
			fmt.Fprintf(&s, "\n--- %s (%s):\n%s", e.name, e.fleet, e.log)
		}
		return s.String()
	}
	// Bounds on waiting, not on speed (make test runs beside).
	eventually := func(what string, within time.Duration, cond func() bool) time.Time {
		t.Helper()
		deadline := time.Now().Add(within)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("not within %v: %s%s", within, what, logs())
			}
			time.Sleep(50 * time.Millisecond)
		}
		return time.Now()
	}
	following := func(leaderOf *faultEdge, edges ...*faultEdge) func() bool {
		return func() bool {
			for _, e := range edges {
				o, ok := e.watch.last()
				if !ok || (e == leaderOf) != o.fleet.Leading || e != leaderOf && (o.fleet.Leader != leaderOf.fleet || !o.fleet.LeaderWorking) {
					return false
				}
			}
			return true
		}
	}
	var order []*faultEdge
	eventually("the three edges enter the election", 90*time.Second, func() bool {
		var err error
		order, err = electionOrder(zkAddr, fl.zkPath, a, b, c)
		return err == nil
	})
	first, next, third := order[0], order[1], order[2]
	eventually("the first in the election leads and the others follow it", 90*time.Second, following(first, live...))
	su := &signUps{client: &http.Client{Timeout: time.Minute}, created: map[string]int{}, answers: map[string]map[int]int{}}
	started := time.Since(began)

	// 1. The leader killed mid-burst; the next in the election cut from
	// ClickHouse until it leads; a crawl while no edge leads.
	mid := make(chan struct{})
	wait := su.burst("203.0.113.1", 15, live, mid)
	<-mid
	next.ch.Set(faultproxy.Drop, 0, 0)
	first.signal(t, syscall.SIGKILL)
	killed := time.Now()
	crawl1 := newerCrawl(t, conn, 1)
	back := fl.start("a2")[0] // the killed edge again, last in the election
	wait()
	live = []*faultEdge{next, third, back}
	// While no edge leads, two edges that reach ClickHouse decide alone.
	su.burst("203.0.113.2", 12, live, nil)()
	eventually("the third edge loads the crawl itself (no leader answers)", 30*time.Second, dataAt(crawl1, third))
	took := eventually("the next edge takes the lead and the others follow it", 4*leader.DefaultSessionTimeout, following(next, live...))
	t.Logf("after the kill, the next edge leads in %v (session timeout %v)", took.Sub(killed).Round(time.Millisecond), leader.DefaultSessionTimeout)
	// The third edge asks the new leader for its state, older than its
	// own, at each follow (every second): a few, then ClickHouse back.
	time.Sleep(2 * time.Second)
	next.ch.Set(faultproxy.None, 0, 0)
	// The new leader and the edge that came back knew nothing of the
	// first burst but what ClickHouse holds.
	su.burst("203.0.113.1", 10, []*faultEdge{next, back}, nil)()
	eventually("every edge serves the crawl made while none led", 30*time.Second, dataAt(crawl1, live...))
	su.burst("203.0.113.2", 8, live, nil)()

	t.Logf("%v: phase 1 done", time.Since(began))
	// 2. The new leader stopped mid-burst, for less than the session
	// timeout; a crawl meanwhile.
	mid = make(chan struct{})
	wait = su.burst("203.0.113.3", 15, live, mid)
	<-mid
	next.signal(t, syscall.SIGSTOP)
	stopped := time.Now()
	crawl2 := newerCrawl(t, conn, 2)
	saidStopped := func() bool {
		for _, e := range []*faultEdge{third, back} {
			if o, ok := e.watch.last(); !ok || o.fleet.LeaderWorking || !o.at.After(stopped) {
				return false
			}
		}
		return true
	}
	// Resumed once both said so: within 7/10 of the session timeout, so
	// that ZooKeeper keeps its session (a probe a second, 2 s to answer,
	// says it in about 3 s).
	for time.Since(stopped) < leader.DefaultSessionTimeout*7/10 && !saidStopped() {
		time.Sleep(50 * time.Millisecond)
	}
	told := saidStopped()
	next.signal(t, syscall.SIGCONT)
	wait()
	if !told {
		t.Errorf("the leader stopped for %v: its followers did not both say leaderWorking false meanwhile", time.Since(stopped).Round(time.Millisecond))
	}
	// Within 20 s: the leader refreshes every second, and its followers
	// take each state by its delta, or, the two that refused its older
	// state in 1, whole with the deltas after it (not when the leader
	// next writes it whole, --fleet-whole-after: 30 s).
	eventually("the leader goes on, every edge follows it and serves the crawl made while it was stopped", 20*time.Second, func() bool {
		return following(next, live...)() && dataAt(crawl2, live...)()
	})

	t.Logf("%v: phase 2 done", time.Since(began))
	// 3. The leader cut from ZooKeeper without a word, mid-burst; a crawl
	// meanwhile.
	gone := nodeGone(t, zkAddr, fl.zkPath, next.fleet)
	mid = make(chan struct{})
	wait = su.burst("203.0.113.4", 15, live, mid)
	<-mid
	next.zk.setCut(true)
	cut := time.Now()
	crawl3 := newerCrawl(t, conn, 3)
	var expired time.Time
	select {
	case expired = <-gone:
	case <-time.After(4 * leader.DefaultSessionTimeout):
		t.Fatalf("ZooKeeper did not end the cut leader's session within %v%s", 4*leader.DefaultSessionTimeout, logs())
	}
	took = eventually("the third edge takes the lead and the edge that came back names it", 4*leader.DefaultSessionTimeout, following(third, third, back))
	wait()
	t.Logf("after the silent cut: the session ended in %v, the third edge led and every edge named it %v later",
		expired.Sub(cut).Round(time.Millisecond), took.Sub(expired).Round(time.Millisecond))
	// ZooKeeper ends a session a session timeout after it last heard from
	// it, rounded up to its tick (500 ms here): the bound of twice that
	// is ZooKeeper's, generous for a loaded machine.
	if d := expired.Sub(cut); d > 2*leader.DefaultSessionTimeout {
		t.Errorf("the cut leader's session ended %v after the cut (session timeout %v)", d, leader.DefaultSessionTimeout)
	}
	// The edges' part: a follower watches the leader's node, and leads
	// (and the others name it) at once when it goes; one reread of the
	// election (leader.DefaultReread) is the bound, whatever watch fires.
	if d := took.Sub(expired); d > leader.DefaultReread {
		t.Errorf("the third edge led, and every edge named it, %v after the cut leader's session ended: more than a reread of the election (%v)", d, leader.DefaultReread)
	}
	if o, ok := third.watch.first(cut, func(o obs) bool { return o.fleet.Leading }); !ok || o.at.Before(expired) {
		t.Errorf("the third edge led at %v, before the cut leader's session ended at %v", o.at, expired)
	}
	if _, ok := third.watch.first(cut, func(o obs) bool { return !o.fleet.Leading && !o.fleet.LeaderWorking && o.at.Before(expired) }); !ok {
		t.Error("while the leader was cut from ZooKeeper and its session lasted, the third edge never said leaderWorking false")
	}
	next.zk.setCut(false)
	eventually("the cut edge follows the new leader and every edge serves the crawl made meanwhile", 30*time.Second, func() bool {
		return following(third, live...)() && dataAt(crawl3, live...)()
	})
	t.Logf("%v: phase 3 done", time.Since(began))
	su.burst("203.0.113.4", 8, live, nil)()
	su.check(t, conn)
	for _, e := range append(live, first) {
		for _, s := range e.watch.wentBack() {
			t.Errorf("went back: %s", s)
		}
	}
	t.Logf("fleet up in %v, the faults %v; sign-ups: %v", started.Round(time.Millisecond), time.Since(began).Round(time.Millisecond)-started.Round(time.Millisecond), su.answers)
	if t.Failed() {
		t.Log(logs())
	}
}

// dataAt returns whether every edge's newest observation says dataAsOf
// at (and an answer's Last-Modified at it, to the second).
func dataAt(at time.Time, edges ...*faultEdge) func() bool {
	return func() bool {
		for _, e := range edges {
			o, ok := e.watch.last()
			if !ok || !o.dataAsOf.Equal(at) || !o.lastModified.Equal(at.Truncate(time.Second)) {
				return false
			}
		}
		return true
	}
}

// newerCrawl inserts readings a second after the newest (one listing in
// 50, chosen by k) and returns their time: the fleet's new dataAsOf.
func newerCrawl(t *testing.T, conn driver.Conn, k int) time.Time {
	t.Helper()
	ctx := context.Background()
	var newest time.Time
	if err := conn.QueryRow(ctx, `SELECT max(crawled_at) FROM snapshots`).Scan(&newest); err != nil {
		t.Fatal(err)
	}
	at := newest.Add(time.Second).UTC()
	if err := conn.Exec(ctx, `INSERT INTO snapshots (store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars)
		SELECT store, id, toDateTime('`+at.Format(time.DateTime)+`'), argMax(usage, crawled_at) + 1, argMax(weekly_downloads, crawled_at),
		argMax(rating, crawled_at), argMax(rating_count, crawled_at), argMax(stars, crawled_at)
		FROM snapshots GROUP BY store, id HAVING cityHash64(id) % 50 = `+strconv.Itoa(k)); err != nil {
		t.Fatal(err)
	}
	return at
}

// signUps sends bursts of sign-ups and tallies their answers by client
// address.
type signUps struct {
	client  *http.Client
	mu      sync.Mutex
	seq     int
	created map[string]int         // 201s by address
	answers map[string]map[int]int // statuses by address (-1: no answer)
	bad     []string               // refusals that do not say when to retry
}

// burst sends n sign-ups at once from the client address from (as the
// trusted proxy on loopback says), spread over edges, and returns a
// function that waits for their answers; mid, when not nil, is closed at
// the first answer.
func (s *signUps) burst(from string, n int, edges []*faultEdge, mid chan struct{}) func() {
	var (
		wg   sync.WaitGroup
		once sync.Once
		go_  = make(chan struct{})
	)
	for i := range n {
		s.mu.Lock()
		s.seq++
		email := fmt.Sprintf("%s%d@example.com", emailPrefix(from), s.seq)
		s.mu.Unlock()
		wg.Go(func() {
			<-go_
			req, _ := http.NewRequest(http.MethodPost, "http://"+edges[i%len(edges)].addr+"/account",
				strings.NewReader(`{"email":"`+email+`","password":"long enough password"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", from)
			status, retry := -1, ""
			if resp, err := s.client.Do(req); err == nil {
				status, retry = resp.StatusCode, resp.Header.Get("Retry-After")
				resp.Body.Close()
			}
			if mid != nil {
				once.Do(func() { close(mid) })
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.answers[from] == nil {
				s.answers[from] = map[int]int{}
			}
			s.answers[from][status]++
			switch {
			case status == http.StatusCreated:
				s.created[from]++
			case status > 0 && retry == "":
				s.bad = append(s.bad, fmt.Sprintf("%s from %s: %d without Retry-After", email, from, status))
			}
		})
	}
	close(go_)
	return wg.Wait
}

// emailPrefix is the start of every e-mail address signed up from the
// client address from.
func emailPrefix(from string) string { return "f" + strings.ReplaceAll(from, ".", "-") + "-" }

// check wants at most the limit of accounts from each client address, in
// the answers and in ClickHouse, and some admitted in all.
func (s *signUps) check(t *testing.T, conn driver.Conn) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var froms []string
	for from := range s.answers {
		froms = append(froms, from)
	}
	sort.Strings(froms)
	total := 0
	for _, from := range froms {
		var made uint64
		if err := conn.QueryRow(context.Background(), `SELECT count(DISTINCT email) FROM accounts WHERE startsWith(email, ?)`,
			emailPrefix(from)).Scan(&made); err != nil {
			t.Fatal(err)
		}
		total += int(made)
		if s.created[from] > signUpLimit || made > signUpLimit {
			t.Errorf("sign-ups from %s: %d answered 201, %d accounts in ClickHouse, want at most %d (answers: %v)",
				from, s.created[from], made, signUpLimit, s.answers[from])
		}
	}
	if total == 0 {
		t.Errorf("no sign-up admitted: %v", s.answers)
	}
	for _, b := range s.bad {
		t.Error(b)
	}
}
