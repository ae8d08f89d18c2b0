package page

import (
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

// TestRenderEscapesAndDraws checks that user-written text (a name, a
// developer) reaches the page as text, never as markup, that the page
// has no script, and that the chart has a point for each day with a size
// and a gap for each day without.
func TestRenderEscapesAndDraws(t *testing.T) {
	d := Data{Store: "chrome", ID: "abc", Name: `<script>alert(1)</script>`, Developer: `Dev "&" <b>`, SizeMeasure: "users", Live: true,
		Figures:     []Figure{{Definition: "size", Label: "Size", Raw: "1234", Text: "1,234"}, {Definition: "rating", Label: "Rating"}},
		Points:      []Point{{Day: "2026-01-01", Size: 10, Has: true}, {Day: "2026-01-02", Size: 20, Has: true}, {Day: "2026-01-03"}, {Day: "2026-01-04", Size: 15, Has: true}},
		DocumentURL: "/api/v1/listings/chrome/abc", HistoryURL: "/api/v1/listings/chrome/abc/history.csv", DefinitionsURL: "/api/v1/definitions"}
	b, err := Render(d)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "<script") || strings.Contains(page, "<b>") {
		t.Fatalf("user text reached the page as markup:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the name is not on the page as text")
	}
	if !strings.Contains(page, `data-figure="size" data-value="1234">1,234<`) || !strings.Contains(page, `data-figure="rating" data-value="">—<`) {
		t.Errorf("figures: %s", page)
	}
	path := page[strings.Index(page, `<path class="line" d="`):]
	path = path[:strings.Index(path, `"/>`)]
	if strings.Count(path, "M") != 2 || strings.Count(path, "L") != 1 {
		t.Errorf("the line %q should run through days 1 and 2, break at day 3 and start again at day 4", path)
	}
	if !strings.Contains(page, `name="viewport"`) {
		t.Error("no viewport: unreadable on a phone")
	}
}

func TestRenderWithoutSizes(t *testing.T) {
	b, err := Render(Data{Store: "apple", ID: "1", Name: "x", Points: []Point{{Day: "2026-01-01"}}})
	if err != nil || !strings.Contains(string(b), "No size was read") {
		t.Fatalf("%v: %s", err, b)
	}
}
