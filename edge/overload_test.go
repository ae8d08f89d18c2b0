package edge_test

import (
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/missgate"
)

// TestMissesWaitTheirTurn attacks the miss gate through HTTP:
// with its turns held, distinct uncached queries of both APIs (and
// the CSV), sent at once from many connections, are refused with 503,
// Retry-After: 1 and a problem saying what to do, while answers already
// cached keep answering 200 among them; once the turn is free, the same
// queries are computed.
func TestMissesWaitTheirTurn(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) {
		// Refusals held as by default (250 ms); a burst of a minute, as
		// the turns held meanwhile count against the budget.
		c.Misses = missgate.Config{Share: 0.0001, Burst: time.Minute, Wait: 20 * time.Millisecond, Queue: 4}
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	cached := []string{"/api/v1/listings", "/api/summary", "/api/extensions?platform=0", "/api/v1/tags"}
	for range 2 { // a query's answer is kept on its second ask
		for _, p := range cached {
			if a := get(t, "GET", h.Base+p); a.status != 200 {
				t.Fatalf("%s: %d %s", p, a.status, a.body)
			}
		}
	}
	h.Server.WaitAnswers()
	miss := func(i int) string {
		switch i % 3 {
		case 0:
			return fmt.Sprintf("/api/v1/listings?store=chrome&minSize=%d", 1000+i)
		case 1:
			return fmt.Sprintf("/api/extensions?platform=0&minInstalls=%d", 1000+i)
		}
		return fmt.Sprintf("/api/extensions.csv?platform=1&minInstalls=%d", 1000+i)
	}
	// Hold every turn the gate has (as many as the cores while they are
	// idle).
	var held []func()
	for {
		leave, err := h.Server.MissGate().Enter(missgate.Caller{Key: "holder"})
		if err != nil {
			break
		}
		held = append(held, leave)
	}
	if len(held) == 0 {
		t.Fatal("no turn to hold")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused, wrong := 0, []string{}
	for w := range 32 {
		wg.Go(func() {
			for i := range 6 {
				p := miss(w*6 + i)
				if i%2 == 1 {
					p = cached[(w+i)%len(cached)]
				}
				a := get(t, "GET", h.Base+p)
				mu.Lock()
				switch {
				case strings.Contains(p, "min") && a.status == 503 && a.header.Get("Retry-After") == "1" &&
					strings.HasPrefix(a.header.Get("Content-Type"), "application/problem+json") && strings.Contains(string(a.body), "Retry in a second"):
					refused++
				case !strings.Contains(p, "min") && a.status == 200:
				default:
					wrong = append(wrong, fmt.Sprintf("%s: %d %.200s", p, a.status, a.body))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(wrong) > 0 {
		t.Fatalf("%d answers went wrong, first: %s", len(wrong), wrong[0])
	}
	if refused != 32*3 {
		t.Fatalf("%d misses refused with the turn held, want all %d", refused, 32*3)
	}
	for _, leave := range held {
		leave()
	}
	for i := range 6 {
		if a := get(t, "GET", h.Base+miss(i)); a.status != 200 {
			t.Fatalf("%s with the turn free: %d %.200s", miss(i), a.status, a.body)
		}
	}
	m := get(t, "GET", h.Base+"/metrics")
	for _, want := range []string{`edge_miss_gate_refused_total{why="wait"}`, `edge_miss_gate_refused_total{why="caller"}`, "edge_miss_gate_slots 1"} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestOneCallerCannotTakeTheOthersTurns attacks the miss gate's fairness
// through HTTP: with every turn held, one caller (an address named by a
// trusted proxy) floods distinct uncached queries from 32 connections
// until its queue is full and the rest of its queries are refused, each
// refusal held (the 28 connections past its queue wait for theirs, and
// send nothing meanwhile); then another caller's query still waits in a
// queue of its own and, of the turns freed next, takes one before the
// flood's, and is answered.
func TestOneCallerCannotTakeTheOthersTurns(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) {
		c.NoLimits = true
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
		c.Misses = missgate.Config{Share: 0.0001, Wait: 20 * time.Second, Queue: 4, Hold: 250 * time.Millisecond} // the flood's refusals held 1-2 s (floodHold)
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	ask := func(client *http.Client, from string, path string) int {
		req, err := http.NewRequest("GET", h.Base+path, nil)
		if err != nil {
			t.Error(err)
			return 0
		}
		req.Header.Set("X-Forwarded-For", from)
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	// Every turn held (no cached answer is served: as many as the cores).
	var held []func()
	for range runtime.GOMAXPROCS(0) {
		leave, err := h.Server.MissGate().Enter(missgate.Caller{Key: "holder"})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, leave)
	}
	release := func() {
		held[0]()
		held = held[1:]
	}
	defer func() {
		for len(held) > 0 {
			release()
		}
	}()

	flooder := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	done := make(chan struct{})
	var flood, floodRefused, floodAnswered atomic.Int64
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := 0; flood.Load() < 50000; i++ {
				select {
				case <-done:
					return
				default:
				}
				switch ask(flooder, "198.51.100.7", fmt.Sprintf("/api/v1/listings?store=chrome&minSize=%d", 1+w*100000+i)) {
				case 503:
					floodRefused.Add(1)
				case 200:
					floodAnswered.Add(1)
				}
				flood.Add(1)
			}
		})
	}
	defer func() {
		close(done)
		for len(held) > 0 {
			release()
		}
		wg.Wait()
	}()
	waitMetric := func(name string, want float64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for metricOf(t, h.Base, name) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s %v, want %v", name, metricOf(t, h.Base, name), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitGauge := func(want float64) { t.Helper(); waitMetric("edge_miss_gate_waiting", want) }
	waitGauge(4)                          // the flood's queue is full
	waitMetric("edge_miss_gate_held", 28) // the rest of it held, then refused
	for floodRefused.Load() == 0 {
		time.Sleep(time.Millisecond)
	}

	other := make(chan int, 1)
	go func() { other <- ask(&http.Client{}, "203.0.113.9", "/api/extensions?platform=0&minInstalls=7") }()
	waitGauge(5) // the other caller waits in a queue of its own
	// Two turns freed: the flood, which runs none, may take the first;
	// the other caller, which runs none either, takes one of the two.
	release()
	if len(held) > 0 {
		release()
	}
	select {
	case status := <-other:
		if status != 200 {
			t.Fatalf("the other caller's query: %d", status)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the other caller's query never got a turn (the flood: %d asked, %d answered, %d refused)",
			flood.Load(), floodAnswered.Load(), floodRefused.Load())
	}
	if m := get(t, "GET", h.Base+"/metrics"); !strings.Contains(string(m.body), `edge_miss_gate_refused_total{why="caller"}`) {
		t.Error(`/metrics lacks edge_miss_gate_refused_total{why="caller"}`)
	}
}
