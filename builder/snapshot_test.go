package builder

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// TestOneStateOneSnapshot crawls listings (readings, and now and then a
// new metadata version) while full reloads and refreshes over a real
// ClickHouse read, each crawl one second after the one before, as the
// crawler inserts them; between the bursts, a refresh and a full reload
// read with nothing inserted. Every state published holds no reading
// after its own newest (its dataAsOf and Last-Modified) and no metadata
// after its listings watermark, and two states of the same newest reading
// hold the same listings, change log and figures: one Last-Modified never
// stands for two bodies.
func TestOneStateOneSnapshot(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg, conn := srv.Migrated(t)
	ctx := context.Background()
	end := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	if _, err := seed.Write(ctx, conn, seed.Options{Seed: 21, Listings: 300, Days: 8, End: end}, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg.PartSize = 40
	db := analytics.NewLazy(cfg)
	t.Cleanup(func() { db.Close() })
	pub := &views.Published[served.State]{}
	v := New(db, pub, quiet())
	if err := v.full(ctx); err != nil {
		t.Fatal(err)
	}
	first := pub.Load()
	var live []views.Listing
	for _, l := range first.Replica.All() {
		if l.Live() {
			live = append(live, l)
		}
	}
	rng := rand.New(rand.NewPCG(21, 74))
	at := first.Replica.Info().ReadingsMark
	// crawl writes one crawl of k listings, one second after the last.
	crawl := func(k int) {
		at = at.Add(time.Second)
		var snaps []analytics.SnapshotRow
		var metas []analytics.ListingRow
		// k listings, each once: one crawl of a listing is one row (a row
		// written twice is the same crawl).
		for _, i := range rng.Perm(len(live))[:k] {
			l := live[i]
			usage := uint64(rng.IntN(1_000_000))
			snaps = append(snaps, analytics.SnapshotRow{Store: l.Store, ID: l.ID, CrawledAt: at, Usage: &usage, RatingCount: &usage})
			if rng.IntN(4) == 0 {
				metas = append(metas, analytics.ListingRow{Store: l.Store, ID: l.ID, CrawledAt: at, Name: l.Name, Developer: l.Developer,
					Category: l.Category, Kind: l.Kind, Version: fmt.Sprintf("9.%d", at.Unix()%1000), FirstSeen: time.Unix(l.FirstSeen, 0),
					Permissions: l.Permissions, HostAccess: l.HostAccess, AccessLevel: l.AccessLevel, Topics: l.Topics})
			}
		}
		if err := analytics.WriteListings(ctx, conn, metas); err != nil {
			t.Error(err)
		}
		if err := analytics.WriteSnapshots(ctx, conn, snaps); err != nil {
			t.Error(err)
		}
	}

	type seen struct {
		kind  string
		print [32]byte
		st    *served.State
	}
	byMark := map[int64]seen{}
	states := 0
	last := first
	check := func(kind string) {
		st := pub.Load()
		if st == last {
			return
		}
		last, states = st, states+1
		info := st.Replica.Info()
		for _, l := range st.Replica.All() {
			if l.ReadAt > info.ReadingsMark.Unix() || l.MetaAt > info.ListingsMark.Unix() {
				t.Fatalf("%s state: listing %s/%s read at %d, metadata of %d, after the state's watermarks %v, %v",
					kind, l.Store, l.ID, l.ReadAt, l.MetaAt, info.ReadingsMark, info.ListingsMark)
			}
		}
		p := printOf(t, st)
		mark := info.ReadingsMark.Unix()
		if was, ok := byMark[mark]; ok && was.print != p {
			diffStates(t, was.st, st)
			t.Fatalf("two states of dataAsOf %v with different bodies: a %s state's and a %s state's", info.ReadingsMark, was.kind, kind)
		}
		byMark[mark] = seen{kind, p, st}
	}
	for round := range 12 {
		kind, run := "full", v.full
		if round%2 == 1 {
			kind, run = "refresh", v.refresh
		}
		// A burst of crawls while the read runs, at moments of its own.
		var wg sync.WaitGroup
		delays := []time.Duration{time.Duration(rng.IntN(40)) * time.Millisecond, time.Duration(rng.IntN(120)) * time.Millisecond, time.Duration(rng.IntN(250)) * time.Millisecond}
		wg.Go(func() {
			start := time.Now()
			for _, d := range delays {
				time.Sleep(time.Until(start.Add(d)))
				crawl(12)
			}
		})
		if err := run(ctx); err != nil {
			t.Fatal(err)
		}
		check(kind)
		wg.Wait()
		// Quiet: what the two jobs publish of the same crawls.
		for _, q := range []struct {
			kind string
			run  func(context.Context) error
		}{{"quiet refresh", v.refresh}, {"quiet full", v.full}} {
			if err := q.run(ctx); err != nil {
				t.Fatal(err)
			}
			check(q.kind)
		}
	}
	if states < 12 || len(byMark) < 6 {
		t.Fatalf("%d states published of %d newest readings: too few to compare", states, len(byMark))
	}
	t.Logf("%d states published, %d newest readings", states, len(byMark))
}

// printOf returns a digest of what a state's answers say: its watermarks
// and windows, its listings in their binary form, its change log's size
// and its figures' summary and store statistics.
func printOf(t *testing.T, st *served.State) [32]byte {
	t.Helper()
	h := sha256.New()
	info := st.Replica.Info()
	for _, at := range []time.Time{info.ListingsMark, info.ReadingsMark, info.ClimbAt, info.ChartTo} {
		h.Write(binary.AppendVarint(nil, at.Unix()))
	}
	var buf []byte
	for i := range st.Replica.All() {
		buf = views.AppendListing(buf[:0], &st.Replica.All()[i])
		h.Write(binary.AppendUvarint(nil, uint64(len(buf))))
		h.Write(buf)
	}
	h.Write(binary.AppendVarint(nil, int64(st.Replica.Changes().Len())))
	figures := []any{st.Figures.Summary()}
	for s := range views.NumStores {
		figures = append(figures, st.Figures.Stats(views.Store(s)))
	}
	b, err := json.Marshal(figures)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(b)
	return [32]byte(h.Sum(nil))
}

// diffStates logs what differs between two states of one newest reading.
func diffStates(t *testing.T, a, b *served.State) {
	t.Helper()
	ai, bi := a.Replica.Info(), b.Replica.Info()
	t.Logf("info %v %v %v %v / %v %v %v %v", ai.ListingsMark, ai.ReadingsMark, ai.ClimbAt, ai.ChartTo, bi.ListingsMark, bi.ReadingsMark, bi.ClimbAt, bi.ChartTo)
	t.Logf("changes %d %d", a.Replica.Changes().Len(), b.Replica.Changes().Len())
	x, _ := json.Marshal(a.Figures.Summary())
	y, _ := json.Marshal(b.Figures.Summary())
	if string(x) != string(y) {
		t.Logf("summary\n%s\n%s", x, y)
	}
	for s := range views.NumStores {
		x, _ := json.Marshal(a.Figures.Stats(views.Store(s)))
		y, _ := json.Marshal(b.Figures.Stats(views.Store(s)))
		if string(x) != string(y) {
			t.Logf("stats\n%s\n%s", x, y)
		}
	}
	if a.Replica.Len() != b.Replica.Len() {
		t.Logf("len %d %d", a.Replica.Len(), b.Replica.Len())
		return
	}
	n := 0
	for i := range a.Replica.All() {
		x, y := views.AppendListing(nil, &a.Replica.All()[i]), views.AppendListing(nil, &b.Replica.All()[i])
		if string(x) != string(y) && n < 3 {
			n++
			l, m := &a.Replica.All()[i], &b.Replica.All()[i]
			t.Logf("listing %s/%s: meta %d %d version %q %q\n%s\n%s", l.Store, l.ID, l.MetaAt, m.MetaAt, l.Version, m.Version, histOf(l), histOf(m))
		}
	}
}
