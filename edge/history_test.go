package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
)

type historyPage struct {
	Store, ID string
	Days      int
	From      string
	Truncated bool
	Snapshots []analytics.Snapshot
}

// getHistoryPage asks for a history page and decodes it. A 503 with
// Retry-After (the read's time budget ran out: the lane that
// runs these tests has only the CPU the race pass leaves) is asked again,
// as the API tells a client to, twice at most.
func getHistoryPage(t *testing.T, url string) (historyPage, answer) {
	t.Helper()
	a := get(t, http.MethodGet, url)
	for try := 0; try < 2 && a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") != ""; try++ {
		time.Sleep(time.Second)
		a = get(t, http.MethodGet, url)
	}
	if a.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, a.status, a.body)
	}
	var p historyPage
	if err := json.Unmarshal(a.body, &p); err != nil {
		t.Fatal(err)
	}
	return p, a
}

// dailyLatest reads a listing's snapshots straight from the table and
// keeps each UTC day's latest crawl: the test's own expectation.
func dailyLatest(t *testing.T, cfg edgetest.Dataset, s views.Store, id string) map[string]analytics.Snapshot {
	t.Helper()
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(context.Background(), `SELECT crawled_at, usage, rating_count FROM snapshots WHERE store = ? AND id = ?`, uint8(s), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]analytics.Snapshot{}
	for rows.Next() {
		var (
			at        time.Time
			usage, rc *uint64
		)
		if err := rows.Scan(&at, &usage, &rc); err != nil {
			t.Fatal(err)
		}
		day := at.UTC().Format(time.DateOnly)
		cur := out[day]
		cur.Crawls++
		if !at.Before(cur.ReadAt) {
			cur.ReadAt, cur.Usage, cur.RatingCount = at.UTC(), i64p(usage), i64p(rc)
		}
		out[day] = cur
	}
	return out
}

func i64p(v *uint64) *int64 {
	if v == nil {
		return nil
	}
	x := int64(*v)
	return &x
}

func TestListingHistory(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	for _, job := range []string{"views", "ranks"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(job, err)
		}
	}
	var target views.Listing
	for _, l := range h.State.Load().Replica.All() {
		if l.Crawled() && l.Store == views.Edge {
			if _, ok := l.Usage(); ok {
				target = l
				break
			}
		}
	}
	path := h.Base + "/api/v1/listings/edge/" + target.ID + "/history"
	want := dailyLatest(t, cfg, views.Edge, target.ID)

	p, a := getHistoryPage(t, path)
	if p.Store != "edge" || p.ID != target.ID || p.Days != 365 || p.Truncated || len(p.Snapshots) != len(want) || len(want) < 5 {
		t.Fatalf("default history: days %d truncated %v, %d snapshots, want 365 false %d", p.Days, p.Truncated, len(p.Snapshots), len(want))
	}
	for i, s := range p.Snapshots {
		w := want[s.Day]
		if i > 0 && s.Day <= p.Snapshots[i-1].Day {
			t.Fatalf("snapshots not oldest first, one a day: %s after %s", s.Day, p.Snapshots[i-1].Day)
		}
		if !s.ReadAt.Equal(w.ReadAt) || s.Crawls != w.Crawls || *s.Usage != *w.Usage || *s.Size != *w.Usage {
			t.Errorf("%s: %+v, want the day's latest crawl %+v", s.Day, s, w)
		}
		if s.StoreRank == nil || *s.StoreRank < 1 {
			t.Errorf("%s: no store rank after the ranks job", s.Day)
		}
	}
	if a.header.Get("ETag") == "" || a.header.Get("Cache-Control") != "private, max-age=60" {
		t.Errorf("caching headers: %v", a.header)
	}
	req, _ := http.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("If-None-Match", a.header.Get("ETag"))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %v %v, want 304", resp, err)
	} else {
		resp.Body.Close()
	}

	// A short window ends with the data's newest day.
	last := views.DayOf(h.State.Load().Replica.Info().ReadingsMark)
	p3, _ := getHistoryPage(t, path+"?days=3")
	if p3.Days != 3 || p3.From != (last-2).String() || len(p3.Snapshots) == 0 || len(p3.Snapshots) > 3 || p3.Snapshots[0].Day < p3.From {
		t.Errorf("days=3: from %s, %d snapshots %v", p3.From, len(p3.Snapshots), p3.Snapshots)
	}

	for _, bad := range []string{"0", "731", "-1", "abc", "1.5"} {
		if d := problem(t, get(t, http.MethodGet, path+"?days="+bad), http.StatusBadRequest); d == "" {
			t.Errorf("days=%s: no detail", bad)
		}
	}
	problem(t, get(t, http.MethodGet, h.Base+"/api/v1/listings/edge/no-such-listing/history"), http.StatusNotFound)
	problem(t, get(t, http.MethodGet, h.Base+"/api/v1/listings/nostore/x/history"), http.StatusNotFound)
	if a := get(t, http.MethodPost, path); a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") == "" {
		t.Errorf("POST: %d Allow %q, want 405 with Allow", a.status, a.header.Get("Allow"))
	}

	// While ClickHouse is down, an uncached history is 503 with Retry-After.
	srv.Pause()
	down := get(t, http.MethodGet, path+"?days=5")
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	problem(t, down, http.StatusServiceUnavailable)
	if down.header.Get("Retry-After") != "5" {
		t.Errorf("Retry-After %q, want 5", down.header.Get("Retry-After"))
	}
}

