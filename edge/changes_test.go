package edge_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

type changePage struct {
	Changes []struct {
		Store, ID          string
		Name               *string // null until read
		ChangedAt          time.Time
		MetadataAt, ReadAt *time.Time
		Live               bool
		Size               *int64
	}
	NextCursor string
	Remaining  int
}

// TestChangeFeed pages through the whole feed over HTTP (every listing
// once, oldest change first, remaining counting down), then writes a new
// reading of one listing and a new metadata version of another, runs the
// incremental refresh, and checks that the feed from the last cursor
// gives exactly those two, in the order they changed, and then nothing,
// with a cursor that stays put. A time as since gives the same two.
func TestChangeFeed(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	st := h.State.Load()
	seen := map[string]bool{}
	cursor, last := "", time.Time{}
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the feed does not end")
		}
		p := getOK[changePage](t, h.Base+"/api/v1/changes?limit=97&since="+url.QueryEscape(cursor))
		for _, c := range p.Changes {
			k := c.Store + "/" + c.ID
			if seen[k] {
				t.Fatalf("%s twice in the feed", k)
			}
			seen[k] = true
			store, _ := views.ParseStore(c.Store)
			if l := st.Replica.Lookup(store, c.ID); l == nil || (l.Name == "") != (c.Name == nil) || c.Name != nil && *c.Name != l.Name {
				t.Fatalf("%s: name %v, want the listing's (null when it has none)", k, c.Name)
			}
			if c.ChangedAt.Before(last) {
				t.Fatalf("%s changed at %s, before the one before it (%s)", k, c.ChangedAt, last)
			}
			last = c.ChangedAt
			want := c.MetadataAt
			if c.ReadAt != nil && (want == nil || c.ReadAt.After(*want)) {
				want = c.ReadAt
			}
			if want == nil || !want.Equal(c.ChangedAt) {
				t.Fatalf("%s: changedAt %s, want the later of %v and %v", k, c.ChangedAt, c.MetadataAt, c.ReadAt)
			}
		}
		if p.Remaining != st.Replica.Len()-len(seen) {
			t.Fatalf("remaining %d after %d of %d", p.Remaining, len(seen), st.Replica.Len())
		}
		if len(p.Changes) == 0 {
			if p.NextCursor != cursor && cursor != "" {
				t.Fatalf("an empty page moved the cursor")
			}
			break
		}
		cursor = p.NextCursor
	}
	if len(seen) != st.Replica.Len() {
		t.Fatalf("%d listings in the feed, want %d", len(seen), st.Replica.Len())
	}

	// Two changes after the feed's end.
	a := seriesListing(t, h, views.Firefox, 0)
	b := seriesListing(t, h, views.Chrome, 0)
	now := st.Replica.Info().ReadingsMark.Add(time.Hour).Truncate(time.Second)
	u := uint64(12345)
	cfg.Add(t, []analytics.ListingRow{{Store: views.Chrome, ID: b.ID, CrawledAt: now.Add(time.Hour), Name: "Renamed", Developer: b.Developer,
		Category: b.Category, Kind: b.Kind, FirstSeen: time.Unix(b.FirstSeen, 0)}},
		[]analytics.SnapshotRow{{Store: views.Firefox, ID: a.ID, CrawledAt: now, Usage: &u}})
	if err := h.Jobs.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	for _, since := range []string{cursor, now.Add(-time.Second).Format(time.RFC3339)} {
		p := getOK[changePage](t, h.Base+"/api/v1/changes?since="+url.QueryEscape(since))
		if len(p.Changes) != 2 || p.Changes[0].ID != a.ID || p.Changes[1].ID != b.ID || p.Changes[1].Name == nil || *p.Changes[1].Name != "Renamed" ||
			p.Changes[0].Size == nil || *p.Changes[0].Size != 12345 || p.Remaining != 0 {
			t.Fatalf("since %s: %+v, want the new reading of %s then the new name of %s", since, p, a.ID, b.ID)
		}
		again := getOK[changePage](t, h.Base+"/api/v1/changes?since="+url.QueryEscape(p.NextCursor))
		if len(again.Changes) != 0 || again.NextCursor != p.NextCursor {
			t.Fatalf("after the last change: %+v", again)
		}
	}
	// A time is exclusive: resuming from the last changedAt seen repeats
	// none of the changes at it.
	for since, want := range map[time.Time]int{now: 1, now.Add(time.Hour): 0} {
		p := getOK[changePage](t, h.Base+"/api/v1/changes?since="+url.QueryEscape(since.Format(time.RFC3339)))
		if len(p.Changes) != want || want == 1 && p.Changes[0].ID != b.ID {
			t.Errorf("since %s (a change's own changedAt): %+v, want the %d after it", since, p.Changes, want)
		}
	}
	for _, q := range []string{"?since=nonsense", "?since=2026-13-01", "?limit=0", "?limit=1001", "?since=" + url.QueryEscape("eyJ2IjoyfQ")} {
		problem(t, get(t, "GET", h.Base+"/api/v1/changes"+q), 400)
	}
}
