// Command events measures the change events of an edge on loopback (issue
// 42): it writes new metadata versions into ClickHouse (change), holds
// many server-sent-event streams open and times each event's arrival
// after the edge publishes it (sse), registers webhook endpoints in bulk
// (register), and receives their deliveries, verifying each signature and
// counting what each endpoint got (receive).
//
//	events change   --ch-database bench_1m_ev --base http://127.0.0.1:18095 --count 1
//	events sse      --base http://127.0.0.1:18095 --key edge_… --clients 10000 --wait 60s
//	events reset    --ch-database bench_1m_ev
//	events register --ch-database bench_1m_ev --key-file webhook.key --url http://127.0.0.1:19990 --count 10000
//	events receive  --listen 127.0.0.1:19990 --secrets secrets.tsv --expect 10000 --hang 100 --fail 100
package main

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/views"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "events change|sse|register|receive [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "change":
		err = change(os.Args[2:])
	case "sse":
		err = sse(os.Args[2:])
	case "register":
		err = register(os.Args[2:])
	case "reset":
		err = reset(os.Args[2:])
	case "receive":
		err = receive(os.Args[2:])
	default:
		err = fmt.Errorf("no command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

func chConfig(fs *flag.FlagSet) *analytics.Config {
	c := analytics.DefaultConfig()
	c.Addr, c.Database = "127.0.0.1:19000", "bench_1m_ev"
	fs.StringVar(&c.Addr, "ch-addr", c.Addr, "ClickHouse address")
	fs.StringVar(&c.Database, "ch-database", c.Database, "ClickHouse database")
	return &c
}

// change writes a new metadata version of count live chrome listings (the
// largest), each with a new developer, a second after the newest version.
func change(args []string) error {
	fs := flag.NewFlagSet("change", flag.ExitOnError)
	cfg := chConfig(fs)
	base := fs.String("base", "http://127.0.0.1:18095", "the edge, to read the listings from")
	count := fs.Int("count", 1, "listings to change")
	fs.Parse(args)
	resp, err := http.Get(fmt.Sprintf("%s/api/v1/listings?store=chrome&limit=%d", *base, min(*count, 100)))
	if err != nil {
		return err
	}
	var page struct {
		Listings []struct {
			Store, ID, Name, Developer, Category, Kind, Description, Icon, Version string
			FirstSeen                                                              time.Time
			Featured                                                               bool
			ManifestVersion, AccessLevel                                           *uint8
			Permissions, HostAccess, Topics                                        []string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if err != nil {
		return err
	}
	ctx := context.Background()
	conn, err := analytics.Open(ctx, *cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mark time.Time
	if err := conn.QueryRow(ctx, "SELECT max(crawled_at) FROM listings").Scan(&mark); err != nil {
		return err
	}
	at := mark.Add(time.Second)
	var rows []analytics.ListingRow
	kinds := map[string]views.Kind{"extension": views.KindExtension, "theme": views.KindTheme, "app": views.KindApp}
	for i, l := range page.Listings {
		if i == *count {
			break
		}
		r := analytics.ListingRow{Store: views.Chrome, ID: l.ID, CrawledAt: at, Name: l.Name, Developer: fmt.Sprintf("New Owner %d", at.Unix()),
			Category: l.Category, Kind: kinds[l.Kind], Description: l.Description, Icon: l.Icon, Version: l.Version, FirstSeen: l.FirstSeen,
			Featured: l.Featured, Permissions: l.Permissions, HostAccess: l.HostAccess, Topics: l.Topics}
		if l.ManifestVersion != nil {
			r.ManifestVersion = *l.ManifestVersion
		}
		if l.AccessLevel != nil {
			r.AccessLevel = *l.AccessLevel
		}
		rows = append(rows, r)
	}
	if err := analytics.WriteListings(ctx, conn, rows); err != nil {
		return err
	}
	fmt.Printf("changed %d listings at %s\n", len(rows), at.Format(time.RFC3339))
	return nil
}

// generation returns the edge's published generation, as its metrics
// tell it (computed when asked, never a cached answer).
func generation(base string) (uint64, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "edge_views_generation "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return uint64(f), err
		}
	}
	return 0, fmt.Errorf("no edge_views_generation in %s/metrics", base)
}

// sse opens clients streams, then waits for the edge to publish a new
// generation and times, for each stream, its first event after it.
func sse(args []string) error {
	fs := flag.NewFlagSet("sse", flag.ExitOnError)
	base := fs.String("base", "http://127.0.0.1:18095", "the edge")
	key := fs.String("key", "", "an API key")
	clients := fs.Int("clients", 1000, "streams to open")
	wait := fs.Duration("wait", 60*time.Second, "how long to wait for the publish and the events")
	ready := fs.String("ready", "", "a file written once every stream is open (a script then triggers the change)")
	start := fs.String("go", "", "a file whose creation starts the watch for the publish (polling /metrics every 5 ms costs the edge CPU: not while a script measures other answers)")
	fs.Parse(args)
	tr := &http.Transport{MaxIdleConnsPerHost: *clients, MaxConnsPerHost: 0, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
	client := &http.Client{Transport: tr}
	arrived := make([]atomic.Int64, *clients) // unix nanoseconds of the first event
	var open, failed atomic.Int64
	var wg sync.WaitGroup
	began := time.Now()
	sem := make(chan struct{}, 200)
	for i := range *clients {
		sem <- struct{}{}
		wg.Go(func() {
			req, _ := http.NewRequest("GET", *base+"/api/v1/events/stream?store=chrome&kind=developer", nil)
			req.Header.Set("Authorization", "Bearer "+*key)
			resp, err := client.Do(req)
			<-sem
			if err != nil || resp.StatusCode != 200 {
				failed.Add(1)
				if err == nil {
					resp.Body.Close()
				}
				return
			}
			open.Add(1)
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 4096)
			deadline := time.Now().Add(*wait + time.Minute)
			for time.Now().Before(deadline) {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if strings.HasPrefix(line, "data: ") {
					arrived[i].Store(time.Now().UnixNano())
					return
				}
			}
		})
	}
	for open.Load()+failed.Load() < int64(*clients) {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("streams open: %d, refused or failed: %d, in %s\n", open.Load(), failed.Load(), time.Since(began).Round(time.Millisecond))
	gen, err := generation(*base)
	if err != nil {
		return err
	}
	if *ready != "" {
		os.WriteFile(*ready, []byte("ready\n"), 0o644)
	}
	for *start != "" {
		if _, err := os.Stat(*start); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The publish: the generation changes (polled every 5 ms).
	var published time.Time
	for end := time.Now().Add(*wait); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if g, err := generation(*base); err == nil && g != gen {
			published = time.Now()
			break
		}
	}
	if published.IsZero() {
		return fmt.Errorf("no new generation within %s", *wait)
	}
	fmt.Printf("published at %s (UTC)\n", published.UTC().Format("15:04:05.000"))
	time.Sleep(5 * time.Second)
	var lat []time.Duration
	for i := range arrived {
		if t := arrived[i].Load(); t > 0 {
			lat = append(lat, time.Unix(0, t).Sub(published))
		}
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		return fmt.Errorf("no stream got the event")
	}
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("event received by %d of %d streams; after the publish (edge_views_generation polled every 5 ms): p50 %s, p99 %s, max %s; after the first stream's: p99 %s, max %s\n",
		len(lat), open.Load(), q(0.5).Round(time.Millisecond), q(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond),
		(q(0.99) - lat[0]).Round(time.Millisecond), (lat[len(lat)-1] - lat[0]).Round(time.Millisecond))
	return nil
}

// register writes count endpoints of one account straight into ClickHouse
// (the registration route is tested by make test; its sign-in hashes a
// password each call), each filtered to chrome's developer changes, at
// <url>/<n>, and prints "path<TAB>secret" lines for the receiver.
func register(args []string) error {
	fs := flag.NewFlagSet("register", flag.ExitOnError)
	cfg := chConfig(fs)
	key := fs.String("key", os.Getenv("EDGE_WEBHOOK_KEY"), "the edge's webhook key")
	base := fs.String("url", "http://127.0.0.1:19990", "the receiver")
	count := fs.Int("count", 10000, "endpoints")
	out := fs.String("secrets", "secrets.tsv", "where the secrets go, a line an endpoint")
	fs.Parse(args)
	ctx := context.Background()
	conn, err := analytics.Open(ctx, *cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	rows, lines, err := webhooks.BulkEndpoints(*key, "bench@example.com", *base, *count, "chrome", "developer")
	if err != nil {
		return err
	}
	if err := analytics.WriteWebhookRows(ctx, conn, rows, time.Now()); err != nil {
		return err
	}
	fmt.Printf("registered %d endpoints\n", len(rows))
	return os.WriteFile(*out, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// reset empties the webhook tables of the benchmark's database: the
// endpoints of an earlier run were sealed with another run's key.
func reset(args []string) error {
	fs := flag.NewFlagSet("reset", flag.ExitOnError)
	cfg := chConfig(fs)
	fs.Parse(args)
	if !strings.HasPrefix(cfg.Database, "bench_") {
		return fmt.Errorf("reset empties tables of bench_ databases only, not %s", cfg.Database)
	}
	ctx := context.Background()
	conn, err := analytics.Open(ctx, *cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, t := range []string{"webhooks", "webhook_cursors", "webhook_deliveries"} {
		if err := conn.Exec(ctx, "TRUNCATE TABLE IF EXISTS "+t); err != nil {
			return fmt.Errorf("truncate %s: %w", t, err)
		}
	}
	return nil
}

// receive serves the endpoints: it verifies each delivery's signature,
// counts the distinct messages each endpoint got and the repeats, lets
// the first hang endpoints hang past the edge's timeout and the next fail
// ones answer 500, and reports when every other endpoint has its expected
// messages.
func receive(args []string) error {
	fs := flag.NewFlagSet("receive", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:19990", "address")
	secretsFile := fs.String("secrets", "secrets.tsv", "path<TAB>secret lines")
	expect := fs.Int("expect", 1, "messages each healthy endpoint should get")
	hang := fs.Int("hang", 0, "endpoints that never answer in time")
	fail := fs.Int("fail", 0, "endpoints that answer 500")
	report := fs.Duration("report", 5*time.Second, "how often to report")
	stopAfter := fs.Duration("for", 10*time.Minute, "how long to run")
	fs.Parse(args)
	b, err := os.ReadFile(*secretsFile)
	if err != nil {
		return err
	}
	secrets := map[string][]byte{}
	var paths []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		p, s, _ := strings.Cut(line, "\t")
		k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			return fmt.Errorf("secret of %s: %w", p, err)
		}
		secrets[p] = k
		paths = append(paths, p)
	}
	hanging, failing := map[string]bool{}, map[string]bool{}
	for i, p := range paths {
		switch {
		case i < *hang:
			hanging[p] = true
		case i < *hang+*fail:
			failing[p] = true
		}
	}
	healthy := len(paths) - *hang - *fail
	var mu sync.Mutex
	got := map[string]map[string]bool{}
	var repeats, bad, attemptsHang, attemptsFail atomic.Int64
	var first, done time.Time
	start := time.Now()
	srv := &http.Server{Addr: *listen, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 0, 1024)
		buf := make([]byte, 4096)
		for {
			n, err := r.Body.Read(buf)
			body = append(body, buf[:n]...)
			if err != nil {
				break
			}
		}
		p := r.URL.Path
		switch {
		case hanging[p]:
			attemptsHang.Add(1)
			time.Sleep(30 * time.Second)
			return
		case failing[p]:
			attemptsFail.Add(1)
			w.WriteHeader(500)
			return
		}
		id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
		mac := hmac.New(sha256.New, secrets[p])
		mac.Write([]byte(id + "." + ts + "." + string(body)))
		if !slices.Contains(strings.Fields(r.Header.Get("webhook-signature")), "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil))) {
			bad.Add(1)
			w.WriteHeader(401)
			return
		}
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		if got[p] == nil {
			got[p] = map[string]bool{}
		}
		if got[p][id] {
			repeats.Add(1)
		}
		got[p][id] = true
		complete := 0
		for _, ids := range got {
			if len(ids) >= *expect {
				complete++
			}
		}
		if complete == healthy && done.IsZero() {
			done = time.Now()
		}
		mu.Unlock()
		w.WriteHeader(204)
	})}
	go srv.ListenAndServe()
	tick := time.NewTicker(*report)
	defer tick.Stop()
	for time.Since(start) < *stopAfter {
		<-tick.C
		mu.Lock()
		complete := 0
		for _, ids := range got {
			if len(ids) >= *expect {
				complete++
			}
		}
		line := fmt.Sprintf("%s: %d of %d healthy endpoints have their %d messages; repeats %d; bad signatures %d; attempts at hanging %d, at failing %d",
			time.Since(start).Round(time.Second), complete, healthy, *expect, repeats.Load(), bad.Load(), attemptsHang.Load(), attemptsFail.Load())
		if !done.IsZero() {
			line += fmt.Sprintf("; all in %s after the first", done.Sub(first).Round(time.Millisecond))
		}
		mu.Unlock()
		fmt.Println(line)
		if !done.IsZero() {
			break
		}
	}
	return nil
}
