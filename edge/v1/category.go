package v1

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/served"
)

// categoryTop is how many listings each of a category's lists holds.
const categoryTop = 10

// categoryWeeks is how many weeks back a category's weekly totals reach.
const categoryWeeks = 104

// CategoryParams are a category's parameters as read: the store and the
// category's name as the store writes it.
type CategoryParams struct {
	Store views.Store
	Name  string
}

// Category is one category of a store: its live listings, their total
// size and growth (as the categories' list counts them), its largest
// live listings and those that grew most over 7 days, and its totals at
// the end of each week (each Sunday's and the newest day's, from the
// daily ranks: the listings ranked that day and the sum of their sizes).
// WeeksMissing says the weekly totals could not be read in the read
// budget: the answer then holds none and is not kept.
type Category struct {
	Store        string                  `json:"store"`
	Category     string                  `json:"category"`
	SizeMeasure  string                  `json:"sizeMeasure"`
	Listings     int                     `json:"listings"`
	TotalSize    int64                   `json:"totalSize"`
	Growth7d     *int64                  `json:"growth7d"`
	Growth30d    *int64                  `json:"growth30d"`
	Top          []document.Listing      `json:"top"`
	Fastest      []document.Listing      `json:"fastest"`
	Weeks        []analytics.CategoryDay `json:"weeks"`
	WeeksMissing bool                    `json:"weeksMissing"`
	// Ranking says the ranks job was counting days on this edge when the
	// weeks were read: they may lack some, and the answer is not kept.
	Ranking bool `json:"ranking"`
}

// CategoryRead is the read of one category of a store (GET
// /api/v1/categories/{store}/{category} and the category's page).
func (s *API) CategoryRead() *read.Read[CategoryParams, Category] { return s.category }

// newCategoryRead declares the category read: its weekly totals are read
// from ClickHouse under the read budget, so it is not Cheap (a miss
// waits for a turn of the miss gate).
func (s *API) newCategoryRead() *read.Read[CategoryParams, Category] {
	return &read.Read[CategoryParams, Category]{
		Route:    "/api/v1/categories/:store/:category",
		NotReady: "The store's categories are",
		Page:     answer.SamePage,
		Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (CategoryParams, error) {
			store, err := StoreParam(c)
			if err != nil {
				return CategoryParams{}, err
			}
			raw, err := url.PathUnescape(c.Params("category"))
			if err != nil || !utf8.ValidString(raw) || strings.ContainsFunc(raw, unicode.IsControl) || utf8.RuneCountInString(raw) > developerMaxName {
				return CategoryParams{}, problem.Newf(http.StatusBadRequest, "category: %.40q is not a category's name or slug: send one of /api/v1/categories/%s, percent-encoded, 1 to %d characters.", c.Params("category"), store, developerMaxName).
					ForReaders("This address names no category: the store's page lists its categories.")
			}
			name, err := categoryArg(st.Figures, &store, raw)
			return CategoryParams{Store: store, Name: strings.Clone(name)}, err
		},
		Key: func(k answer.Key, p *CategoryParams) answer.Key {
			return k.Int("s", int64(p.Store)).Str("cat", p.Name)
		},
		First: func(*fiber.Ctx, *CategoryParams) bool { return true },
		Run:   s.runCategory,
	}
}

// runCategory gathers category p's figures, lists and weeks.
func (s *API) runCategory(c *fiber.Ctx, st *served.State, p *CategoryParams, _ read.Needs) (*Category, error) {
	f := st.Figures
	out := &Category{Store: p.Store.String(), Category: p.Name, SizeMeasure: p.Store.SizeMeasure(),
		Top: []document.Listing{}, Fastest: []document.Listing{}, Weeks: []analytics.CategoryDay{}}
	for _, cc := range f.Categories(p.Store) {
		if cc.Name == p.Name {
			out.Listings, out.TotalSize, out.Growth7d, out.Growth30d = cc.Listings, cc.TotalSize, cc.Growth7d, cc.Growth30d
		}
	}
	out.Ranking = s.ranking()
	out.Top = categoryList(f, p, listq.SortSize)
	for _, d := range categoryList(f, p, listq.SortGrowth7d) {
		if d.Growth.D7 != nil && d.Growth.D7.Change > 0 { // grew: a list of the fastest growing holds no fall
			out.Fastest = append(out.Fastest, d)
		}
	}
	last := views.DayOf(st.Replica.Info().ReadingsMark)
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget)
	defer cancel()
	weeks, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) ([]analytics.CategoryDay, error) {
		return analytics.LoadCategoryWeeks(ctx, conn, p.Store, p.Name, last-views.Day(7*categoryWeeks), last)
	})
	if err != nil {
		s.log.Warn("read-through failed", "what", "a category's weeks", "err", err)
		out.WeeksMissing = true
	} else {
		out.Weeks = weeks
	}
	return out, nil
}

// categoryList returns the first categoryTop live listings of category
// p by sort, largest first (only those with a value of it).
func categoryList(f *figures.Figures, p *CategoryParams, sort listq.Sort) []document.Listing {
	q := listq.Query{Store: &p.Store, Category: &p.Name, Sort: sort, OnlyWithValue: true, PageSize: categoryTop}
	ls, _, _, _ := f.Listings().List(&q, nil)
	out := make([]document.Listing, 0, len(ls))
	for _, l := range ls {
		out = append(out, document.NewListing(l, f))
	}
	return out
}

// Transient reports whether v lacks its weeks: its answers are not kept.
func (v *Category) Transient() bool { return v.WeeksMissing || v.Ranking }

// Transient is a read's result that may lack a part it reads from
// ClickHouse (its read budget ran out): such an answer is not kept, so
// that the next ask reads it again.
type Transient interface{ Transient() bool }

// transientFiles are codecs cs whose answers are not kept when their
// result is Transient.
func transientFiles[T any](cs []read.Codec[T]) []read.Codec[T] {
	for i := range cs {
		enc := cs[i].Encode
		cs[i].Encode = func(c *fiber.Ctx, v *T) (*answer.Answer, error) {
			a, err := enc(c, v)
			if t, ok := any(v).(Transient); ok && err == nil {
				a.NoStore = t.Transient()
			}
			return a, err
		}
	}
	return cs
}

// categoryJSON writes a category; an answer without its weeks is not
// kept (it is asked again).
var categoryJSON = transientFiles([]read.Codec[Category]{jsonOf(func(v *Category) any { return v })})[0]

// CategoryFiles are a category's weeks as CSV and NDJSON: one row a week
// (day, listings, total_size), every week it holds.
func CategoryFiles() []read.Codec[Category] {
	name := func(v *Category) string { return "category-" + fileSafe(v.Category) + "-" + v.Store }
	cs := files(read.Needs{}, name, []string{"day", "listings", "total_size"},
		func(v *Category, add func([]string)) {
			for _, w := range v.Weeks {
				add([]string{w.Day, strconv.FormatInt(w.Listings, 10), strconv.FormatInt(w.TotalSize, 10)})
			}
		},
		func(v *Category, add func(any)) {
			for i := range v.Weeks {
				add(&v.Weeks[i])
			}
		})
	return transientFiles(cs)
}
