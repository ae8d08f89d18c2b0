package edge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
)

// pageWeightBound is the most a page may weigh, everything the browser
// takes to show it, as sent (compressed), from Lighthouse's mobile
// budget (docs/pages.md, Weight).
const pageWeightBound = 50 * 1024

// audit is what edge/testdata/pages/audit.mjs saw of a page at a width.
type audit struct {
	Name, URL, Scheme, Title, Description, Screenshot string
	Width, Status, Bytes, Requests                    int
	ScrollWidth, ClientWidth                          int
	Wide, Failed, ConsoleErrors                       []string
	Clipped, Split                                    []string // tables cut off without a sign, labels apart from their fields
	Subresources                                      []struct {
		URL    string
		Status int
	}
	Violations []struct {
		ID, Impact, Help string
		Nodes            []string
	}
}

// pageType is a page audit.mjs opens, named for its screenshots.
type pageType struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// pageTypes returns a page of every type the edge serves people, over
// the demo's kind of data in h, each named for its screenshot: the
// richest of each (a listing with a year of history, a chart with a
// category, a browser with a search).
func pageTypes(t *testing.T, h *harness) []pageType {
	t.Helper()
	top := getOK[struct {
		Entries []struct {
			Listing struct{ ID, Name, Developer string }
		}
	}](t, h.Base+"/api/v1/charts/chrome?chart=top").Entries
	if len(top) == 0 {
		t.Fatal("no chrome listing in the top chart")
	}
	l := top[0].Listing // the page a reader most often opens: the store's largest
	cats := getOK[struct{ Categories []struct{ Name string } }](t, h.Base+"/api/v1/categories/chrome").Categories
	tags := getOK[struct{ Tags []struct{ Slug string } }](t, h.Base+"/api/v1/tags").Tags
	weeks := getOK[struct{ Weeks []struct{ Week string } }](t, h.Base+"/api/v1/weeks").Weeks
	ls := getOK[struct{ Listings []struct{ Store, ID string } }](t, h.Base+"/api/v1/listings?store=chrome&limit=3").Listings
	if len(cats) == 0 || len(tags) == 0 || len(weeks) == 0 || len(ls) < 3 {
		t.Fatalf("the data lacks a page type: %d categories, %d topics, %d editions, %d listings", len(cats), len(tags), len(weeks), len(ls))
	}
	var refs []string
	for _, r := range ls {
		refs = append(refs, r.Store+":"+r.ID)
	}
	ffx := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=firefox&limit=1").Listings
	if len(ffx) == 0 {
		t.Fatal("the data lacks a firefox listing")
	}
	taken := getOK[struct{ Events []struct{ ID string } }](t, h.Base+"/api/v1/events?kind=takeover&store=chrome&limit=1").Events
	if len(taken) == 0 {
		t.Fatal("the data lacks a takeover in chrome")
	}
	word, _, _ := strings.Cut(l.Name, " ")
	list := []pageType{
		{"home", "/"},
		{"store", "/stores/chrome"},
		{"chart", "/charts/chrome?chart=rising&category=" + url.QueryEscape(cats[0].Name)},
		{"categories", "/categories/chrome"},
		{"tags", "/tags"},
		{"tag", "/tags/" + tags[0].Slug + "/chrome"},
		{"listings", "/listings?store=chrome&sort=growth7d&q=" + url.QueryEscape(word)},
		{"listing", "/listings/chrome/" + l.ID},
		{"listing-takeover", "/listings/chrome/" + url.PathEscape(taken[0].ID)},
		{"listing-changes", "/listings/chrome/" + url.PathEscape(taken[0].ID) + "/changes"},
		{"listing-reviews", "/listings/firefox/" + url.PathEscape(ffx[0].ID) + "/reviews"},
		{"listings-comparing", "/listings?sort=updated&compare=" + url.QueryEscape(refs[0])},
		{"compare", "/compare?days=30&listings=" + url.QueryEscape(strings.Join(refs, ","))},
		{"compare-form", "/compare"},
		{"takeovers", "/events?kind=takeover"},
		{"weeks", "/weeks"},
		{"week", "/week/" + weeks[0].Week},
		{"events", "/events?store=chrome"},
		{"definitions", "/definitions"},
		{"developer", "/developers/chrome/" + url.PathEscape(top[0].Listing.Developer)},
		{"permissions", "/permissions"},
		{"categories-by-growth", "/categories/chrome?sort=growth7d"},
		{"category", "/categories/chrome/" + url.PathEscape(cats[0].Name)},
		{"review-search", "/reviews/search"},
		{"not-found", "/listings/chrome/nosuchlistingnosuchlistingnosuch"},
		{"unknown-page", "/nosuchpage"},
		{"bad-search", "/listings?q=a"},
	}
	for i := range list {
		list[i].URL = h.Base + list[i].URL
	}
	return list
}

