package edge_test

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

type eventJSON struct {
	EventID, Store, ID, Kind string
	At                       time.Time
	Name, Before, After      *string
	Added, Removed           []string
	Widened                  *bool
	Joins                    []string
}

// key is what the test compares of an event: everything but its name and
// eventId.
func (e eventJSON) key() string {
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return strconv.Quote(*p)
	}
	w := "null"
	if e.Widened != nil {
		w = strconv.FormatBool(*e.Widened)
	}
	return strings.Join([]string{e.At.UTC().Format(time.RFC3339), e.Store, e.ID, e.Kind, s(e.Before), s(e.After),
		strings.Join(e.Added, " "), strings.Join(e.Removed, " "), w}, "|")
}

type eventPageJSON struct {
	Order        string
	Window       struct{ From, To time.Time }
	Events       []eventJSON
	NextCursor   *string
	LatestCursor *string
}

type changeLogJSON struct {
	Store, ID  string
	Changes    []eventJSON
	NextCursor *string
}

// expectedChanges diffs the seeded metadata versions of o by hand (each
// listing's versions in crawl order), independently of the edge's load.
func expectedChanges(o seed.Options) []changes.Change {
	rows := seed.Generate(o).Listings
	slices.SortStableFunc(rows, func(a, b analytics.ListingRow) int {
		return cmp.Or(cmp.Compare(a.Store, b.Store), cmp.Compare(a.ID, b.ID), a.CrawledAt.Compare(b.CrawledAt))
	})
	meta := func(l *analytics.ListingRow) changes.Meta {
		m := changes.Meta{At: l.CrawledAt.Unix(), Version: l.Version, Developer: l.Developer, Name: l.Name, Category: l.Category,
			Featured: l.Featured, ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel, Permissions: l.Permissions, HostAccess: l.HostAccess}
		if l.DelistedAt != nil {
			m.Delisted = l.DelistedAt.Unix()
		}
		return m
	}
	var out []changes.Change
	for i := 1; i < len(rows); i++ {
		a, b := &rows[i-1], &rows[i]
		if a.Store == b.Store && a.ID == b.ID && a.CrawledAt.Before(b.CrawledAt) {
			prev, next := meta(a), meta(b)
			out = changes.Diff(out, b.Store, b.ID, &prev, &next)
		}
	}
	// With the takeovers they hold, derived by the rule (its own tests
	// are in package changes).
	log := changes.NewLog(out, 0)
	all := make([]changes.Change, log.Len())
	for i := range all {
		all[i] = *log.At(i)
	}
	return all
}

func changeKey(c *changes.Change) string {
	opt := func(s string, kind bool) string {
		if !kind {
			return "null"
		}
		return strconv.Quote(s)
	}
	set := c.Kind == changes.Permissions || c.Kind == changes.HostAccess
	w := "null"
	if c.Kind == changes.HostAccess {
		w = strconv.FormatBool(c.Widened)
	}
	return strings.Join([]string{time.Unix(c.At, 0).UTC().Format(time.RFC3339), c.Store.String(), c.ID, c.Kind.String(),
		opt(c.Before, !set && c.Before != ""), opt(c.After, !set && c.After != ""),
		strings.Join(c.Added(), " "), strings.Join(c.Removed(), " "), w}, "|")
}

// feed pages through url (newest first with cursor, or forward with
// since) and returns every event.
func feed(t *testing.T, h *harness, q string, forward bool) []eventJSON {
	t.Helper()
	var out []eventJSON
	next := ""
	if forward {
		next = "2000-01-01" // the beginning
	}
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatal("the feed does not end")
		}
		u := h.Base + "/api/v1/events?" + q
		if next != "" {
			if forward {
				u += "&since=" + url.QueryEscape(next)
			} else {
				u += "&cursor=" + url.QueryEscape(next)
			}
		}
		p := getOK[eventPageJSON](t, u)
		out = append(out, p.Events...)
		if forward && len(p.Events) == 0 || !forward && p.NextCursor == nil {
			return out
		}
		next = *p.NextCursor
	}
}

