// Command misses sends a running edge distinct uncached queries — the
// long tail a CDN passes to its origin: /api/v1/listings and
// /api/extensions with random filter values, none asked twice — from a
// number of connections, either as fast as the answers come (--rate 0)
// or paced at a rate (open loop: a query is due every 1/rate seconds,
// whether or not the edge keeps up; queries that find every connection
// busy are counted as not sent). It prints, for the run, the queries
// answered per second by outcome (200, 503 refused by the miss gate,
// other) with their latency percentiles.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:18093", "edge to send the queries to")
	conns := flag.Int("conns", 32, "connections (each one query at a time)")
	rate := flag.Float64("rate", 0, "queries a second, paced; 0: as fast as the answers come")
	dur := flag.Duration("duration", 20*time.Second, "how long to send")
	flag.Parse()
	if *dur <= 0 || *dur > 10*time.Minute || *conns < 1 || *conns > 1024 {
		fmt.Fprintln(os.Stderr, "misses: --duration up to 10m, --conns 1 to 1024")
		os.Exit(2)
	}
	r := run(*base, *conns, *rate, *dur)
	r.print(*dur)
}

// outcome is what one kind of answer got.
type outcome struct {
	n   int
	lat []time.Duration
}

type result struct {
	mu                sync.Mutex
	ok, refused, othr outcome
	firstOther        string
	notSent           atomic.Int64
}

func (r *result) add(status int, took time.Duration, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := &r.othr
	switch status {
	case http.StatusOK:
		o = &r.ok
	case http.StatusServiceUnavailable:
		o = &r.refused
	default:
		if r.firstOther == "" {
			r.firstOther = what
		}
	}
	o.n++
	o.lat = append(o.lat, took)
}

func run(base string, conns int, rate float64, dur time.Duration) *result {
	// fasthttp's client: a load generator on the edge's own cores should
	// take as little of them as it can.
	client := &fasthttp.Client{MaxConnsPerHost: conns, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	var r result
	due := make(chan struct{}, conns)
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	var seq atomic.Uint64
	for w := range conns {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			buf := make([]byte, 0, 256<<10)
			for time.Now().Before(end) {
				if rate > 0 {
					if _, ok := <-due; !ok {
						return
					}
				}
				url := base + query(rng, seq.Add(1))
				began := time.Now()
				status, _, err := client.Get(buf[:0], url)
				took := time.Since(began)
				if err != nil {
					r.add(0, took, err.Error())
					continue
				}
				r.add(status, took, fmt.Sprintf("%s: %d", url, status))
			}
		})
	}
	if rate > 0 {
		every := time.Duration(float64(time.Second) / rate)
		next := time.Now()
		for next.Before(end) {
			select {
			case due <- struct{}{}:
			default:
				r.notSent.Add(1) // every connection busy: the query is dropped, as an impatient client
			}
			next = next.Add(every)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
		}
		close(due)
	}
	wg.Wait()
	return &r
}

// query returns a query of the long tail: a random store or platform,
// sort and filter value, distinct from every other by a sequence number
// in its filter.
func query(rng *rand.Rand, n uint64) string {
	stores := []string{"chrome", "edge", "firefox", "apple", "googleplay"}
	sorts := []string{"installs", "rating", "updated", "name", "growth7d"}
	if rng.IntN(2) == 0 {
		return fmt.Sprintf("/api/v1/listings?store=%s&sort=%s&minSize=%d", stores[rng.IntN(5)], sorts[rng.IntN(len(sorts))], 10+n)
	}
	legacySorts := []string{"installs", "rating", "updated", "name"}
	return fmt.Sprintf("/api/extensions?platform=%d&sort=%s&minInstalls=%d", rng.IntN(5), legacySorts[rng.IntN(4)], 10+n)
}

func (r *result) print(dur time.Duration) {
	secs := dur.Seconds()
	line := func(name string, o outcome) {
		if o.n == 0 {
			fmt.Printf("%-8s %8d  %8.0f/s\n", name, 0, 0.0)
			return
		}
		slices.Sort(o.lat)
		q := func(p float64) time.Duration { return o.lat[min(len(o.lat)-1, int(p*float64(len(o.lat))))] }
		fmt.Printf("%-8s %8d  %8.0f/s  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n", name, o.n, float64(o.n)/secs,
			ms(q(0.5)), ms(q(0.99)), ms(o.lat[len(o.lat)-1]))
	}
	line("200", r.ok)
	line("503", r.refused)
	line("other", r.othr)
	if r.firstOther != "" {
		fmt.Println("first other:", r.firstOther)
	}
	if n := r.notSent.Load(); n > 0 {
		fmt.Printf("not sent (every connection busy): %d\n", n)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
