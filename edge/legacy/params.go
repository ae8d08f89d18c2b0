package legacy

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

// queryArg returns the first value of the query parameter name, as
// fiber's Query does (the request's bytes, valid while it is served), from
// the query parsed once.
func queryArg(args *fasthttp.Args, name string) string {
	return utils.UnsafeString(args.Peek(name))
}

// legacyParams reads /api/extensions' query into a listq.Query. A value
// that cannot be read is a 400 that names the parameter; unknown
// parameters are ignored, as are hostAccess values other than "all" and
// unknown sort keys (which mean installs), as the spec says.
type legacyParams struct {
	args *fasthttp.Args // the query, parsed once
	err  *problem.Problem
}

// str returns the first value of the parameter name, as fiber's Query
// does: the request's bytes, valid while the request is served.
func (p *legacyParams) str(name string) (string, bool) {
	v := queryArg(p.args, name)
	return v, v != ""
}

// get returns the first value of the parameter name, or "".
func (p *legacyParams) get(name string) string {
	v, _ := p.str(name)
	return v
}

func (p *legacyParams) fail(name, v, want string) {
	if p.err == nil {
		p.err = problem.Newf(http.StatusBadRequest, "%s: %q is not %s.", name, v, want)
	}
}

func (p *legacyParams) number(name string, lo, hi float64) *float64 {
	v, ok := p.str(name)
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f > hi || f != f {
		p.fail(name, v, "a number from "+strconv.FormatFloat(lo, 'f', -1, 64)+" to "+strconv.FormatFloat(hi, 'f', -1, 64))
		return nil
	}
	return &f
}

func (p *legacyParams) integer(name string, lo, hi int64) *int64 {
	n, ok := p.intValue(name, lo, hi)
	if !ok {
		return nil
	}
	kept := n // only a present value is moved to the heap
	return &kept
}

// intValue is integer without moving the value to the heap.
func (p *legacyParams) intValue(name string, lo, hi int64) (int64, bool) {
	v, ok := p.str(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		p.fail(name, v, "a whole number from "+strconv.FormatInt(lo, 10)+" to "+strconv.FormatInt(hi, 10))
		return 0, false
	}
	return n, true
}

func (p *legacyParams) boolean(name string) *bool {
	v, ok := p.str(name)
	if !ok {
		return nil
	}
	switch v {
	case "true", "1":
		b := true
		return &b
	case "false", "0":
		b := false
		return &b
	}
	p.fail(name, v, "true or false")
	return nil
}

func (p *legacyParams) date(name string) *views.Day {
	v, ok := p.str(name)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		p.fail(name, v, "a date of the form yyyy-MM-dd")
		return nil
	}
	d := views.DayOf(t)
	return &d
}

func (p *legacyParams) version(name string) *string {
	v, ok := p.str(name)
	if !ok {
		return nil
	}
	if !views.VersionComparable(v) {
		p.fail(name, v, "a version starting with a number, such as 2.10")
		return nil
	}
	kept := v // only a present value is moved to the heap
	return &kept
}

const maxPageSize = 200

// parseLegacy reads the filters, sort and paging of /api/extensions into
// q.
func parseLegacy(c *fiber.Ctx, q *listq.Query, paging bool) error {
	p := &legacyParams{args: c.Context().QueryArgs()}
	*q = listq.Query{Page: 1, PageSize: 50}
	if n, ok := p.intValue("platform", 0, views.NumStores-1); ok {
		q.Store = views.Store(n).Ref()
	}
	if q.Q = strings.TrimSpace(p.get("q")); q.Q == "" && p.get("q") != "" {
		p.fail("q", p.get("q"), "a text to search for: it has only spaces (leave q out to list every listing)")
	}
	if v, ok := p.str("category"); ok {
		kept := v // only a present value is moved to the heap
		q.Category = &kept
	}
	if n := p.integer("type", 0, 3); n != nil {
		k := views.Kind(*n)
		q.Kind = &k
	}
	q.Featured = p.boolean("featured")
	q.MinInstalls, q.MaxInstalls = p.number("minInstalls", 0, 1e18), p.number("maxInstalls", 0, 1e18)
	if v, ok := p.str("rated"); ok {
		switch v {
		case "yes":
			b := true
			q.Rated = &b
		case "no":
			b := false
			q.Rated = &b
		default:
			p.fail("rated", v, "yes or no")
		}
	}
	q.MinRating, q.MaxRating = p.number("minRating", 0, 5), p.number("maxRating", 0, 5)
	q.MinRatingCount, q.MaxRatingCount = p.integer("minRatingCount", 0, 1<<62), p.integer("maxRatingCount", 0, 1<<62)
	q.MinVersion, q.MaxVersion = p.version("minVersion"), p.version("maxVersion")
	q.UpdatedAfter, q.UpdatedBefore = p.date("updatedAfter"), p.date("updatedBefore")
	q.FirstSeenAfter, q.FirstSeenBefore = p.date("firstSeenAfter"), p.date("firstSeenBefore")
	q.DelistedAfter, q.DelistedBefore = p.date("delistedAfter"), p.date("delistedBefore")
	if b := p.boolean("includeDelisted"); b != nil {
		q.IncludeDelisted = *b
	}
	if b := p.boolean("delistedOnly"); b != nil {
		q.DelistedOnly = *b
	}
	if n := p.integer("manifestVersion", 2, 3); n != nil {
		mv := uint8(*n)
		q.ManifestVersion = &mv
	}
	if v, ok := p.str("permission"); ok {
		kept := v
		q.Permission = &kept
	}
	q.HostAccessAll = p.get("hostAccess") == "all"
	if n := p.integer("minAccessLevel", 1, 4); n != nil {
		al := uint8(*n)
		q.MinAccessLevel = &al
	}
	q.Sort, _ = listq.LegacySort(p.get("sort")) // an unknown name is installs, as the contract says
	q.OnlyWithValue = q.Sort.Spec().Growth      // the contract: a growth sort returns only listings with its figure
	switch v := p.get("dir"); v {
	case "", "desc":
	case "asc":
		q.Asc = true
	default:
		p.fail("dir", v, "asc or desc")
	}
	if paging {
		if n := p.integer("page", 1, 1<<31-1); n != nil {
			q.Page = int(*n)
		}
		if n := p.integer("pageSize", 1, 1<<31-1); n != nil {
			q.PageSize = int(min(*n, maxPageSize)) // larger values are cut to 200
		}
	} else {
		q.Page, q.PageSize = 1, csvRows
	}
	if p.err != nil {
		return p.err
	}
	return nil
}
