// Package legacy is the unversioned API under /api: pages of listings
// with numbered stores, the CSV export, the summary, categories and
// permissions. It needs no key; fair use per address protects it, and its
// answers are public so that a CDN can keep them. Its listing queries run
// on the same engine as v1's (listq.Query).
package legacy

import (
	"bytes"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/answer/querykey"
	"github.com/edge-stats/edge/edge/listargs"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/served"
)

// missCaller returns who c's uncached answers are computed for.
func (s *API) missCaller(c *fiber.Ctx) missgate.Caller {
	if s.caller != nil {
		return s.caller(c)
	}
	addr, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	return missgate.Caller{Addr: addr.Unmap()}
}

// extensionsRead declares the read of a legacy listings query (GET
// /api/extensions, and its CSV, the query's first csvRows rows): a page
// of rows numbered by store, written as it goes (rowsPage), or the CSV.
func (s *API) extensionsRead() *read.Read[listq.Query, extensions] {
	return &read.Read[listq.Query, extensions]{
		Route:        "/api/extensions",
		Aliased:      true,
		NotReady:     "Listing figures are",
		CacheControl: s.publicCache,
		Parse: func(c *fiber.Ctx, _ *served.State, n read.Needs) (listq.Query, error) {
			var q listq.Query
			return q, parseLegacy(c, &q, n.Rows == 0)
		},
		Key: func(k answer.Key, q *listq.Query) answer.Key { return querykey.List(k, q) },
		// A search is kept on its first ask (it took a slot of the search
		// pool), as are the pages the server asks for itself; other pages
		// on their second (answer.Cache.SetMinUses).
		First: func(c *fiber.Ctx, q *listq.Query) bool { return q.Q != "" || answer.Capturing(c.Context()) },
		Run: func(_ *fiber.Ctx, st *served.State, q *listq.Query, _ read.Needs) (*extensions, error) {
			q2 := *q
			total, ls, err := s.query(st.Figures, &q2)
			if err != nil {
				return nil, err
			}
			return &extensions{q: q2, total: total, listings: ls, f: st.Figures}, nil
		},
	}
}

// extensions is a legacy listings query's result.
type extensions struct {
	q        listq.Query
	total    int
	listings []*views.Listing
	f        *figures.Figures
}

// extensionsJSON writes a page of rows (a draft the cache keeps on its
// query's second ask).
var extensionsJSON = read.Codec[extensions]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, e *extensions) (*answer.Answer, error) {
		today := views.DayOf(e.f.Replica().Info().ReadingsMark)
		page := rowsPage{total: e.total, page: e.q.Page, pageSize: e.q.PageSize, listings: e.listings, today: today}
		return answer.Draft(&page).Tag(tags("api-extensions", e.q.Store)...), nil
	}}

// query runs q. A text search (q) takes a slot of the search pool shared
// with /api/v1 (429 with Retry-After: 5 when it is full) and runs under the
// text budget; one cut short by it is a 503 that says to narrow q, as
// these answers have no partial form and a partial page must not be kept
// by a CDN.
func (s *API) query(f *figures.Figures, q *listq.Query) (int, []*views.Listing, error) {
	if q.Q == "" {
		total, ls, _ := f.Listings().Page(q)
		return total, ls, nil
	}
	release, err := s.search()
	if err != nil {
		return 0, nil, err
	}
	defer release()
	q.Deadline = time.Now().Add(s.cfg.TextBudget)
	total, ls, partial := f.Listings().Page(q)
	if partial {
		return 0, nil, problem.Newf(http.StatusServiceUnavailable,
			"q: the text search of %q ran past its time budget; search with longer or rarer words, or add filters such as platform.", q.Q).RetryAfter(5)
	}
	return total, ls, nil
}

// csvRows is how many rows the CSV export holds.
const csvRows = 1000

