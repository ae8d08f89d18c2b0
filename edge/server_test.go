package edge_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/figures"
)

var srv *chtest.Server

func TestMain(m *testing.M) { chtest.Main(m, &srv) }

// harness is a running edge server with its jobs, on a loopback port.
type harness = edgetest.Harness

// start starts an edge over d (see edgetest.Start).
func start(t testing.TB, d edgetest.Dataset, opts ...func(*edge.Config)) *harness {
	t.Helper()
	return edgetest.Start(t, d, nil, opts...)
}

// startLogged is start with the server's log going to log.
func startLogged(t testing.TB, d edgetest.Dataset, log *slog.Logger, opts ...func(*edge.Config)) *harness {
	t.Helper()
	return edgetest.Start(t, d, log, opts...)
}

// firstLive returns the first live listing of store in h's published
// replica.
func firstLive(t testing.TB, h *harness, store views.Store) views.Listing {
	t.Helper()
	for _, l := range h.State.Load().Replica.OfStore(store) {
		if l.Live() {
			return l
		}
	}
	t.Fatalf("no live %s listing", store)
	return views.Listing{}
}

// synthetic returns the test dataset of 800 listings in memory: the edge
// answers every figure without ClickHouse.
func synthetic(t testing.TB) edgetest.Dataset { return syntheticN(t, 800) }

// syntheticN is synthetic with n listings.
func syntheticN(t testing.TB, n int) edgetest.Dataset {
	t.Helper()
	return edgetest.Memory(edgetest.Seed(n))
}

// seeded returns a ClickHouse database seeded with the test dataset of
// 800 listings, for the tests that need ClickHouse-backed reads.
func seeded(t testing.TB) edgetest.Dataset { return seededN(t, 800) }

// seededN returns a database seeded with n listings and 15 days of history
// ending 2026-03-01.
func seededN(t testing.TB, n int) edgetest.Dataset {
	t.Helper()
	return seededWith(t, edgetest.Seed(n))
}

// seededWith returns a database seeded with the dataset of o.
func seededWith(t testing.TB, o seed.Options) edgetest.Dataset {
	t.Helper()
	srv := chtest.Need(t, srv)
	cfg, conn := srv.Migrated(t)
	if _, err := seed.Write(context.Background(), conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return edgetest.Dataset{CH: &cfg}
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, method, url string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, body}
}

// getOK asks url, requires a 200 and decodes the JSON answer.
func getOK[T any](t *testing.T, url string) T {
	t.Helper()
	a := get(t, "GET", url)
	if a.status != 200 {
		t.Fatalf("%s: %d %s", url, a.status, a.body)
	}
	var out T
	if err := json.Unmarshal(a.body, &out); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return out
}

// problem checks that a is an RFC 9457 problem with the given status and
// returns its detail.
func problem(t *testing.T, a answer, status int) string {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q, want application/problem+json", ct)
	}
	var p struct {
		Type, Title, Detail string
		Status              int
	}
	if err := json.Unmarshal(a.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", a.body, err)
	}
	if p.Status != status || p.Type == "" || p.Title == "" || len(p.Detail) < 10 {
		t.Fatalf("incomplete problem %+v", p)
	}
	return p.Detail
}

func TestReadinessFollowsTheReplica(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)

	if a := get(t, "GET", h.Base+"/healthz"); a.status != 200 {
		t.Fatalf("healthz %d", a.status)
	}
	a := get(t, "GET", h.Base+"/readyz")
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("readyz before load: %d %s", a.status, a.body)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/listings/chrome/x"), http.StatusServiceUnavailable)

	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a = get(t, "GET", h.Base+"/readyz")
	if a.status != 200 {
		t.Fatalf("readyz after load: %d %s", a.status, a.body)
	}
	var r struct {
		Ready      bool
		Generation uint64
		Listings   map[string]int
		Jobs       []cron.Status
	}
	if err := json.Unmarshal(a.body, &r); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range r.Listings {
		total += n
	}
	if !r.Ready || r.Generation != 2 || total != 800 || len(r.Listings) != 5 {
		t.Fatalf("readyz body %s", a.body)
	}
	if len(r.Jobs) != 4 || r.Jobs[0].Name != "views" || r.Jobs[0].Runs < 1 || r.Jobs[0].LastSuccess.IsZero() {
		t.Fatalf("job status %+v", r.Jobs)
	}
}