// TestChangelogAndEventFeed checks the changelog and the feed over HTTP
// against the seeded versions diffed by hand: the whole feed forward and
// backward, its filters, each listing's changelog page by page; then a
// new version of two listings (a new owner who adds tabs and every host;
// a delisting), the incremental refresh, and the feed from the newest
// event before it giving exactly those, once.
func TestChangelogAndEventFeed(t *testing.T) {
	cfg := seeded(t)
	cold := start(t, cfg) // never loaded
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	want := expectedChanges(edgetest.Seed(800))
	if len(want) < 50 {
		t.Fatalf("only %d changes seeded", len(want))
	}
	wantKeys := make([]string, len(want))
	for i := range want {
		wantKeys[i] = changeKey(&want[i])
	}
	keys := func(es []eventJSON) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.key()
		}
		return out
	}

	fwd := feed(t, h, "limit=97&kind=", true)
	if got := keys(fwd); !slices.Equal(got, wantKeys) {
		i := firstDiff(got, wantKeys)
		t.Fatalf("forward feed: %d events, want %d; first difference at %d:\n%s\nwant\n%s", len(got), len(wantKeys), i, strings.Join(got[i:min(i+5, len(got))], "\n"), strings.Join(wantKeys[i:min(i+5, len(wantKeys))], "\n"))
	}
	back := feed(t, h, "limit=101", false)
	slices.Reverse(back)
	if got := keys(back); !slices.Equal(got, wantKeys) {
		t.Fatalf("newest-first feed: %d events, want %d", len(got), len(wantKeys))
	}
	st := h.State.Load()
	for _, e := range fwd {
		s, _ := views.ParseStore(e.Store)
		if l := st.Replica.Lookup(s, e.ID); l == nil || e.Name == nil || *e.Name != l.Name {
			t.Fatalf("%s/%s: name %v, want the listing's", e.Store, e.ID, e.Name)
		}
	}

	// Filters: a subset, in the same order.
	filtered := func(keep func(c *changes.Change) bool) []string {
		var out []string
		for i := range want {
			if keep(&want[i]) {
				out = append(out, wantKeys[i])
			}
		}
		return out
	}
	perm := ""
	for i := range want {
		if want[i].Kind == changes.Permissions && len(want[i].Added()) > 0 {
			perm = want[i].Added()[0]
			break
		}
	}
	for q, keep := range map[string]func(c *changes.Change) bool{
		"store=chrome,edge&kind=version,name": func(c *changes.Change) bool {
			return (c.Store == views.Chrome || c.Store == views.Edge) && (c.Kind == changes.Version || c.Kind == changes.Name)
		},
		"kind=developer,delisted,relisted,featured": func(c *changes.Change) bool {
			return c.Kind == changes.Developer || c.Kind == changes.Delisted || c.Kind == changes.Relisted || c.Kind == changes.Featured
		},
		"store=apple": func(c *changes.Change) bool { return c.Store == views.Apple },
		"permission=" + url.QueryEscape(perm): func(c *changes.Change) bool {
			return c.Kind == changes.Permissions && slices.Contains(c.Added(), perm)
		},
	} {
		if got, w := keys(feed(t, h, q+"&limit=7", true)), filtered(keep); !slices.Equal(got, w) || len(w) == 0 && q != "store=apple" {
			t.Errorf("%s: %d events, want %d", q, len(got), len(w))
		}
	}

	// Each listing's changelog, newest first, a page of two at a time.
	byListing := map[string][]string{}
	for i := range want {
		k := want[i].Store.String() + "/" + want[i].ID
		byListing[k] = append([]string{wantKeys[i]}, byListing[k]...)
	}
	checked := 0
	for k, w := range byListing {
		if checked == 25 {
			break
		}
		checked++
		var got []string
		cursor := ""
		for pages := 0; pages < 50; pages++ {
			p := getOK[changeLogJSON](t, h.Base+"/api/v1/listings/"+k+"/changes?limit=2&cursor="+url.QueryEscape(cursor))
			got = append(got, keys(p.Changes)...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if !slices.Equal(got, w) {
			t.Fatalf("%s: changelog %v, want %v", k, got, w)
		}
	}
	// A listing without changes has an empty changelog.
	for _, l := range st.Replica.All() {
		if _, ok := byListing[l.Store.String()+"/"+l.ID]; !ok && l.Crawled() {
			p := getOK[changeLogJSON](t, h.Base+"/api/v1/listings/"+l.Store.String()+"/"+url.PathEscape(l.ID)+"/changes")
			if len(p.Changes) != 0 || p.NextCursor != nil {
				t.Fatalf("%s/%s: %+v, want no change", l.Store, l.ID, p)
			}
			break
		}
	}

	// New versions, and the refresh.
	latest := getOK[eventPageJSON](t, h.Base+"/api/v1/events?limit=1").LatestCursor
	var owned, gone views.Listing
	for _, l := range st.Replica.OfStore(views.Chrome) {
		if l.Live() && l.ManifestVersion != 0 && !slices.ContainsFunc(l.HostAccess, views.HostReachesAll) && !slices.Contains(l.Permissions, "tabs") {
			if owned.ID == "" {
				owned = l
			} else if gone.ID == "" {
				gone = l
			}
		}
	}
	if gone.ID == "" {
		t.Fatal("no chrome listings to change")
	}
	now := st.Replica.Info().ReadingsMark.Add(time.Hour).Truncate(time.Second)
	row := func(l views.Listing) analytics.ListingRow {
		return analytics.ListingRow{Store: l.Store, ID: l.ID, CrawledAt: now, Name: l.Name, Developer: l.Developer, Category: l.Category,
			Kind: l.Kind, Description: l.Description, Icon: l.Icon, Version: l.Version, FirstSeen: time.Unix(l.FirstSeen, 0),
			Featured: l.Featured, ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel,
			Permissions: slices.Clone(l.Permissions), HostAccess: slices.Clone(l.HostAccess), Topics: l.Topics}
	}
	a, b := row(owned), row(gone)
	a.Version, a.Developer = a.Version+".1", "New Owner Ltd"
	a.Permissions = append(a.Permissions, "tabs")
	a.HostAccess = append(a.HostAccess, "<all_urls>")
	delisted := now.Add(-time.Minute)
	b.DelistedAt = &delisted
	cfg.Add(t, []analytics.ListingRow{a, b}, nil)
	if err := h.Jobs.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	page := getOK[eventPageJSON](t, h.Base+"/api/v1/events?since="+url.QueryEscape(*latest))
	at := now.Format(time.RFC3339)
	yes := true
	wantNew := []string{
		eventJSON{At: now, Store: "chrome", ID: a.ID, Kind: "version", Before: &owned.Version, After: &a.Version}.key(),
		eventJSON{At: now, Store: "chrome", ID: a.ID, Kind: "permissions", Added: []string{"tabs"}}.key(),
		eventJSON{At: now, Store: "chrome", ID: a.ID, Kind: "hostAccess", Added: []string{"<all_urls>"}, Widened: &yes}.key(),
		eventJSON{At: now, Store: "chrome", ID: a.ID, Kind: "developer", Before: &owned.Developer, After: &a.Developer}.key(),
		// A new owner who asks for more in the same crawl: a takeover.
		eventJSON{At: now, Store: "chrome", ID: a.ID, Kind: "takeover", Before: &owned.Developer, After: &a.Developer,
			Added: []string{"tabs", "<all_urls>"}}.key(),
	}
	gk := eventJSON{At: now, Store: "chrome", ID: b.ID, Kind: "delisted", After: ptr(delisted.UTC().Format(time.RFC3339))}.key()
	if a.ID < b.ID {
		wantNew = append(wantNew, gk)
	} else {
		wantNew = append([]string{gk}, wantNew...)
	}
	if got := keys(page.Events); !slices.Equal(got, wantNew) {
		t.Fatalf("since the newest event before the refresh (%s):\n%s\nwant\n%s", at, strings.Join(got, "\n"), strings.Join(wantNew, "\n"))
	}
	// A time after every event: nothing, and a nextCursor to ask again with.
	quiet := getOK[eventPageJSON](t, h.Base+"/api/v1/events?since=2100-01-01")
	if len(quiet.Events) != 0 || quiet.NextCursor == nil || *quiet.NextCursor != "2100-01-01" {
		t.Fatalf("since a time after every event: %+v", quiet)
	}
	getOK[eventPageJSON](t, h.Base+"/api/v1/events?since="+url.QueryEscape(*quiet.NextCursor))
	again := getOK[eventPageJSON](t, h.Base+"/api/v1/events?since="+url.QueryEscape(*page.NextCursor))
	if len(again.Events) != 0 || *again.NextCursor != *page.NextCursor {
		t.Fatalf("after the newest event: %+v", again)
	}
	watch := getOK[eventPageJSON](t, h.Base+"/api/v1/events?kind=developer&since="+url.QueryEscape(*latest))
	if len(watch.Events) != 1 || watch.Events[0].ID != a.ID || *watch.LatestCursor != *page.NextCursor {
		t.Fatalf("developer changes since: %+v", watch)
	}
	// The takeover joins the change of developer and the widening (the
	// crawl's first: permissions), by their eventIds.
	ids := map[string]string{}
	for _, e := range page.Events {
		ids[e.Kind+"/"+e.ID] = e.EventID
	}
	takeovers := getOK[eventPageJSON](t, h.Base+"/api/v1/events?kind=takeover&since="+url.QueryEscape(*latest))
	if len(takeovers.Events) != 1 || !slices.Equal(takeovers.Events[0].Joins, []string{ids["developer/"+a.ID], ids["permissions/"+a.ID]}) {
		t.Fatalf("takeovers since: %+v, want one joining %s and %s", takeovers.Events, ids["developer/"+a.ID], ids["permissions/"+a.ID])
	}
	for _, e := range page.Events {
		if (e.Kind == "takeover") != (e.Joins != nil) {
			t.Errorf("%s event with joins %v", e.Kind, e.Joins)
		}
	}
	log := getOK[changeLogJSON](t, h.Base+"/api/v1/listings/chrome/"+url.PathEscape(a.ID)+"/changes?limit=5")
	if len(log.Changes) != 5 || log.Changes[0].At != now || log.Changes[0].Kind != "takeover" || log.Changes[4].Kind != "version" {
		t.Fatalf("the changelog after the refresh: %+v", log.Changes)
	}
	pageBody := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(a.ID)).body)
	if !strings.Contains(pageBody, `class="alert"`) || !strings.Contains(pageBody, "New Owner Ltd") {
		t.Errorf("the listing's page does not warn of its takeover")
	}
	if store := string(get(t, "GET", h.Base+"/stores/chrome").body); !strings.Contains(store, `id="takeovers"`) || !strings.Contains(store, `class="warn"`) {
		t.Errorf("the store's page does not list its takeover")
	}
	csv := get(t, "GET", h.Base+"/api/v1/listings/chrome/"+url.PathEscape(a.ID)+"/changes.csv?limit=4")
	if csv.status != 200 || !strings.Contains(string(csv.body), "hostAccess,,,<all_urls>,,true,") || !strings.HasPrefix(csv.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("changes.csv: %d %s", csv.status, csv.body)
	}

	for _, q := range []string{"/events?since=nonsense", "/events?kind=Version", "/events?store=safari", "/events?limit=1001",
		"/events?since=2026-01-01&cursor=" + url.QueryEscape(*latest), "/events?permission=tabs&kind=name", "/events?cursor=nonsense",
		"/listings/chrome/" + url.PathEscape(a.ID) + "/changes?cursor=" + url.QueryEscape(*latest),
		"/events?store=" + strings.Repeat("chrome,", 17) + "chrome"} {
		problem(t, get(t, "GET", h.Base+"/api/v1"+q), 400)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/listings/chrome/no-such-listing/changes"), 404)
	problem(t, get(t, "GET", cold.Base+"/api/v1/events"), 503)
}

func ptr[T any](v T) *T { return &v }

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
