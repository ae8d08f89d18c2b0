package pages

import (
	"net/url"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
)

// tagsHandler answers GET /tags: every topic with its live listings per
// store, each count linking to the topic's listings in the store; or
// their files.
func (s *Pages) tagsHandler() read.Handler {
	return figuresPage(s, *v1.TagsRead(), "/tags", tagsHTML, v1.TagsFiles()...)
}

// tagsHTML is the page of the topics v.
func tagsHTML(v *v1.Tags) ([]byte, error) {
	d := render.CountsPage{Title: "Topics", Intro: "Every topic of the listings, with its live listings in each store; a count links to them.",
		JSONURL: "/api/v1/tags", FileRows: "every topic"}
	d.Head.Description = d.Intro
	for _, st := range views.Stores {
		d.Columns = append(d.Columns, st.String())
	}
	for _, t := range v.Tags {
		row := render.CountRow{Name: t.Slug}
		for _, st := range views.Stores {
			row.Counts = append(row.Counts, render.Count{Figure: "listings." + st.String(), N: t.Listings[st.String()],
				URL: "/tags/" + url.PathEscape(t.Slug) + "/" + st.String()})
		}
		d.Rows = append(d.Rows, row)
	}
	return render.RenderCounts(d)
}
