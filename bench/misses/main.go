// Command misses sends a running edge distinct uncached queries — the
// long tail a CDN passes to its origin: /api/v1/listings and
// /api/extensions with random filter values, none asked twice — from a
// number of connections, either as fast as the answers come (--rate 0)
// or paced at a rate (open loop: a query is due every 1/rate seconds,
// whether or not the edge keeps up; queries that find every connection
// busy are counted as not sent). It prints, for the run, the queries
// answered per second by outcome (200, 503 refused by the miss gate,
// other) with their latency percentiles.
//
// --mix dashboard asks what a dashboard's filter widgets ask: every v1
// sort, with and without a store, categories, tags, size bounds, text
// searches and orders, and the legacy API's platform, type, rating,
// installs and date filters with each of its sorts. --xff names the
// caller through a trusted proxy (X-Forwarded-For), to stand for another
// client than the load generator's address.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/views/listq"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:18093", "edge to send the queries to")
	conns := flag.Int("conns", 32, "connections (each one query at a time)")
	rate := flag.Float64("rate", 0, "queries a second, paced; 0: as fast as the answers come")
	dur := flag.Duration("duration", 20*time.Second, "how long to send")
	mix := flag.String("mix", "simple", "the queries: simple (store or platform, sort, a size bound), dashboard (every sort and filter kind) or events (changelogs and event feed pages)")
	xff := flag.String("xff", "", "an address to send as X-Forwarded-For (the edge must trust the load generator as a proxy)")
	slowest := flag.Int("slowest", 0, "print the N slowest answered queries")
	flag.Parse()
	switch *mix {
	case "simple":
	case "dashboard":
		query = dashboardQuery
	case "events":
		if err := eventsPrepare(*base); err != nil {
			fmt.Fprintln(os.Stderr, "misses:", err)
			os.Exit(1)
		}
		query = eventsQuery
	default:
		fmt.Fprintln(os.Stderr, "misses: --mix simple, dashboard or events")
		os.Exit(2)
	}
	forwardedFor = *xff
	keepURLs = *slowest > 0
	if *dur <= 0 || *dur > 10*time.Minute || *conns < 1 || *conns > 8192 {
		fmt.Fprintln(os.Stderr, "misses: --duration up to 10m, --conns 1 to 8192")
		os.Exit(2)
	}
	r := run(*base, *conns, *rate, *dur)
	r.print(*dur)
	r.printSlowest(*slowest)
}

// printSlowest prints the n slowest answered queries, slowest first.
func (r *result) printSlowest(n int) {
	urls := r.ok.urls
	slices.SortFunc(urls, func(a, b timedURL) int { return int(b.took - a.took) })
	for _, u := range urls[:min(n, len(urls))] {
		fmt.Printf("slow %8.2f ms  %s\n", ms(u.took), u.url)
	}
}

// outcome is what one kind of answer got.
type outcome struct {
	n    int
	lat  []time.Duration
	urls []timedURL // only with --slowest
}

// timedURL is one query and how long its answer took.
type timedURL struct {
	took time.Duration
	url  string
}

// keepURLs makes the answered queries keep their URLs (--slowest).
var keepURLs bool

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
	if keepURLs && o == &r.ok {
		o.urls = append(o.urls, timedURL{took, what})
	}
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
				status, err := get(client, buf[:0], url)
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

// forwardedFor is the X-Forwarded-For each query sends ("": none).
var forwardedFor string

// get asks url and returns the answer's status.
func get(client *fasthttp.Client, buf []byte, url string) (int, error) {
	if forwardedFor == "" {
		status, _, err := client.Get(buf, url)
		return status, err
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	req.Header.Set("X-Forwarded-For", forwardedFor)
	if err := client.Do(req, resp); err != nil {
		return 0, err
	}
	return resp.StatusCode(), nil
}

// query returns a query of the long tail (simpleQuery or dashboardQuery).
var query = simpleQuery

// simpleQuery returns a query of the long tail: a random store or
// platform, sort and filter value, distinct from every other by a
// sequence number in its filter.
func simpleQuery(rng *rand.Rand, n uint64) string {
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

// What the dashboard mix picks from: the seeder's vocabulary (package
// analytics/seed), a few of each.
var (
	mixStores     = []string{"chrome", "edge", "firefox", "apple", "googleplay"}
	mixCategories = map[string][]string{
		"chrome":     {"Productivity", "Tools", "Shopping", "Developer Tools", "Privacy & Security"},
		"edge":       {"Productivity", "Shopping", "Developer tools", "Communication"},
		"firefox":    {"Privacy & Security", "Tab Tools", "Appearance", "Web Development"},
		"apple":      {"Games", "Utilities", "Productivity", "Education"},
		"googleplay": {"Tools", "Productivity", "Education", "Entertainment"},
	}
	mixTags  = []string{"ad-blocker", "privacy", "vpn", "password-manager", "dark-mode", "tab-manager", "translator", "pdf"}
	mixWords = []string{"tab", "dark", "notes", "smart", "pro", "vpn", "reader", "quick"}
)

// dashboardQuery returns a query of a dashboard's filter widgets: every
// v1 sort and filter kind and the legacy API's, distinct from every other
// by a sequence number in a bound.
func dashboardQuery(rng *rand.Rand, n uint64) string {
	pick := func(ss []string) string { return ss[rng.IntN(len(ss))] }
	v := url.Values{}
	if rng.IntN(2) == 0 {
		// A store always: its size bound makes the query distinct.
		store := pick(mixStores)
		v.Set("store", store)
		v.Set("sort", pick(listq.V1SortNames()))
		if rng.IntN(4) == 0 {
			v.Set("order", "asc")
		}
		switch rng.IntN(4) {
		case 0:
			v.Set("category", pick(mixCategories[store]))
		case 1:
			v.Set("tag", pick(mixTags))
		case 2:
			v.Set("q", pick(mixWords))
		}
		v.Set("minSize", fmt.Sprint(10+n))
		if rng.IntN(3) == 0 {
			v.Set("maxSize", fmt.Sprint(1_000_000+n))
		}
		return "/api/v1/listings?" + v.Encode()
	}
	platform := rng.IntN(5)
	v.Set("platform", fmt.Sprint(platform))
	v.Set("sort", pick([]string{"installs", "rating", "updated", "name"}))
	switch rng.IntN(5) {
	case 0:
		v.Set("category", pick(mixCategories[mixStores[platform]]))
	case 1:
		v.Set("minRating", fmt.Sprint(1+rng.IntN(4)))
	case 2:
		v.Set("q", pick(mixWords))
	case 3:
		v.Set("updatedAfter", time.Now().AddDate(0, 0, -1-rng.IntN(300)).Format("2006-01-02"))
	}
	v.Set("minInstalls", fmt.Sprint(10+n))
	return "/api/extensions?" + v.Encode()
}
