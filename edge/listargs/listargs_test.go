package listargs

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/views/listq"
)

// read parses query with Shared.
func read(query string) (listq.Query, *Reader) {
	var args fasthttp.Args
	args.Parse(query)
	r := &Reader{Args: &args}
	var q listq.Query
	r.Shared(&q)
	return q, r
}

// TestShared reads each filter, and refuses a value it cannot read with a
// detail that names its parameter and reader's words that name its label.
func TestShared(t *testing.T) {
	q, r := read("featured=1&minRating=4.5&maxRatingCount=10&minVersion=2.10&updatedAfter=2026-02-01&includeDelisted=true&manifestVersion=3&permission=tabs&minAccessLevel=2")
	if r.Err != nil || q.Featured == nil || !*q.Featured || *q.MinRating != 4.5 || *q.MaxRatingCount != 10 || *q.MinVersion != "2.10" ||
		q.UpdatedAfter == nil || !q.IncludeDelisted || *q.ManifestVersion != 3 || *q.Permission != "tabs" || *q.MinAccessLevel != 2 {
		t.Fatalf("read %+v, err %v", q, r.Err)
	}
	if q, r := read("featured=&minRating="); r.Err != nil || q.Featured != nil || q.MinRating != nil {
		t.Errorf("empty values (a form's empty fields) are filters not set: %+v %v", q, r.Err)
	}
	for query, param := range map[string]string{
		"minRating=5.1": "minRating", "maxRating=NaN": "maxRating", "minRatingCount=1.5": "minRatingCount",
		"featured=yes": "featured", "updatedBefore=2026-02-30": "updatedBefore", "minVersion=v2": "minVersion",
		"manifestVersion=1": "manifestVersion", "minAccessLevel=0": "minAccessLevel", "delistedOnly=2": "delistedOnly",
		"minRating=abc&maxRating=9": "minRating", // the first refusal is kept
	} {
		_, r := read(query)
		if r.Err == nil || !strings.HasPrefix(r.Err.Detail, param+": ") || !strings.Contains(r.Err.ReaderText(), "The filter “"+label(param)+"”") {
			t.Errorf("?%s: %v", query, r.Err)
		}
	}
}

// FuzzShared: any query reads without a panic into filters within their
// bounds, or a refusal that names a parameter, and reader's words of
// bounded length whatever the value's length.
func FuzzShared(f *testing.F) {
	for _, s := range []string{"minRating=4", "featured=true&permission=%00", "updatedAfter=2026-01-01&updatedAfter=x", "minVersion=" + strings.Repeat("9.", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, query string) {
		q, r := read(query)
		if r.Err != nil {
			if len(r.Err.ReaderText()) > 400 {
				t.Fatalf("reader's words of %d bytes", len(r.Err.ReaderText()))
			}
			return
		}
		if q.MinRating != nil && (*q.MinRating < 0 || *q.MinRating > 5) || q.MinAccessLevel != nil && (*q.MinAccessLevel < 1 || *q.MinAccessLevel > 4) ||
			q.ManifestVersion != nil && *q.ManifestVersion != 2 && *q.ManifestVersion != 3 {
			t.Fatalf("a filter out of its bounds: %+v", q)
		}
	})
}
