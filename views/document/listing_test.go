package document

import (
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

func TestListingNulls(t *testing.T) {
	var l views.Listing
	l.Store, l.ID, l.FirstSeen = views.Apple, "1", 1
	d := NewListing(&l, nil)
	if d.Slug != nil || d.Size != nil || d.Rating != nil || d.Stars != nil || d.Updated != nil ||
		d.ManifestVersion != nil || d.AccessLevel != nil || d.WeeklyDownloads != nil || d.ReadAt != nil {
		t.Errorf("missing values not null: %+v", d)
	}
	if d.Permissions == nil || d.Topics == nil || d.HostAccess == nil {
		t.Error("empty lists must be [] not null")
	}
	l.Store = views.Chrome
	l.SetRating(4.369999885559082, true)
	if d := NewListing(&l, nil); d.AccessLevel == nil || *d.AccessLevel != 0 || d.Rating == nil || *d.Rating != 4.37 {
		t.Errorf("chrome doc: access level %v rating %v", d.AccessLevel, d.Rating)
	}
}

// TestListingAlsoIn checks that a listing's document carries its links
// across stores in store order, and [] for a listing without any.
func TestListingAlsoIn(t *testing.T) {
	r := replicatest.Twins(500)
	f := figures.Build(r, 0)
	doc := NewListing(r.Lookup(views.Firefox, "twin-firefox"), f)
	if len(doc.AlsoIn) != 2 || doc.AlsoIn[0].Store != "chrome" || doc.AlsoIn[1].Store != "edge" {
		t.Errorf("alsoIn %+v", doc.AlsoIn)
	}
	if doc := NewListing(r.Lookup(views.Chrome, "decoy"), f); doc.AlsoIn == nil || len(doc.AlsoIn) != 0 {
		t.Errorf("an unlinked listing's alsoIn: %#v, want []", doc.AlsoIn)
	}
}