func TestListingHistoryTruncated(t *testing.T) {
	cfg := seeded(t)
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 700 crawls on each of the data's last three days: 2,100 in the window.
	end := time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)
	var rows []analytics.SnapshotRow
	for day := range 3 {
		for k := range 700 {
			v := uint64(1000 + day)
			rows = append(rows, analytics.SnapshotRow{Store: views.Edge, ID: "busy", Usage: &v,
				CrawledAt: end.AddDate(0, 0, -day).Add(time.Duration(k) * time.Minute)})
		}
	}
	if err := analytics.WriteListings(context.Background(), conn, []analytics.ListingRow{{Store: views.Edge, ID: "busy",
		Name: "Busy", CrawledAt: end.AddDate(0, 0, -3), FirstSeen: end.AddDate(0, 0, -3)}}); err != nil {
		t.Fatal(err)
	}
	if err := analytics.WriteSnapshots(context.Background(), conn, rows); err != nil {
		t.Fatal(err)
	}
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	p, _ := getHistoryPage(t, h.Base+"/api/v1/listings/edge/busy/history?days=30")
	total := 0
	for _, s := range p.Snapshots {
		total += s.Crawls
	}
	if !p.Truncated || len(p.Snapshots) != 2 || total != 1400 || p.Snapshots[1].Day != "2026-02-28" {
		t.Errorf("history over 2,100 crawls: truncated %v, %d days, %d crawls, %+v; want the newest 2 days (1,400 crawls)", p.Truncated, len(p.Snapshots), total, p.Snapshots)
	}
	// Before the ranks job has run, ranks are null.
	if len(p.Snapshots) > 0 && p.Snapshots[0].StoreRank != nil {
		t.Errorf("store rank before the ranks job: %d, want null", *p.Snapshots[0].StoreRank)
	}
}

// TestOneRankInDocumentAndHistory: a listing's store rank in its document
// and on the data's last day of its history are the same figure, for
// every listing of the dataset: ties share a rank, every listing read in
// the 7 days up to that day counts by its newest size (also the small
// ones not read that day), and a listing read in none of them is
// unranked in its document, as on that day of any history.
func TestOneRankInDocumentAndHistory(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg, conn := srv.Migrated(t)
	o := edgetest.Seed(800)
	o.End = o.End.Add(18 * time.Hour) // the last day holds most listings' readings
	if _, err := seed.Write(context.Background(), conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Large listings last read 8 to 12 days before the end: no day of a
	// history of the last week counts them, and no document may either.
	var stales []analytics.ListingRow
	var staleReads []analytics.SnapshotRow
	for i := range 5 {
		at := o.End.Add(-time.Duration(8+i) * 24 * time.Hour)
		u := uint64(5_000_000 + i)
		stales = append(stales, analytics.ListingRow{Store: views.Chrome, ID: fmt.Sprintf("stale%d", i), CrawledAt: at, Name: "Stale", Developer: "Old",
			Category: "Productivity", Kind: views.KindExtension, FirstSeen: at.Add(-30 * 24 * time.Hour)})
		staleReads = append(staleReads, analytics.SnapshotRow{Store: views.Chrome, ID: fmt.Sprintf("stale%d", i), CrawledAt: at, Usage: &u})
	}
	if err := analytics.WriteListings(context.Background(), conn, stales); err != nil {
		t.Fatal(err)
	}
	if err := analytics.WriteSnapshots(context.Background(), conn, staleReads); err != nil {
		t.Fatal(err)
	}
	h := start(t, edgetest.Dataset{CH: &cfg})
	for _, job := range []string{"views", "ranks"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(job, err)
		}
	}
	st := h.State.Load()
	lastDay := views.DayOf(st.Replica.Info().ReadingsMark)
	last := lastDay.String()
	compared, small, stale := 0, 0, 0
	for _, l := range st.Replica.All() {
		size, ok := l.Size()
		if !ok || !l.Live() {
			continue
		}
		doc := getOK[struct{ StoreRank *int64 }](t, h.Base+"/api/v1/listings/"+l.Store.String()+"/"+url.PathEscape(l.ID))
		readDay := views.DayOf(time.Unix(l.ReadAt, 0))
		if readDay <= lastDay-views.RankLookback {
			stale++
			if doc.StoreRank != nil {
				t.Errorf("%s/%s: last read on %s, more than %d days before %s, is ranked %d", l.Store, l.ID, readDay, views.RankLookback, last, *doc.StoreRank)
			}
			continue
		}
		if readDay != lastDay {
			continue // the history's last day is the listing's own last reading's
		}
		p, _ := getHistoryPage(t, h.Base+"/api/v1/listings/"+l.Store.String()+"/"+url.PathEscape(l.ID)+"/history?days=3")
		day := p.Snapshots[len(p.Snapshots)-1]
		if day.Day != last || day.StoreRank == nil || doc.StoreRank == nil || *day.StoreRank != *doc.StoreRank {
			t.Errorf("%s/%s: document rank %v, history rank %v on %s", l.Store, l.ID, ptrString(doc.StoreRank), ptrString(day.StoreRank), day.Day)
		}
		compared++
		if size < 100 {
			small++
		}
	}
	if compared < 30 || small == 0 || stale < len(stales) {
		t.Fatalf("compared %d listings, %d small ones, %d stale; the dataset no longer has enough", compared, small, stale)
	}
	t.Logf("compared %d listings read on %s (%d small), %d stale ones unranked", compared, last, small, stale)
}

func ptrString(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}
