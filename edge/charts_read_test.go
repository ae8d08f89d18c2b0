package edge_test

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

type chartDoc struct {
	Chart      string
	From, To   *time.Time
	DataNow    time.Time
	Considered int
	Note       string
	Entries    []struct {
		Position int
		Change   *int64
		Percent  *float64
		Climb    *int
		Listing  struct {
			ID        string
			Size      *int64
			StoreRank *int
		}
	}
}

// TestChartsReadAsTheySay: on the seeded data, every chart of a window is
// ordered by the figures it publishes (the fourth review: rising sorted on
// unrounded percents, so two entries at 0.99% came in an order no reader
// could tell), says what its window is and how far before the data's
// newest reading it ends, and says why it is short or empty.
func TestChartsReadAsTheySay(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	for _, s := range views.Stores {
		for _, chart := range []string{"top", "trending", "rising", "new", "top-rated", "climbers"} {
			c := getOK[chartDoc](t, h.Base+"/api/v1/charts/"+s.String()+"?chart="+chart)
			where := s.String() + " " + chart
			if c.Note == "" || c.Considered < len(c.Entries) || c.DataNow.IsZero() {
				t.Errorf("%s: note %q, considered %d for %d entries, dataNow %v", where, c.Note, c.Considered, len(c.Entries), c.DataNow)
			}
			switch {
			case len(c.Entries) == 0 && !strings.Contains(c.Note, "It is empty"):
				t.Errorf("%s is empty and does not say why: %q", where, c.Note)
			case len(c.Entries) > 0 && len(c.Entries) < 100 && !strings.Contains(c.Note, fmt.Sprintf("It has %d entries", len(c.Entries))):
				t.Errorf("%s has %d entries and does not say why: %q", where, len(c.Entries), c.Note)
			}
			if (chart == "trending" || chart == "rising") && (c.To == nil || !c.To.Equal(c.DataNow.Add(-72*time.Hour)) || !strings.Contains(c.Note, "not the listing's own growth.7d")) {
				t.Errorf("%s: to %v, dataNow %v, note %q", where, c.To, c.DataNow, c.Note)
			}
			for i := 1; i < len(c.Entries); i++ {
				a, b := c.Entries[i-1], c.Entries[i]
				size := func(n *int64) int64 {
					if n == nil {
						return -1
					}
					return *n
				}
				var order int
				switch chart {
				case "trending":
					order = cmp.Or(cmp.Compare(*b.Change, *a.Change), cmp.Compare(size(b.Listing.Size), size(a.Listing.Size)), cmp.Compare(a.Listing.ID, b.Listing.ID))
				case "rising":
					order = cmp.Or(cmp.Compare(*b.Percent, *a.Percent), cmp.Compare(size(b.Listing.Size), size(a.Listing.Size)), cmp.Compare(a.Listing.ID, b.Listing.ID))
				case "climbers":
					order = cmp.Or(cmp.Compare(*b.Climb, *a.Climb), cmp.Compare(*a.Listing.StoreRank, *b.Listing.StoreRank), cmp.Compare(a.Listing.ID, b.Listing.ID))
				default:
					continue
				}
				if order > 0 {
					t.Errorf("%s: entry %d comes before entry %d against its published figures", where, a.Position, b.Position)
				}
			}
		}
	}
}
