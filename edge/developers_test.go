package edge_test

import (
	"bytes"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/views"
)

// developerDoc is what the developer read answers.
type developerDoc struct {
	Store, Developer string
	Live             int
	TotalSize        int64
	Listings         []struct {
		ID, Developer string
		Live          bool
		Size          *int64
	}
	Ownership []struct{ EventID, Kind string }
}

// TestDevelopers: a developer's read lists exactly the store's listings
// of that developer (a scan of the replica decides), live ones first,
// with their live count and total size; its changes of hands hold a
// change of developer to it; a name no listing has (in another case too)
// is a 404, a name too long a 400; its page lists each listing and its
// files hold each; a listing's page links its developer's.
func TestDevelopers(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	// The developer of the newest change of developer in chrome: it has
	// at least that listing, and that change among its changes of hands.
	ev := getOK[struct {
		Events []struct{ EventID, ID, After string }
	}](t, h.Base+"/api/v1/events?store=chrome&kind=developer&limit=1").Events
	if len(ev) == 0 {
		t.Fatal("the test data has no change of developer in chrome")
	}
	dev := ev[0].After
	var want []string
	for _, l := range h.State.Load().Replica.OfStore(views.Chrome) {
		if l.Developer == dev {
			want = append(want, l.ID)
		}
	}
	path := "/developers/chrome/" + url.PathEscape(dev)
	d := getOK[developerDoc](t, h.Base+"/api/v1"+path)
	var got []string
	live, total := 0, int64(0)
	for i, l := range d.Listings {
		got = append(got, l.ID)
		if l.Developer != dev {
			t.Errorf("listing %s is by %q", l.ID, l.Developer)
		}
		if l.Live {
			live++
			if l.Size != nil {
				total += *l.Size
			}
			if i > 0 && !d.Listings[i-1].Live {
				t.Error("a live listing after a delisted one")
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || d.Live != live || d.TotalSize != total || d.Developer != dev {
		t.Errorf("%s: listings %v, a scan finds %v; live %d (%d), total %d (%d)", dev, got, want, d.Live, live, d.TotalSize, total)
	}
	if !slices.ContainsFunc(d.Ownership, func(o struct{ EventID, Kind string }) bool { return o.EventID == ev[0].EventID }) {
		t.Errorf("%s's changes of hands lack %s", dev, ev[0].EventID)
	}
	for p, status := range map[string]int{
		"/api/v1/developers/chrome/" + url.PathEscape(strings.ToUpper(dev)+"x"): http.StatusNotFound,
		"/api/v1/developers/chrome/no%20such%20developer":                       http.StatusNotFound,
		"/api/v1/developers/nostore/x":                                          http.StatusNotFound,
		"/api/v1/developers/chrome/" + strings.Repeat("x", 201):                 http.StatusBadRequest,
		"/api/v1/developers/chrome/%ff%fe":                                      http.StatusBadRequest,
	} {
		if d := problem(t, get(t, "GET", h.Base+p), status); !strings.HasPrefix(d, "developer") && !strings.Contains(d, "store") && !strings.Contains(d, "No listing") {
			t.Errorf("%s: detail %q", p, d)
		}
	}
	// The page and its files.
	page := get(t, "GET", h.Base+path)
	if page.status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, page.status, page.body)
	}
	for _, id := range want {
		if !strings.Contains(string(page.body), `href="/listings/chrome/`+url.PathEscape(id)+`"`) {
			t.Errorf("the developer's page does not link %s", id)
		}
	}
	if !strings.Contains(string(page.body), ev[0].EventID) && !strings.Contains(string(page.body), "came to "+html.EscapeString(dev)) {
		t.Error("the developer's page does not show the listing that came to it")
	}
	csv := get(t, "GET", h.Base+path+"?format=csv")
	if rows := bytes.Count(csv.body, []byte("\r\n")); csv.status != http.StatusOK || rows != len(want)+1 {
		t.Errorf("the developer's CSV: %d, %d rows for %d listings", csv.status, rows, len(want))
	}
	listing := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(ev[0].ID)).body)
	if !strings.Contains(listing, `<a href="`+html.EscapeString(path)+`">`) {
		t.Errorf("the listing's page does not link its developer's page %s", path)
	}
}
