// Command listings measures uncached GET /api/v1/listings over HTTP: it
// asks a running edge every combination of store, sort, order, filters and
// page size once (so that every answer is a cache miss), follows cursors a
// few pages deep, and prints latency percentiles per kind of query and
// overall (with --accept-encoding, of compressed answers, and the bytes
// saved). Requests go one at a time: this measures latency, not
// throughput.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/views/listq"
)

func main() {
	base := flag.String("base", "http://127.0.0.1:18092", "edge to measure")
	deep := flag.Int("pages", 3, "pages to follow by cursor for each combination without q")
	legacy := flag.Bool("legacy", false, "measure the legacy /api/extensions instead (every platform, sort and filter set, pages 1 and 3, and text searches)")
	limitList := flag.String("limits", "50,100", "page sizes to ask (comma-separated)")
	flag.StringVar(&acceptEncoding, "accept-encoding", "", "send this Accept-Encoding (gzip, br, zstd...) and time the compressed answer; empty: ask for the plain body")
	flag.Parse()
	limits = strings.Split(*limitList, ",")
	run := run
	if *legacy {
		run = runLegacy
	}
	if err := run(*base, *deep); err != nil {
		fmt.Fprintln(os.Stderr, "listings:", err)
		os.Exit(1)
	}
}

// limits are the page sizes asked.
var limits []string

// acceptEncoding is the Accept-Encoding every request sends ("": none,
// and Go's client adds none).
var acceptEncoding string

// wire and plain count the bytes received and the bytes they decode to.
var wire, plain int64

// client asks without Go's transparent gzip: what it times is what
// arrives.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func getJSON(u string, v any) (time.Duration, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return 0, err
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	wire += int64(len(body))
	if body, err = coding.Decode(resp.Header.Get("Content-Encoding"), body); err != nil {
		return 0, fmt.Errorf("GET %s: %w", u, err)
	}
	plain += int64(len(body))
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("GET %s: %d %s", u, resp.StatusCode, body)
	}
	if resp.Header.Get("ETag") == "" {
		return 0, fmt.Errorf("GET %s: no ETag (a partial answer?)", u)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			return 0, err
		}
	}
	return took, nil
}

