package edge_test

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/served"
	"github.com/edge-stats/edge/views/viewstest"
)

// BenchmarkWorstPage asks, uncached (the answer cache emptied before
// each request, the replay path off), the inputs that make each route of
// the listings do the most work, against a plain listings page of the
// same store: a fruitless search of as many words as a URI holds (its
// suggestions), the same across every store, the API's and the legacy
// API's search of 8 KB, a search of two letters (whose page counts every
// match), a fruitless one (no trigram to narrow it: a scan) and deep
// pages (the 20th's page before is found by walking again those before
// it when its first row has no value to sort by). The listings are synthetic, with the stores'
// real shares, indexed as the views job indexes them: 20,000 unless
// EDGE_BENCH_LISTINGS says otherwise (5,000,000: a few minutes to
// build). It reports each route's median in milliseconds and its ratio
// to the plain page's.
func BenchmarkWorstPage(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	r := replicatest.Synth(n, viewstest.RealShares)
	r.IndexText()
	f := figures.Build(r, 0)
	h := start(b, syntheticN(b, 10), func(c *edge.Config) { c.PageRate, c.Replay = 0, false })
	h.State.Publish(&served.State{Replica: r, Figures: f})

	var words []string
	for i := 0; len(strings.Join(words, "+")) < 7600; i++ {
		words = append(words, "zq"+strconv.Itoa(i%1000))
	}
	long := strings.Join(words, "+") // 1,500 words, about 7.6 KB escaped
	bytes := "q=" + strings.Repeat("zqxv", 1900)
	deep := "/listings?store=chrome"
	for range 9 { // to page 10 by its cursors
		next := regexpNext(b, h.Base+deep)
		if next == "" {
			break
		}
		deep = next
	}
	walked := "/listings?store=chrome&sort=growth7d&order=asc"
	for range 19 { // to page 20, whose page before may be found by walking the pages before it again
		next := regexpNext(b, h.Base+walked)
		if next == "" {
			break
		}
		walked = next
	}
	routes := []struct{ name, path string }{
		{"plain page", "/listings?store=chrome"},
		{"plain API page", "/api/v1/listings?store=chrome"},
		{"fruitless search, 1,500 words", "/listings?store=chrome&q=" + long},
		{"fruitless search, 1,500 words, every store", "/listings?q=" + long},
		{"API search, 7.6 KB", "/api/v1/listings?store=chrome&" + bytes},
		{"legacy search, 7.6 KB", "/api/extensions?platform=0&" + bytes},
		{"search of two letters, counted", "/listings?store=chrome&q=an"},
		{"fruitless search of two letters, every store", "/listings?q=zq"},
		{"page 10", deep},
		{"page 20 by growth, 7 days, ascending", walked},
	}
	took := make([][]time.Duration, len(routes))
	client := &http.Client{}
	for b.Loop() {
		for i, rt := range routes {
			b.StopTimer()
			h.Server.DropAnswers()
			b.StartTimer()
			start := time.Now()
			resp, err := client.Get(h.Base + rt.path)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			took[i] = append(took[i], time.Since(start))
			if resp.StatusCode != 200 {
				b.Fatalf("%s: %d", rt.name, resp.StatusCode)
			}
		}
	}
	median := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	plain := median(took[0])
	for i, rt := range routes {
		m := median(took[i])
		fmt.Fprintf(os.Stderr, "%-45s %8.2f ms  %5.1f× the plain page\n", rt.name, m, m/plain)
		b.ReportMetric(m, strings.ReplaceAll(strings.ReplaceAll(rt.name, " ", "-"), ",", "")+"-ms")
	}
}

// nextLink finds the address of the next page a listings' page links.
var nextLink = regexp.MustCompile(`<a href="([^"]*)" rel="next">`)

// regexpNext returns the address of the next page the listings' page at
// u links, or "".
func regexpNext(b *testing.B, u string) string {
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := nextLink.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(string(m[1]))
}
