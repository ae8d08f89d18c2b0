package v1

import (
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// RequestAlias returns the alias key of the request rc on route over the
// published state, built in buf (see answer.AliasKey); the zero Key until figures are published.
func RequestAlias(buf []byte, route string, state *views.Published[served.State], rc *fasthttp.RequestCtx) answer.Key {
	st := state.Load()
	if st == nil || st.Figures == nil {
		return answer.Key{}
	}
	return answer.AliasKey(buf, route, st.Replica.Info().Generation, rc.URI().QueryString())
}