func TestListingRead(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	st := h.State.Load()
	checked := 0
	for _, store := range views.Stores {
		for _, l := range st.Replica.OfStore(store) {
			if !l.Crawled() {
				continue
			}
			a := get(t, "GET", h.Base+"/api/v1/listings/"+store.String()+"/"+l.ID)
			if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				t.Fatalf("%s/%s: %d %s", store, l.ID, a.status, a.body)
			}
			var got map[string]any
			if err := json.Unmarshal(a.body, &got); err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(document.NewListing(&l, st.Figures))
			var wantM map[string]any
			json.Unmarshal(want, &wantM)
			for k, v := range wantM {
				if gv, ok := got[k]; !ok || !jsonEqual(gv, v) {
					t.Fatalf("%s/%s field %s = %v, want %v", store, l.ID, k, gv, v)
				}
			}
			if got["store"] != store.String() || got["id"] != l.ID || got["name"] != l.Name {
				t.Fatalf("wrong listing: %s", a.body)
			}
			for _, k := range []string{"slug", "rating", "ratingCount", "stars", "delistedAt", "updated", "size", "weeklyDownloads"} {
				if _, ok := got[k]; !ok {
					t.Fatalf("field %s left out instead of null: %s", k, a.body)
				}
			}
			checked++
			break
		}
	}
	if checked != 5 {
		t.Fatalf("checked %d stores", checked)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestNotFoundAndMethods(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want string // in the detail
	}{
		{"/api/v1/listings/safari/abc", "unknown store"},
		{"/api/v1/listings/chrome/doesnotexist", "no listing"},
		{"/api/v1/listings/Chrome/abc", "unknown store"},
		{"/api/v1/nothing-here", "nothing at"},
		{"/nowhere", "nothing at"},
	} {
		d := problem(t, get(t, "GET", h.Base+c.path), http.StatusNotFound)
		if !strings.Contains(d, c.want) {
			t.Errorf("%s: detail %q does not say %q", c.path, d, c.want)
		}
	}
	// A listing that is known but has never been read.
	var pending *views.Listing
	for _, l := range h.State.Load().Replica.All() {
		if !l.Crawled() {
			pending = &l
			break
		}
	}
	if pending == nil {
		t.Fatal("the seeded data has no never-read listing")
	}
	d := problem(t, get(t, "GET", h.Base+"/api/v1/listings/"+pending.Store.String()+"/"+pending.ID), http.StatusNotFound)
	if !strings.Contains(d, "not read yet") {
		t.Errorf("never-read listing: detail %q", d)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		a := get(t, m, h.Base+"/api/v1/listings/chrome/abc")
		problem(t, a, http.StatusMethodNotAllowed)
		if allow := a.header.Get("Allow"); !strings.Contains(allow, "GET") {
			t.Errorf("%s: Allow %q", m, allow)
		}
	}
	if a := get(t, "HEAD", h.Base+"/healthz"); a.status != 200 || len(a.body) != 0 {
		t.Errorf("HEAD healthz: %d, %d bytes", a.status, len(a.body))
	}
}

func TestGracefulStop(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := http.Get(h.Base + "/healthz"); err == nil {
		t.Fatal("still answering after stop")
	}
}

