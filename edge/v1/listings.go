package v1

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/answer/querykey"
	"github.com/edge-stats/edge/edge/listargs"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/served"
)

const (
	listDefaultLimit = 50
	listMaxLimit     = 100
	listMaxPages     = 200 // pages offered per query
	// ListFileRows is the most rows a file of a list holds (CSV,
	// NDJSON): the first rows of the query in its order; a cursor goes
	// on from the last (the file's Link rel="next").
	ListFileRows = 10000
)

// listCursor is what a nextCursor carries, base64url-encoded JSON: the
// query it belongs to (a hash of the filters and sort), the page size, the
// page number, and where the last page ended.
type listCursor struct {
	Version int       `json:"v"`
	Query   uint64    `json:"q"`
	Limit   int       `json:"l"`
	Page    int       `json:"p"` // pages served so far
	After   listq.Pos `json:"a"`
}

// decodeListCursor reads a listings cursor; ok is false for anything this
// API did not issue, and for a forged one whose fields are out of the
// bounds of any cursor it issues (a page size above listMaxLimit would ask
// for every listing in one page).
func decodeListCursor(s string) (listCursor, bool) {
	c, ok := document.DecodeCursor[listCursor](s)
	return c, ok && c.Version == 1 && c.Page >= 1 && c.Page < listMaxPages && c.Limit >= 1 && c.Limit <= ListFileRows
}

// parseList reads the v1 listing query (all but limit and cursor) into q.
func parseList(args *fasthttp.Args, q *listq.Query) error {
	*q = listq.Query{Page: 1, PageSize: listDefaultLimit, NameOnly: true}
	// bad is a 400 with its detail, and its reader's words for the
	// listings' page.
	bad := func(reader, format string, a ...any) error {
		return problem.Newf(http.StatusBadRequest, format, a...).ForReaders(reader)
	}
	if v := queryArg(args, "store"); v != "" {
		s, err := views.ParseStore(v)
		if err != nil {
			return bad(noStore(v), "store: %s", err)
		}
		q.Store = s.Ref()
	}
	if v := queryArg(args, "category"); v != "" {
		kept := strings.Clone(v) // only a present value is moved to the heap
		q.Category = &kept
	}
	if v := queryArg(args, "tag"); v != "" {
		kept := strings.Clone(v) // only a present value is moved to the heap
		q.Topic = &kept
	}
	if v := queryArg(args, "alsoIn"); v != "" {
		s, err := views.ParseStore(v)
		if err != nil || (s != views.Chrome && s != views.Edge && s != views.Firefox) {
			return bad("Listings are found in another store among chrome, edge and firefox only.", "alsoIn: %.20q is not one of the linked stores chrome, edge and firefox.", v)
		}
		q.AlsoIn = s.Ref()
	}
	if err := sizeBounds(args, q, bad); err != nil {
		return err
	}
	if err := filters(args, q); err != nil {
		return err
	}
	q.Sort = listq.SortSize
	sortName := queryArg(args, "sort")
	if sortName != "" {
		sort, ok := listq.V1Sort(sortName)
		if !ok {
			return bad(fmt.Sprintf("The listings cannot be sorted by %.40q. The listings page offers every order there is.", sortName),
				"sort: %q is not a sort; use one of %s.", sortName, strings.Join(listq.V1SortNames(), ", "))
		}
		if sort.Spec().NeedsStore && q.Store == nil {
			return bad("This order ranks the listings within one store, so it needs a store chosen as well.", "sort=%s needs store: ranks are per store.", sortName)
		}
		q.Sort = sort
	}
	if q.Sort == listq.SortSize && q.Store == nil {
		// Sizes of different stores count different things (users,
		// installs, ratings): across stores, size orders by the position
		// within each store.
		q.Sort = listq.SortStoreRank
	}
	switch o := queryArg(args, "order"); o {
	case "":
		q.Asc = sortName == "name"
	case "asc":
		q.Asc = true
	case "desc":
	default:
		return bad("The listings are shown largest first or smallest first, in no other order.", "order: %q is not asc or desc.", o)
	}
	if raw := queryArg(args, "q"); raw != "" { // an empty q (a form's empty field) searches nothing
		v := strings.TrimSpace(raw)
		if v == "" { // the trimmed "" would name nothing the caller sent
			return bad("The search has only spaces: search with 2 or more letters.",
				"q: %.40q is only spaces; give 2 or more characters to search for (spaces around them do not count), or leave q out.", raw)
		}
		if utf8.RuneCountInString(v) < 2 {
			return bad(fmt.Sprintf("%.40q is too short to search for: search with 2 or more letters.", v), "q: %q is too short; search with 2 or more characters (spaces around them do not count), or leave q out.", v)
		}
		q.Q = strings.Clone(v)
	}
	return nil
}

