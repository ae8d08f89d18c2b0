package cron

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// TestEditionsAreBuiltOncePerFleet runs the editions job of three edges
// over one database: a follower that comes first finds nothing kept and
// waits (the job fails, to be retried); the leader builds every edition and
// keeps it; the follower then loads them all, reading no week state, and
// its editions are the leader's, byte for byte.
var srv *chtest.Server

func TestMain(m *testing.M) { chtest.Main(m, &srv) }

func TestEditionsAreBuiltOncePerFleet(t *testing.T) {
	cfg, conn := chtest.Need(t, srv).Migrated(t)
	ctx := context.Background()
	o := seed.Options{Seed: 3, Listings: 200, Days: 30, ReviewsPerListing: 0, End: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	db := analytics.NewLazy(cfg)
	t.Cleanup(func() { db.Close() })
	job := func(pub *views.Published[editions.Set], leading bool) Job {
		return EditionsJob(db, pub, "@every 1h", 260, nil, nil, func() bool { return leading }, quiet())
	}
	follower, leader := &views.Published[editions.Set]{}, &views.Published[editions.Set]{}

	err := job(follower, false).Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "wait for the edge that leads") || follower.Load().Len() != 0 {
		t.Fatalf("a follower before the leader: %v, %d editions", err, follower.Load().Len())
	}
	if err := job(leader, true).Run(ctx); err != nil {
		t.Fatal(err)
	}
	kept, err := analytics.LoadEditions(ctx, conn, editions.FormatVersion)
	if err != nil || len(kept) < 3 || len(kept) != leader.Load().Len() {
		t.Fatalf("kept %d editions (%v), the leader built %d", len(kept), err, leader.Load().Len())
	}
	if err := job(follower, false).Run(ctx); err != nil {
		t.Fatalf("the follower once the leader kept its editions: %v", err)
	}
	for _, w := range leader.Load().Weeks() {
		a, _ := json.Marshal(leader.Load().Get(w))
		b, _ := json.Marshal(follower.Load().Get(w))
		if string(a) != string(b) {
			t.Fatalf("edition %s differs:\n%.300s\n%.300s", w, a, b)
		}
	}
	// An edition kept in another format is not loaded: it is built again.
	if kept, _ := analytics.LoadEditions(ctx, conn, editions.FormatVersion+1); len(kept) != 0 {
		t.Fatalf("%d editions of a format no edge wrote", len(kept))
	}

	// A follower loads: BuildEditions with a load that fails proves it
	// reads no week state.
	first, last, err := analytics.DataSpan(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &views.Published[editions.Set]{}
	noState := func(context.Context, time.Time) (*editions.State, error) {
		t.Fatal("a week state read for an edition the fleet keeps")
		return nil, nil
	}
	if err := BuildEditions(ctx, fresh, 260, first, last, noState, EditionSource{Kept: kept}, quiet()); err != nil || fresh.Load().Len() != len(kept) {
		t.Fatalf("loaded %d of %d kept editions: %v", fresh.Load().Len(), len(kept), err)
	}
}

// TestAnEditionNotKeptIsKeptLater: the leader builds an edition whose
// keeping fails; its next run keeps it, so the fleet's other edges are
// not left waiting for it.
func TestAnEditionNotKeptIsKeptLater(t *testing.T) {
	first := time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC) // a Monday
	last := first.AddDate(0, 0, 15)
	state := func(_ context.Context, at time.Time) (*editions.State, error) { return &editions.State{At: at}, nil }
	pub := &views.Published[editions.Set]{}
	kept := map[string][]byte{}
	failing := true
	keep := func(_ context.Context, e *editions.Edition) error {
		if failing {
			return errors.New("ClickHouse away")
		}
		kept[e.Week], _ = json.Marshal(e)
		return nil
	}
	if err := BuildEditions(context.Background(), pub, 260, first, last, state, EditionSource{Kept: map[string][]byte{}, Keep: keep, MayBuild: true}, quiet()); err != nil {
		t.Fatal(err)
	}
	if pub.Load().Len() != 2 || len(kept) != 0 {
		t.Fatalf("%d built, %d kept", pub.Load().Len(), len(kept))
	}
	failing = false
	if err := BuildEditions(context.Background(), pub, 260, first, last, state, EditionSource{Kept: map[string][]byte{}, Keep: keep, MayBuild: true}, quiet()); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 {
		t.Fatalf("the next run kept %d of the 2 editions", len(kept))
	}
}

