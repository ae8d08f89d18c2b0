package v1

import (
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/listargs"
	"github.com/edge-stats/edge/views/listq"
)

// pageParams are the parameters the listings' page reads, in the order
// its cache key takes them: the API's, and compare (the comparison being
// built, which its links carry on). Others are ignored, as the API
// ignores them.
var pageParams = append([]string{"store", "category", "tag", "alsoIn", "minSize", "maxSize", "kind", "hostAccess"},
	append(slices.Clip(listargs.SharedNames), "q", "sort", "order", "limit", "cursor", "compare")...)

// pageQuery returns the query of the listings' page as it reads it once
// args are read into q: each parameter of pageParams sent with a value,
// store, category, tag and q as q holds them (a store's name, the
// category's and topic's names resolved, q trimmed), the cursor as read
// (pageArgs writes it again from what it holds), compare with its
// blanks left out; the others as sent (read already: parseList and
// pageArgs refuse what they cannot read). The page's caption, form and
// links are written from it, and its cache key made of it, so every
// spelling of one query shares one page and unknown parameters make no
// page of their own.
func pageQuery(args *fasthttp.Args, q *listq.Query, cursor string) map[string]string {
	out := make(map[string]string, 4)
	for _, name := range pageParams {
		if v := queryArg(args, name); v != "" {
			out[name] = strings.Clone(v)
		}
	}
	if q.Store != nil {
		out["store"] = q.Store.String()
	}
	if q.Category != nil {
		out["category"] = *q.Category
	}
	if q.Topic != nil {
		out["tag"] = *q.Topic
	}
	if q.Q != "" {
		out["q"] = q.Q
	}
	if cursor != "" {
		out["cursor"] = cursor
	}
	if v, ok := out["compare"]; ok {
		var refs []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				refs = append(refs, p)
			}
		}
		out["compare"] = strings.Join(refs, ",")
		if len(refs) == 0 {
			delete(out, "compare")
		}
	}
	return out
}

// pageKey adds the page's query pq to k, parameter by parameter in
// pageParams' order.
func pageKey(k answer.Key, pq map[string]string) answer.Key {
	for _, name := range pageParams {
		if v, ok := pq[name]; ok {
			k = k.Str(name, v)
		}
	}
	return k
}

// plainPage reports whether the page's query pq asks for every live
// listing, a store's, a category's or a topic's, sorted and paged, with
// no other filter: its total is then in the published figures' counts.
func plainPage(pq map[string]string) bool {
	for name := range pq {
		switch name {
		case "store", "category", "tag", "sort", "order", "limit", "cursor", "compare":
		default:
			return false
		}
	}
	return true
}
