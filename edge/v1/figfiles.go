package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// The files of the figures' lists: a store's categories, a chart, the
// topics and a topic's listings in a store, each as CSV (a header, then
// one row a list's element, in the JSON's order) and as NDJSON (each
// element as the JSON holds it, a line each). Each is a codec of the
// list's read, on the API's route and on its page's.

// files returns the CSV and NDJSON codecs of a list: its file's name
// (letters, digits, '-' and '.' only) without the extension, its CSV
// header and rows, and its elements as JSON (rows and lines in the same
// order). A codec needing n asks the read for it.
func files[T any](n read.Needs, name func(v *T) string, header []string, rows func(v *T, add func(row []string)), lines func(v *T, add func(doc any))) []read.Codec[T] {
	return []read.Codec[T]{
		{Name: "csv", Type: "text/csv", Needs: n, Encode: func(_ *fiber.Ctx, v *T) (*answer.Answer, error) {
			var buf bytes.Buffer
			w := csvw.NewWriter(&buf)
			w.Write(header)
			rows(v, func(row []string) { w.Write(row) })
			w.Flush()
			if err := w.Error(); err != nil {
				return nil, fmt.Errorf("encode %s CSV: %w", name(v), err)
			}
			a := answer.New(buf.Bytes(), csvw.ContentType)
			a.SetFile(name(v) + ".csv")
			return a, nil
		}},
		{Name: "ndjson", Type: NDJSONContentType, Needs: n, Encode: func(_ *fiber.Ctx, v *T) (*answer.Answer, error) {
			var b []byte
			var err error
			lines(v, func(doc any) {
				if err != nil {
					return
				}
				var line []byte
				if line, err = json.Marshal(doc); err == nil {
					b = append(append(b, line...), '\n')
				}
			})
			if err != nil {
				return nil, fmt.Errorf("encode %s NDJSON: %w", name(v), err)
			}
			a := answer.New(b, NDJSONContentType)
			a.SetFile(name(v) + ".ndjson")
			return a, nil
		}},
	}
}

// fileSafe is s with every byte but a letter, a digit, '-' and '_'
// dropped: a part of a file's name.
func fileSafe(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b = append(b, c)
		}
	}
	return string(b)
}

// categoryCSVHeader names the columns of a store's categories' CSV.
var categoryCSVHeader = []string{"store", "name", "listings", "total_size", "growth_7d", "growth_30d"}

// CategoriesFiles are the files of a store's categories: one row a
// category, by name.
func CategoriesFiles() []read.Codec[Categories] {
	return files(read.Needs{}, func(v *Categories) string { return "categories-" + v.Store }, categoryCSVHeader,
		func(v *Categories, add func([]string)) {
			for _, c := range v.Categories {
				add([]string{v.Store, csvw.Text(c.Name), strconv.Itoa(c.Listings), strconv.FormatInt(c.TotalSize, 10), csvw.Int(c.Growth7d), csvw.Int(c.Growth30d)})
			}
		},
		func(v *Categories, add func(any)) {
			for i := range v.Categories {
				add(&v.Categories[i])
			}
		})
}

// chartCSVHeader names the columns of a chart's CSV: an entry's place
// and the figures it is ranked by, then its listing's key figures.
var chartCSVHeader = []string{"position", "from", "to", "change", "percent", "climb",
	"store", "id", "name", "developer", "category", "size", "size_measure", "rating", "rating_count", "store_rank", "category_rank",
	"growth_7d", "growth_7d_percent"}

// ChartFiles are the files of a chart: one row an entry, in its order.
func ChartFiles() []read.Codec[Chart] {
	return files(read.Needs{}, func(v *Chart) string { return "chart-" + v.Doc.Store + "-" + v.Doc.Chart },
		chartCSVHeader,
		func(v *Chart, add func([]string)) {
			for _, e := range v.Doc.Entries {
				d := &e.Listing
				var climb string
				if e.Climb != nil {
					climb = strconv.Itoa(*e.Climb)
				}
				add([]string{strconv.Itoa(e.Position), csvw.Time(e.From), csvw.Time(e.To), csvw.Int(e.Change), csvw.Float(e.Percent), climb,
					d.Store, csvw.Text(d.ID), csvw.Text(d.Name), csvw.Text(d.Developer), csvw.Text(d.Category),
					csvw.Int(d.Size), d.SizeMeasure, csvw.Float(d.Rating), csvw.Int(d.RatingCount), optInt(d.StoreRank), optInt(d.CategoryRank),
					csvw.Int(d.Growth.D7.Amount()), changePercent(d.Growth.D7)})
			}
		},
		func(v *Chart, add func(any)) {
			for i := range v.Doc.Entries {
				add(&v.Doc.Entries[i])
			}
		})
}

// tagCSVHeader names the columns of the topics' CSV: the slug, then its
// live listings in each store.
var tagCSVHeader = func() []string {
	h := []string{"slug"}
	for _, s := range views.Stores {
		h = append(h, s.String())
	}
	return h
}()

// TagsFiles are the files of the topics: one row a topic, by slug, with
// its live listings per store.
func TagsFiles() []read.Codec[Tags] {
	return files(read.Needs{}, func(*Tags) string { return "tags" }, tagCSVHeader,
		func(v *Tags, add func([]string)) {
			for _, t := range v.Tags {
				row := []string{csvw.Text(t.Slug)}
				for _, s := range views.Stores {
					row = append(row, strconv.Itoa(t.Listings[s.String()]))
				}
				add(row)
			}
		},
		func(v *Tags, add func(any)) {
			for i := range v.Tags {
				add(&v.Tags[i])
			}
		})
}

// TagFiles are the files of a topic's listings in a store: one row a
// listing (the columns of the listings' CSV), largest first, the first
// ListFileRows of them (the listings' files with tag= and store= go on
// past them with cursors).
func TagFiles() []read.Codec[TagListings] {
	name := func(v *TagListings) string { return "tag-" + fileSafe(v.Tag) + "-" + v.Store }
	cs := files(read.Needs{Rows: ListFileRows}, name, listingCSVHeader, nil,
		func(v *TagListings, add func(any)) {
			var d document.Listing
			for _, l := range v.Rows {
				d.Fill(l, v.Figures)
				add(&d)
			}
		})
	cs[0].Encode = listingRowsCSV(name, func(v *TagListings) *document.ListingPage {
		return &document.ListingPage{Listings: v.Rows, Figures: v.Figures}
	})
	return cs
}

// listingRowsCSV is the CSV encoder of a result whose rows are listings
// (page gives them), as the listings' file writes them, in a file named
// by name.
func listingRowsCSV[T any](name func(v *T) string, page func(v *T) *document.ListingPage) func(*fiber.Ctx, *T) (*answer.Answer, error) {
	return func(_ *fiber.Ctx, v *T) (*answer.Answer, error) {
		a, err := listingsCSV(page(v))
		if err != nil {
			return nil, err
		}
		a.SetFile(name(v) + ".csv")
		return a, nil
	}
}
