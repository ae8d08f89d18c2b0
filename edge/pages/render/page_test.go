package render

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestInt(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234567: "1,234,567", -45000: "−45,000"} {
		if got := Int(n); got != want {
			t.Errorf("Int(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCompactAndTicks(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 950: "950", 1000: "1k", 12500: "12.5k", 1_250_000: "1.3M", 2_000_000_000: "2B"} {
		if got := Compact(n); got != want {
			t.Errorf("Compact(%d) = %q, want %q", n, got, want)
		}
	}
	for _, c := range []struct {
		lo, hi int64
		ranked bool
		want   []int64
	}{
		{0, 0, false, []int64{0, 1}},
		{0, 5, false, []int64{0, 2, 4, 6, 8}},   // a series that moves spans 8 units at least
		{7, 8, false, []int64{4, 6, 8, 10, 12}}, // a count that moves by one reads as small
		{0, 100, false, []int64{0, 25, 50, 75, 100}},
		{0, 1234567, false, []int64{0, 500000, 1000000, 1500000}},
		{7980, 8465, false, []int64{7800, 8000, 8200, 8400, 8600}}, // live apple listings: a rise, not a flat line
		{5000, 5000, false, []int64{4500, 5000, 5500}},
		{1, 1, true, []int64{1, 3, 5, 7, 9}}, // always first: the top of an axis of 8 places
		{3, 4, true, []int64{1, 3, 5, 7, 9}}, // a swap with a neighbour reads as small
		{40, 41, true, []int64{36, 38, 40, 42, 44, 46}},
		{1, 37, true, []int64{1, 11, 21, 31, 41}},
		{3900, 4200, true, []int64{3900, 4000, 4100, 4200}},
	} {
		got := Ticks(c.lo, c.hi, c.ranked)
		if !slices.Equal(got, c.want) {
			t.Errorf("Ticks(%d, %d, %v) = %v, want %v", c.lo, c.hi, c.ranked, got, c.want)
		}
		for i := 2; i < len(got); i++ {
			if got[i]-got[i-1] != got[1]-got[0] {
				t.Errorf("Ticks(%d, %d): uneven %v", c.lo, c.hi, got)
			}
		}
	}
}

// days returns n days from 2026-01-01, with a size every step days.
func days(n, step int, size func(i int) int64) []Point {
	out := make([]Point, n)
	for i := range out {
		out[i].Day = fmt.Sprintf("2026-%02d-%02d", 1+i/28, 1+i%28)
		if i%step == 0 {
			out[i].Size, out[i].Has = size(i), true
		}
	}
	return out
}

// pathOf returns the chart's line.
func pathOf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`<path class="line" d="([^"]*)"/>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no line in %s", page)
	}
	return m[1]
}

// TestChartJoinsReadingsWithinTheTolerance: a listing read every third
// day is one line (the fourth review: it drew nothing); a silence longer
// than JoinDays breaks it and is named on the page; a reading no line
// reaches is a dot.
func TestChartJoinsReadingsWithinTheTolerance(t *testing.T) {
	every3 := days(90, 3, func(i int) int64 { return int64(1000 + i) })
	b, err := RenderListing(ListingPage{Store: "chrome", ID: "a", Name: "A", SizeMeasure: "users", Live: true, Points: every3})
	if err != nil {
		t.Fatal(err)
	}
	p := pathOf(t, string(b))
	if strings.Count(p, "M") != 1 || strings.Count(p, "L") != 29 {
		t.Errorf("a listing read every third day: %d moves, %d lines, want one line through 30 readings", strings.Count(p, "M"), strings.Count(p, "L"))
	}
	if strings.Contains(string(b), "it is broken") || strings.Contains(string(b), `class="dot"`) {
		t.Error("a listing read every third day is said to have a gap")
	}
	// A silence of 20 days, and a lone reading after another.
	gappy := days(60, 1, func(i int) int64 { return 500 })
	for i := 10; i < 30; i++ {
		gappy[i].Has = false
	}
	for i := 31; i < 59; i++ {
		gappy[i].Has = false
	}
	b, _ = RenderListing(ListingPage{Store: "chrome", ID: "a", Name: "A", SizeMeasure: "users", Live: true, Points: gappy})
	p = pathOf(t, string(b))
	if strings.Count(p, "M") != 3 || !strings.Contains(string(b), gappy[9].Day+" to "+gappy[30].Day+" (21 days)") {
		t.Errorf("the gaps: line %q\n%s", p, b)
	}
	if strings.Count(string(b), `class="dot"`) != 2 {
		t.Errorf("days 30 and 59 are readings no line reaches: %d dots", strings.Count(string(b), `class="dot"`))
	}
	if len(Gaps(gappy)) != 2 {
		t.Errorf("gaps %v", Gaps(gappy))
	}
}

// TestChartAxis: the axis spans the data with gridlines at each tick; a
// flat series has distinct labels (the fourth review: one printed twice)
// around its value; every reading has its day and value in a title; the
// first and last values are labelled.
func TestChartAxis(t *testing.T) {
	flat := days(30, 1, func(int) int64 { return 4200 })
	b, _ := RenderListing(ListingPage{Store: "edge", ID: "a", Name: "A", SizeMeasure: "installs", Live: true, Points: flat})
	if n := strings.Count(string(b), `<title>`); n != 1+1 { // the page's and the run's
		t.Errorf("%d titles, want the page's and one for the 30 days of one value", n)
	}
	if !strings.Contains(string(b), "<title>1 Jan 2026 to "+shortDay(flat[len(flat)-1].Day)+": 4,200</title>") || strings.Count(string(b), `class="end"`) != 2 {
		t.Errorf("no title of the run of readings, or not two end labels: %s", b)
	}
	// A series that moves has a title a reading, and one a run of equal
	// days: 1, 1, 2, 3, 3, 3 gives three.
	moving := days(6, 1, func(i int) int64 { return []int64{1, 1, 2, 3, 3, 3}[i] * 1000 })
	mb, _ := RenderListing(ListingPage{Store: "edge", ID: "a", Name: "A", SizeMeasure: "installs", Live: true, Points: moving})
	for _, want := range []string{"<title>1 Jan 2026 to 2 Jan 2026: 1,000</title>", "<title>3 Jan 2026: 2,000</title>", "<title>4 Jan 2026 to 6 Jan 2026: 3,000</title>"} {
		if !strings.Contains(string(mb), want) {
			t.Errorf("no %s", want)
		}
	}
	if n := strings.Count(string(mb), `<title>`); n != 3+1 {
		t.Errorf("%d titles for three runs and the page", n)
	}
	labels := regexp.MustCompile(`class="tick"[^>]*>([^<]+)</text>`).FindAllStringSubmatch(string(b), -1)
	var seen []string
	for _, l := range labels {
		if slices.Contains(seen, l[1]) {
			t.Errorf("label %q printed twice", l[1])
		}
		seen = append(seen, l[1])
	}
	if !slices.Equal(seen, []string{"4k", "4.5k"}) || strings.Count(string(b), `class="grid"`) < 2 {
		t.Errorf("the axis: labels %v, %d gridlines", seen, strings.Count(string(b), `class="grid"`))
	}
}

// TestRenderEscapesAndSaysWhy: user-written text (a name, a developer)
// reaches the page as text, never as markup; the page has no script; a
// null figure shows why; labels link to the definitions' page; a delisted
// listing says when.
func TestRenderEscapesAndSaysWhy(t *testing.T) {
	d := ListingPage{Store: "chrome", ID: "abc", Name: `<script>alert(1)</script>`, Developer: `Dev "&" <b>`, SizeMeasure: "users",
		Delisted: "2026-02-03",
		Figures: []Figure{{Definition: "size", Label: "Size", Raw: "1234", Text: "1,234"},
			{Definition: "rating", Label: "Rating", Why: "no ratings yet"}},
		Points:      days(4, 1, func(i int) int64 { return int64(10 * i) }),
		DocumentURL: "/api/v1/listings/chrome/abc", HistoryURL: "/api/v1/listings/chrome/abc/history", HistoryCSVURL: "/api/v1/listings/chrome/abc/history.csv"}
	b, err := RenderListing(d)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>") {
		t.Fatalf("user text reached the page as markup:\n%s", page)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", `data-figure="size" data-value="1234">1,234<`,
		`data-figure="rating" data-value="">—<span class="why">no ratings yet</span>`, `href="/definitions#size"`,
		"delisted on 2026-02-03", `name="viewport"`, `<main id="main">`, `<a class="skip" href="#main">Skip to content</a>`, `<meta name="description"`,
		`<link rel="alternate" type="text/csv" href="/api/v1/listings/chrome/abc/history.csv">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "/api/v1/definitions#") {
		t.Error("a label links to the JSON definitions")
	}
}