// TestPagesInChromium opens every page type in Debian's Chromium, at 390
// px (a phone, light scheme) and at 1280 px (dark scheme): axe-core finds
// no violation of any impact, nothing is wider than the window, a table
// wider than its box scrolls in a focusable, named region with shadows
// at its edges, every label is beside its field or above it, the page
// has a title and a description, everything it loads answers (no
// favicon 404) with no error in the console (a style the CSP refuses
// would be one), and the whole page weighs at most pageWeightBound as
// sent. Screenshots of each are left in the test output folder
// (testOut) for review, with its HTML, which the Nu HTML checker finds
// valid.
func TestPagesInChromium(t *testing.T) {
	bin := chromium(t)
	node := filepath.Join(nodeDir(t), "node")
	// The demo's kind of data (make run): a year of history, so the
	// listing's chart and the weekly editions are as full as they get.
	srv := chtest.Need(t, srv)
	cfg, conn := srv.Migrated(t)
	if _, err := seed.Write(context.Background(), conn, pageAuditData(), seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h := start(t, edgetest.Dataset{CH: &cfg}, func(c *edge.Config) { c.PageRate = 0 })
	for _, job := range []string{"views", "editions", "ranks"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	pages := pageTypes(t, h)
	in, err := json.Marshal(pages)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(testOut(t), "pages")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "audit.mjs", bin, out)
	cmd.Dir = "testdata/pages"
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("audit.mjs: %v\n%s", err, stderr.String())
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a audit
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("audit.mjs wrote %q: %v", sc.Text(), err)
		}
		seen[a.Name]++
		checkAudit(t, a)
	}
	for _, p := range pages {
		if seen[p.Name] != 2 {
			t.Errorf("%s was audited at %d widths, want 2", p.Name, seen[p.Name])
		}
	}
	t.Logf("screenshots of every page type at 390 and 1280 px: %s", out)
	checkNu(t, pages, out)
}

// vnuJar is the Nu HTML checker's jar, as deploy/node.sh installs the
// pinned vnu-jar package beside the audits.
const vnuJar = "testdata/pages/node_modules/vnu-jar/build/dist/vnu.jar"

// checkNu asks every page as a browser does, keeps its HTML beside the
// screenshots in dir, and has the Nu HTML checker read them all.
func checkNu(t *testing.T, pages []pageType, dir string) {
	t.Helper()
	bodies := map[string][]byte{}
	for _, p := range pages {
		bodies[p.Name] = call(t, "GET", p.URL, map[string]string{"Accept": "text/html"}, "").body
	}
	validHTML(t, bodies, dir)
}

