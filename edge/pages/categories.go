package pages

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
)

// figuresPage is the handler of the page at route of rd, a read of the
// published figures: rd as the page reads it (public as every page is,
// keyed by the page's route, no page link of its own), answered as the
// page html writes, or in one of the files of the same read (format=,
// or an Accept that prefers them).
func figuresPage[P, T any](s *Pages, rd read.Read[P, T], route string, html func(v *T) ([]byte, error), files ...read.Codec[T]) read.Handler {
	rd.Route, rd.CacheControl, rd.Page = route, pageCacheControl, answer.NoPage
	page := read.Codec[T]{Name: "html", Type: fiber.MIMETextHTML, Encode: func(_ *fiber.Ctx, v *T) (*answer.Answer, error) {
		body, err := html(v)
		if err != nil {
			return nil, err
		}
		a := pageAnswer(answer.NewKey(nil, route, 0), htmlType, body)
		if t, ok := any(v).(v1.Transient); ok && t.Transient() {
			a.NoStore = true // a page missing part of its read is asked again
		}
		return a, nil
	}}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[T]{page}, files...)...)
}

// categoriesHandler answers GET /categories/{store}: the store's
// categories with their live listings, each linking to its chart; or
// their files.
func (s *Pages) categoriesHandler() read.Handler {
	return figuresPage(s, *v1.CategoriesRead(), "/categories/:store", categoriesHTML, v1.CategoriesFiles()...)
}

// categorySortLabels are the orders of the categories' page, by the
// read's sort names.
var categorySortLabels = map[string]string{"name": "name", "listings": "live listings", "size": "total size", "growth7d": "growth over 7 days", "growth30d": "growth over 30 days"}

// categoriesHTML is the page of a store's categories v: each category
// with its live listings, total size and growth over 7 and 30 days
// (sums of its listings'), each heading a link that sorts by it, each
// name linking to the category's page.
func categoriesHTML(v *v1.Categories) ([]byte, error) {
	store := v.Store
	st, _ := views.ParseStore(store)
	sortURL := func(by string) string { return "/categories/" + store + "?sort=" + by }
	l := render.List{Caption: "Categories of " + store + ", by " + categorySortLabels[v.Sort], Empty: "No category has a live listing.",
		Name: render.Column{Label: "Category", SortURL: sortURL("name")}}
	if v.Sort == "name" {
		l.Name.Sorted = "ascending"
	}
	for _, c := range []struct{ label, def, sort string }{{"Live listings", "live", "listings"}, {"Total size (" + st.SizeMeasure() + ")", "totalSize", "size"},
		{"Growth, 7 days", "growth", "growth7d"}, {"Growth, 30 days", "growth", "growth30d"}} {
		col := render.Column{Label: c.label, Definition: c.def, SortURL: sortURL(c.sort)}
		if v.Sort == c.sort {
			col.Sorted = "descending"
		}
		l.Columns = append(l.Columns, col)
	}
	for i, cat := range v.Categories {
		n := int64(cat.Listings)
		p := "categories." + strconv.Itoa(i) + "."
		l.Entries = append(l.Entries, render.Entry{Position: i + 1, Name: cat.Name, URL: CategoryURL(store, cat.Name),
			Figures: []render.Figure{render.IntFigure(p+"listings", &n), render.IntFigure(p+"totalSize", &cat.TotalSize),
				render.ChangeFigure(p+"growth7d", cat.Growth7d), render.ChangeFigure(p+"growth30d", cat.Growth30d)}})
	}
	json := "/api/v1/categories/" + store
	if v.Sort != "name" {
		json += "?sort=" + v.Sort
	}
	return render.RenderTag(render.TagPage{Title: "Categories of " + store,
		Intro: "Every category of a live listing of the " + store + " store: its live listings, their total size, and its growth (the sum of its listings' growth over 7 and 30 days, each up to the listing's newest reading); a name links to the category's page (its weekly totals, largest and fastest growing listings), a heading sorts by it.",
		List:  l, JSONURL: json, FileRows: "every category"})
}

// permissionsHandler answers GET /permissions: how many live listings of
// chrome and edge ask for each permission, most asked first, each in
// words where it is a common one and linking the listings that ask for
// it and the changes that added it; or their files.
func (s *Pages) permissionsHandler() read.Handler {
	return figuresPage(s, *s.api.PermissionsRead(), "/permissions", permissionsHTML, v1.PermissionsFiles()...)
}

// permissionsHTML is the page of the permissions' counts v.
func permissionsHTML(v *v1.Permissions) ([]byte, error) {
	l := render.List{Caption: "Permissions of live chrome and edge listings, most asked first, and the change of each count from " + v.ChangeFrom + " to " + v.ChangeTo, Empty: "No live listing asks for a permission.", Name: render.Column{Label: "Permission"},
		Columns: []render.Column{{Label: "Live listings", Definition: "live"}, {Label: "Change, 30 days", Definition: "permissionChange"}}}
	for i, p := range v.Permissions {
		n := int64(p.Count)
		var change *int64
		if p.Change30d != nil {
			c := int64(*p.Change30d)
			change = &c
		}
		at := "permissions." + strconv.Itoa(i) + "."
		l.Entries = append(l.Entries, render.Entry{Position: i + 1, Name: p.Permission, URL: "/listings?" + url.Values{"permission": {p.Permission}}.Encode(),
			Developer: render.PermissionWords(p.Permission), Figures: []render.Figure{render.IntFigure(at+"count", &n), render.ChangeFigure(at+"change30d", change)}})
	}
	return render.RenderTag(render.TagPage{Title: "Permissions",
		Intro: "How many live listings of chrome and edge (the stores whose manifests are read) ask for each permission, how that count moved over the 30 days to the newest data (as the daily ranks count each day: a dash until both days are counted), and what the common ones let an extension do. A permission links the listings that ask for it; the changes that added one are on the changes' page (a permission's filter).",
		List:  l, JSONURL: "/api/v1/permissions", FileRows: "every permission"})
}
