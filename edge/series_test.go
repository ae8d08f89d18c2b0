package edge_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
)

// seriesListing returns a live listing of store s with a usage figure.
func seriesListing(t *testing.T, h *harness, s views.Store, skip int) views.Listing {
	t.Helper()
	for _, l := range h.State.Load().Replica.OfStore(s) {
		if _, ok := l.Usage(); ok && l.Live() {
			if skip == 0 {
				return l
			}
			skip--
		}
	}
	t.Fatalf("no live %s listing with usage", s)
	return views.Listing{}
}

type growthEndJSON struct {
	Day         string
	ReadAt      *time.Time
	Size, Usage *int64
	RatingCount *int64
	Rating      *float64
}

type growthJSON struct {
	Store, ID, SizeMeasure, From, To string
	Days                             int
	Start, End                       growthEndJSON
	Change                           struct {
		Size, Usage, RatingCount, Rating *struct {
			Change  float64
			Percent *float64
		}
	}
}

// wantEnd is the test's own reading of an end: the latest day on or
// before day, at most 7 days before, of the raw table's days.
func wantEnd(days map[string]analytics.Snapshot, day views.Day) *analytics.Snapshot {
	for d := day; d >= day-7; d-- {
		if s, ok := days[d.String()]; ok {
			return &s
		}
	}
	return nil
}

