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
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
)

// compareHandler answers GET /compare?listings=&days=: the v1
// comparison read as a page (and its CSV and NDJSON files), cached per
// view generation under the read's key of its listings and days (the
// page's links are written from them, never from the query string as
// sent). With fewer than two listings it is the form that builds one,
// not an error: the site's menu and a listing's "compare with" open it
// so; the page's parse reads the form, and no comparison is read for it.
func (s *Pages) compareHandler() read.Handler {
	base := s.api.CompareRead()
	rd := *base
	rd.Route, rd.CacheControl, rd.Page = "/compare", pageCacheControl, answer.NoPage
	rd.Parse = func(c *fiber.Ctx, st *served.State, n read.Needs) (v1.CompareParams, error) {
		if refs := compareRefs(c.Query("listings")); len(refs) < 2 {
			form, err := compareForm(c, st, refs)
			return v1.CompareParams{Form: form}, err
		}
		return base.Parse(c, st, n)
	}
	rd.Key = func(k answer.Key, p *v1.CompareParams) answer.Key {
		if p.Form != nil {
			return k.Str("form", strings.Join(p.Form.Refs, ",")).Str("days", p.Form.Days)
		}
		return base.Key(k, p)
	}
	rd.Run = func(c *fiber.Ctx, st *served.State, p *v1.CompareParams, n read.Needs) (*v1.Compared, error) {
		if p.Form != nil {
			return &v1.Compared{Form: p.Form}, nil
		}
		return base.Run(c, st, p, n)
	}
	page := read.Codec[v1.Compared]{Name: "html", Type: fiber.MIMETextHTML, Encode: func(_ *fiber.Ctx, out *v1.Compared) (*answer.Answer, error) {
		var body []byte
		var err error
		if f := out.Form; f != nil {
			body, err = render.RenderCompare(render.ComparePage{Listings: strings.Join(f.Refs, ","), DaysOptions: daysOptions(f.Days), AddURL: addURL(f.Refs)})
		} else {
			body, err = comparePage(&out.Comparison)
		}
		if err != nil {
			return nil, err
		}
		return pageAnswer(answer.NewKey(nil, "/compare", 0), htmlType, body), nil
	}}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[v1.Compared]{page}, v1.CompareFiles()...)...)
}

// compareForm reads the form that builds a comparison, holding refs
// (none or one listing) and c's days: a listing there is not is a 404
// naming it (and one not written store:id a 400), as in a comparison of
// two: never a form that silently drops it.
func compareForm(c *fiber.Ctx, st *served.State, refs []string) (*v1.CompareForm, error) {
	days := c.Query("days")
	if !slices.Contains(compareDays, atoiOr(days, 0)) {
		days = "90"
	}
	if len(refs) == 1 {
		name, id, ok := strings.Cut(refs[0], ":")
		store, err := views.ParseStore(name)
		if !ok || err != nil || id == "" {
			return nil, problem.Newf(http.StatusBadRequest, "listings: %.80q is not store:id; the store is one of chrome, edge, firefox, apple, googleplay.", refs[0]).
				ForReaders(fmt.Sprintf("%.80q names no listing of chrome, edge, firefox, apple or googleplay.", refs[0]))
		}
		if l := st.Replica.Lookup(store, id); l == nil || !l.Crawled() {
			return nil, problem.Newf(http.StatusNotFound, "There is no listing %.80q in store %s (in listings).", id, store).
				ForReaders(fmt.Sprintf("There is no listing %.80q in the %s store to compare. Search for it by its name or developer.", id, store))
		}
		refs[0] = store.String() + ":" + id
	}
	return &v1.CompareForm{Refs: refs, Days: days}, nil
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
