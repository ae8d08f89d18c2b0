package edge_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/missgate"
)

// TestMissesWaitTheirTurn attacks the miss gate through HTTP (issue 22):
// with its turns held, distinct uncached queries of both APIs (and
// the CSV), sent at once from many connections, are refused with 503,
// Retry-After: 1 and a problem saying what to do, while answers already
// cached keep answering 200 among them; once the turn is free, the same
// queries are computed.
func TestMissesWaitTheirTurn(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) {
		c.Misses = missgate.Config{Share: 0.0001, Wait: 20 * time.Millisecond, Queue: 4}
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	cached := []string{"/api/v1/listings", "/api/summary", "/api/extensions?platform=0", "/api/v1/tags"}
	for _, p := range cached {
		if a := get(t, "GET", h.Base+p); a.status != 200 {
			t.Fatalf("%s: %d %s", p, a.status, a.body)
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
		leave, err := h.Server.MissGate().Enter()
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
	for _, want := range []string{`edge_miss_gate_refused_total{why="wait"}`, `edge_miss_gate_refused_total{why="queue"}`, "edge_miss_gate_slots 1"} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
