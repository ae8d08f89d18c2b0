package edge_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

// TestUpdatedAgreesWithTheChangeFeed: on the seeded data, every listing's
// store update date lies within two days before the newest version change
// the change feed saw of it, and never after the crawl that read it (the
// fourth review: 73 of 84 listings with a version event had an update
// date years before it, and some one after their newest reading).
func TestUpdatedAgreesWithTheChangeFeed(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	newest := map[string]eventJSON{} // store/id → newest version event
	page := getOK[eventPageJSON](t, h.Base+"/api/v1/events?kind=version&limit=1000")
	for _, e := range page.Events { // newest first
		if _, ok := newest[e.Store+"/"+e.ID]; !ok {
			newest[e.Store+"/"+e.ID] = e
		}
	}
	if len(newest) < 20 {
		t.Fatalf("only %d listings with a version event", len(newest))
	}
	checked := 0
	for k, e := range newest {
		r := get(t, "GET", h.Base+"/api/v1/listings/"+e.Store+"/"+url.PathEscape(e.ID))
		if r.status == 404 {
			continue // known, never read: no document yet
		}
		var doc struct{ Updated *string }
		if err := json.Unmarshal(r.body, &doc); err != nil || r.status != 200 {
			t.Fatalf("%s: %d %s", k, r.status, r.body)
		}
		if doc.Updated == nil {
			continue // a listing that publishes no update date
		}
		day, err := time.Parse(time.DateOnly, *doc.Updated)
		if err != nil {
			t.Fatal(err)
		}
		seen := e.At.UTC().Truncate(24 * time.Hour)
		if day.After(seen) || day.Before(seen.AddDate(0, 0, -2)) {
			t.Errorf("%s: updated %s, its newest version change seen %s", k, *doc.Updated, e.At.Format(time.RFC3339))
		}
		checked++
	}
	if checked < len(newest)*9/10 {
		t.Errorf("checked %d of %d", checked, len(newest))
	}
}
