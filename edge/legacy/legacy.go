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
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/answer/querykey"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
)

// legacyFigures returns the figures for the legacy API, or 503 until built.
func (s *API) legacyFigures() (*figures.Figures, uint64, error) {
	st := s.state.Load()
	if st == nil || st.Figures == nil {
		return nil, 0, problem.NotReady("Listing figures are")
	}
	return st.Figures, st.Replica.Info().Generation, nil
}

// missCaller returns who c's uncached answers are computed for.
func (s *API) missCaller(c *fiber.Ctx) missgate.Caller {
	if s.caller != nil {
		return s.caller(c)
	}
	addr, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	return missgate.Caller{Addr: addr.Unmap()}
}

// getExtensions answers GET /api/extensions.
func (s *API) getExtensions(c *fiber.Ctx) (answer.Reply, error) {
	var aliasBuf [256]byte
	alias := querykey.Alias(aliasBuf[:0], "/api/extensions", s.state, c.Context())
	if a, ok := s.answers.Aliased(alias); ok {
		return answer.Reply{Answer: a, CacheControl: s.publicCache}, nil
	}
	who := s.missCaller(c)
	if err := s.answers.Crowded(who); err != nil {
		return answer.Reply{}, err // its queue is full: refused before its query is read
	}
	var q listq.Query // on the stack: a cached answer does not need it
	if err := parseLegacy(c, &q, true); err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.legacyFigures()
	if err != nil {
		return answer.Reply{}, err
	}
	var keyBuf [256]byte
	key := querykey.List(answer.NewKey(keyBuf[:0], "/api/extensions", gen), &q)
	// A search is kept on its first ask (it took a slot of the search
	// pool), as are the pages the server asks for itself; other pages on
	// their second (answer.Cache.SetMinUses).
	first := q.Q != "" || answer.Capturing(c.Context())
	a, err := s.answers.GetQuery(key, who, first, func() (*answer.Answer, error) {
		q := q // only an answer built moves the query to the heap
		total, ls, err := s.query(f, &q)
		if err != nil {
			return nil, err
		}
		today := views.DayOf(f.Replica().Info().ReadingsMark)
		page := rowsPage{total: total, page: q.Page, pageSize: q.PageSize, listings: ls, today: today}
		return answer.Draft(&page).Tag(tags("api-extensions", q.Store)...), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	if !a.NoStore {
		s.answers.Alias(alias, key)
	}
	return answer.Reply{Answer: a, CacheControl: s.publicCache}, nil
}

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

// getExtensionsCSV answers GET /api/extensions.csv: the first 1,000 rows,
// UTF-8 with a byte-order mark, RFC 4180 quoting and CRLF line ends.
func (s *API) getExtensionsCSV(c *fiber.Ctx) (answer.Reply, error) {
	var q listq.Query // on the stack: a cached answer does not need it
	if err := parseLegacy(c, &q, false); err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.legacyFigures()
	if err != nil {
		return answer.Reply{}, err
	}
	var key [256]byte
	a, err := s.answers.GetQuery(querykey.List(answer.NewKey(key[:0], "/api/extensions.csv", gen), &q), s.missCaller(c), answer.Capturing(c.Context()), func() (*answer.Answer, error) {
		q := q // only an answer built moves the query to the heap
		_, ls, err := s.query(f, &q)
		if err != nil {
			return nil, err
		}
		today := views.DayOf(f.Replica().Info().ReadingsMark)
		var buf bytes.Buffer
		w := csvw.NewWriter(&buf)
		w.Write(csvHeader)
		var row document.LegacyRow // each listing's row in turn (rowsPage)
		var doc document.Listing
		for _, l := range ls {
			row.Fill(l, today, &doc)
			w.Write(s.csvRecord(row, l))
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, err
		}
		return answer.New(buf.Bytes(), csvw.ContentType).Tag(tags("api-extensions-csv", q.Store)...), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	name := "extensions"
	if q.Store != nil {
		name += "-" + q.Store.String()
	}
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+"-"+
		f.Replica().Info().ReadingsMark.Format(time.DateOnly)+`.csv"`)
	return answer.Reply{Answer: a, CacheControl: s.publicCache}, nil
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

// getSummary answers GET /api/summary.
func (s *API) getSummary(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.legacyFigures()
	if err != nil {
		return answer.Reply{}, err
	}
	var key [64]byte
	a, err := s.answers.Get(answer.NewKey(key[:0], "/api/summary", gen), func() (*answer.Answer, error) {
		return tagged(answer.JSON(f.Summary()))("api-summary", nil)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: s.publicCache}, nil
}

// getLegacyCategories answers GET /api/categories.
func (s *API) getLegacyCategories(c *fiber.Ctx) (answer.Reply, error) {
	p := &legacyParams{args: c.Context().QueryArgs()}
	store := p.integer("platform", 0, views.NumStores-1)
	if p.err != nil {
		return answer.Reply{}, p.err
	}
	f, gen, err := s.legacyFigures()
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/categories", gen)
	if store != nil {
		key = key.Int("p", *store)
	}
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		counts := f.AllCategories()
		if store != nil {
			counts = f.Categories(views.Store(*store))
		}
		names := make([]string, 0, len(counts))
		for _, c := range counts {
			names = append(names, c.Name)
		}
		var st *views.Store
		if store != nil {
			s := views.Store(*store)
			st = &s
		}
		return tagged(answer.JSON(names))("api-categories", st)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: s.publicCache}, nil
}

// getPermissions answers GET /api/permissions.
func (s *API) getPermissions(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.legacyFigures()
	if err != nil {
		return answer.Reply{}, err
	}
	var key [64]byte
	a, err := s.answers.Get(answer.NewKey(key[:0], "/api/permissions", gen), func() (*answer.Answer, error) {
		return tagged(answer.JSON(f.Permissions()))("api-permissions", nil)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: s.publicCache}, nil
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
