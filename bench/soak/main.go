// Command soak sends a running edge mixed traffic for a while — cached
// answers, revalidations (304), distinct misses, listing histories and
// reviews (ClickHouse-backed), tool calls over MCP — each kind paced at
// its own rate, and writes, for every window of the run, the answers by
// kind and outcome, latency percentiles and the edge's RSS (read from
// /proc for the pid in --pid-file, which the soak script updates when
// the edge is replaced). It also draws the run as an SVG. Events (the
// script's ClickHouse restarts, reload, replacement) are read from
// --events, one "unix-seconds text" a line, and marked on the plot.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	base := flag.String("base", "127.0.0.1:18096", "edge host:port")
	dur := flag.Duration("duration", 30*time.Minute, "how long to run")
	window := flag.Duration("window", 10*time.Second, "width of a row of the figures")
	pidFile := flag.String("pid-file", "", "file holding the edge's pid (for its RSS)")
	events := flag.String("events", "", "file of events to mark (unix-seconds text, a line each)")
	csvOut := flag.String("csv", "bench/out/soak.csv", "figures a window")
	svgOut := flag.String("svg", "docs/soak.svg", "the plot")
	summaryOut := flag.String("summary", "bench/out/soak-summary.txt", "the totals")
	flag.Parse()
	if *dur <= 0 || *dur > 2*time.Hour || *window < time.Second {
		fmt.Fprintln(os.Stderr, "soak: --duration up to 2h, --window 1s or more")
		os.Exit(2)
	}
	s := newSoak(*base, *window)
	s.run(*dur, *pidFile)
	if err := s.write(*csvOut, *svgOut, *summaryOut, *events); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// kind is one kind of request, with its rate.
type kind struct {
	name string
	rate float64 // a second
	req  func(r *rand.Rand, req *fasthttp.Request)
}

