package pages

import (
	"net/url"
	"strconv"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// categoryHandler answers GET /categories/{store}/{category}: the
// category's figures, its weekly totals as charts, its largest listings
// and those that grew most (an html codec of v1's category read); or
// its weeks as files.
func (s *Pages) categoryHandler() read.Handler {
	rd := *s.api.CategoryRead()
	return figuresPage(s, rd, "/categories/:store/:category", categoryHTML, v1.CategoryFiles()...)
}

// CategoryURL is the address of category's page in store: by the
// category's slug (its name also serves), or its name where it has none.
func CategoryURL(store, category string) string {
	if slug := views.CategorySlug(category); slug != "" {
		return "/categories/" + store + "/" + slug
	}
	return "/categories/" + store + "/" + url.PathEscape(category)
}

// categoryHTML is the page of category v.
func categoryHTML(v *v1.Category) ([]byte, error) {
	d := render.CategoryPage{Name: v.Category, Store: v.Store, SizeMeasure: v.SizeMeasure, WeeksMissing: v.WeeksMissing, Ranking: v.Ranking,
		ChartURL:  "/charts/" + v.Store + chartQuery(figures.ChartTop, v.Category),
		BrowseURL: "/listings?" + url.Values{"store": {v.Store}, "category": {v.Category}}.Encode(),
		JSONURL:   "/api/v1" + CategoryURL(v.Store, v.Category)}
	n := int64(v.Listings)
	d.Figures = []render.Figure{render.IntFigure("listings", &n).Labelled("Live listings", ""),
		render.IntFigure("totalSize", &v.TotalSize).Labelled("Total size ("+v.SizeMeasure+")", ""),
		render.ChangeFigure("growth7d", v.Growth7d).Labelled("Growth, 7 days", "no listing of it has a 7-day growth"),
		render.ChangeFigure("growth30d", v.Growth30d).Labelled("Growth, 30 days", "no listing of it has a 30-day growth")}
	d.Figures[0].Definition, d.Figures[1].Definition, d.Figures[2].Definition, d.Figures[3].Definition = "live", "totalSize", "growth", "growth"
	for _, w := range v.Weeks {
		d.Live = append(d.Live, render.Point{Day: w.Day, Size: w.Listings, Has: true})
		d.TotalSize = append(d.TotalSize, render.Point{Day: w.Day, Size: w.TotalSize, Has: true})
	}
	d.Top = categoryEntries("top", v.Top, "The largest listings of "+v.Category+" in "+v.Store, "Size ("+v.SizeMeasure+")", "size",
		func(doc *document.Listing) *int64 { return doc.Size })
	d.Fastest = categoryEntries("fastest", v.Fastest, "The listings of "+v.Category+" that grew most over 7 days", "Growth, 7 days", "growth",
		func(doc *document.Listing) *int64 { return doc.Growth.D7.Amount() })
	return render.RenderCategory(d)
}

// categoryEntries lists the documents docs (at path in the JSON) by one
// figure of each.
func categoryEntries(path string, docs []document.Listing, caption, label, def string, figure func(*document.Listing) *int64) render.List {
	l := render.List{Caption: caption, Empty: "None.", Columns: []render.Column{{Label: label, Definition: def}}}
	for i := range docs {
		doc := &docs[i]
		name := doc.Name
		if name == "" {
			name = doc.ID
		}
		f := render.IntFigure(path+"."+strconv.Itoa(i)+"."+def, figure(doc))
		if def == "growth" {
			f = render.ChangeFigure(path+"."+strconv.Itoa(i)+".growth.7d.change", figure(doc))
		}
		l.Entries = append(l.Entries, render.Entry{Position: i + 1, Name: name, URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID),
			Developer: doc.Developer, Figures: []render.Figure{f}})
	}
	return l
}
