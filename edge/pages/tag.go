package pages

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// tagPageSize is how many of a topic's listings its page shows: a phone's
// few screens (the JSON twin gives 200; the listings' browser all).
const tagPageSize = 50

// getTagPage answers GET /tags/{slug}/{store}: the topic's live listings
// in the store, largest first: the first tagPageSize of
// /api/v1/tags/{slug}/{store}'s, and a link to all of them in the
// listings' browser.
func (s *Pages) getTagPage(c *fiber.Ctx) (answer.Reply, error) {
	store, err := v1.StoreParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.api.Figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	slug, err := v1.TagArg(f, c.Params("slug"))
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/tags/:slug/:store", gen).Str("tag", slug).Int("s", int64(store))
	return s.htmlAnswer(f, key, func(f *figures.Figures) ([]byte, error) {
		ls, _ := f.TopicListings(slug, store)
		l := render.List{Caption: slug + " in " + store.String() + ", largest first", Empty: "No live listing of " + store.String() + " has this topic.",
			Columns: []render.Column{{Label: "Size (" + store.SizeMeasure() + ")", Definition: "size"}}}
		for i, li := range ls[:min(len(ls), tagPageSize)] {
			doc := document.NewListing(li, f)
			sz := render.IntFigure("size", doc.Size)
			name := doc.Name
			if name == "" {
				name = doc.ID
			}
			l.Entries = append(l.Entries, render.Entry{Position: i + 1, Name: name, Developer: doc.Developer,
				URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID), Figures: []render.Figure{sz}})
		}
		intro := render.Int(int64(len(ls))) + " live listings of " + store.String() + " have the topic " + slug
		if len(ls) > tagPageSize {
			l.URL = "/listings?" + url.Values{"store": {store.String()}, "tag": {slug}}.Encode()
			intro += "; the " + strconv.Itoa(tagPageSize) + " largest are shown here, and every one in the listings' browser"
		}
		return render.RenderTag(render.TagPage{Title: "Topic " + slug + " in " + store.String(), Intro: intro + ".", List: l,
			JSONURL: "/api/v1/tags/" + url.PathEscape(slug) + "/" + store.String()})
	})
}