var kinds = []kind{
	{"cached", 400, func(r *rand.Rand, q *fasthttp.Request) {
		paths := []string{"/api/summary", "/api/v1/listings", "/api/extensions?platform=0", "/api/v1/categories/chrome", "/api/v1/tags", "/api/v1/stores/chrome/stats"}
		q.SetRequestURI(paths[r.IntN(len(paths))])
		q.Header.Set("Accept-Encoding", "gzip, br")
	}},
	{"304", 200, func(r *rand.Rand, q *fasthttp.Request) {
		q.SetRequestURI("/api/summary")
		q.Header.Set("Accept-Encoding", "gzip")
		q.Header.Set("If-None-Match", etag.Load())
	}},
	{"miss", 40, func(r *rand.Rand, q *fasthttp.Request) {
		stores := []string{"chrome", "edge", "firefox", "apple", "googleplay"}
		q.SetRequestURI(fmt.Sprintf("/api/v1/listings?store=%s&minSize=%d", stores[r.IntN(5)], 10+r.IntN(1<<30)))
	}},
	{"history", 10, func(r *rand.Rand, q *fasthttp.Request) {
		q.SetRequestURI(fmt.Sprintf("/api/v1/listings/%s/history?days=%d", listing(r), 1+r.IntN(730)))
	}},
	{"reviews", 5, func(r *rand.Rand, q *fasthttp.Request) {
		q.SetRequestURI(fmt.Sprintf("/api/v1/listings/%s/reviews", listing(r)))
	}},
	{"mcp", 5, func(r *rand.Rand, q *fasthttp.Request) {
		q.SetRequestURI("/mcp")
		q.Header.SetMethod("POST")
		q.Header.SetContentType("application/json")
		q.Header.Set("Accept", "application/json, text/event-stream")
		q.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		stores := []string{"chrome", "edge", "firefox", "apple", "googleplay"}
		q.SetBodyString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"` + stores[r.IntN(5)] + `"}}}`)
	}},
}

// etag is the summary's ETag, for the revalidations.
var etag = &lockedString{}

type lockedString struct {
	mu sync.Mutex
	s  string
}

func (l *lockedString) Load() string   { l.mu.Lock(); defer l.mu.Unlock(); return l.s }
func (l *lockedString) Store(s string) { l.mu.Lock(); l.s = s; l.mu.Unlock() }

// listings are ids of live listings ("store/id"), read once at start.
var listings []string

func listing(r *rand.Rand) string { return listings[r.IntN(len(listings))] }

// outcome names a response: "200", "304", "503 clickhouse" (a read),
// "503 gate", "503 other", "429", "4xx", "5xx", "error" (no answer).
func outcome(status int, body []byte, err error) string {
	switch {
	case err != nil:
		return "error"
	case status == 200 || status == 304:
		return strconv.Itoa(status)
	case status == 503 && bytes.Contains(body, []byte("uncached answers")):
		return "503 gate"
	case status == 503 && (bytes.Contains(body, []byte("cannot be read")) || bytes.Contains(body, []byte("time budget"))):
		return "503 clickhouse"
	case status == 503:
		return "503 other"
	case status == 429:
		return "429"
	case status < 500:
		return "4xx"
	}
	return "5xx"
}

type sample struct {
	kind, outcome string
	took          time.Duration
}

type window struct {
	start   time.Time
	samples []sample
	rssMiB  float64
}

type soak struct {
	client  *fasthttp.HostClient
	width   time.Duration
	mu      sync.Mutex
	windows []*window
	firstFn map[string]string // first answer of each outcome but 200 and 304, by kind
}

func newSoak(base string, width time.Duration) *soak {
	return &soak{client: &fasthttp.HostClient{Addr: base, MaxConns: 512, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second},
		width: width, firstFn: map[string]string{}}
}

func (s *soak) get(uri string) (int, []byte, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(uri)
	req.Header.SetHost(s.client.Addr)
	err := s.client.Do(req, resp)
	return resp.StatusCode(), append([]byte(nil), resp.Body()...), err
}

func (s *soak) prepare() error {
	status, body, err := s.get("/api/v1/listings?limit=100")
	if err != nil || status != 200 {
		return fmt.Errorf("listings: %d %v", status, err)
	}
	var page struct {
		Listings []struct{ Store, ID string }
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return err
	}
	for _, l := range page.Listings {
		if l.Store != "chrome" { // chrome has no stored reviews; the others do
			listings = append(listings, l.Store+"/"+l.ID)
		}
	}
	if len(listings) == 0 {
		return fmt.Errorf("no listing to ask the history of")
	}
	return s.refreshETag()
}

func (s *soak) refreshETag() error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/api/summary")
	req.Header.SetHost(s.client.Addr)
	req.Header.Set("Accept-Encoding", "gzip")
	if err := s.client.Do(req, resp); err != nil {
		return err
	}
	etag.Store(string(resp.Header.Peek("Etag")))
	return nil
}

func (s *soak) run(dur time.Duration, pidFile string) {
	if err := s.prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	start := time.Now()
	end := start.Add(dur)
	s.windows = []*window{{start: start}}
	var wg sync.WaitGroup
	for i, k := range kinds {
		// Each kind: a pacer and enough workers for its rate at a slow
		// answer.
		due := make(chan struct{}, 64)
		wg.Go(func() {
			defer close(due)
			every := time.Duration(float64(time.Second) / k.rate)
			for next := time.Now(); next.Before(end); next = next.Add(every) {
				time.Sleep(time.Until(next))
				select {
				case due <- struct{}{}:
				default:
					s.add(k.name, "not sent", 0) // every worker busy
				}
			}
		})
		for w := range 16 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), uint64(w)))
				req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
				for range due {
					req.Reset()
					resp.Reset()
					k.req(r, req)
					req.Header.SetHost(s.client.Addr)
					began := time.Now()
					err := s.client.Do(req, resp)
					o := outcome(resp.StatusCode(), resp.Body(), err)
					s.add(k.name, o, time.Since(began))
					if o != "200" && o != "304" {
						s.mu.Lock()
						if _, seen := s.firstFn[k.name+" "+o]; !seen {
							detail := fmt.Sprintf("%s: %.200s", req.URI(), resp.Body())
							if err != nil {
								detail = fmt.Sprintf("%s: %v", req.URI(), err)
							}
							s.firstFn[k.name+" "+o] = detail
						}
						s.mu.Unlock()
					}
				}
			})
		}
	}
	// Every window: a new row, the RSS, and the summary's ETag (it
	// changes when a state is published).
	wg.Go(func() {
		for t := time.NewTicker(s.width); time.Now().Before(end); {
			<-t.C
			rss := readRSS(pidFile)
			s.mu.Lock()
			s.windows[len(s.windows)-1].rssMiB = rss
			s.windows = append(s.windows, &window{start: time.Now()})
			s.mu.Unlock()
			s.refreshETag()
		}
	})
	wg.Wait()
}

func (s *soak) add(kind, outcome string, took time.Duration) {
	s.mu.Lock()
	w := s.windows[len(s.windows)-1]
	w.samples = append(w.samples, sample{kind, outcome, took})
	s.mu.Unlock()
}

// readRSS returns the VmRSS of the pid in pidFile, in MiB (0: unknown).
func readRSS(pidFile string) float64 {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return 0
	}
	f, err := os.Open("/proc/" + strings.TrimSpace(string(b)) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