func run(base string, deep int) error {
	stores := []string{"", "chrome", "edge", "firefox", "apple", "googleplay"}
	sorts := listq.V1SortNames() // every v1 sort, from the catalogue
	var tags struct{ Tags []struct{ Slug string } }
	if _, err := getJSON(base+"/api/v1/tags", &tags); err != nil {
		return err
	}
	cats := map[string]string{}
	for _, s := range stores[1:] {
		var c struct{ Categories []struct{ Name string } }
		if _, err := getJSON(base+"/api/v1/categories/"+s, &c); err != nil {
			return err
		}
		cats[s] = c.Categories[len(c.Categories)/2].Name
	}
	var samples []sample
	ask := func(kind string, q url.Values, pages int) error {
		u := base + "/api/v1/listings?" + q.Encode()
		for p := 0; p < pages; p++ {
			var page struct{ NextCursor *string }
			d, err := getJSON(u, &page)
			if err != nil {
				return err
			}
			samples = append(samples, sample{kind, u[len(base):], d})
			if page.NextCursor == nil {
				break
			}
			q.Set("cursor", *page.NextCursor)
			u = base + "/api/v1/listings?" + q.Encode()
		}
		return nil
	}
	filters := []struct {
		kind      string
		set       func(q url.Values, store string)
		needStore bool
	}{
		{"no filter", func(url.Values, string) {}, false},
		{"category", func(q url.Values, s string) { q.Set("category", cats[s]) }, true},
		{"tag", func(q url.Values, s string) { q.Set("tag", tags.Tags[len(tags.Tags)/3].Slug) }, false},
		{"minSize+maxSize", func(q url.Values, s string) { q.Set("minSize", "100"); q.Set("maxSize", "50000") }, true},
		{"tag+category+minSize", func(q url.Values, s string) {
			q.Set("tag", tags.Tags[0].Slug)
			q.Set("category", cats[s])
			q.Set("minSize", "10")
		}, true},
	}
	for _, store := range stores {
		for _, srt := range sorts {
			if srt == "rankclimb" && store == "" {
				continue
			}
			for _, order := range []string{"", "asc"} {
				for _, f := range filters {
					if f.needStore && store == "" {
						continue
					}
					for _, limit := range limits {
						q := url.Values{"sort": {srt}, "limit": {limit}}
						if store != "" {
							q.Set("store", store)
						}
						if order != "" {
							q.Set("order", order)
						}
						f.set(q, store)
						if err := ask(f.kind, q, deep); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	// Text: names and developers, two-letter to phrase-long queries, with
	// every sort, in one store and in all.
	for _, text := range []string{"ab", "Pro", "tab", "dark mode", "Manager", "xq", "photo editor", "Ärger"} {
		for _, store := range []string{"", "firefox"} {
			for _, srt := range sorts {
				if srt == "rankclimb" && store == "" {
					continue
				}
				q := url.Values{"sort": {srt}, "q": {text}}
				if store != "" {
					q.Set("store", store)
				}
				if err := ask("q", q, 1); err != nil {
					return err
				}
			}
		}
	}
	report(samples)
	return nil
}

// sample is one answer's latency.
type sample struct {
	kind, url string
	d         time.Duration
}

// report prints the latency percentiles per kind of query, overall, and
// the slowest answers.
func report(samples []sample) {
	pct := func(ds []time.Duration, p float64) time.Duration {
		slices.Sort(ds)
		return ds[min(len(ds)-1, int(float64(len(ds))*p))]
	}
	byKind := map[string][]time.Duration{}
	var all []time.Duration
	for _, s := range samples {
		byKind[s.kind] = append(byKind[s.kind], s.d)
		all = append(all, s.d)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Printf("%-22s %7s %9s %9s %9s\n", "query", "answers", "p50", "p99", "max")
	for _, k := range kinds {
		ds := byKind[k]
		fmt.Printf("%-22s %7d %9v %9v %9v\n", k, len(ds), pct(ds, 0.5).Round(10*time.Microsecond),
			pct(ds, 0.99).Round(10*time.Microsecond), pct(ds, 1).Round(10*time.Microsecond))
	}
	slices.SortFunc(samples, func(a, b sample) int { return int(b.d - a.d) })
	defer func() {
		fmt.Println("slowest:")
		for _, s := range samples[:min(10, len(samples))] {
			u, _ := url.QueryUnescape(s.url)
			if len(u) > 110 {
				u = u[:110] + "…"
			}
			fmt.Printf("  %9v %s\n", s.d.Round(10*time.Microsecond), u)
		}
	}()
	fmt.Printf("%-22s %7d %9v %9v %9v\n", "ALL", len(all), pct(all, 0.5).Round(10*time.Microsecond),
		pct(all, 0.99).Round(10*time.Microsecond), pct(all, 1).Round(10*time.Microsecond))
	var noText []time.Duration
	for _, s := range samples {
		if s.kind != "q" {
			noText = append(noText, s.d)
		}
	}
	if len(noText) > 0 && len(noText) < len(all) {
		fmt.Printf("%-22s %7d %9v %9v %9v\n", "ALL but q", len(noText), pct(noText, 0.5).Round(10*time.Microsecond),
			pct(noText, 0.99).Round(10*time.Microsecond), pct(noText, 1).Round(10*time.Microsecond))
	}
	if plain > 0 {
		fmt.Printf("Accept-Encoding %q: %d bytes on the wire for %d of answers (%.1f%%)\n", acceptEncoding, wire, plain,
			100*float64(wire)/float64(plain))
	}
}

// runLegacy asks /api/extensions every combination of platform, sort and
// filter set, pages 1 and 3, once each, and text searches.
func runLegacy(base string, _ int) error {
	platforms := []string{"", "0", "1", "2", "3", "4"}
	sorts := []string{"installs", "name", "rating", "ratingcount", "updated", "firstseen", "growth7d", "growthpct30d"}
	cats := map[string]string{}
	for _, p := range platforms[1:] {
		var c []string
		if _, err := getJSON(base+"/api/categories?platform="+p, &c); err != nil {
			return err
		}
		if len(c) > 0 {
			cats[p] = c[len(c)/2]
		}
	}
	filters := []struct {
		kind string
		set  func(q url.Values, p string)
	}{
		{"no filter", func(url.Values, string) {}},
		{"category", func(q url.Values, p string) { q.Set("category", cats[p]) }},
		{"minInstalls+maxInstalls", func(q url.Values, _ string) { q.Set("minInstalls", "100"); q.Set("maxInstalls", "50000") }},
		{"minRating+rated", func(q url.Values, _ string) { q.Set("minRating", "4"); q.Set("rated", "yes") }},
		{"updatedAfter+minVersion", func(q url.Values, _ string) { q.Set("updatedAfter", "2025-01-01"); q.Set("minVersion", "2") }},
	}
	var samples []sample
	ask := func(kind string, q url.Values) error {
		u := base + "/api/extensions?" + q.Encode()
		d, err := getJSON(u, nil)
		if err != nil {
			return err
		}
		samples = append(samples, sample{kind, u[len(base):], d})
		return nil
	}
	for _, p := range platforms {
		for _, srt := range sorts {
			for _, f := range filters {
				if f.kind == "category" && p == "" {
					continue
				}
				for _, page := range []string{"1", "3"} {
					q := url.Values{"sort": {srt}, "page": {page}}
					if p != "" {
						q.Set("platform", p)
					}
					f.set(q, p)
					if err := ask(f.kind, q); err != nil {
						return err
					}
				}
			}
		}
	}
	for _, text := range []string{"ab", "Pro", "tab", "dark mode", "Manager", "xq", "photo editor", "Ärger"} {
		for _, p := range []string{"", "0", "4"} {
			for _, srt := range sorts[:3] {
				q := url.Values{"sort": {srt}, "q": {text}}
				if p != "" {
					q.Set("platform", p)
				}
				if err := ask("q", q); err != nil {
					return err
				}
			}
		}
	}
	report(samples)
	return nil
}
