package v1

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/series"
	"github.com/edge-stats/edge/views/served"
)

// listingRef is a listing named in a request, as store:id.
type listingRef struct {
	store views.Store
	id    string
}

// parseListingRefs reads a comma-separated list of 2 to
// analytics.MaxSeriesListings listings, each store:id and each once.
func parseListingRefs(raw string) ([]listingRef, error) {
	parts := strings.Split(raw, ",")
	if raw == "" || len(parts) < 2 || len(parts) > analytics.MaxSeriesListings {
		return nil, problem.Newf(http.StatusBadRequest,
			"listings: send 2 to %d listings as store:id, comma-separated, such as listings=chrome:<id>,firefox:<slug>.", analytics.MaxSeriesListings).
			ForReaders(fmt.Sprintf("A comparison is of 2 to %d listings, and this address names fewer or more.", analytics.MaxSeriesListings))
	}
	refs := make([]listingRef, 0, len(parts))
	for _, p := range parts {
		name, id, ok := strings.Cut(p, ":")
		store, err := views.ParseStore(name)
		if !ok || err != nil || id == "" {
			return nil, problem.Newf(http.StatusBadRequest, "listings: %.80q is not store:id; the store is one of chrome, edge, firefox, apple, googleplay.", p).
				ForReaders(fmt.Sprintf("%.80q names no listing of chrome, edge, firefox, apple or googleplay.", p))
		}
		r := listingRef{store, id}
		if slices.Contains(refs, r) {
			return nil, problem.Newf(http.StatusBadRequest, "listings: %s:%.80s is named twice; name each listing once.", store, id).
				ForReaders(fmt.Sprintf("The listing %.80q of %s is in this comparison twice: compare each listing once.", id, store))
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// compareParams reads /compare's listings and days.
func (s *API) compareParams(c *fiber.Ctx, st *served.State) ([]*views.Listing, int, error) {
	refs, err := parseListingRefs(c.Query("listings"))
	if err != nil {
		return nil, 0, err
	}
	ls := make([]*views.Listing, len(refs))
	for i, r := range refs {
		l := st.Replica.Lookup(r.store, r.id)
		if l == nil || !l.Crawled() {
			return nil, 0, problem.Newf(http.StatusNotFound, "There is no listing %.80q in store %s (in listings); use the store's own id, as /api/v1/listings gives it.", r.id, r.store).
				ForReaders(fmt.Sprintf("There is no listing %.80q in the %s store to compare. Search for it by its name or developer.", r.id, r.store))
		}
		ls[i] = l
	}
	days := 90
	if raw := c.Query("days"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxSpanDays {
			return nil, 0, problem.Newf(http.StatusBadRequest, "days: %.40q is not a whole number of days from 1 to %d (default 90).", raw, maxSpanDays).
				ForReaders(fmt.Sprintf("A comparison covers 1 to %d days.", maxSpanDays))
		}
		days = n
	}
	return ls, days, nil
}

// CompareParams are a comparison as asked: its listings and its days.
// Form, set by the comparison's page alone, is the comparison being
// built (fewer than two listings): no comparison is read for it.
type CompareParams struct {
	Listings []*views.Listing
	Days     int
	Form     *CompareForm
}

// CompareForm is the page's form that builds a comparison: the listings
// named so far (store:id) and its days as given.
type CompareForm struct {
	Refs []string
	Days string
}

// Compared is a comparison's result: the comparison (its JSON) and, on
// the page, the form being built instead (not in the JSON).
type Compared struct {
	document.Comparison
	Form *CompareForm `json:"-"`
}

// CompareRead is the read of a comparison (GET /api/v1/compare, its CSV,
// and the comparison's page).
func (s *API) CompareRead() *read.Read[CompareParams, Compared] { return s.compare }

// newCompareRead declares the comparison read: the daily series of 2 to
// 10 listings of any stores over the same days (a day without a reading
// is null), with each listing's growth over the window, in one read of
// ClickHouse under the read budget (a miss waits for a turn of the miss
// gate), kept on its first ask.
func (s *API) newCompareRead() *read.Read[CompareParams, Compared] {
	return &read.Read[CompareParams, Compared]{
		Route: "/api/v1/compare",
		Page:  answer.SamePage,
		Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (CompareParams, error) {
			ls, days, err := s.compareParams(c, st)
			return CompareParams{Listings: ls, Days: days}, err
		},
		Key: func(k answer.Key, p *CompareParams) answer.Key {
			k = k.Int("days", int64(p.Days))
			for _, l := range p.Listings {
				k = k.Int("s", int64(l.Store)).Str("id", l.ID)
			}
			return k
		},
		First: func(*fiber.Ctx, *CompareParams) bool { return true },
		Run:   s.runCompare,
	}
}

// runCompare reads the comparison p.
func (s *API) runCompare(c *fiber.Ctx, st *served.State, p *CompareParams, _ read.Needs) (*Compared, error) {
	ls, days := p.Listings, p.Days
	last := views.DayOf(st.Replica.Info().ReadingsMark)
	first := last - views.Day(days-1)
	keys := make([]analytics.ListingKey, len(ls))
	for i, l := range ls {
		keys[i] = analytics.ListingKey{Store: l.Store, ID: l.ID}
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget)
	defer cancel()
	readings, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (map[analytics.ListingKey][]series.Reading, error) {
		return analytics.LoadDailyReadings(ctx, conn, keys, first, last)
	})
	if err != nil {
		return nil, s.readProblem("the comparison", err)
	}
	out := &Compared{Comparison: document.Comparison{Days: days, From: first.String(), To: last.String(), Dates: make([]string, days)}}
	for d := first; d <= last; d++ {
		out.Dates[d-first] = d.String()
	}
	for i, l := range ls {
		aligned := series.Align(readings[keys[i]], first, last)
		cl := document.ComparedListing{Store: l.Store.String(), ID: l.ID, Name: l.Name, SizeMeasure: l.Store.SizeMeasure(),
			Size: make([]*int64, days), RatingCount: make([]*int64, days), Rating: make([]*float64, days)}
		for j, r := range aligned {
			if r != nil {
				cl.Size[j], cl.RatingCount[j], cl.Rating[j] = r.Size(l.Store), r.RatingCount, r.Rating
			}
		}
		if f, t, ok := series.Ends(aligned, l.Store); ok && f < t {
			d := series.Delta(cl.Size[f], cl.Size[t])
			cl.Growth = &document.WindowGrowth{From: out.Dates[f], To: out.Dates[t], Change: int64(d.Change), Percent: d.Percent}
		}
		out.Listings = append(out.Listings, cl)
	}
	return out, nil
}

// The comparison's codecs: JSON, CSV (one row a listing and day) and
// NDJSON (one listing with its series a line).
var (
	compareJSON = read.Codec[Compared]{Name: "json", Type: fiber.MIMEApplicationJSON,
		Encode: func(_ *fiber.Ctx, c *Compared) (*answer.Answer, error) { return answer.JSON(&c.Comparison) }}
	compareCSVCodec = read.Codec[Compared]{Name: "csv", Type: "text/csv",
		Encode: func(_ *fiber.Ctx, c *Compared) (*answer.Answer, error) { return compareCSV(&c.Comparison) }}
	compareNDJSON = read.Codec[Compared]{Name: "ndjson", Type: NDJSONContentType,
		Encode: func(_ *fiber.Ctx, c *Compared) (*answer.Answer, error) {
			return ndjsonFile("compare.ndjson", c.Listings)
		}}
)

// CompareFiles returns the comparison's file codecs, CSV and NDJSON, for
// the comparison's page to offer too.
func CompareFiles() []read.Codec[Compared] {
	return []read.Codec[Compared]{compareCSVCodec, compareNDJSON}
}

// compareCSV is a comparison as a table: one row a listing and day.
func compareCSV(out *document.Comparison) (*answer.Answer, error) {
	rows := make([][]string, 0, len(out.Listings)*len(out.Dates))
	for _, l := range out.Listings {
		for j, day := range out.Dates {
			rows = append(rows, []string{day, l.Store, answer.CSVText(l.ID), l.SizeMeasure,
				csvw.Int(l.Size[j]), csvw.Int(l.RatingCount[j]), csvw.Float(l.Rating[j])})
		}
	}
	return answer.CSV([]string{"day", "store", "id", "size_measure", "size", "rating_count", "rating"}, rows)
}
