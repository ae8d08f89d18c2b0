package pages

import (
	"net/url"
	"strconv"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
)

// tagPageSize is how many of a topic's listings its page shows: a phone's
// few screens (the JSON twin gives 200; the listings' browser all).
const tagPageSize = 50

// tagHandler answers GET /tags/{slug}/{store}: the topic's live listings
// in the store, largest first: the first tagPageSize of
// /api/v1/tags/{slug}/{store}'s, and a link to all of them in the
// listings' browser; or their files.
func (s *Pages) tagHandler() read.Handler {
	return figuresPage(s, *v1.TagRead(), "/tags/:slug/:store", tagHTML, v1.TagFiles()...)
}

// tagHTML is the page of a topic's listings v.
func tagHTML(v *v1.TagListings) ([]byte, error) {
	store, slug := v.In, v.Tag
	l := render.List{Caption: slug + " in " + store.String() + ", largest first", Empty: "No live listing of " + store.String() + " has this topic.",
		Columns: []render.Column{{Label: "Size (" + store.SizeMeasure() + ")", Definition: "size"}}}
	for i := range v.Listings[:min(len(v.Listings), tagPageSize)] {
		doc := &v.Listings[i]
		sz := render.IntFigure("size", doc.Size)
		name := doc.Name
		if name == "" {
			name = doc.ID
		}
		l.Entries = append(l.Entries, render.Entry{Position: i + 1, Name: name, Developer: doc.Developer,
			URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID), Figures: []render.Figure{sz}})
	}
	intro := render.Int(int64(v.Total)) + " live listings of " + store.String() + " have the topic " + slug
	if v.Total > tagPageSize {
		l.URL = "/listings?" + url.Values{"store": {store.String()}, "tag": {slug}}.Encode()
		intro += "; the " + strconv.Itoa(tagPageSize) + " largest are shown here, and every one in the listings' browser"
	}
	return render.RenderTag(render.TagPage{Title: "Topic " + slug + " in " + store.String(), Intro: intro + ".", List: l,
		JSONURL: "/api/v1/tags/" + url.PathEscape(slug) + "/" + store.String()})
}
