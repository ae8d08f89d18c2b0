package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views/document"
)

// NDJSONContentType is the content type of NDJSON answers: one JSON
// document a line.
const NDJSONContentType = "application/x-ndjson"

// fileNeeds is what a file of a list needs of the listings read: up to
// ListFileRows rows, and the query as the form reads it (its canonical
// parameters), which its next part's link is written from.
var fileNeeds = read.Needs{Rows: ListFileRows, Form: true}

// ListingFiles returns the codecs that write a listings query as files
// served at path (the API's or the page's): CSV, one row a listing, and
// NDJSON, one listing document a line. Each holds the query's first
// ListFileRows rows (limit asks for fewer) in its order; when more
// follow, its Link names the next file (rel="next", a cursor).
func ListingFiles(path string) []read.Codec[document.ListingPage] {
	return []read.Codec[document.ListingPage]{
		{Name: "csv", Type: "text/csv", Needs: fileNeeds, Encode: func(_ *fiber.Ctx, p *document.ListingPage) (*answer.Answer, error) {
			a, err := listingsCSV(p)
			if err != nil {
				return nil, err
			}
			return fileAnswer(a, p, path, "csv"), nil
		}},
		{Name: "ndjson", Type: NDJSONContentType, Needs: fileNeeds, Encode: func(_ *fiber.Ctx, p *document.ListingPage) (*answer.Answer, error) {
			return fileAnswer(answer.New(listingsNDJSON(p), NDJSONContentType), p, path, "ndjson"), nil
		}},
	}
}

// fileAnswer names a, the file of p in format, and its next part at path.
// A search cut short by its time budget is not kept.
func fileAnswer(a *answer.Answer, p *document.ListingPage, path, format string) *answer.Answer {
	a.SetFile("listings." + format)
	if p.NextCursor != nil {
		a.SetNext(nextFile(path, p.Query, *p.NextCursor, format))
	}
	if p.Partial {
		a.NoStore, a.ETag = true, ""
	}
	return a
}

// nextFile is the address of the file after the one of the query form:
// its parameters in pageParams' order (but the comparison being built,
// which a file has no use for), the cursor, and the format, each
// percent-encoded.
func nextFile(path string, form map[string]string, cursor, format string) string {
	var b strings.Builder
	b.WriteString(path)
	sep := byte('?')
	add := func(name, v string) {
		b.WriteByte(sep)
		sep = '&'
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(v))
	}
	for _, name := range pageParams {
		if v, ok := form[name]; ok && name != "cursor" && name != "compare" {
			add(name, v)
		}
	}
	add("cursor", cursor)
	add("format", format)
	return b.String()
}

// listingCSVHeader names the columns of a listings CSV: the listing
// document's fields, lists joined by spaces, growth as the change and
// percent of each window.
var listingCSVHeader = []string{"store", "id", "name", "developer", "category", "kind", "version", "updated", "created",
	"first_seen", "delisted_at", "live", "featured", "manifest_version", "access_level", "permissions", "host_access", "topics",
	"size", "size_measure", "usage", "weekly_downloads", "rating", "rating_count", "store_rank", "category_rank",
	"growth_1d", "growth_7d", "growth_7d_percent", "growth_30d", "growth_30d_percent", "growth_365d", "rank_climb_7d", "read_at"}

// listingsCSV writes p as CSV: UTF-8 with a byte-order mark, a header
// row, one row a listing, CRLF line ends, the stores' text guarded
// against spreadsheet formulas (csvw.Text).
func listingsCSV(p *document.ListingPage) (*answer.Answer, error) {
	var buf bytes.Buffer
	buf.Grow(256 * (len(p.Listings) + 1))
	w := csvw.NewWriter(&buf)
	w.Write(listingCSVHeader)
	row := make([]string, len(listingCSVHeader))
	var d document.Listing
	for _, l := range p.Listings {
		d.Fill(l, p.Figures)
		row = append(row[:0], d.Store, csvw.Text(d.ID), csvw.Text(d.Name), csvw.Text(d.Developer), csvw.Text(d.Category),
			d.Kind, csvw.Text(d.Version), optText(d.Updated), optText(d.Created), d.FirstSeen.Format(time.RFC3339), csvw.Time(d.DelistedAt),
			strconv.FormatBool(d.Live), strconv.FormatBool(d.Featured), optUint8(d.ManifestVersion), optUint8(d.AccessLevel),
			csvw.Text(strings.Join(d.Permissions, " ")), csvw.Text(strings.Join(d.HostAccess, " ")), csvw.Text(strings.Join(d.Topics, " ")),
			csvw.Int(d.Size), d.SizeMeasure, csvw.Int(d.Usage), csvw.Int(d.WeeklyDownloads), csvw.Float(d.Rating), csvw.Int(d.RatingCount),
			optInt(d.StoreRank), optInt(d.CategoryRank),
			csvw.Int(d.Growth.D1.Amount()), csvw.Int(d.Growth.D7.Amount()), changePercent(d.Growth.D7), csvw.Int(d.Growth.D30.Amount()),
			changePercent(d.Growth.D30), csvw.Int(d.Growth.D365.Amount()), optInt(d.RankClimb7d), csvw.Time(d.ReadAt))
		w.Write(row)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("encode listings CSV: %w", err)
	}
	return answer.New(buf.Bytes(), csvw.ContentType), nil
}

// listingsNDJSON writes p as NDJSON: each listing's document, as the JSON
// page holds it, on a line of its own.
func listingsNDJSON(p *document.ListingPage) []byte {
	b := make([]byte, 0, 1024*len(p.Listings))
	var d document.Listing
	for _, l := range p.Listings {
		d.Fill(l, p.Figures)
		b = append(d.AppendJSON(b), '\n')
	}
	return b
}

func optText(s *string) string {
	if s == nil {
		return ""
	}
	return csvw.Text(*s)
}

func optUint8(v *uint8) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(int(*v))
}

func optInt(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

// changePercent is a window's change as a percent of its start, or "".
func changePercent(c *document.Change) string {
	if c == nil {
		return ""
	}
	return csvw.Float(c.Percent)
}

// ndjsonFile writes rows as an NDJSON file named name: each row's JSON
// (as the JSON answer holds it) on a line of its own.
func ndjsonFile[R any](name string, rows []R) (*answer.Answer, error) {
	var b bytes.Buffer
	b.Grow(128 * len(rows))
	enc := json.NewEncoder(&b) // each value and a newline
	enc.SetEscapeHTML(true)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return nil, fmt.Errorf("encode %s: %w", name, err)
		}
	}
	a := answer.New(b.Bytes(), NDJSONContentType)
	a.SetFile(name)
	return a, nil
}

// csvFile writes a table as a CSV file named name.
func csvFile(name string, header []string, rows [][]string) (*answer.Answer, error) {
	body, err := csvw.Table(header, rows)
	if err != nil {
		return nil, err
	}
	a := answer.New(body, csvw.ContentType)
	a.SetFile(name)
	return a, nil
}
