package v1

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// ChartParams are a chart's parameters as read: its store, its name (top
// by default) and its category's name ("" for the whole store).
type ChartParams struct {
	Store           views.Store
	Chart, Category string
}

// Chart is a chart as read: its document (the JSON), with its store and
// the figures it was read from, which its page lists the store's
// categories from.
type Chart struct {
	Doc     document.Chart
	Store   views.Store
	Figures *figures.Figures
}

// ChartRead is the read of a chart (GET /api/v1/charts/{store}?chart=
// &category=, the chart's page and its files).
func ChartRead() *read.Read[ChartParams, Chart] { return chartRead }

var chartRead = &read.Read[ChartParams, Chart]{
	Cheap:    true,
	Route:    "/api/v1/charts/:store",
	NotReady: "Charts are",
	Page:     answer.SamePage,
	Parse:    parseChart,
	Key: func(k answer.Key, p *ChartParams) answer.Key {
		return k.Int("s", int64(p.Store)).Str("chart", p.Chart).Str("c", p.Category)
	},
	Run: func(_ *fiber.Ctx, st *served.State, p *ChartParams, _ read.Needs) (*Chart, error) {
		return &Chart{Doc: document.NewChart(st.Figures, p.Store, p.Chart, p.Category), Store: p.Store, Figures: st.Figures}, nil
	},
}

// parseChart reads a chart's store (an unknown one is a 404), name (top
// by default; another name is a 400 listing the names) and category (a
// category the store does not have is a 404).
func parseChart(c *fiber.Ctx, st *served.State, _ read.Needs) (ChartParams, error) {
	var p ChartParams
	var err error
	if p.Store, err = StoreParam(c); err != nil {
		return p, err
	}
	p.Chart = c.Query("chart", figures.ChartTop)
	if !slices.Contains(figures.Charts, p.Chart) {
		return p, problem.Newf(http.StatusBadRequest, "chart: %q is not a chart; use one of %s.", p.Chart, strings.Join(figures.Charts, ", ")).
			ForReaders(fmt.Sprintf("There is no chart %.40q. A store's page links to each of its charts.", p.Chart))
	}
	if v := c.Query("category"); v != "" {
		p.Category, err = categoryArg(st.Figures, &p.Store, v)
	}
	return p, err
}

// chartJSON writes a chart's document.
var chartJSON = jsonOf(func(v *Chart) any { return &v.Doc })

// TagCount is a topic with its live listings per store.
type TagCount struct {
	Slug     string         `json:"slug"`
	Listings map[string]int `json:"listings"`
}

// Tags is every topic with its live listings per store, by slug.
type Tags struct {
	Tags []TagCount `json:"tags"`
}

// NoParams are the parameters of a read that takes none.
type NoParams struct{}

// TagsRead is the read of every topic (GET /api/v1/tags, the topics'
// page and their files).
func TagsRead() *read.Read[NoParams, Tags] { return tagsRead }

var tagsRead = &read.Read[NoParams, Tags]{
	Cheap:    true,
	Route:    "/api/v1/tags",
	NotReady: "Topics are",
	Page:     answer.SamePage,
	Parse:    func(*fiber.Ctx, *served.State, read.Needs) (NoParams, error) { return NoParams{}, nil },
	Key:      func(k answer.Key, _ *NoParams) answer.Key { return k },
	Run: func(_ *fiber.Ctx, st *served.State, _ *NoParams, _ read.Needs) (*Tags, error) {
		out := &Tags{Tags: []TagCount{}}
		for _, t := range st.Figures.Topics() {
			tc := TagCount{Slug: t.Slug, Listings: map[string]int{}}
			for _, s := range views.Stores {
				tc.Listings[s.String()] = t.Count(s)
			}
			out.Tags = append(out.Tags, tc)
		}
		return out, nil
	},
}

// tagMaxListings is how many of a topic's listings in a store its JSON
// holds (its total says how many there are; the listings' query with
// tag= and store= pages through every one).
const tagMaxListings = 200

// TagParams are a topic's listings' parameters as read: the topic's slug
// and the store.
type TagParams struct {
	Slug  string
	Store views.Store
}

// TagListings is a topic's live listings in a store, largest first: the
// JSON's documents of the first tagMaxListings (or of the fewer a page
// shows), and for a file the listings themselves (Rows, up to its cap),
// with the figures they are read with.
type TagListings struct {
	Listings []document.Listing `json:"listings"`
	Store    string             `json:"store"`
	Tag      string             `json:"tag"`
	Total    int                `json:"total"`

	In      views.Store      `json:"-"`
	Rows    []*views.Listing `json:"-"`
	Figures *figures.Figures `json:"-"`
}

// TagRead is the read of a topic's listings in a store (GET
// /api/v1/tags/{slug}/{store}, the topic's page and its files).
func TagRead() *read.Read[TagParams, TagListings] { return tagRead }

var tagRead = &read.Read[TagParams, TagListings]{
	Cheap:    true,
	Route:    "/api/v1/tags/:slug/:store",
	NotReady: "Topics are",
	Page:     answer.SamePage,
	Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (TagParams, error) {
		var p TagParams
		var err error
		if p.Store, err = StoreParam(c); err != nil {
			return p, err
		}
		p.Slug, err = TagArg(st.Figures, c.Params("slug"))
		return p, err
	},
	Key: func(k answer.Key, p *TagParams) answer.Key { return k.Str("tag", p.Slug).Int("s", int64(p.Store)) },
	Run: runTag,
}

// runTag lists topic p.Slug's live listings in p.Store: up to n.Rows
// (tagMaxListings when 0), as documents up to tagMaxListings.
func runTag(_ *fiber.Ctx, st *served.State, p *TagParams, n read.Needs) (*TagListings, error) {
	f := st.Figures
	ls, _ := f.TopicListings(p.Slug, p.Store)
	limit := tagMaxListings
	if n.Rows > 0 {
		limit = n.Rows
	}
	out := &TagListings{Listings: []document.Listing{}, Store: p.Store.String(), Tag: p.Slug, Total: len(ls),
		In: p.Store, Rows: ls[:min(len(ls), limit)], Figures: f}
	if limit <= tagMaxListings {
		for _, l := range out.Rows {
			out.Listings = append(out.Listings, document.NewListing(l, f))
		}
	}
	return out, nil
}

// tagsJSON and tagJSON write the topics and a topic's listings.
var (
	tagsJSON = jsonOf(func(v *Tags) any { return v })
	tagJSON  = jsonOf(func(v *TagListings) any { return v })
)