var csvHeader = []string{"platform", "id", "name", "developer", "category", "type", "usage", "weekly_downloads",
	"rating", "rating_count", "version", "updated", "store_created", "first_seen", "delisted", "featured",
	"access_level", "growth_1d", "growth_1d_pct", "growth_7d", "growth_7d_pct", "ratings_growth_1d",
	"ratings_growth_1d_pct", "ratings_growth_7d", "ratings_growth_7d_pct", "url"}

// extensionsCSV writes the query's first csvRows rows as CSV: UTF-8
// with a byte-order mark, RFC 4180 quoting and CRLF line ends, named as a
// file of the store and the data's day.
func (s *API) extensionsCSV() read.Codec[extensions] {
	return read.Codec[extensions]{Name: "csv", Type: "text/csv", Needs: read.Needs{Rows: csvRows},
		Encode: func(_ *fiber.Ctx, e *extensions) (*answer.Answer, error) {
			mark := e.f.Replica().Info().ReadingsMark
			today := views.DayOf(mark)
			var buf bytes.Buffer
			w := csvw.NewWriter(&buf)
			w.Write(csvHeader)
			var row document.LegacyRow // each listing's row in turn (rowsPage)
			var doc document.Listing
			for _, l := range e.listings {
				row.Fill(l, today, &doc)
				w.Write(s.csvRecord(row, l))
			}
			w.Flush()
			if err := w.Error(); err != nil {
				return nil, err
			}
			name := "extensions"
			if e.q.Store != nil {
				name += "-" + e.q.Store.String()
			}
			a := answer.New(buf.Bytes(), csvw.ContentType).Tag(tags("api-extensions-csv", e.q.Store)...)
			a.SetFile(name + "-" + mark.Format(time.DateOnly) + ".csv")
			return a, nil
		}}
}

func (s *API) csvRecord(r document.LegacyRow, l *views.Listing) []string {
	featured := "no"
	if r.F {
		featured = "yes"
	}
	usage := r.I
	if l.Store == views.Apple {
		usage = r.RC // on apple the usage column is the rating count
		if rc, ok := l.RatingCount(); ok && usage == nil {
			usage = &rc
		}
	}
	fs := r.FS
	// Text from the stores is neutralised; numbers and dates are ours.
	return []string{l.Store.String(), csvw.Text(r.ID), csvw.Text(r.N), csvw.Text(r.D), csvw.Text(r.C), strconv.Itoa(r.T), csvw.Int(usage), csvw.Int(r.WD), csvw.Float(r.R), csvw.Int(r.RC),
		csvw.Text(r.V), csvw.String(r.U), csvw.String(r.CD), csvw.Time(&fs), csvw.Time(r.DU), featured, strconv.Itoa(r.AL), csvw.Int(r.G1), csvw.Float(r.G1P), csvw.Int(r.G7),
		csvw.Float(r.G7P), csvw.Int(r.RG1), csvw.Float(r.RG1P), csvw.Int(r.RG7), csvw.Float(r.RG7P),
		s.cfg.PublicURL + "/listings/" + l.Store.String() + "/" + r.ID}
}

// figureValue is a legacy figure's result: its value, and the store it
// is of (nil: every store's).
type figureValue struct {
	v     any
	store *views.Store
}

