package edge_test

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/served"
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
	formerDeveloper(t, h)
	listing := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(ev[0].ID)).body)
	if !strings.Contains(listing, `<a href="`+html.EscapeString(path)+`">`) {
		t.Errorf("the listing's page does not link its developer's page %s", path)
	}
}

// formerDeveloper: a developer that gave up every listing of a store
// has a read and a page of its changes of hands, and no listing.
func formerDeveloper(t *testing.T, h *harness) {
	t.Helper()
	current := map[string]bool{}
	for _, l := range h.State.Load().Replica.OfStore(views.Chrome) {
		current[l.Developer] = true
	}
	evs := getOK[struct {
		Events []struct{ EventID, Before string }
	}](t, h.Base+"/api/v1/events?store=chrome&kind=developer&limit=200").Events
	i := slices.IndexFunc(evs, func(e struct{ EventID, Before string }) bool { return e.Before != "" && !current[e.Before] })
	if i < 0 {
		t.Fatal("the test data has no developer that gave up every chrome listing")
	}
	path := "/developers/chrome/" + url.PathEscape(evs[i].Before)
	d := getOK[struct {
		developerDoc
		Total int
	}](t, h.Base+"/api/v1"+path)
	if d.Total != 0 || len(d.Listings) != 0 || !slices.ContainsFunc(d.Ownership, func(o struct{ EventID, Kind string }) bool { return o.EventID == evs[i].EventID }) {
		t.Errorf("%s, a former developer: %d listings, changes of hands %v, want none and %s", evs[i].Before, d.Total, d.Ownership, evs[i].EventID)
	}
	page := get(t, "GET", h.Base+path)
	if page.status != http.StatusOK || !strings.Contains(string(page.body), "No listing of the chrome store is by") || !strings.Contains(string(page.body), "left "+html.EscapeString(evs[i].Before)) {
		t.Errorf("the page of %s, a former developer: %d\n%s", evs[i].Before, page.status, page.body)
	}
}

// TestDeveloperIsBounded: a developer of more listings than a read
// shows (one store account can publish thousands) is answered with the
// first 200 documents, live ones first, largest first, and a total, live
// count and total size of every listing; its page says so and its CSV
// holds every listing.
func TestDeveloperIsBounded(t *testing.T) {
	h := start(t, syntheticN(t, 10), func(c *edge.Config) { c.PageRate = 0 })
	base := replicatest.Synth(50, nil)
	ls := base.All()
	const n = 260
	for i := range n {
		l := views.Listing{Store: views.Chrome, ID: fmt.Sprintf("prolific%03d", i), Name: fmt.Sprintf("App %d", i),
			Developer: "Prolific Inc", ReadAt: ls[0].ReadAt, FirstSeen: ls[0].FirstSeen}
		l.SetUsage(int64(1000+i), true)
		if i%10 == 0 {
			l.Delisted = ls[0].ReadAt
		}
		ls = append(ls, l)
	}
	r := replica.New(ls, base.Info())
	h.State.Publish(&served.State{Replica: r, Figures: figures.Build(r, 0)})

	d := getOK[struct {
		developerDoc
		Total int
	}](t, h.Base+"/api/v1/developers/chrome/Prolific%20Inc")
	var wantSize int64
	for i := range n {
		if i%10 != 0 {
			wantSize += int64(1000 + i)
		}
	}
	if d.Total != n || d.Live != n-n/10 || d.TotalSize != wantSize || len(d.Listings) != 200 {
		t.Fatalf("total %d live %d size %d with %d documents, want %d, %d, %d with 200 documents", d.Total, d.Live, d.TotalSize, len(d.Listings), n, n-n/10, wantSize)
	}
	var order []string // live ones, largest first
	for i := n - 1; i >= 0; i-- {
		if i%10 != 0 {
			order = append(order, fmt.Sprintf("prolific%03d", i))
		}
	}
	for i, l := range d.Listings {
		if l.ID != order[i] || !l.Live {
			t.Fatalf("document %d is %s (live %v), want %s: the largest live ones first", i, l.ID, l.Live, order[i])
		}
	}
	page := get(t, "GET", h.Base+"/developers/chrome/Prolific%20Inc")
	if page.status != http.StatusOK || !strings.Contains(string(page.body), "The 200 listings below come first") ||
		strings.Count(string(page.body), `href="/listings/chrome/prolific`) != 200 {
		t.Errorf("the page of a developer of %d listings: %d, says it shows the first 200: %v, links %d", n, page.status,
			strings.Contains(string(page.body), "The 200 listings below come first"), strings.Count(string(page.body), `href="/listings/chrome/prolific`))
	}
	for _, f := range []string{"csv", "ndjson"} {
		a := get(t, "GET", h.Base+"/api/v1/developers/chrome/Prolific%20Inc?format="+f)
		if lines := bytes.Count(a.body, []byte("\n")); a.status != http.StatusOK || lines != n+map[string]int{"csv": 1}[f] {
			t.Errorf("the %s file: %d, %d lines for %d listings", f, a.status, lines, n)
		}
	}
}
