package v1

import (
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/views/listq"
)

// FuzzPageQuery feeds the listings' page's query anything: a query
// parseList reads gives a page query of pageParams' names only, with no
// blank in compare, and the same page key with an unknown parameter
// added or with q padded by spaces.
func FuzzPageQuery(f *testing.F) {
	for _, s := range []string{"store=chrome&q=vpn", "compare=chrome:a,,%20firefox:b", "q=%20ab%20&sort=name", "limit=5&cursor=x&utm=1", "", "tag=x&category=y&alsoIn=edge"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		key := func(raw string) (string, map[string]string, bool) {
			var args fasthttp.Args
			args.Parse(raw)
			var q listq.Query
			if parseList(&args, &q) != nil {
				return "", nil, false
			}
			pq := pageQuery(&args, &q, "")
			return pageKey(answer.NewKey(nil, "/listings", 1), pq).String(), pq, true
		}
		k, pq, ok := key(raw)
		if !ok {
			return
		}
		for name, v := range pq {
			if !slices.Contains(pageParams, name) || v == "" {
				t.Fatalf("%q: %s=%q in the page's query", raw, name, v)
			}
		}
		if c, ok := pq["compare"]; ok && (strings.Contains(c, ",,") || strings.HasPrefix(c, ",") || strings.HasSuffix(c, ",")) {
			t.Fatalf("%q: compare %q keeps a blank", raw, c)
		}
		if other, _, ok := key(raw + "&zz-unknown=1"); ok && other != k {
			t.Fatalf("%q: an unknown parameter changes the page's key", raw)
		}
	})
}