// figureRead declares the read of a figure of the published figures
// (GET route), its store read by platform when platform says so, built
// from memory: value gives it from the figures.
func (s *API) figureRead(route string, platform bool, value func(f *figures.Figures, store *views.Store) any) read.Handler {
	tag := strings.ReplaceAll(strings.TrimPrefix(route, "/"), "/", "-")
	rd := &read.Read[*views.Store, figureValue]{
		Route: route, Cheap: true, NotReady: "Listing figures are", CacheControl: s.publicCache,
		Parse: func(c *fiber.Ctx, _ *served.State, _ read.Needs) (*views.Store, error) {
			if !platform {
				return nil, nil
			}
			p := &listargs.Reader{Args: c.Context().QueryArgs()}
			n := p.Integer("platform", 0, views.NumStores-1)
			if p.Err != nil {
				return nil, p.Err
			}
			if n == nil {
				return nil, nil
			}
			st := views.Store(*n)
			return &st, nil
		},
		Key: func(k answer.Key, store **views.Store) answer.Key {
			if *store != nil {
				k = k.Int("p", int64(**store))
			}
			return k
		},
		Run: func(_ *fiber.Ctx, st *served.State, store **views.Store, _ read.Needs) (*figureValue, error) {
			return &figureValue{v: value(st.Figures, *store), store: *store}, nil
		},
	}
	return read.Serve(s.env, rd, read.Codec[figureValue]{Name: "json", Type: fiber.MIMEApplicationJSON,
		Encode: func(_ *fiber.Ctx, v *figureValue) (*answer.Answer, error) {
			return tagged(answer.JSON(v.v))(tag, v.store)
		}})
}

// categoryNames are the names of the categories of store (nil: every
// store's), as /api/categories lists them.
func categoryNames(f *figures.Figures, store *views.Store) any {
	counts := f.AllCategories()
	if store != nil {
		counts = f.Categories(*store)
	}
	names := make([]string, 0, len(counts))
	for _, c := range counts {
		names = append(names, c.Name)
	}
	return names
}

// fairUse enforces the legacy API's fair use per address, except for
// exempt (trusted CDN) addresses and the server's own requests.
func (s *API) fairUse(c *fiber.Ctx) error {
	if access.Internal(c) {
		return c.Next()
	}
	if !s.fairuse.On() {
		if ratelimit.Wanted(c.Context()) {
			ratelimit.Apply(c.Context(), ratelimit.Applied{Caller: s.cfg.Proxies.Of(c), Admit: s.replayAdmit})
		}
		return c.Next()
	}
	a := s.cfg.Proxies.Of(c)
	if s.cfg.FairUseExempt.Contains(a) {
		ratelimit.Apply(c.Context(), ratelimit.Applied{Caller: a, Admit: s.replayAdmit})
		return c.Next()
	}
	if ok, wait := s.fairuse.Allow(s.cfg.Proxies.Subject(a), access.RequestTime(c)); !ok {
		secs := problem.Seconds(wait)
		return problem.Newf(http.StatusTooManyRequests,
			"Fair use is about %.3g requests a second per address; wait %d s before the next one, or cache answers (they carry ETags).",
			s.cfg.FairUseRate, secs).RetryAfter(secs)
	}
	ratelimit.Apply(c.Context(), ratelimit.Applied{Caller: a, Admit: s.replayAdmit})
	return c.Next()
}

// replayFairUse applies fair use to a replayed call of caller (package
// replay): admitted when fair use is off or the caller exempt, or with a
// token taken; a call without a token is left to fairUse, which refuses
// it.
func (s *API) replayFairUse(caller netip.Addr, now time.Time) (ratelimit.Decision, bool) {
	if !s.fairuse.On() || s.cfg.FairUseExempt.Contains(caller) {
		return ratelimit.Decision{}, true
	}
	ok, _ := s.fairuse.Allow(s.cfg.Proxies.Subject(caller), now)
	return ratelimit.Decision{}, ok
}

// tags are the cache tags of a legacy answer (docs/operations.md, *Behind
// a CDN*): every answer of the edge ("edge"), every legacy answer
// ("edge-legacy"), its route, and its store when it has one.
func tags(route string, store *views.Store) []string {
	t := []string{"edge", "edge-legacy", route}
	if store != nil {
		t = append(t, "store-"+store.String())
	}
	return t
}

// tagged tags the answer that build returned, unless it failed.
func tagged(a *answer.Answer, err error) func(route string, store *views.Store) (*answer.Answer, error) {
	return func(route string, store *views.Store) (*answer.Answer, error) {
		if err != nil {
			return nil, err
		}
		return a.Tag(tags(route, store)...), nil
	}
}