// kinds are the listing types by their v1 names.
var kinds = map[string]views.Kind{"extension": views.KindExtension, "theme": views.KindTheme, "app": views.KindApp}

// filters reads into q the filters of the listings' facts that the
// legacy API has too (listargs.Shared: featured, rating, ratings count,
// version, dates, delisted, manifest version, permission, access level),
// kind (extension, theme or app) and hostAccess=all; a value that cannot
// be read is a 400 naming it (unlike the legacy API, which ignores
// hostAccess values it does not know).
func filters(args *fasthttp.Args, q *listq.Query) error {
	r := listargs.Reader{Args: args}
	r.Shared(q)
	if v, ok := r.Str("kind"); ok {
		if k, known := kinds[v]; known {
			q.Kind = &k
		} else {
			r.Fail("kind", v, "extension, theme or app")
		}
	}
	switch v := r.Get("hostAccess"); v {
	case "":
	case "all":
		q.HostAccessAll = true
	default:
		r.Fail("hostAccess", v, "all (the listings that may read and change every site)")
	}
	if r.Err != nil {
		return r.Err
	}
	return nil
}

// queryArg returns the first value of the query parameter name, as
// fiber's Query does (the request's bytes, valid while it is served), from
// the query parsed once.
func queryArg(args *fasthttp.Args, name string) string {
	return utils.UnsafeString(args.Peek(name))
}

// fnv64a is the 64-bit FNV-1a hash of b (as hash/fnv's, without its
// allocations): a cursor carries it for the query it was issued for.
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// resolveNames replaces q's category and tag by the names they stand for
// (see categoryArg), so that every spelling of one query shares its
// answers and its cursors.
func resolveNames(f *figures.Figures, q *listq.Query) error {
	if q.Category != nil {
		name, err := categoryArg(f, q.Store, *q.Category)
		if err != nil {
			return err
		}
		q.Category = &name
	}
	if q.Topic != nil {
		slug, err := TagArg(f, *q.Topic)
		if err != nil {
			return err
		}
		q.Topic = &slug
	}
	return nil
}

// ListingsParams are a listings query as read: its filters, sort and
// page size (Q), where its page starts (After; nil: the first) and its
// number, its cursor written again from what it holds, the hash its
// cursors carry, and for a codec that needs it (read.Needs.Form) the
// query as the listings' page reads it.
type ListingsParams struct {
	Q      listq.Query
	After  *listq.Pos
	Page   int
	Cursor string
	Hash   uint64
	Form   map[string]string
}

// ListingsRead is the read of a listings query (GET /api/v1/listings,
// the listings' page and its files): its typed result is a page of
// listings, with its total and the cursor of the page before for a codec
// that needs them.
func (s *API) ListingsRead() *read.Read[ListingsParams, document.ListingPage] { return s.listings }

// newListingsRead declares the listings read.
func (s *API) newListingsRead() *read.Read[ListingsParams, document.ListingPage] {
	return &read.Read[ListingsParams, document.ListingPage]{
		Route:    "/api/v1/listings",
		Aliased:  true,
		NotReady: "Listing figures are",
		Page:     answer.SamePage,
		Parse:    parseListings,
		Key: func(k answer.Key, p *ListingsParams) answer.Key {
			k = querykey.List(k, &p.Q).Str("cursor", p.Cursor)
			if p.Form != nil {
				k = pageKey(k, p.Form)
			}
			return k
		},
		// A search is kept on its first ask (it took a slot of the search
		// pool, and a search asked again comes from the cache without
		// one), as are the pages the server asks for itself.
		First: func(c *fiber.Ctx, p *ListingsParams) bool { return p.Q.Q != "" || answer.Capturing(c.Context()) },
		Run:   s.runListings,
	}
}

