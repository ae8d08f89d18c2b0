package pages

import (
	"html"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/series"
)

// listingHandler answers GET /listings/{store}/{id}: the listing's HTML
// page (render.RenderListing), an html codec of the v1 read of the
// listing's document with its year of history (v1.API.YearRead), cached
// per view generation like every answer.
func (s *Pages) listingHandler() read.Handler {
	rd := *s.api.YearRead()
	rd.Route, rd.CacheControl, rd.Page = "/listings/:store/:id", pageCacheControl, answer.NoPage
	page := read.Codec[v1.History]{Name: "html", Type: fiber.MIMETextHTML, Encode: func(_ *fiber.Ctx, h *v1.History) (*answer.Answer, error) {
		d := listingData(document.NewListing(h.Listing, h.State.Figures), h.Snapshots, h.FirstDay, h.LastDay)
		d.Takeover = takeoverOf(h.State.Replica, h.Listing.Store, h.Listing.ID)
		d.About.AccessChanged = accessChanged(h.State.Replica, h.Listing.Store, h.Listing.ID)
		d.Badges = s.badgeSnippets(h.Listing)
		d.Versions = versionHistory(h.State.Replica, h.Listing.Store, h.Listing.ID)
		d.Lake = render.LakeOf(s.cfg.PublicURL, d.Store, d.ID)
		d.EmbedURL = "/embed/" + h.Listing.Store.String() + "/" + url.PathEscape(h.Listing.ID) + "/size.svg"
		d.Embed = `<img src="` + s.cfg.PublicURL + d.EmbedURL + `" alt="` + html.EscapeString(d.Name) + `: size, daily" width="420" height="220">`
		body, err := render.RenderListing(d)
		if err != nil {
			return nil, err
		}
		var buf [128]byte
		return pageAnswer(answer.NewKey(buf[:0], "/listings/:store/:id", 0), htmlType, body), nil
	}}
	return read.Serve(s.api.Env(), &rd, page)
}

// about is what the page of the listing of document d says of it beside
// its figures (render.About), but what changed in its access last.
func about(d document.Listing) render.About {
	a := render.About{Version: d.Version, FirstSeen: d.FirstSeen.UTC().Format(time.DateOnly), Permissions: d.Permissions, HostAccess: d.HostAccess,
		CategoryURL: "/charts/" + d.Store + chartQuery(figures.ChartTop, d.Category)}
	if d.Updated != nil {
		a.Updated = *d.Updated
	}
	if st, err := views.ParseStore(d.Store); err == nil {
		a.Manifest = st.ReadsManifests() && d.Kind != "theme"
		switch {
		case d.Kind == "theme" && st.ReadsManifests():
			a.NoPermissions = "none: a theme asks for no permission and reaches no site"
		case !st.ReadsManifests():
			a.NoPermissions = "not published: the " + d.Store + " store's listings carry no manifest the crawler reads (chrome's and edge's do)"
		}
	}
	for _, t := range d.Topics {
		a.Topics = append(a.Topics, render.Link{Label: t, URL: "/tags/" + url.PathEscape(t) + "/" + d.Store})
	}
	a.StoreURL = storePageURL(d.Store, d.ID)
	for _, c := range d.Charts {
		label, category := chartTitles[c.Chart]+" #"+strconv.Itoa(c.Position), ""
		if c.Category != nil {
			category = *c.Category
			label += " in " + category
		}
		a.Charts = append(a.Charts, render.Link{Label: label, URL: "/charts/" + d.Store + chartQuery(c.Chart, category)})
	}
	return a
}

// storePageURL is the listing's page in its store, where readers install
// it: "" for a store not known here.
func storePageURL(store, id string) string {
	switch store {
	case "chrome":
		return "https://chromewebstore.google.com/detail/" + url.PathEscape(id)
	case "edge":
		return "https://microsoftedge.microsoft.com/addons/detail/" + url.PathEscape(id)
	case "firefox":
		return "https://addons.mozilla.org/firefox/addon/" + url.PathEscape(id) + "/"
	case "apple":
		return "https://apps.apple.com/app/id" + url.PathEscape(id)
	case "googleplay":
		return "https://play.google.com/store/apps/details?" + url.Values{"id": {id}}.Encode()
	}
	return ""
}

