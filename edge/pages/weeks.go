package pages

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
)

// weeksHandler answers GET /weeks: the v1 list of editions, newest
// first, as the weeks' page, or as the API's CSV and NDJSON files of it
// (format=, or an Accept that prefers them), public as every page is.
func (s *Pages) weeksHandler() read.Handler {
	rd := *s.api.WeeksRead()
	rd.Route, rd.CacheControl, rd.Page = "/weeks", pageCacheControl, answer.NoPage
	page := read.Codec[v1.Weeks]{Name: "html", Type: fiber.MIMETextHTML, Encode: weeksHTML}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[v1.Weeks]{page}, v1.WeeksFiles()...)...)
}

// weeksHTML writes the list of editions as the weeks' page, each with
// its stores' totals summed.
func weeksHTML(_ *fiber.Ctx, ws *v1.Weeks) (*answer.Answer, error) {
	var refs []render.WeekRef
	for _, w := range ws.Set.Weeks() {
		ref := render.WeekRef{Week: w.String(), Start: w.Start().String(), End: w.Last().String(), URL: "/week/" + w.String()}
		for _, se := range ws.Set.Get(w).Stores {
			ref.Newcomers += se.Totals.Newcomers
			ref.Departures += se.Totals.Departures
			ref.LiveChange += se.Totals.LiveChange
		}
		refs = append(refs, ref)
	}
	body, err := render.RenderWeeks(refs)
	if err != nil {
		return nil, err
	}
	return pageAnswer(answer.NewKey(nil, "/weeks", 0), htmlType, body), nil
}