// parseListings reads c's listings query against st: the filters and
// sort, their names resolved (every spelling of one query shares its
// answers and its cursors), the page size (up to n.Rows for a file) and
// the cursor, checked against the query it was issued for.
func parseListings(c *fiber.Ctx, st *served.State, n read.Needs) (ListingsParams, error) {
	var p ListingsParams
	args := c.Context().QueryArgs()
	if err := parseList(args, &p.Q); err != nil {
		return p, err
	}
	if err := resolveNames(st.Figures, &p.Q); err != nil {
		return p, err
	}
	// A cursor carries the hash of the query it was issued for: its
	// filters and sort, without limit and cursor.
	var canonBuf [256]byte
	p.Hash = fnv64a(querykey.List(answer.NewKey(canonBuf[:0], "/api/v1/listings", 0), &p.Q).Text())
	maxLimit := listMaxLimit
	if n.Rows > 0 {
		maxLimit, p.Q.PageSize = n.Rows, n.Rows
	}
	var err error
	if p.After, p.Page, p.Cursor, err = pageArgs(args, &p.Q, p.Hash, maxLimit); err != nil {
		return p, err
	}
	if n.Form {
		p.Form = pageQuery(args, &p.Q, p.Cursor)
	}
	return p, nil
}

// runListings runs the listings query p on st's figures: the page, its
// next cursor, and what the codec needs (n) of its total and the page
// before.
func (s *API) runListings(c *fiber.Ctx, st *served.State, p *ListingsParams, n read.Needs) (*document.ListingPage, error) {
	q := p.Q
	if q.Q != "" {
		release, err := s.gate.SearchSlot()
		if err != nil {
			return nil, err
		}
		defer release()
		q.Deadline = time.Now().Add(s.cfg.TextBudget)
	}
	f := st.Figures
	ls, last, more, partial := f.Listings().List(&q, p.After)
	out := &document.ListingPage{Listings: ls, Figures: f, Partial: partial, Offset: (p.Page - 1) * q.PageSize, Page: p.Page, Query: p.Form}
	if more && p.Page < listMaxPages && !partial {
		out.NextCursor = document.EncodeCursor(listCursor{Version: 1, Query: p.Hash, Limit: q.PageSize, Page: p.Page, After: last})
	}
	if n.Total {
		out.Total, out.Counted = listTotal(p.Form, f, &q)
	}
	if n.Before && p.Page > 2 && len(ls) > 0 {
		out.PrevCursor = prevCursor(f, q, p.Page, p.Hash, ls[0])
	}
	return out, nil
}

// listingsJSON writes a page of listings as JSON (a draft the cache keeps
// on its query's second ask; not kept when the search was cut short).
var listingsJSON = read.Codec[document.ListingPage]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, p *document.ListingPage) (*answer.Answer, error) {
		return answer.SearchDraft(p, p.Partial), nil
	}}

// listTotal returns how many listings the query q (the page's query pq) lists
// over all its pages: from the published figures' counts when it asks
// for every live listing, a store's, a category's or a topic's, with no
// search and no other filter; otherwise counted by the engine
// (listq.Engine.Count: the bitmap of its matches, a scan of the store's
// columns, in the turn the page's query already holds). ok is false when
// a search ran out of its time: it counted only what it found.
func listTotal(pq map[string]string, f *figures.Figures, q *listq.Query) (total int, ok bool) {
	if q.Q != "" || (q.Category != nil && q.Topic != nil) || !plainPage(pq) {
		total, partial := f.Listings().Count(q)
		return total, !partial
	}
	var topic *figures.Topic
	if q.Topic != nil {
		for i, t := range f.Topics() {
			if t.Slug == *q.Topic {
				topic = &f.Topics()[i]
			}
		}
		if topic == nil {
			return 0, true // no live listing has it
		}
	}
	for _, s := range views.Stores {
		if q.Store != nil && *q.Store != s {
			continue
		}
		switch {
		case q.Category != nil:
			for _, c := range f.Categories(s) {
				if c.Name == *q.Category {
					total += c.Listings
				}
			}
		case topic != nil:
			total += topic.Count(s)
		default:
			total += f.Stats(s).Live
		}
	}
	return total, true
}