// TestCSPAdmitsTheStyle: the policy's hash is the style's, so that the
// page is styled and nothing else runs.
func TestCSPAdmitsTheStyle(t *testing.T) {
	b, _ := RenderListing(ListingPage{Store: "apple", ID: "1", Name: "x"})
	m := regexp.MustCompile(`(?s)<style>(.*)</style>`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no style")
	}
	sum := sha256.Sum256(m[1])
	if !strings.Contains(CSP, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || !strings.Contains(CSP, "frame-ancestors 'none'") ||
		strings.Contains(CSP, "script-src") {
		t.Errorf("CSP %q does not admit the page's style alone", CSP)
	}
}

func TestRenderWithoutSizes(t *testing.T) {
	b, err := RenderListing(ListingPage{Store: "apple", ID: "1", Name: "x", Points: []Point{{Day: "2026-01-01"}}})
	if err != nil || !strings.Contains(string(b), "No size was read") {
		t.Fatalf("%v: %s", err, b)
	}
}

func TestRenderError(t *testing.T) {
	b, err := RenderError(429, "Too many <pages>.", "300")
	if err != nil || !strings.Contains(string(b), "Please slow down") || !strings.Contains(string(b), "come back in 300 seconds (about 5 minutes)") ||
		strings.Contains(string(b), "<pages>") {
		t.Fatalf("%v: %s", err, b)
	}
}

func TestDefinitionsHaveAnchors(t *testing.T) {
	b, err := RenderDefinitions([]Definition{{Name: "size", Measures: "m"}, {Name: "flags.gap", Measures: "g"}}, "/api/v1/definitions")
	if err != nil || !strings.Contains(string(b), `<dt id="size">`) || !strings.Contains(string(b), `<dt id="flags.gap">`) {
		t.Fatalf("%v: %s", err, b)
	}
}