// TestGrowthBetweenDates checks /listings/{store}/{id}/growth against the
// raw table, with to defaulting to the newest day, an end with no reading
// in its week, and every refusal.
func TestGrowthBetweenDates(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	l := seriesListing(t, h, views.Edge, 0)
	days := dailyLatest(t, cfg, views.Edge, l.ID)
	newest := views.DayOf(h.State.Load().Replica.Info().ReadingsMark)
	base := h.Base + "/api/v1/listings/edge/" + l.ID + "/growth"

	for _, tc := range []struct{ from, to views.Day }{{newest - 10, newest}, {newest - 12, newest - 3}, {newest - 40, newest - 1}} {
		q := "?from=" + tc.from.String()
		if tc.to != newest {
			q += "&to=" + tc.to.String()
		}
		g := getOK[growthJSON](t, base+q)
		if g.From != tc.from.String() || g.To != tc.to.String() || g.Days != int(tc.to-tc.from)+1 || g.SizeMeasure != "installs" {
			t.Errorf("%s: %+v", q, g)
		}
		for _, end := range []struct {
			got growthEndJSON
			day views.Day
		}{{g.Start, tc.from}, {g.End, tc.to}} {
			w := wantEnd(days, end.day)
			if w == nil {
				if end.got.ReadAt != nil || end.got.Size != nil {
					t.Errorf("%s: end %s has %+v; want no reading (none in the 7 days before)", q, end.day, end.got)
				}
				continue
			}
			if end.got.ReadAt == nil || !end.got.ReadAt.Equal(w.ReadAt) || *end.got.Size != *w.Usage || *end.got.Usage != *w.Usage {
				t.Errorf("%s: end %s is %+v, want the reading of %s", q, end.day, end.got, w.ReadAt)
			}
		}
		ws, we := wantEnd(days, tc.from), wantEnd(days, tc.to)
		if ws == nil || we == nil {
			if g.Change.Size != nil {
				t.Errorf("%s: a change without both ends: %+v", q, g.Change.Size)
			}
			continue
		}
		if g.Change.Size == nil || g.Change.Size.Change != float64(*we.Usage-*ws.Usage) {
			t.Errorf("%s: size change %+v, want %d", q, g.Change.Size, *we.Usage-*ws.Usage)
		}
		if *ws.Usage != 0 {
			pct := float64(*we.Usage-*ws.Usage) / float64(*ws.Usage) * 100
			if p := g.Change.Size.Percent; p == nil || *p < pct-0.01 || *p > pct+0.01 {
				t.Errorf("%s: percent %v, want %.2f", q, p, pct)
			}
		}
	}
	for q, want := range map[string]string{
		"":                 "from",
		"?from=2026-02-30": "not a date",
		"?from=yesterday":  "not a date",
		"?from=" + newest.String() + "&to=" + (newest - 1).String(): "after to",
		"?from=" + (newest - 800).String():                          "730",
		"?from=" + newest.String() + "&to=" + (newest + 1).String(): "newest day",
	} {
		if d := problem(t, get(t, "GET", base+q), 400); !strings.Contains(d, want) {
			t.Errorf("%s: %q, want it to say %q", q, d, want)
		}
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/listings/edge/no-such-listing/growth?from=2026-02-01"), 404)
}

type compareJSON struct {
	Days     int
	From, To string
	Dates    []string
	Listings []struct {
		Store, ID, Name, SizeMeasure string
		Size, RatingCount            []*int64
		Rating                       []*float64
		Growth                       *struct {
			From, To string
			Change   int64
			Percent  *float64
		}
	}
}

// TestCompare checks /compare against the raw table: the same days for
// every listing, null where a listing has no reading, the growth over
// the window, CSV both ways, and every refusal.
func TestCompare(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a, b := seriesListing(t, h, views.Chrome, 0), seriesListing(t, h, views.Firefox, 0)
	newest := views.DayOf(h.State.Load().Replica.Info().ReadingsMark)
	list := "chrome:" + a.ID + ",firefox:" + b.ID
	c := getOK[compareJSON](t, h.Base+"/api/v1/compare?days=30&listings="+url.QueryEscape(list))
	if c.Days != 30 || len(c.Dates) != 30 || c.To != newest.String() || c.From != (newest-29).String() || len(c.Listings) != 2 {
		t.Fatalf("comparison: %+v", c)
	}
	nulls := 0
	for i, l := range []views.Listing{a, b} {
		got := c.Listings[i]
		days := dailyLatest(t, cfg, l.Store, l.ID)
		if got.Store != l.Store.String() || got.ID != l.ID || len(got.Size) != 30 || len(got.Rating) != 30 || len(got.RatingCount) != 30 {
			t.Fatalf("listing %d: %+v", i, got)
		}
		first, last := -1, -1
		for j, day := range c.Dates {
			w, ok := days[day]
			if !ok {
				nulls++
				if got.Size[j] != nil {
					t.Errorf("%s %s: %d on a day without a reading", l.ID, day, *got.Size[j])
				}
				continue
			}
			if got.Size[j] == nil || *got.Size[j] != *w.Usage {
				t.Errorf("%s %s: size %v, want %d", l.ID, day, got.Size[j], *w.Usage)
			}
			if first < 0 {
				first = j
			}
			last = j
		}
		if got.Growth == nil || got.Growth.From != c.Dates[first] || got.Growth.To != c.Dates[last] ||
			got.Growth.Change != *days[c.Dates[last]].Usage-*days[c.Dates[first]].Usage {
			t.Errorf("%s: growth %+v, want from %s to %s", l.ID, got.Growth, c.Dates[first], c.Dates[last])
		}
	}
	if nulls == 0 {
		t.Error("no day without a reading in 30 days of a 15-day dataset: the nulls are not tested")
	}

	// CSV, by suffix and by Accept.
	byPath := get(t, "GET", h.Base+"/api/v1/compare.csv?days=30&listings="+url.QueryEscape(list))
	req, _ := http.NewRequest("GET", h.Base+"/api/v1/compare?days=30&listings="+url.QueryEscape(list), nil)
	req.Header.Set("Accept", "text/csv, application/json;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var byAccept bytes.Buffer
	byAccept.ReadFrom(resp.Body)
	resp.Body.Close()
	if byPath.status != 200 || !bytes.Equal(byPath.body, byAccept.Bytes()) || !strings.HasPrefix(byPath.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(resp.Header.Get("Vary"), "Accept") {
		t.Fatalf("CSV: %d %v / %v", byPath.status, byPath.header, resp.Header)
	}
	rows := readCSV(t, byPath.body)
	if len(rows) != 61 || !slices.Equal(rows[0], []string{"day", "store", "id", "size_measure", "size", "rating_count", "rating"}) {
		t.Fatalf("CSV: %d rows, header %v", len(rows), rows[0])
	}
	for j, day := range c.Dates {
		r := rows[1+j]
		if want := ""; c.Listings[0].Size[j] != nil {
			want = strconv.FormatInt(*c.Listings[0].Size[j], 10)
			if r[4] != want {
				t.Errorf("CSV %s: %v, want size %s", day, r, want)
			}
		} else if r[4] != want || r[0] != day || r[1] != "chrome" {
			t.Errorf("CSV %s: %v", day, r)
		}
	}

	three := list + ",apple:" + firstLive(t, h, views.Apple).ID
	for q, status := range map[string]int{
		"":                         400,
		"?listings=chrome:" + a.ID: 400,
		"?listings=" + url.QueryEscape(list+",chrome:"+a.ID):              400, // twice
		"?listings=chrome:" + a.ID + ",safari:x":                          400,
		"?listings=chrome:" + a.ID + ",chrome:no-such":                    404,
		"?listings=chrome:" + a.ID + ",nocolon":                           400,
		"?listings=" + url.QueryEscape(strings.Repeat(list+",", 6)+"x:y"): 400, // 13
		"?days=0&listings=" + url.QueryEscape(list):                       400,
		"?days=731&listings=" + url.QueryEscape(list):                     400,
		"?days=x&listings=" + url.QueryEscape(list):                       400,
		"?listings=" + url.QueryEscape(three):                             200,
	} {
		got := get(t, "GET", h.Base+"/api/v1/compare"+q)
		if status == 200 {
			if got.status != 200 {
				t.Errorf("%s: %d %s", q, got.status, got.body)
			}
			continue
		}
		problem(t, got, status)
	}
}

func readCSV(t *testing.T, body []byte) [][]string {
	t.Helper()
	if !bytes.HasPrefix(body, []byte("\ufeff")) {
		t.Fatalf("CSV without a byte-order mark: %.40q", body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body[3:])).ReadAll()
	if err != nil {
		t.Fatalf("CSV: %v", err)
	}
	return rows
}

// TestHistoryFlagsAndCSV writes a listing whose history holds each
// anomaly (a gap, a jump, a relisting, a change of the store's rounding)
// and checks that its history flags each on its day and nothing else,
// that the history's CSV carries the same rows, and that the seeded
// listings' histories are not flagged as noise.
func TestHistoryFlagsAndCSV(t *testing.T) {
	cfg := seeded(t)
	end := time.Date(2026, 2, 28, 12, 0, 0, 0, time.UTC)
	first := end.AddDate(0, 0, -14)
	id := "flagsflagsflagsflagsflagsflagsfl"
	meta := func(at time.Time, delisted bool) analytics.ListingRow {
		r := analytics.ListingRow{Store: views.Chrome, ID: id, CrawledAt: at, Name: "Flags", Developer: "Test", Category: "Tools",
			Kind: views.KindExtension, FirstSeen: first}
		if delisted {
			r.DelistedAt = &at
		}
		return r
	}
	listings := []analytics.ListingRow{meta(first, false), meta(first.AddDate(0, 0, 9), true), meta(first.AddDate(0, 0, 10), false)}
	var snaps []analytics.SnapshotRow
	size := func(i int) uint64 {
		switch {
		case i < 8:
			return 123457 + uint64(i)*101
		case i < 11:
			return 370003 + uint64(i-8)*101
		default:
			return 380000 + uint64(i-11)*10000
		}
	}
	for i := range 15 {
		if i == 4 || i == 5 {
			continue // the gap
		}
		u := size(i)
		snaps = append(snaps, analytics.SnapshotRow{Store: views.Chrome, ID: id, CrawledAt: first.AddDate(0, 0, i), Usage: &u})
	}
	cfg.Add(t, listings, snaps)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	p, _ := getHistoryPage(t, h.Base+"/api/v1/listings/chrome/"+id+"/history?days=30")
	want := map[int][]string{6: {"gap"}, 8: {"jump"}, 10: {"relisted"}, 11: {"rounding"}}
	if len(p.Snapshots) != 13 {
		t.Fatalf("%d days, want 13", len(p.Snapshots))
	}
	for _, s := range p.Snapshots {
		d, _ := time.Parse(time.DateOnly, s.Day)
		i := int(d.Sub(first.Truncate(24*time.Hour)).Hours() / 24)
		if !slices.Equal(s.Flags, want[i]) && !(len(s.Flags) == 0 && want[i] == nil) {
			t.Errorf("day %d (%s, %d): flags %v, want %v", i, s.Day, *s.Size, s.Flags, want[i])
		}
		if s.Flags == nil {
			t.Errorf("day %d: flags null, want a list", i)
		}
		if i == 6 && s.DaysSincePrevious != 3 || i == 7 && s.DaysSincePrevious != 1 {
			t.Errorf("day %d: %d days since the previous", i, s.DaysSincePrevious)
		}
	}

	// The history's CSV: the same days, with their flags.
	csvAnswer := get(t, "GET", h.Base+"/api/v1/listings/chrome/"+id+"/history.csv?days=30")
	rows := readCSV(t, csvAnswer.body)
	if len(rows) != 14 || rows[0][0] != "day" || rows[0][12] != "flags" || csvAnswer.header.Get("Link") == "" {
		t.Fatalf("history CSV: %d rows, header %v, headers %v", len(rows), rows[0], csvAnswer.header)
	}
	for i, s := range p.Snapshots {
		r := rows[1+i]
		if r[0] != s.Day || r[5] != strconv.FormatInt(*s.Size, 10) || r[12] != strings.Join(s.Flags, " ") {
			t.Errorf("CSV row %v, want the day %+v", r, s)
		}
	}

	// The seeded histories: what share of days is flagged.
	flagged, gaps, total := 0, 0, 0
	for _, l := range h.State.Load().Replica.OfStore(views.Chrome)[:80] {
		if !l.Crawled() {
			continue
		}
		p, _ := getHistoryPage(t, h.Base+"/api/v1/listings/chrome/"+l.ID+"/history")
		for _, s := range p.Snapshots {
			total++
			if slices.Contains(s.Flags, "jump") || slices.Contains(s.Flags, "rounding") {
				flagged++
			}
			if slices.Contains(s.Flags, "gap") {
				gaps++
			}
		}
	}
	if total < 200 || flagged*20 > total || gaps*10 > total {
		t.Errorf("%d of %d seeded days flagged jump or rounding, %d gap: more than 1 in 20 (1 in 10 for gaps) reads as noise", flagged, total, gaps)
	}
	t.Logf("seeded chrome histories: %d of %d days flagged jump or rounding, %d gap", flagged, total, gaps)
}

// TestDefinitions checks /definitions: every x-definition of the served
// description names a definition, every definition is named by some
// field, and answers of figures link to it.
func TestDefinitions(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	var defs struct {
		Definitions []struct{ Name, Measures, Window, Cadence, Null string }
	}
	a := get(t, "GET", h.Base+"/api/v1/definitions")
	if a.status != 200 || json.Unmarshal(a.body, &defs) != nil || len(defs.Definitions) < 20 {
		t.Fatalf("definitions: %d %.200s", a.status, a.body)
	}
	names := map[string]bool{}
	for _, d := range defs.Definitions {
		if d.Name == "" || len(d.Measures) < 20 || d.Window == "" || d.Cadence == "" || d.Null == "" {
			t.Errorf("definition %+v is incomplete", d)
		}
		names[d.Name] = true
	}
	spec := get(t, "GET", h.Base+"/api/v1/openapi.json").body
	used := map[string]bool{}
	for _, m := range regexpAll(`"x-definition":\s*"([^"]+)"`, spec) {
		if !names[m] {
			t.Errorf("x-definition %q names no definition", m)
		}
		used[m] = true
	}
	for n := range names {
		// flags.* and change.* define values (of a day's flags, of an
		// event's kind), not fields: their field names its definition.
		if !used[n] && !strings.HasPrefix(n, "flags.") && !strings.HasPrefix(n, "change.") {
			t.Errorf("definition %q is named by no field of the description", n)
		}
	}
	l := seriesListing(t, h, views.Chrome, 0)
	// Every answer names the definitions; a v1 answer with a page for
	// people names it too (docs/pages.md).
	for path, page := range map[string]string{"/api/v1/listings/chrome/" + l.ID: "/listings/chrome/" + l.ID,
		"/api/v1/stores/chrome/stats": "/stores/chrome", "/api/summary": ""} {
		want := `</api/v1/definitions>; rel="describedby"`
		if page != "" {
			want += `, <` + page + `>; rel="alternate"; type="text/html"`
		}
		if got := get(t, "GET", h.Base+path).header.Get("Link"); got != want {
			t.Errorf("%s: Link %q, want %q", path, got, want)
		}
	}
}

// regexpAll returns the first group of every match of re in b.
func regexpAll(re string, b []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(re).FindAllSubmatch(b, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// TestAlsoIn checks the links across stores over HTTP: a linked listing's
// document names its twin and the twin names it back, with the same
// confidence; alsoIn on /listings gives only listings linked to the
// store; and the seeded twins are found.
func TestAlsoIn(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	type doc struct {
		Store, ID string
		AlsoIn    []struct {
			Store, ID  string
			Confidence float64
		}
	}
	var pairs int
	st := h.State.Load()
	for _, l := range st.Replica.OfStore(views.Chrome) {
		linked := st.Figures.Links(&l)
		if len(linked) == 0 {
			continue
		}
		pairs++
		d := getOK[doc](t, h.Base+"/api/v1/listings/chrome/"+l.ID)
		if len(d.AlsoIn) != len(linked) {
			t.Fatalf("%s: alsoIn %+v", l.ID, d.AlsoIn)
		}
		for _, a := range d.AlsoIn {
			back := getOK[doc](t, h.Base+"/api/v1/listings/"+a.Store+"/"+url.PathEscape(a.ID))
			if len(back.AlsoIn) == 0 || back.AlsoIn[0].Store != "chrome" || back.AlsoIn[0].ID != l.ID || back.AlsoIn[0].Confidence != a.Confidence ||
				a.Confidence < links.LinkThreshold || a.Confidence > 1 {
				t.Errorf("%s linked to %s/%s (%.2f), which linked back to %+v", l.ID, a.Store, a.ID, a.Confidence, back.AlsoIn)
			}
		}
		if pairs >= 5 {
			break
		}
	}
	if pairs == 0 {
		t.Fatal("no chrome listing of the seeded data is linked: the seeder's twins are not found")
	}
	page := getOK[struct{ Listings []doc }](t, h.Base+"/api/v1/listings?store=chrome&alsoIn=firefox&limit=100")
	if len(page.Listings) == 0 {
		t.Fatal("alsoIn=firefox: no chrome listing")
	}
	for _, d := range page.Listings {
		if !slices.ContainsFunc(d.AlsoIn, func(a struct {
			Store, ID  string
			Confidence float64
		}) bool {
			return a.Store == "firefox"
		}) {
			t.Errorf("alsoIn=firefox listed %s, linked to %+v", d.ID, d.AlsoIn)
		}
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/listings?alsoIn=apple"), 400)
}