func TestBackgroundFiguresAnswer503UntilBuilt(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	paths := []string{"/api/v1/categories/chrome", "/api/v1/stores/edge/stats", "/api/v1/week", "/api/v1/week/2026-W05"}
	for _, p := range paths {
		a := get(t, "GET", h.Base+p)
		problem(t, a, http.StatusServiceUnavailable)
		if ra := a.header.Get("Retry-After"); ra != "60" {
			t.Errorf("%s: Retry-After %q, want 60", p, ra)
		}
	}
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a := get(t, "GET", h.Base+"/api/v1/categories/chrome")
	var cats struct {
		Store      string
		Categories []figures.CategoryCount
	}
	if err := json.Unmarshal(a.body, &cats); a.status != 200 || err != nil || cats.Store != "chrome" || len(cats.Categories) == 0 {
		t.Fatalf("categories after build: %d %s", a.status, a.body)
	}
	if a := get(t, "GET", h.Base+"/api/v1/stores/edge/stats"); a.status != 200 || !strings.Contains(string(a.body), `"store":"edge"`) {
		t.Fatalf("stats after build: %d %s", a.status, a.body)
	}
	// Editions have their own job: still 503 until it runs.
	problem(t, get(t, "GET", h.Base+"/api/v1/week"), http.StatusServiceUnavailable)
	if err := h.Jobs.RunNow("editions"); err != nil {
		t.Fatal(err)
	}
	a = get(t, "GET", h.Base+"/api/v1/week")
	var e editions.Edition
	if err := json.Unmarshal(a.body, &e); a.status != 200 || err != nil || len(e.Stores) != 5 {
		t.Fatalf("latest week: %d %s", a.status, a.body)
	}
	// The seeded data ends 2026-03-01 (a Sunday, 00:00): the week before is the latest complete one.
	if e.Week != "2026-W08" {
		t.Errorf("latest edition %s, want 2026-W08", e.Week)
	}
	if a := get(t, "GET", h.Base+"/api/v1/week/"+e.Week); a.status != 200 {
		t.Errorf("week by id: %d", a.status)
	}
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/week/2026-W5"), http.StatusBadRequest); !strings.Contains(d, "<yyyy>-W<ww>") {
		t.Errorf("malformed week detail %q", d)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/week/2027-W53"), http.StatusBadRequest)
	// A week without an edition: the detail names the earliest and the
	// latest, and /weeks lists every one, newest first.
	weeks := getOK[struct {
		Weeks []struct{ Week, Start, End string }
	}](t, h.Base+"/api/v1/weeks").Weeks
	if len(weeks) < 1 || weeks[0].Week != "2026-W08" || weeks[0].Start != "2026-02-16" || weeks[0].End != "2026-02-22" {
		t.Fatalf("weeks %+v, want 2026-W08 (2026-02-16 to 2026-02-22) first", weeks)
	}
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/week/2020-W10"), http.StatusNotFound); !strings.Contains(d, weeks[len(weeks)-1].Week+" to 2026-W08") || !strings.Contains(d, "/api/v1/weeks") {
		t.Errorf("missing week detail %q: want the earliest and latest editions and the list", d)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/categories/safari"), http.StatusNotFound)
}

