package v1

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/listq"
)

// FuzzListCursor: no string makes the listings cursor's decoder panic, and
// every cursor it accepts is within the bounds of the cursors the API
// issues.
func FuzzListCursor(f *testing.F) {
	for _, c := range []listCursor{
		{Version: 1, Query: 42, Limit: 50, Page: 1, After: listq.Pos{}},
		{Version: 1, Query: 1 << 63, Limit: 100, Page: 199},
		{Version: 1, Query: 7, Limit: 1 << 30, Page: 1},
		{Version: 1, Query: 7, Limit: 5, Page: -1},
	} {
		f.Add(*document.EncodeCursor(c))
	}
	f.Add("")
	f.Add("!!!")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"l":1e999,"p":1}`)))
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := decodeListCursor(s)
		if !ok {
			return
		}
		if c.Version != 1 || c.Limit < 1 || c.Limit > ListFileRows || c.Page < 1 || c.Page >= listMaxPages {
			b, _ := json.Marshal(c)
			t.Fatalf("accepted a cursor out of bounds: %s", b)
		}
	})
}

// FuzzReviewCursor: the reviews cursor's decoder never panics and accepts
// only cursors within the bounds of those the API issues.
func FuzzReviewCursor(f *testing.F) {
	f.Add(*document.EncodeCursor(reviewCursor{Query: "critical\x00", Page: 1, Posted: 1700000000, ID: "r1"}))
	f.Add(*document.EncodeCursor(reviewCursor{Query: "", Page: 1 << 30, ID: "x"}))
	f.Add(*document.EncodeCursor(reviewCursor{Page: 1}))
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := decodeReviewCursor(s)
		if ok && (c.Page < 1 || c.Page >= reviewsMaxPages || c.ID == "") {
			t.Fatalf("accepted a cursor out of bounds: %+v", c)
		}
	})
}

// FuzzReviewSearchCursor: the same for the review-search cursor.
func FuzzReviewSearchCursor(f *testing.F) {
	f.Add(*document.EncodeCursor(reviewSearchCursor{Query: "a\x00critical\x00\x00\x00", Page: 3}))
	f.Add(*document.EncodeCursor(reviewSearchCursor{Page: -1}))
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"q":"x","p":9223372036854775807}`)))
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := decodeReviewSearchCursor(s)
		if ok && (c.Page < 1 || c.Page >= reviewSearchMaxPages) {
			t.Fatalf("accepted a cursor out of bounds: %+v", c)
		}
	})
}

// FuzzListQuery: no query string makes the v1 listing query's parser
// panic, and a query it accepts is within the API's bounds.
func FuzzListQuery(f *testing.F) {
	for _, q := range []string{"", "store=chrome&minSize=10&maxSize=1e3", "sort=rankclimb", "store=apple&sort=rankclimb&order=asc",
		"minSize=5", "store=firefox&minSize=-1", "store=edge&minSize=NaN", "store=edge&maxSize=1e19", "category=%00&tag=%ff",
		"sort=name&order=up", "store=CHROME&store=edge", "q=%E2%80%AE"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var args fasthttp.Args
		args.Parse(raw)
		var q listq.Query
		if parseList(&args, &q) != nil {
			return
		}
		if q.MinSize != nil && (*q.MinSize < 0 || q.Store == nil) || q.MaxSize != nil && (*q.MaxSize < 0 || q.Store == nil) {
			t.Fatalf("%q: accepted a size bound out of range: %+v", raw, q)
		}
		if q.Store != nil && !q.Store.Valid() {
			t.Fatalf("%q: accepted an unknown store", raw)
		}
		if q.Page != 1 || q.PageSize != listDefaultLimit {
			t.Fatalf("%q: paging set by the query: %+v", raw, q)
		}
	})
}
