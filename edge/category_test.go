package edge_test

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
)

// categoryDoc is what a category's read answers.
type categoryDoc struct {
	Store, Category string
	Listings        int
	TotalSize       int64
	Top, Fastest    []categoryListing
	Weeks           []struct {
		Day                 string
		Listings, TotalSize int64
	}
	WeeksMissing bool
}

type categoryListing struct {
	Store, ID, Category string
	Live                bool
	Size                *int64
	Growth              struct {
		D7 *struct{ Change int64 } `json:"7d"`
	}
}

// categoryPage: a category's read (by slug or name) holds its figures as
// the categories' list counts them, its largest live listings largest
// first and its fastest growing by 7-day growth, all of the category, and
// its weekly totals (Sundays and the newest day, the newest equal to the
// list's total); its page shows the same listings and charts both
// series; its CSV holds a row a week; an unknown category is a 404.
func categoryPage(t *testing.T, h *harness) {
	cats := getOK[struct {
		Categories []struct {
			Name      string
			Listings  int
			TotalSize int64
		}
	}](t, h.Base+"/api/v1/categories/chrome?sort=listings").Categories
	if len(cats) == 0 {
		t.Fatal("chrome has no category")
	}
	c := cats[0]
	slug := views.CategorySlug(c.Name)
	d := getOK[categoryDoc](t, h.Base+"/api/v1/categories/chrome/"+slug)
	if byName := getOK[categoryDoc](t, h.Base+"/api/v1/categories/chrome/"+strings.ReplaceAll(c.Name, " ", "%20")); byName.Category != d.Category {
		t.Errorf("by name %q, by slug %q", byName.Category, d.Category)
	}
	if d.Category != c.Name || d.Listings != c.Listings || d.TotalSize != c.TotalSize || d.WeeksMissing {
		t.Errorf("%s: %d listings of %d in all (weeks missing %v), the categories' list says %d of %d", c.Name, d.Listings, d.TotalSize, d.WeeksMissing, c.Listings, c.TotalSize)
	}
	if len(d.Top) == 0 || len(d.Top) > 10 || len(d.Fastest) > 10 {
		t.Fatalf("%d largest and %d fastest listings", len(d.Top), len(d.Fastest))
	}
	for i, l := range append(slices.Clone(d.Top), d.Fastest...) {
		if l.Category != c.Name || !l.Live {
			t.Errorf("listing %s of the lists is in %q (live %v)", l.ID, l.Category, l.Live)
		}
		if i > 0 && i < len(d.Top) && *l.Size > *d.Top[i-1].Size {
			t.Errorf("the largest are not largest first: %d after %d", *l.Size, *d.Top[i-1].Size)
		}
	}
	for i, l := range d.Fastest {
		if l.Growth.D7 == nil || l.Growth.D7.Change <= 0 || i > 0 && l.Growth.D7.Change > d.Fastest[i-1].Growth.D7.Change {
			t.Errorf("the fastest growing are not by 7-day growth, most first: %s at %d", l.ID, i)
		}
	}
	if len(d.Weeks) < 2 {
		t.Fatalf("%d weeks after the ranks job", len(d.Weeks))
	}
	newest := d.Weeks[len(d.Weeks)-1]
	for _, w := range d.Weeks[:len(d.Weeks)-1] {
		if day, err := time.Parse(time.DateOnly, w.Day); err != nil || day.Weekday() != time.Sunday || w.Day >= newest.Day {
			t.Errorf("week %s is not a Sunday before the newest day %s", w.Day, newest.Day)
		}
	}
	if newest.TotalSize != d.TotalSize || newest.Listings != int64(d.Listings) {
		t.Errorf("the newest day's totals %d listings of %d, the category's %d of %d", newest.Listings, newest.TotalSize, d.Listings, d.TotalSize)
	}

	page := get(t, "GET", h.Base+"/categories/chrome/"+slug)
	body := string(page.body)
	if page.status != http.StatusOK || !strings.Contains(body, `<h2 id="live-chart">`) || !strings.Contains(body, `<h2 id="size-chart">`) {
		t.Fatalf("the category's page: %d, charts %v", page.status, strings.Contains(body, "live-chart"))
	}
	var want []string
	for _, l := range append(slices.Clone(d.Top), d.Fastest...) {
		want = append(want, l.Store+":"+l.ID)
	}
	if got := rowsOf(page.body); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the page lists %v, its JSON %v", got, want)
	}
	if !strings.Contains(string(get(t, "GET", h.Base+"/categories/chrome").body), `href="/categories/chrome/`+slug+`"`) {
		t.Error("the categories' page does not link the category's page")
	}
	csv := get(t, "GET", h.Base+"/api/v1/categories/chrome/"+slug+"?format=csv")
	if rows := bytes.Count(csv.body, []byte("\r\n")); csv.status != http.StatusOK || rows != len(d.Weeks)+1 {
		t.Errorf("the category's CSV: %d, %d rows for %d weeks", csv.status, rows, len(d.Weeks))
	}
	if det := problem(t, get(t, "GET", h.Base+"/api/v1/categories/chrome/no-such-category"), http.StatusNotFound); !strings.HasPrefix(det, "category:") {
		t.Errorf("an unknown category: %q", det)
	}
	for _, bad := range []string{"Art%00", "%FF%FE", "Art%C0%A0Design", strings.Repeat("x", 201)} {
		if det := problem(t, get(t, "GET", h.Base+"/api/v1/categories/chrome/"+bad), http.StatusBadRequest); !strings.HasPrefix(det, "category:") || len(det) > 300 {
			t.Errorf("category %.40s: detail %q", bad, det)
		}
	}
	if link := get(t, "GET", h.Base+"/api/v1/categories/chrome/"+slug).header.Get("Link"); !strings.Contains(link, "</categories/chrome/"+slug+">") {
		t.Errorf("the category's JSON links its page as %q", link)
	}
}