// prevMaxPages is the last page of the listings' page whose page before
// may be found by walking the pages before it again (see prevCursor).
const prevMaxPages = 20

// prevCursor returns the cursor of the page before page (3 or more) of
// the query q hashed queryHash, whose first row is first, for the
// listings' page, whose readers go back as well as on. The cursors run
// forward only: the page before is found by walking q's order backwards
// from first (listq.Engine.PageBefore), a query of a page's cost. When
// first has no value to sort by (the listings without one close every
// order, by store and id, which no backward walk reverses), the pages
// before are walked again from the first, up to prevMaxPages (a query
// each). nil when the page before is the first, or is not found.
func prevCursor(f *figures.Figures, q listq.Query, page int, queryHash uint64, first *views.Listing) *string {
	after, ok := f.Listings().PageBefore(&q, first)
	if !ok {
		if page > prevMaxPages {
			return nil
		}
		for p := 1; p < page-1; p++ {
			_, last, more, partial := f.Listings().List(&q, after)
			if !more || partial {
				return nil
			}
			after = &last
		}
	}
	if after == nil {
		return nil
	}
	return document.EncodeCursor(listCursor{Version: 1, Query: queryHash, Limit: q.PageSize, Page: page - 2, After: *after})
}

// pageArgs reads the page a listings query asks for: its limit (into
// q's page size) and its cursor, which must be one this API issued for
// the query hashed queryHash and the same limit. It returns where the
// page starts (nil: the first), its number and the cursor as read,
// written again from what it holds (its cache key and links take it).
func pageArgs(args *fasthttp.Args, q *listq.Query, queryHash uint64, maxLimit int) (after *listq.Pos, page int, rawCursor string, err error) {
	limit := queryArg(args, "limit")
	limitSet := limit != ""
	if limitSet {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 1 || n > maxLimit {
			return nil, 0, "", problem.Newf(http.StatusBadRequest, "limit: %q is not a whole number from 1 to %d.", limit, maxLimit).
				ForReaders(fmt.Sprintf("A page shows 1 to %d listings, no more.", maxLimit))
		}
		q.PageSize = n
	}
	page = 1
	rawCursor = queryArg(args, "cursor")
	if rawCursor != "" {
		cur, ok := decodeListCursor(rawCursor)
		if !ok || cur.Limit > maxLimit {
			return nil, 0, "", BadCursor()
		}
		if cur.Query != queryHash {
			return nil, 0, "", problem.New(http.StatusBadRequest, "cursor: it was issued for other filters or another sort; repeat the same filters and sort with it.").
				ForReaders(staleNext)
		}
		if !limitSet {
			q.PageSize = cur.Limit
		}
		if cur.Limit != q.PageSize {
			return nil, 0, "", problem.Newf(http.StatusBadRequest, "limit: the cursor was issued for limit=%d; pass the same limit with it, or start again without a cursor.", cur.Limit).
				ForReaders(staleNext)
		}
		after, page = &cur.After, cur.Page+1
		rawCursor = *document.EncodeCursor(cur) // as read: every spelling of one place keys one answer
	}
	return after, page, rawCursor, nil
}

// sizeBounds reads minSize and maxSize into q (a fractional lower bound
// rounds up), or returns the 400 bad makes: a bound needs a store, as
// the size counts different things in different stores.
func sizeBounds(args *fasthttp.Args, q *listq.Query, bad func(reader, format string, a ...any) error) error {
	for _, name := range []string{"minSize", "maxSize"} {
		v := queryArg(args, name)
		if v == "" {
			continue
		}
		if q.Store == nil {
			return bad("A bound on the size needs a store chosen as well, as the size counts users or installs in most stores but ratings on apple.",
				"%s needs store: size is users or installs in most stores but the ratings count on apple.", name)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f != f || f > 1e18 {
			return bad("A bound on the size is a number of 0 or more.", "%s: %q is not a number of 0 or more.", name, v)
		}
		n := int64(f)
		if name == "minSize" {
			if float64(n) < f {
				n++ // a fractional lower bound rounds up
			}
			q.MinSize = &n
		} else {
			q.MaxSize = &n
		}
	}
	return nil
}
