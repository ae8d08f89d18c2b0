package render

import (
	"strings"
	"testing"
)

// TestStorePagePictures: a store's page draws its weekly totals as two
// charts, each labelled with its span and its first and last value, and
// its distributions as bars as long as their share of the largest group.
func TestStorePagePictures(t *testing.T) {
	d := StorePage{Store: "chrome", SizeMeasure: "users",
		Weeks: []WeekTotal{{Day: "2026-02-08", Week: "2026-W06", Live: 900, TotalSize: 1_000_000}, {Day: "2026-02-15", Week: "2026-W07", Live: 950, TotalSize: 1_100_000},
			{Day: "2026-02-22", Week: "2026-W08", Live: 1000, TotalSize: 1_250_000, Step: &Step{Change: "+150,000", Name: "Easy PDF", URL: "/listings/chrome/pdf", How: "new, at 140,000"}}},
		Ratings: []Bar{{Name: "4-5", Path: "ratingDistribution.0.listings", Listings: 600, Length: 100}, {Name: "unrated", Path: "ratingDistribution.1.listings", Listings: 150, Length: 25}},
		Sizes:   []Bar{{Name: "1k+", Path: "sizeBuckets.0.listings", Listings: 0, Length: 0}}}
	body, err := RenderStore(d)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	for _, want := range []string{
		`aria-label="Live listings at each week&#39;s end, 2026-02-08 to 2026-02-22: 900, then 1,000"`,
		`aria-label="Total size at each week&#39;s end, 2026-02-08 to 2026-02-22: 1,000,000, then 1,250,000; ringed, a step that stands out in the week to 2026-02-22"`,
		`<circle class="jump"`, // the step, ringed, and said: with what made it
		`Ringed, the weeks whose change of the total size stands out: <a href="/week/2026-W08">2026-W08</a> &#43;150,000, most of it <a href="/listings/chrome/pdf">Easy PDF</a> (new, at 140,000).`,
		`data-figure="ratingDistribution.1.listings" data-value="150">150</td>`,
		`<rect class="barfill" width="25" height="10"/>`,
		`<rect class="barfill" width="1" height="10"/>`, // an empty group still shows where its bar starts
		`<th scope="col">Size (users)</th>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the store's page lacks %s", want)
		}
	}
	d.Weeks = d.Weeks[:1]
	if body, _ := RenderStore(d); strings.Contains(string(body), `id="live-chart"`) {
		t.Error("one week drawn as a chart")
	}
}