// accessChanged says when listing (store, id)'s permissions or host
// access last changed in r's change log, and how; "" when they did not.
func accessChanged(r *replica.Replica, store views.Store, id string) string {
	log := r.Changes()
	for before := (changes.Pos{}); ; {
		cs, more := log.Listing(store, id, before, 64)
		for _, c := range cs {
			if c.Kind != changes.Permissions && c.Kind != changes.HostAccess {
				continue
			}
			what := "permissions"
			if c.Kind == changes.HostAccess {
				what = "host access"
			}
			var parts []string
			if a := c.Added(); len(a) > 0 {
				parts = append(parts, "added "+strings.Join(a, ", "))
			}
			if rm := c.Removed(); len(rm) > 0 {
				parts = append(parts, "removed "+strings.Join(rm, ", "))
			}
			return "The " + what + " last changed on " + time.Unix(c.At, 0).UTC().Format(time.DateOnly) + ": " + strings.Join(parts, "; ") + "."
		}
		if !more || len(cs) == 0 {
			return ""
		}
		before = changes.PosOf(cs[len(cs)-1])
	}
}

// takeoverOf returns the newest takeover of listing (store, id) in r's
// change log, as its page warns of it, or nil.
func takeoverOf(r *replica.Replica, store views.Store, id string) *render.Takeover {
	log := r.Changes()
	for before := (changes.Pos{}); ; {
		cs, more := log.Listing(store, id, before, 64)
		for _, c := range cs {
			if c.Kind != changes.Takeover {
				continue
			}
			t := &render.Takeover{Widened: time.Unix(c.At, 0).UTC().Format(time.DateOnly), From: c.Before, To: c.After,
				What: "a higher access level"}
			if dev, _, ok := log.Joins(c); ok {
				t.Sold = time.Unix(dev.At, 0).UTC().Format(time.DateOnly)
			}
			if added := c.Added(); len(added) > 0 {
				t.What = "added " + strings.Join(added, ", ")
			}
			return t
		}
		if !more || len(cs) == 0 {
			return nil
		}
		before = changes.PosOf(cs[len(cs)-1])
	}
}

// pageData is what the page of the listing of document d shows, with its
// daily snapshots from day from to day last (the data's newest day).
func listingData(d document.Listing, snaps []series.Snapshot, from, last views.Day) render.ListingPage {
	doc := "/api/v1/listings/" + d.Store + "/" + url.PathEscape(d.ID)
	out := render.ListingPage{Store: d.Store, ID: d.ID, Name: d.Name, Developer: d.Developer, Category: d.Category, SizeMeasure: d.SizeMeasure,
		Summary: d.Description, StarTable: render.StarsTable(d.Stars), DeveloperURL: DeveloperURL(d.Store, d.Developer),
		Live: d.Live, DocumentURL: doc, HistoryURL: doc + "/history", HistoryCSVURL: doc + "/history.csv", Cadence: cadence(snaps),
		ChangesFeedURL: "/listings/" + d.Store + "/" + url.PathEscape(d.ID) + "/changes.atom", ChangesURL: "/listings/" + d.Store + "/" + url.PathEscape(d.ID) + "/changes",
	}
	if s, err := views.ParseStore(d.Store); err == nil && s.CollectsReviews() { // no dead end where none are kept
		out.ReviewsURL = "/listings/" + d.Store + "/" + url.PathEscape(d.ID) + "/reviews"
	}
	if out.Name == "" {
		out.Name = d.ID
	}
	if d.DelistedAt != nil {
		out.Delisted = d.DelistedAt.UTC().Format(time.DateOnly)
	}
	out.About = about(d)
	out.CompareURL = addURL([]string{d.Store + ":" + d.ID})
	why := nullReasons{d: d, last: last}
	num := func(def, label string, v *int64, null string) {
		out.Figures = append(out.Figures, render.IntFigure(def, v).Labelled(label, null))
	}
	rank := func(def, label string, v *int, null string) {
		if v == nil {
			num(def, label, nil, null)
			return
		}
		n := int64(*v)
		num(def, label, &n, "")
	}
	// Size is the usage figure on every store but apple (where it is the
	// ratings count, and there is no usage): one row says it.
	num("size", "Size ("+d.SizeMeasure+")", d.Size, why.size())
	if d.Store == views.Firefox.String() {
		num("weeklyDownloads", "Weekly downloads", d.WeeklyDownloads, why.read("no weekly downloads in its newest reading"))
	}
	out.Figures = append(out.Figures, render.RatingFigure("rating", d.Rating).Labelled("Rating", why.read("no ratings yet")))
	num("ratingCount", "Ratings", d.RatingCount, why.read("the store gives no count in its newest reading"))
	rank("storeRank", "Rank in the store", d.StoreRank, why.rank())
	rank("categoryRank", "Rank in its category", d.CategoryRank, why.rank())
	rank("rankClimb7d", "Rank climb, 7 days", d.RankClimb7d, why.climb())
	for i, w := range []struct {
		label string
		c     *document.Change
	}{{"1 day", d.Growth.D1}, {"7 days", d.Growth.D7}, {"30 days", d.Growth.D30}, {"365 days", d.Growth.D365}} {
		f := render.ChangeFigure("growth", w.c.Amount())
		if w.c != nil && w.c.Percent != nil {
			f.Text += " (" + render.SignedPercent(*w.c.Percent) + ")"
		}
		if w.c == nil {
			f = f.Labelled("", why.growth(views.Window(i), out.Cadence))
		}
		f.Label = "Growth, " + w.label
		out.Figures = append(out.Figures, f)
	}
	read := render.Figure{Definition: "readAt", Label: "Read at", Why: "never read"}
	if d.ReadAt != nil {
		read.Raw, read.Text, read.Why = d.ReadAt.Format(time.RFC3339), d.ReadAt.Format("2006-01-02 15:04 UTC"), ""
	}
	out.Figures = append(out.Figures, read)
	out.Points, out.Ranks, out.CategoryRanks = dailyPoints(snaps, from, last)
	out.Ratings = dailyRatings(snaps, out.Points)
	var before *render.Point
	for i, p := range out.Points {
		if p.Has && p.Jump && before != nil {
			out.Jumps = append(out.Jumps, render.Jump{Day: p.Day, Before: render.Int(before.Size), After: render.Int(p.Size)})
		}
		if p.Has {
			before = &out.Points[i]
		}
	}
	return out
}