// TestPermissionsMove: after the ranks job, each permission's count
// carries its change over the 30 days to the newest day (the daily counts
// of the two days, which the ranks job's own test holds to the listings'
// rows), and the permissions' page shows the same changes under a heading
// that names the two days.
func TestPermissionsMove(t *testing.T) {
	h := start(t, seededWith(t, edgetest.DemoSeed(400)), func(c *edge.Config) { c.PageRate = 0 })
	for _, job := range []string{"views", "ranks"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	d := getOK[struct {
		Permissions []struct {
			Permission string
			Count      int
			Change30d  *int
		}
		ChangeFrom, ChangeTo string
		ChangeMissing        bool
	}](t, h.Base+"/api/v1/permissions")
	from, _ := time.Parse(time.DateOnly, d.ChangeFrom)
	to, _ := time.Parse(time.DateOnly, d.ChangeTo)
	if d.ChangeMissing || to.Sub(from) != 30*24*time.Hour || len(d.Permissions) < 5 {
		t.Fatalf("change from %s to %s (missing %v), %d permissions", d.ChangeFrom, d.ChangeTo, d.ChangeMissing, len(d.Permissions))
	}
	var want []string
	moved := 0
	for _, p := range d.Permissions {
		if p.Change30d == nil {
			t.Fatalf("%s has no change after the ranks job counted 40 days", p.Permission)
		}
		if *p.Change30d != 0 {
			moved++
		}
		if *p.Change30d > p.Count {
			t.Errorf("%s: %d ask, %+d over 30 days: more than ask now", p.Permission, p.Count, *p.Change30d)
		}
		want = append(want, strconv.Itoa(*p.Change30d))
	}
	if moved == 0 {
		t.Error("no permission's count moved over 30 days of the demo data")
	}
	page := get(t, "GET", h.Base+"/permissions")
	if got := pageFigures(page.body, ".change30d"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the permissions' page shows changes %v, its JSON %v", got, want)
	}
	if !strings.Contains(string(page.body), "the change of each count from "+d.ChangeFrom+" to "+d.ChangeTo) {
		t.Error("the permissions' page does not name the change's days")
	}
	csv := csvRows(t, get(t, "GET", h.Base+"/api/v1/permissions?format=csv"))
	if len(csv) != len(d.Permissions)+1 || strings.Join(csv[0], ",") != "permission,listings,change_30d" || csv[1][2] != want[0] {
		t.Errorf("the permissions' CSV: %d rows, header %q, first row %v", len(csv), csv[0], csv[1])
	}
}
