package edge_test

import (
	"context"
	"encoding/xml"
	"html"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/pages/render"
)

// svgBadge is what a badge's SVG says: its accessible name and title.
type svgBadge struct {
	XMLName xml.Name `xml:"svg"`
	Label   string   `xml:"aria-label,attr"`
	Title   string   `xml:"title"`
	Texts   []string `xml:"g>text"`
}

// badgeOf fetches a badge and reads its SVG, failing unless it is an
// image of status want with the badges' headers.
func badgeOf(t *testing.T, h *harness, path string, want int) (svgBadge, answer) {
	t.Helper()
	a := get(t, "GET", h.Base+path)
	if a.status != want || !strings.HasPrefix(a.header.Get("Content-Type"), "image/svg+xml") {
		t.Fatalf("%s: %d %q, want an SVG of %d: %.300s", path, a.status, a.header.Get("Content-Type"), want, a.body)
	}
	if csp := a.header.Get("Content-Security-Policy"); csp != render.BadgeCSP || a.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: CSP %q, nosniff %q", path, csp, a.header.Get("X-Content-Type-Options"))
	}
	var b svgBadge
	if err := xml.Unmarshal(a.body, &b); err != nil {
		t.Fatalf("%s: not SVG: %v\n%s", path, err, a.body)
	}
	return b, a
}

// ratings is what a rating badge adds of its count.
func ratings(n *int64) string {
	if n == nil {
		return ""
	}
	return " (" + render.Compact(*n) + ")"
}

// TestBadges: a listing's badges say its figures as its JSON document
// has them (the size, rating, version and store rank), with the figure's
// words in <title>; they are cached answers (ETag, 304, public); a
// delisted listing's say delisted; an unknown listing or figure is a 404
// drawn as a badge; the listing's page offers each badge's Markdown at
// the public address; and Chromium draws a badge.
func TestBadges(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	rated := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=chrome&minRatingCount=1&limit=1").Listings
	if len(rated) == 0 {
		t.Fatal("no rated chrome listing in the test data")
	}
	l := struct{ ID string }{rated[0].ID}
	base := "/badges/chrome/" + url.PathEscape(l.ID) + "/"
	doc := getOK[struct {
		Name, Version string
		Size          *int64
		Rating        *float64
		RatingCount   *int64
		StoreRank     *int
	}](t, h.Base+"/api/v1/listings/chrome/"+url.PathEscape(l.ID))
	if doc.Size == nil || doc.Rating == nil || doc.StoreRank == nil || doc.Version == "" {
		t.Fatalf("the first live chrome listing lacks a figure: %+v", doc)
	}
	for _, c := range []struct{ figure, label, message, title string }{
		{"users", "users", render.Compact(*doc.Size), render.Int(*doc.Size) + " users"},
		{"size", "users", render.Compact(*doc.Size), render.Int(*doc.Size) + " users"},
		{"rating", "rating", strconv.FormatFloat(*doc.Rating, 'f', 1, 64) + "/5" + ratings(doc.RatingCount), "rated " + strconv.FormatFloat(*doc.Rating, 'f', -1, 64) + " of 5"},
		{"version", "version", "v" + strings.TrimPrefix(doc.Version, "v"), "version " + doc.Version},
		{"rank", "chrome rank", "#" + render.Int(int64(*doc.StoreRank)), "number " + render.Int(int64(*doc.StoreRank))},
	} {
		b, a := badgeOf(t, h, base+c.figure+".svg", http.StatusOK)
		if b.Label != c.label+": "+c.message {
			t.Errorf("%s: aria-label %q, want %q", c.figure, b.Label, c.label+": "+c.message)
		}
		if !strings.Contains(b.Title, c.title) || !strings.Contains(b.Title, html.UnescapeString(doc.Name)) {
			t.Errorf("%s: title %q does not say %q of %q", c.figure, b.Title, c.title, doc.Name)
		}
		if a.header.Get("ETag") == "" || !strings.Contains(a.header.Get("Cache-Control"), "public") {
			t.Errorf("%s: ETag %q, Cache-Control %q", c.figure, a.header.Get("ETag"), a.header.Get("Cache-Control"))
		}
		if again := fetch(t, "GET", h.Base+base+c.figure+".svg", "If-None-Match", a.header.Get("ETag")); again.status != http.StatusNotModified {
			t.Errorf("%s: revalidated %d, want 304", c.figure, again.status)
		}
	}
	// Delisted, unknown, a figure there is not.
	gone := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=chrome&delistedOnly=true&limit=1").Listings
	if len(gone) == 0 {
		t.Fatal("the test data has no delisted chrome listing")
	}
	if b, _ := badgeOf(t, h, "/badges/chrome/"+url.PathEscape(gone[0].ID)+"/users.svg", http.StatusOK); !strings.HasSuffix(b.Label, ": delisted") || !strings.Contains(b.Title, "delisted") {
		t.Errorf("a delisted listing's badge: %+v", b)
	}
	for _, path := range []string{"/badges/chrome/nosuchlisting/users.svg", base + "downloads.svg", base + "users.png", "/badges/nostore/x/users.svg"} {
		b, a := badgeOf(t, h, path, http.StatusNotFound)
		if b.Label != "badge: not found" || b.Title == "" || a.header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %+v, Cache-Control %q", path, b, a.header.Get("Cache-Control"))
		}
	}
	// The listing's page offers the Markdown, at the public address.
	page := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(l.ID)).body)
	public := edge.DefaultConfig().PublicURL
	for _, f := range []string{"users", "rating", "version", "rank"} {
		md := "[![" + f + "](" + public + base + f + ".svg)](" + public + "/listings/chrome/" + url.PathEscape(l.ID) + ")"
		if !strings.Contains(page, html.EscapeString(md)) || !strings.Contains(page, `<img src="`+base+f+`.svg"`) {
			t.Errorf("the listing's page does not offer the %s badge: %s", f, md)
		}
	}
	// The size chart as an image of its own, for another site.
	embed := "/embed/chrome/" + url.PathEscape(l.ID) + "/size.svg"
	if c, a := badgeOf(t, h, embed, http.StatusOK); !strings.Contains(c.Title, doc.Name) || !strings.Contains(string(a.body), `<path class="line"`) ||
		!strings.Contains(string(a.body), "<style>") || !strings.Contains(a.header.Get("Cache-Control"), "public") {
		t.Errorf("%s: title %q, %.300s", embed, c.Title, a.body)
	}
	if b, _ := badgeOf(t, h, "/embed/chrome/nosuchlisting/size.svg", http.StatusNotFound); b.Label != "badge: not found" {
		t.Errorf("an unknown listing's chart: %+v", b)
	}
	if !strings.Contains(page, html.EscapeString(`<img src="`+public+embed+`"`)) {
		t.Errorf("the listing's page does not offer its chart's HTML")
	}
	// Chromium draws it: the badge's blue is on the screenshot.
	shot := filepath.Join(t.TempDir(), "badge.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--user-data-dir="+t.TempDir(), "--window-size=300,60", "--hide-scrollbars",
		"--screenshot="+shot, h.Base+base+"users.svg").CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	blue := 0
	for y := 0; y < 20; y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 < 0x40 && g>>8 > 0x40 && g>>8 < 0x80 && b>>8 > 0x90 { // #1a5fb4, under the badge's faint gradient
				blue++
			}
		}
	}
	if blue < 100 {
		t.Errorf("Chromium drew %d pixels of the badge's blue, want its message box", blue)
	}
}
