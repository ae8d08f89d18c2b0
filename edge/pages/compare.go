package pages

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// getComparePage answers GET /compare?listings=&days=: the comparison of
// /api/v1/compare as a page, from the same query, cached per view
// generation under the same key of its listings and days (the page's
// links are written from them, never from the query string as sent).
// With fewer than two listings it is the form that builds one, not an
// error: the site's menu and a listing's "compare with" open it so.
func (s *Pages) getComparePage(c *fiber.Ctx) (answer.Reply, error) {
	if refs := compareRefs(c.Query("listings")); len(refs) < 2 {
		return s.compareForm(c, refs)
	}
	a, err := s.api.Compare(c, "/compare", func(k answer.Key) answer.Key { return k }, func(out *document.Comparison) (*answer.Answer, error) {
		body, err := comparePage(out)
		if err != nil {
			return nil, err
		}
		return pageAnswer(answer.NewKey(nil, "/compare", 0), htmlType, body), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// compareForm answers the form that builds a comparison, holding refs
// (none or one listing) and c's days: cached per view generation when it
// holds none or a listing there is (as store:id); a listing there is not
// is a 404 page naming it (never cached, so that the listings a client
// makes up cost no answer of their own in the cache).
func (s *Pages) compareForm(c *fiber.Ctx, refs []string) (answer.Reply, error) {
	st, err := s.api.Current()
	if err != nil {
		return answer.Reply{}, err
	}
	days := c.Query("days")
	if !slices.Contains(compareDays, atoiOr(days, 0)) {
		days = "90"
	}
	form := func() ([]byte, error) {
		return render.RenderCompare(render.ComparePage{Listings: strings.Join(refs, ","), DaysOptions: daysOptions(days), AddURL: addURL(refs)})
	}
	if len(refs) == 1 {
		// A listing there is not is a 404 naming it (and one not written
		// store:id a 400), as in a comparison of two: never a form that
		// silently drops it.
		name, id, ok := strings.Cut(refs[0], ":")
		store, err := views.ParseStore(name)
		if !ok || err != nil || id == "" {
			return answer.Reply{}, problem.Newf(http.StatusBadRequest, "listings: %.80q is not store:id; the store is one of chrome, edge, firefox, apple, googleplay.", refs[0]).
				ForReaders(fmt.Sprintf("%.80q names no listing of chrome, edge, firefox, apple or googleplay.", refs[0]))
		}
		if l := st.Replica.Lookup(store, id); l == nil || !l.Crawled() {
			return answer.Reply{}, problem.Newf(http.StatusNotFound, "There is no listing %.80q in store %s (in listings).", id, store).
				ForReaders(fmt.Sprintf("There is no listing %.80q in the %s store to compare. Search for it by its name or developer.", id, store))
		}
		refs[0] = store.String() + ":" + id
	}
	var buf [256]byte
	return s.cached(answer.NewKey(buf[:0], "/compare form", st.Replica.Info().Generation).Str("listings", strings.Join(refs, ",")).Str("days", days), htmlType, form)
}

// atoiOr is s as a whole number, or def.
func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return def
}

// compareRefs returns the listings a comparison's parameter names
// (store:id, comma-separated), blanks left out.
func compareRefs(raw string) []string {
	var out []string
	for _, p := range strings.Split(raw, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// compareDays are the windows the comparison's form offers.
var compareDays = []int{7, 30, 90, 180, 365, 730}

// daysOptions are the form's windows, days (as given) selected, or 90.
func daysOptions(days string) []render.Option {
	if days == "" {
		days = "90"
	}
	out := make([]render.Option, len(compareDays))
	for i, d := range compareDays {
		v := strconv.Itoa(d)
		out[i] = render.Option{Value: v, Label: v + " days", Selected: v == days}
	}
	return out
}

// addURL is the listings' browser that adds to the comparison of refs.
func addURL(refs []string) string {
	if len(refs) == 0 {
		return "/listings"
	}
	return "/listings?" + url.Values{"compare": {strings.Join(refs, ",")}}.Encode()
}

// compareURL is the comparison of refs over days.
func compareURL(refs []string, days int) string {
	return "/compare?" + url.Values{"listings": {strings.Join(refs, ",")}, "days": {strconv.Itoa(days)}}.Encode()
}

// comparePage is the page of the comparison doc; its JSON and CSV
// twins are linked by its listings and days.
func comparePage(doc *document.Comparison) ([]byte, error) {
	refs := make([]string, len(doc.Listings))
	for i, l := range doc.Listings {
		refs[i] = l.Store + ":" + l.ID
	}
	twin := strings.TrimPrefix(compareURL(refs, doc.Days), "/compare")
	d := render.ComparePage{From: doc.From, To: doc.To, Days: doc.Days, Dates: doc.Dates, JSONURL: "/api/v1/compare" + twin, CSVURL: "/api/v1/compare.csv" + twin,
		DaysOptions: daysOptions(strconv.Itoa(doc.Days))}
	d.Listings, d.AddURL = strings.Join(refs, ","), addURL(refs)
	for i, l := range doc.Listings {
		row := render.CompareRow{Number: i + 1, Name: l.Name, Store: l.Store, Measure: l.SizeMeasure, URL: "/listings/" + l.Store + "/" + url.PathEscape(l.ID),
			Size: l.Size, RemoveURL: compareURL(slices.Delete(slices.Clone(refs), i, i+1), doc.Days)}
		if row.Name == "" {
			row.Name = l.ID
		}
		first, last := render.Figure{Definition: "size.first"}, render.Figure{Definition: "size.last"}
		for _, v := range l.Size {
			if v != nil {
				if first.Raw == "" {
					first.Raw, first.Text = strconv.FormatInt(*v, 10), render.Int(*v)
				}
				last.Raw, last.Text = strconv.FormatInt(*v, 10), render.Int(*v)
			}
		}
		row.First, row.Last = first, last
		// Signed as on every other page (render.Signed, render.SignedPercent):
		// "+" for a gain, U+2212 for a loss.
		row.Change, row.Percent = render.Figure{Definition: "growth.change", Why: "fewer than two days with a size"}, render.Figure{Definition: "growth.percent"}
		if g := l.Growth; g != nil {
			row.Change = render.ChangeFigure("growth.change", &g.Change)
			row.Percent = render.PercentFigure("growth.percent", g.Percent)
		}
		d.Rows = append(d.Rows, row)
	}
	return render.RenderCompare(d)
}
