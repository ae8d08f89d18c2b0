package legacy

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/listargs"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

const maxPageSize = 200

// parseLegacy reads the filters, sort and paging of /api/extensions into
// q.
func parseLegacy(c *fiber.Ctx, q *listq.Query, paging bool) error {
	p := &listargs.Reader{Args: c.Context().QueryArgs()}
	*q = listq.Query{Page: 1, PageSize: 50}
	if n, ok := p.IntValue("platform", 0, views.NumStores-1); ok {
		q.Store = views.Store(n).Ref()
	}
	if q.Q = strings.TrimSpace(p.Get("q")); q.Q == "" && p.Get("q") != "" {
		p.Fail("q", p.Get("q"), "a text to search for: it has only spaces (leave q out to list every listing)")
	}
	if v, ok := p.Str("category"); ok {
		kept := v // only a present value is moved to the heap
		q.Category = &kept
	}
	if n := p.Integer("type", 0, 3); n != nil {
		k := views.Kind(*n)
		q.Kind = &k
	}
	q.MinInstalls, q.MaxInstalls = p.Number("minInstalls", 0, 1e18), p.Number("maxInstalls", 0, 1e18)
	if v, ok := p.Str("rated"); ok {
		switch v {
		case "yes":
			b := true
			q.Rated = &b
		case "no":
			b := false
			q.Rated = &b
		default:
			p.Fail("rated", v, "yes or no")
		}
	}
	p.Shared(q)
	q.HostAccessAll = p.Get("hostAccess") == "all" // other values are ignored, as the contract says
	q.Sort, _ = listq.LegacySort(p.Get("sort"))    // an unknown name is installs, as the contract says
	q.OnlyWithValue = q.Sort.Spec().Growth         // the contract: a growth sort returns only listings with its figure
	switch v := p.Get("dir"); v {
	case "", "desc":
	case "asc":
		q.Asc = true
	default:
		p.Fail("dir", v, "asc or desc")
	}
	if paging {
		if n := p.Integer("page", 1, 1<<31-1); n != nil {
			q.Page = int(*n)
		}
		if n := p.Integer("pageSize", 1, 1<<31-1); n != nil {
			q.PageSize = int(min(*n, maxPageSize)) // larger values are cut to 200
		}
	} else {
		q.Page, q.PageSize = 1, csvRows
	}
	if p.Err != nil {
		return p.Err
	}
	return nil
}
