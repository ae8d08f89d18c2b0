// Command analysts measures the analysts' reads of a running edge over
// HTTP, every request a cache miss, one at a time (latency, not
// throughput): growth between two random dates of a random listing,
// comparisons of 10 random listings over 365 days, and the change feed
// paged from its beginning and from a recent time. It prints p50, p99
// and the slowest of each.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:18092", "edge to measure")
	n := flag.Int("n", 500, "requests of each kind")
	flag.StringVar(&only, "only", "", "measure only this read after sampling the feed: growth or compare")
	flag.Parse()
	if err := run(*base, *n); err != nil {
		fmt.Fprintln(os.Stderr, "analysts:", err)
		os.Exit(1)
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// only names the one read to measure ("": all).
var only string

// get asks u and returns the body and the time to the last byte.
func get(u string) ([]byte, time.Duration, error) {
	start := time.Now()
	resp, err := client.Get(u)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %d %.200s", u, resp.StatusCode, b)
	}
	return b, took, err
}

func report(name string, d []time.Duration, bytes int64) {
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	fmt.Printf("%-34s %6d  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms  %7.1f KB avg\n", name, len(d),
		float64(q(0.5).Microseconds())/1000, float64(q(0.99).Microseconds())/1000, float64(d[len(d)-1].Microseconds())/1000,
		float64(bytes)/float64(len(d))/1024)
}

type change struct {
	Store, ID string
	ChangedAt time.Time
	ReadAt    *time.Time
}

type changePage struct {
	Changes    []change
	NextCursor string
	Remaining  int
	AsOf       struct{ Readings time.Time }
}

func run(base string, n int) error {
	rng := rand.New(rand.NewPCG(7, 8))
	// The change feed from its beginning: every page a miss (each cursor
	// is asked once); its listings are the sample of the other reads.
	// walk pages the feed from since for at most pages pages, calling
	// each with every page.
	walk := func(since string, pages int, each func(*changePage)) ([]time.Duration, int64, error) {
		var (
			feed  []time.Duration
			bytes int64
		)
		for len(feed) < pages {
			b, took, err := get(base + "/api/v1/changes?limit=100&since=" + url.QueryEscape(since))
			if err != nil {
				return nil, 0, err
			}
			var p changePage
			if err := json.Unmarshal(b, &p); err != nil {
				return nil, 0, err
			}
			feed, bytes = append(feed, took), bytes+int64(len(b))
			each(&p)
			if p.Remaining == 0 {
				break
			}
			since = p.NextCursor
		}
		return feed, bytes, nil
	}
	var (
		sample []change
		asOf   time.Time
	)
	feed, bytes, err := walk("", 4*n, func(p *changePage) {
		for _, c := range p.Changes {
			if c.ReadAt != nil && rng.IntN(20) == 0 { // read at least once: the others answer 404
				sample = append(sample, c)
			}
		}
		asOf = p.AsOf.Readings
	})
	if err != nil {
		return err
	}
	report("changes, limit 100, from the start", feed, bytes)
	// From a time a few hours before the data's newest reading: the
	// pages a client keeping in step asks for.
	if feed, bytes, err = walk(asOf.Add(-6*time.Hour).Format(time.RFC3339), n, func(*changePage) {}); err != nil {
		return err
	}
	report("changes, limit 100, recent", feed, bytes)
	if len(sample) < 20 {
		return fmt.Errorf("only %d listings sampled from the change feed", len(sample))
	}

	newest := asOf.UTC().Truncate(24 * time.Hour)
	var growth []time.Duration
	bytes = 0
	for range n {
		if only == "compare" {
			break
		}
		l := sample[rng.IntN(len(sample))]
		to := newest.AddDate(0, 0, -rng.IntN(30))
		from := to.AddDate(0, 0, -1-rng.IntN(364))
		u := fmt.Sprintf("%s/api/v1/listings/%s/%s/growth?from=%s&to=%s", base, l.Store, url.PathEscape(l.ID),
			from.Format(time.DateOnly), to.Format(time.DateOnly))
		b, took, err := get(u)
		if err != nil {
			return err
		}
		growth, bytes = append(growth, took), bytes+int64(len(b))
	}
	if len(growth) > 0 {
		report("growth between two dates", growth, bytes)
	}
	if only == "growth" {
		return nil
	}

	var compare []time.Duration
	bytes = 0
	for range max(n/2, 1) {
		var names []string
		for _, k := range rng.Perm(len(sample))[:10] {
			names = append(names, sample[k].Store+":"+sample[k].ID)
		}
		b, took, err := get(base + "/api/v1/compare?days=365&listings=" + url.QueryEscape(strings.Join(names, ",")))
		if err != nil {
			return err
		}
		compare, bytes = append(compare, took), bytes+int64(len(b))
	}
	report("compare, 10 listings x 365 days", compare, bytes)
	return nil
}