func TestMetrics(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a := get(t, "GET", h.Base+"/metrics")
	body := string(a.body)
	for _, want := range []string{`edge_job_runs_total{job="views"} 1`, `edge_views_generation 2`,
		`edge_figures_ready 1`, `edge_listings{store="chrome"}`, `edge_job_failures_total{job="editions"} 0`, "go_goroutines",
		"edge_keys_active 0", "edge_keys_loaded_timestamp_seconds 1", "edge_usage_read_timestamp_seconds 1"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	// Requests are counted by route pattern and status and timed by route;
	// an unknown address counts as unmatched; the answer cache counts its
	// hits and misses. (The requests an edge makes itself to precompress
	// the published answers count as lookups but not as requests:
	// TestPrecompressedOnPublish.)
	first := get(t, "GET", h.Base+"/api/v1/categories/firefox")
	get(t, "GET", h.Base+"/api/v1/categories/firefox")
	req, _ := http.NewRequest("GET", h.Base+"/api/v1/categories/firefox", nil)
	req.Header.Set("If-None-Match", first.header.Get("ETag"))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 304 {
		t.Fatalf("revalidation: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/categories/safari"), http.StatusNotFound)
	problem(t, get(t, "GET", h.Base+"/api/v1/nowhere"), http.StatusNotFound)
	problem(t, get(t, "GET", h.Base+"/api/v1/listings?limit=0"), http.StatusBadRequest)
	body = string(get(t, "GET", h.Base+"/metrics").body)
	for _, want := range []string{
		`edge_http_requests_total{route="/api/v1/categories/:store",status="200"} 2`,
		`edge_http_requests_total{route="/api/v1/categories/:store",status="304"} 1`,
		`edge_http_requests_total{route="unmatched",status="404"} 2`,
		`edge_http_requests_total{route="/api/v1/listings",status="400"} 1`,
		`edge_http_request_duration_seconds_count{route="/api/v1/categories/:store"} 3`,
		`edge_http_request_duration_seconds_count{route="unmatched"} 2`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// The cache stores asynchronously: the second read may miss too. Each
	// of the three lookups is one hit or one miss.
	hits, misses := metricValue(t, body, "edge_answer_cache_hits_total"), metricValue(t, body, "edge_answer_cache_misses_total")
	if misses < 1 || hits+misses != 3 {
		t.Errorf("answer cache: %v hits, %v misses; want 3 lookups, the first a miss", hits, misses)
	}
}

// metricValue returns the value of the unlabelled metric name in a
// Prometheus text exposition.
func metricValue(t *testing.T, body, name string) float64 {
	t.Helper()
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	t.Fatalf("metrics lack %s", name)
	return 0
}

func TestV1AnswersCarryETags(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if err := h.Jobs.RunNow("editions"); err != nil {
		t.Fatal(err)
	}
	l := h.State.Load().Replica.OfStore(views.Edge)[3]
	for _, path := range []string{"/api/v1/listings/edge/" + l.ID, "/api/v1/categories/edge", "/api/v1/stores/edge/stats", "/api/v1/week"} {
		a := get(t, "GET", h.Base+path)
		etag := a.header.Get("ETag")
		if a.status != 200 || !strings.HasPrefix(etag, `W/"`) || a.header.Get("Cache-Control") != "private, max-age=60" {
			t.Fatalf("%s: %d etag %q cache %q", path, a.status, etag, a.header.Get("Cache-Control"))
		}
		req, _ := http.NewRequest("GET", h.Base+path, nil)
		req.Header.Set("If-None-Match", etag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 304 || resp.Header.Get("ETag") != etag {
			t.Errorf("%s revalidated: %d", path, resp.StatusCode)
		}
	}
	// A new generation with the same figures keeps the ETag.
	before := get(t, "GET", h.Base+"/api/v1/categories/edge").header.Get("ETag")
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if after := get(t, "GET", h.Base+"/api/v1/categories/edge").header.Get("ETag"); after != before {
		t.Errorf("unchanged answer changed ETag across generations: %s then %s", before, after)
	}
}

func TestChartsAndTags(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	f := h.State.Load().Figures
	var chart struct {
		Store, Chart string
		Category     *string
		Entries      []struct {
			Position int
			Listing  struct{ ID string }
		}
	}
	for _, c := range []struct {
		query string
		key   figures.ChartKey
	}{
		{"", figures.ChartKey{Store: views.Chrome, Chart: figures.ChartTop}},
		{"?chart=climbers", figures.ChartKey{Store: views.Chrome, Chart: figures.ChartClimbers}},
		{"?chart=top-rated", figures.ChartKey{Store: views.Chrome, Chart: figures.ChartTopRated}},
		{"?chart=new&category=Tools", figures.ChartKey{Store: views.Chrome, Chart: figures.ChartNew, Category: "Tools"}},
	} {
		a := get(t, "GET", h.Base+"/api/v1/charts/chrome"+c.query)
		if a.status != 200 {
			t.Fatalf("%s: %d %s", c.query, a.status, a.body)
		}
		json.Unmarshal(a.body, &chart)
		want := f.Chart(c.key)
		if chart.Chart != c.key.Chart || len(chart.Entries) != len(want) {
			t.Fatalf("%s: %d entries, want %d", c.query, len(chart.Entries), len(want))
		}
		for i, e := range chart.Entries {
			if e.Position != i+1 || e.Listing.ID != want[i].ID {
				t.Fatalf("%s entry %d: %+v, want %s", c.query, i, e, want[i].ID)
			}
		}
	}
	if len(f.Chart(figures.ChartKey{Store: views.Chrome, Chart: figures.ChartTop})) == 0 {
		t.Fatal("empty top chart")
	}
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/charts/chrome?chart=best"), http.StatusBadRequest); !strings.Contains(d, "climbers") {
		t.Errorf("unknown chart detail %q", d)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/charts/chrome?category=Nope"), http.StatusNotFound)
	problem(t, get(t, "GET", h.Base+"/api/v1/charts/safari"), http.StatusNotFound)

	var tags struct {
		Tags []struct {
			Slug     string
			Listings map[string]int
		}
	}
	json.Unmarshal(get(t, "GET", h.Base+"/api/v1/tags").body, &tags)
	if len(tags.Tags) == 0 || len(tags.Tags) != len(f.Topics()) {
		t.Fatalf("tags %d, topics %d", len(tags.Tags), len(f.Topics()))
	}
	slug := tags.Tags[0].Slug
	var tag struct {
		Total    int
		Listings []struct{ ID string }
	}
	json.Unmarshal(get(t, "GET", h.Base+"/api/v1/tags/"+slug+"/chrome").body, &tag)
	want, _ := f.TopicListings(slug, views.Chrome)
	if tag.Total != tags.Tags[0].Listings["chrome"] || tag.Total != len(want) || (len(want) > 0 && tag.Listings[0].ID != want[0].ID) {
		t.Errorf("tag %s in chrome: %+v", slug, tag)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/tags/no-such-topic/chrome"), http.StatusNotFound)
	problem(t, get(t, "GET", h.Base+"/api/v1/tags/"+slug+"/safari"), http.StatusNotFound)
}
