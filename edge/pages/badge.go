package pages

import (
	"fmt"
	"net/http"
	"net/url"
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

// badgeFigures are the figures a badge shows, by the name its address
// gives (users and installs are the size under the name a store uses).
var badgeFigures = map[string]string{"users": "size", "installs": "size", "size": "size", "rating": "rating", "version": "version", "rank": "rank"}

// BadgeFigureNames are the names a badge's address takes, for its
// errors and the docs.
const BadgeFigureNames = "users (or installs, size), rating, version, rank"

// badgeParams are what a badge's address names: the listing and the
// figure.
type badgeParams struct {
	listing *views.Listing
	figure  string // size, rating, version or rank
}

// badgeSVG is the SVG codec of a badge.
var badgeSVG = read.Codec[render.Badge]{Name: "svg", Type: "image/svg+xml",
	Encode: func(_ *fiber.Ctx, b *render.Badge) (*answer.Answer, error) {
		var buf [64]byte
		return pageAnswer(answer.NewKey(buf[:0], "/badges/:store/:id/:figure", 0), badgeType, render.RenderBadge(*b)), nil
	}}

// badgeType is a badge's content type.
const badgeType = "image/svg+xml; charset=utf-8"

// badgeHandler answers GET /badges/{store}/{id}/{figure}.svg: one figure
// of a listing as a badge, from the published state, cached and public
// as every page; a listing gone from its store says "delisted" whatever
// the figure. Errors are badges too (guard.Badges): an unknown listing is
// a 404 badge that says "not found".
func (s *Pages) badgeHandler() read.Handler {
	rd := &read.Read[badgeParams, render.Badge]{
		Route: "/badges/:store/:id/:figure", Cheap: true, CacheControl: pageCacheControl, Page: answer.NoPage,
		Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (badgeParams, error) {
			name, ok := strings.CutSuffix(c.Params("figure"), ".svg")
			figure, known := badgeFigures[name]
			if !ok || !known {
				return badgeParams{}, problem.Newf(http.StatusNotFound, "There is no badge %.40q: a badge is one of %s, as name.svg.", c.Params("figure"), BadgeFigureNames).
					ForReaders("no such badge")
			}
			l, err := v1.ListingOf(c, st)
			return badgeParams{listing: l, figure: figure}, err
		},
		Key: func(k answer.Key, p *badgeParams) answer.Key { return v1.ListingKey(k, p.listing).Str("f", p.figure) },
		Run: func(_ *fiber.Ctx, st *served.State, p *badgeParams, _ read.Needs) (*render.Badge, error) {
			b := badgeOf(document.NewListing(p.listing, st.Figures), p.figure)
			return &b, nil
		},
	}
	return read.Serve(s.api.Env(), rd, badgeSVG)
}

// embedHandler answers GET /embed/{store}/{id}/size.svg: the size chart
// of the listing's page (a year of its daily size) as an SVG image of its
// own for another site to show: an svg codec of the listing page's read
// (v1.API.YearRead), cached and public as the page; errors are badges.
func (s *Pages) embedHandler() read.Handler {
	rd := *s.api.YearRead()
	rd.Route, rd.CacheControl, rd.Page = "/embed/:store/:id/size.svg", pageCacheControl, answer.NoPage
	return read.Serve(s.api.Env(), &rd, read.Codec[v1.History]{Name: "svg", Type: "image/svg+xml", Encode: func(_ *fiber.Ctx, h *v1.History) (*answer.Answer, error) {
		d := listingData(document.NewListing(h.Listing, h.State.Figures), h.Snapshots, h.FirstDay, h.LastDay)
		var buf [64]byte
		return pageAnswer(answer.NewKey(buf[:0], "/embed/:store/:id/size.svg", 0), badgeType, render.EmbedSizeChart(d)), nil
	}})
}

// badgeSnippets are the badges the listing l's page offers to copy: its
// size, rating, version and rank (a delisted listing's badges all say
// so, and are offered all the same: a README keeps its badge).
func (s *Pages) badgeSnippets(l *views.Listing) []render.BadgeSnippet {
	var out []render.BadgeSnippet
	size := map[views.Store]string{views.Chrome: "users", views.Firefox: "users", views.Edge: "installs", views.GooglePlay: "installs"}[l.Store]
	if size == "" {
		size = "size" // apple: its ratings count
	}
	for _, f := range []string{size, "rating", "version", "rank"} {
		path := "/badges/" + l.Store.String() + "/" + url.PathEscape(l.ID) + "/" + f + ".svg"
		page := s.cfg.PublicURL + "/listings/" + l.Store.String() + "/" + url.PathEscape(l.ID)
		out = append(out, render.BadgeSnippet{Figure: f, URL: path,
			Markdown: "[![" + f + "](" + s.cfg.PublicURL + path + ")](" + page + ")"})
	}
	return out
}

// badgeOf is the badge of figure of the listing d.
func badgeOf(d document.Listing, figure string) render.Badge {
	who := d.Name
	if who == "" {
		who = d.ID
	}
	if !d.Live {
		when := ""
		if d.DelistedAt != nil {
			when = " on " + d.DelistedAt.Format("2006-01-02")
		}
		return render.Badge{Label: d.Store, Message: "delisted", Color: render.BadgeGrey,
			Title: fmt.Sprintf("%s is no longer listed in the %s store: it was delisted%s.", who, d.Store, when)}
	}
	asOf := ""
	if d.ReadAt != nil {
		asOf = ", read " + d.ReadAt.Format("2006-01-02")
	}
	none := render.Badge{Message: "none", Color: render.BadgeGrey}
	switch figure {
	case "size":
		none.Label = d.SizeMeasure
		if d.Size == nil {
			none.Title = fmt.Sprintf("%s has no %s figure in the %s store yet.", who, d.SizeMeasure, d.Store)
			return none
		}
		return render.Badge{Label: d.SizeMeasure, Message: render.Compact(*d.Size), Color: render.BadgeBlue,
			Title: fmt.Sprintf("%s: %s %s in the %s store%s (the store's own count).", who, render.Int(*d.Size), d.SizeMeasure, d.Store, asOf)}
	case "rating":
		none.Label = "rating"
		if d.Rating == nil {
			none.Title = fmt.Sprintf("%s is not rated in the %s store.", who, d.Store)
			return none
		}
		msg := strconv.FormatFloat(*d.Rating, 'f', 1, 64) + "/5"
		count := ""
		if d.RatingCount != nil {
			msg += " (" + render.Compact(*d.RatingCount) + ")"
			count = " from " + render.Int(*d.RatingCount) + " ratings"
		}
		return render.Badge{Label: "rating", Message: msg, Color: render.BadgeBlue,
			Title: fmt.Sprintf("%s: rated %s of 5%s in the %s store%s.", who, strconv.FormatFloat(*d.Rating, 'f', -1, 64), count, d.Store, asOf)}
	case "version":
		none.Label = "version"
		if d.Version == "" {
			none.Title = fmt.Sprintf("The %s store gives no version of %s.", d.Store, who)
			return none
		}
		updated := ""
		if d.Updated != nil {
			updated = ", updated " + *d.Updated
		}
		return render.Badge{Label: "version", Message: "v" + strings.TrimPrefix(d.Version, "v"), Color: render.BadgeBlue,
			Title: fmt.Sprintf("%s: version %s in the %s store%s.", who, d.Version, d.Store, updated)}
	}
	none.Label = d.Store + " rank"
	if d.StoreRank == nil {
		none.Title = fmt.Sprintf("%s has no rank in the %s store: it has no size figure yet.", who, d.Store)
		return none
	}
	return render.Badge{Label: d.Store + " rank", Message: "#" + render.Int(int64(*d.StoreRank)), Color: render.BadgeBlue,
		Title: fmt.Sprintf("%s: number %s of the %s store's live listings by %s%s.", who, render.Int(int64(*d.StoreRank)), d.Store, d.SizeMeasure, asOf)}
}