// dailyRatings are the daily average ratings of snaps in hundredths of a
// star, on the days of points; nil when no day has one.
func dailyRatings(snaps []series.Snapshot, points []render.Point) []render.Point {
	byDay := make(map[string]int64, len(snaps))
	for _, sn := range snaps {
		if sn.Rating != nil {
			byDay[sn.Day] = int64(math.Round(*sn.Rating * 100))
		}
	}
	if len(byDay) == 0 {
		return nil
	}
	out := make([]render.Point, len(points))
	for i, p := range points {
		v, ok := byDay[p.Day]
		out[i] = render.Point{Day: p.Day, Size: v, Has: ok}
	}
	return out
}

// dailyPoints returns the days of the size chart, from the first day
// with a size from day from on to day last (a listing first read three
// weeks ago gets three weeks of chart, not a line squeezed against the
// right edge; the whole span when none has one), and the store's rank on
// the same days (none when no day has one).
func dailyPoints(snaps []series.Snapshot, from, last views.Day) (points, ranks, catRanks []render.Point) {
	byDay := make(map[string]int64, len(snaps))
	rankByDay := make(map[string]int64, len(snaps))
	catByDay := make(map[string]int64, len(snaps))
	jumps := map[string]bool{}
	for _, sn := range snaps {
		if sn.Size != nil {
			byDay[sn.Day] = *sn.Size
		}
		if slices.Contains(sn.Flags, series.FlagJump) {
			jumps[sn.Day] = true
		}
		if sn.StoreRank != nil {
			rankByDay[sn.Day] = *sn.StoreRank
		}
		if sn.CategoryRank != nil {
			catByDay[sn.Day] = *sn.CategoryRank
		}
	}
	for day := from; day <= last; day++ {
		if _, ok := byDay[day.String()]; ok {
			from = day
			break
		}
	}
	for day := from; day <= last; day++ {
		v, ok := byDay[day.String()]
		points = append(points, render.Point{Day: day.String(), Size: v, Has: ok, Jump: ok && jumps[day.String()]})
	}
	return points, onDays(points, rankByDay), onDays(points, catByDay)
}

// onDays returns byDay's values on the days of points; none when byDay
// is empty.
func onDays(points []render.Point, byDay map[string]int64) []render.Point {
	if len(byDay) == 0 {
		return nil
	}
	out := make([]render.Point, 0, len(points))
	for _, p := range points {
		r, ok := byDay[p.Day]
		out = append(out, render.Point{Day: p.Day, Size: r, Has: ok})
	}
	return out
}

// cadence says how often a listing is read, from its days of the year:
// the median of its crawls a day and of the days between readings.
func cadence(snaps []series.Snapshot) string {
	var crawls, gaps []int
	for i, sn := range snaps {
		crawls = append(crawls, sn.Crawls)
		if i > 0 {
			a, errA := time.Parse(time.DateOnly, snaps[i-1].Day)
			b, errB := time.Parse(time.DateOnly, sn.Day)
			if errA == nil && errB == nil {
				gaps = append(gaps, int(b.Sub(a).Hours()/24))
			}
		}
	}
	if len(snaps) < 3 {
		return ""
	}
	slices.Sort(crawls)
	slices.Sort(gaps)
	switch c, g := crawls[len(crawls)/2], gaps[len(gaps)/2]; {
	case c > 1:
		return "about " + strconv.Itoa(c) + " times a day"
	case g <= 1:
		return "about once a day"
	default:
		return "about every " + strconv.Itoa(g) + " days"
	}
}
