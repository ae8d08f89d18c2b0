package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/views"
)

// TestExportTakesTheNewestVersion checks that an export's nullable
// metadata is the newest version's, NULL included: a listing delisted and
// then back is live, and a slug or date the newest version lacks is
// missing (argMax alone skips NULLs and kept the older value).
func TestExportTakesTheNewestVersion(t *testing.T) {
	_, conn := chtest.Need(t, srv).Migrated(t)
	ctx := context.Background()
	day := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	slug, gone, updated := "old-slug", day.Add(-48*time.Hour), day.Add(-72*time.Hour)
	v := func(at time.Time) analytics.ListingRow {
		return analytics.ListingRow{Store: views.Firefox, ID: "back-again", CrawledAt: at, Name: "Back again",
			FirstSeen: day.Add(-30 * 24 * time.Hour)}
	}
	older, newer := v(day.Add(-47*time.Hour)), v(day.Add(-2*time.Hour))
	older.Slug, older.DelistedAt, older.StoreUpdated = &slug, &gone, &updated
	if err := analytics.WriteListings(ctx, conn, []analytics.ListingRow{older, newer}); err != nil {
		t.Fatal(err)
	}
	var rows []analytics.ExportRow
	err := analytics.StreamExportRows(ctx, conn, views.Firefox, views.DayOf(day)-1, func(r *analytics.ExportRow) error {
		rows = append(rows, *r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.DelistedAt != nil || r.Slug != nil || r.Updated != nil {
		t.Errorf("delisted %v, slug %v, updated %v: want the newest version's (all missing)", r.DelistedAt, r.Slug, r.Updated)
	}
	if !r.MetadataAt.Equal(newer.CrawledAt) {
		t.Errorf("metadata at %v, want %v", r.MetadataAt, newer.CrawledAt)
	}
}