// TestOldestEdition: the editions start at the first week whose start is
// a whole lookback after the first reading, so that the state the week
// compares with is read as fully as every later one; with less data
// than that, at the first complete week.
func TestOldestEdition(t *testing.T) {
	week := func(s string) editions.Week {
		w, err := editions.ParseWeek(s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, c := range []struct {
		name, first, newest, want string
	}{
		// 30 days on: Monday 1 December 2025, the start of 2025-W49.
		{"a year of readings", "2025-11-01T00:00:00Z", "2026-W43", "2025-W49"},
		// 30 days on: Tuesday 2 December 09:00; the next Monday is the 8th.
		{"the lookback ends mid-week", "2025-11-02T09:00:00Z", "2026-W43", "2025-W50"},
		// 30 days on: Wednesday 4 March 2026; the next Monday is the 9th.
		{"readings from a Monday", "2026-02-02T00:00:00Z", "2026-W43", "2026-W11"},
		{"just a lookback and a week", "2026-02-02T00:00:00Z", "2026-W11", "2026-W11"},
		// Less: the first complete week.
		{"a week short", "2026-02-02T00:00:00Z", "2026-W10", "2026-W06"},
		{"a partial first week, little data", "2026-02-03T00:00:00Z", "2026-W08", "2026-W07"},
	} {
		got := OldestEdition(mustTime(t, c.first), week(c.newest))
		if got.String() != c.want {
			t.Errorf("%s: first reading %s, newest %s: oldest %s, want %s", c.name, c.first, c.newest, got, c.want)
		}
		if start := got.Start().Time(); start.Before(mustTime(t, c.first)) {
			t.Errorf("%s: the oldest edition %s starts before the readings", c.name, got)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestFirstEditionComparesAFullMonth: over readings of four months, the
// first edition starts a whole lookback after the first reading, and it
// counts no more listings as returning than the later editions do (a
// week compared with a state of the data's first days would count every
// listing not read in them).
func TestFirstEditionComparesAFullMonth(t *testing.T) {
	cfg, conn := chtest.Need(t, srv).Migrated(t)
	ctx := context.Background()
	o := seed.DefaultOptions()
	o.Listings, o.Days, o.ReviewsPerListing, o.End = 400, 120, 0, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	db := analytics.NewLazy(cfg)
	t.Cleanup(func() { db.Close() })
	pub := &views.Published[editions.Set]{}
	if err := EditionsJob(db, pub, "@every 1h", 260, nil, nil, nil, quiet()).Run(ctx); err != nil {
		t.Fatal(err)
	}
	first, _, err := analytics.DataSpan(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	weeks := pub.Load().Weeks() // newest first
	if len(weeks) < 8 {
		t.Fatalf("%d editions over 120 days", len(weeks))
	}
	oldest := weeks[len(weeks)-1]
	if start := oldest.Start().Time(); start.Before(first.Add(analytics.WeekLookback)) {
		t.Errorf("the first edition %s starts %s, less than a lookback after the first reading %s", oldest, start, first)
	}
	most := 0
	for _, w := range weeks[:len(weeks)-1] {
		for _, se := range pub.Load().Get(w).Stores {
			most = max(most, se.Totals.Returning)
		}
	}
	for store, se := range pub.Load().Get(oldest).Stores {
		if se.Totals.Returning > max(2*most, 3) {
			t.Errorf("the first edition %s: %d %s listings returning, at most %d in any later week", oldest, se.Totals.Returning, store, most)
		}
	}
}