// validHTML writes each page of pages (by name) to dir and runs the Nu
// HTML checker (the W3C's validator, which also checks the CSS of the
// pages' style element) over all of them at once: each error it reports
// fails t, naming the page; each warning is logged.
func validHTML(t *testing.T, pages map[string][]byte, dir string) {
	t.Helper()
	if _, err := os.Stat(vnuJar); err != nil {
		exec.Command("../deploy/node.sh").Run() // installs the jar; its absence is told below
	}
	java, err := exec.LookPath("java")
	if _, jarErr := os.Stat(vnuJar); err != nil || jarErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Nu HTML checker cannot run (make deps installs Java with ZooKeeper, deploy/node.sh the jar): %v %v", err, jarErr)
		}
		// Outside CI the pages are still checked otherwise: the rest of
		// the calling test goes on.
		t.Logf("the Nu HTML checker is not run: %v %v", err, jarErr)
		return
	}
	var files []string
	names := map[string]string{}
	for name, body := range pages {
		f := filepath.Join(dir, "page"+strconv.Itoa(len(files))+".html")
		if err := os.WriteFile(f, body, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		names[filepath.Base(f)] = name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, append([]string{"-jar", vnuJar, "--format", "json", "--stdout"}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) { // it exits 1 when it finds an error
		t.Fatalf("vnu: %v\n%s", err, stderr.String())
	}
	var report struct {
		Messages []struct {
			Type, SubType, URL, Message, Extract string
			LastLine                             int
		}
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatalf("vnu wrote %q: %v\n%s", raw, err, stderr.String())
	}
	for _, m := range report.Messages {
		at := names[filepath.Base(m.URL)] + " line " + strconv.Itoa(m.LastLine)
		if m.Type == "info" {
			t.Logf("Nu checker, %s (%s): %s", at, m.SubType, m.Message)
			continue
		}
		t.Errorf("Nu checker, %s: %s %s: %s in %q", at, m.Type, m.SubType, m.Message, m.Extract)
	}
	t.Logf("the Nu HTML checker read %d pages: %d messages", len(files), len(report.Messages))
}

// errorPages are the statuses of the page types that are error pages: a
// page route's, the app's error handler's, a page route's 400.
var errorPages = map[string]int{"not-found": 404, "unknown-page": 404, "bad-search": 400}

// checkAudit fails t for each goal page a misses.
func checkAudit(t *testing.T, a audit) {
	t.Helper()
	at := a.Name + " at " + strconv.Itoa(a.Width) + " px (" + a.Scheme + ")"
	want, ok := errorPages[a.Name]
	if !ok {
		want = 200
	}
	if a.Status != want {
		t.Errorf("%s: status %d, want %d", at, a.Status, want)
	}
	for _, v := range a.Violations {
		t.Errorf("%s: axe %s (%s): %s at %v", at, v.ID, v.Impact, v.Help, v.Nodes)
	}
	if a.ClientWidth != a.Width {
		t.Errorf("%s: laid out %d px wide (no viewport for the device's width?)", at, a.ClientWidth)
	}
	if a.ScrollWidth > a.ClientWidth {
		t.Errorf("%s: %d px wide in a window of %d: %v", at, a.ScrollWidth, a.ClientWidth, a.Wide)
	}
	for _, c := range a.Clipped {
		t.Errorf("%s: a table wider than its box, not in a focusable, named region that shows it scrolls: %s", at, c)
	}
	for _, s := range a.Split {
		t.Errorf("%s: a label apart from its field: %s", at, s)
	}
	if a.Title == "" || len(a.Description) < 20 {
		t.Errorf("%s: title %q, description %q", at, a.Title, a.Description)
	}
	for _, s := range a.Subresources {
		if s.Status != 200 {
			t.Errorf("%s: %s answered %d", at, s.URL, s.Status)
		}
	}
	if a.Status >= 400 && len(a.ConsoleErrors) == 1 && strings.Contains(a.ConsoleErrors[0], "status of "+strconv.Itoa(a.Status)) {
		a.ConsoleErrors = nil // the browser's word on the page's own status
	}
	if len(a.Failed) > 0 || len(a.ConsoleErrors) > 0 {
		t.Errorf("%s: failed loads %v, console errors %v", at, a.Failed, a.ConsoleErrors)
	}
	if a.Bytes > pageWeightBound || a.Bytes == 0 {
		t.Errorf("%s: %d bytes in %d requests, bound %d", at, a.Bytes, a.Requests, pageWeightBound)
	}
	t.Logf("%-12s %4d px: %6d bytes in %d requests", a.Name, a.Width, a.Bytes, a.Requests)
}

// pageAuditData is the demo's kind of data (make run: a year of history
// and more), smaller: 2,000 listings over 400 days.
func pageAuditData() seed.Options {
	o := edgetest.Seed(2000)
	o.Days = 400
	return o
}
