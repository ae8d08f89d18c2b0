// Package querykey builds the answer cache's keys of the listing queries
// both APIs share: a query's key from every field that changes its answer,
// and a request's alias key from its query string as sent (package
// answer), so that the versioned and the legacy API key the same query
// alike.
package querykey

import (
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/served"
)

// List adds to k every field of q that changes its answer: all but
// Deadline, the text search's time budget (an answer cut short by it is
// never cached). TestListCoversEveryField fails when a field is added to the
// query and not here. The legacy API keys its queries with it too.
func List(k answer.Key, q *listq.Query) answer.Key {
	k = answer.OptInt(k, "p", q.Store)
	if q.Q != "" {
		k = k.Str("q", q.Q)
	}
	k = answer.OptStr(k, "c", q.Category)
	k = answer.OptInt(k, "t", q.Kind)
	k = answer.OptBool(k, "f", q.Featured)
	k = answer.OptFloat(k, "i0", q.MinInstalls)
	k = answer.OptFloat(k, "i1", q.MaxInstalls)
	k = answer.OptBool(k, "rt", q.Rated)
	k = answer.OptFloat(k, "r0", q.MinRating)
	k = answer.OptFloat(k, "r1", q.MaxRating)
	k = answer.OptInt(k, "n0", q.MinRatingCount)
	k = answer.OptInt(k, "n1", q.MaxRatingCount)
	k = answer.OptStr(k, "v0", q.MinVersion)
	k = answer.OptStr(k, "v1", q.MaxVersion)
	k = answer.OptInt(k, "u0", q.UpdatedAfter)
	k = answer.OptInt(k, "u1", q.UpdatedBefore)
	k = answer.OptInt(k, "s0", q.FirstSeenAfter)
	k = answer.OptInt(k, "s1", q.FirstSeenBefore)
	k = answer.Flag(k, "id", q.IncludeDelisted)
	k = answer.Flag(k, "do", q.DelistedOnly)
	k = answer.OptInt(k, "d0", q.DelistedAfter)
	k = answer.OptInt(k, "d1", q.DelistedBefore)
	k = answer.OptInt(k, "mv", q.ManifestVersion)
	k = answer.OptStr(k, "pm", q.Permission)
	k = answer.Flag(k, "ha", q.HostAccessAll)
	k = answer.OptInt(k, "al", q.MinAccessLevel)
	k = k.Int("so", int64(q.Sort))
	k = answer.Flag(k, "as", q.Asc)
	k = answer.Flag(k, "ov", q.OnlyWithValue)
	k = k.Int("pg", int64(q.Page))
	k = k.Int("ps", int64(q.PageSize))
	k = answer.Flag(k, "no", q.NameOnly)
	k = answer.OptInt(k, "z0", q.MinSize)
	k = answer.OptInt(k, "z1", q.MaxSize)
	k = answer.OptStr(k, "tg", q.Topic)
	k = answer.OptInt(k, "ai", q.AlsoIn)
	return k
}

// Alias returns the alias key of the request rc on route over the
// published state, built in buf (see answer.AliasKey); the zero Key until figures are published.
func Alias(buf []byte, route string, state *views.Published[served.State], rc *fasthttp.RequestCtx) answer.Key {
	st := state.Load()
	if st == nil || st.Figures == nil {
		return answer.Key{}
	}
	return answer.AliasKey(buf, route, st.Replica.Info().Generation, rc.URI().QueryString())
}
