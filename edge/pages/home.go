package pages

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// homeTop is how many entries of each store's trending chart the home
// page shows, and storeTop of each chart a store's page shows.
const (
	homeTop  = 5
	storeTop = 10
)

// homeHandler answers GET / for a browser (Accept: text/html preferred
// to JSON): the five stores with the top of their trending charts, a read
// of the published figures. A program, or a browser before the figures
// are built, is handed on to the home of the API's links (package
// apidocs), so the answers name Accept in Vary.
func (s *Pages) homeHandler() read.Handler {
	rd := &read.Read[struct{}, figures.Figures]{
		Route: "/", Cheap: true, CacheControl: pageCacheControl,
		Pass:  func(c *fiber.Ctx, st *served.State) bool { return !acceptsHTML(c) || st == nil || st.Figures == nil },
		Parse: func(*fiber.Ctx, *served.State, read.Needs) (struct{}, error) { return struct{}{}, nil },
		Key:   func(k answer.Key, _ *struct{}) answer.Key { return k },
		Run: func(_ *fiber.Ctx, st *served.State, _ *struct{}, _ read.Needs) (*figures.Figures, error) {
			return st.Figures, nil
		},
	}
	return read.Serve(s.api.Env(), rd, read.Codec[figures.Figures]{Name: "html", Type: fiber.MIMETextHTML,
		Encode: func(_ *fiber.Ctx, f *figures.Figures) (*answer.Answer, error) {
			var stores []render.StoreSummary
			for _, st := range views.Stores {
				stats := f.Stats(st)
				top := chartList(trimChart(document.NewChart(f, st, figures.ChartTrending, ""), homeTop), st, "/charts/"+st.String()+chartQuery(figures.ChartTrending, ""))
				stores = append(stores, render.StoreSummary{Store: st.String(), URL: "/stores/" + st.String(), Live: stats.Live,
					TotalSize: stats.TotalSize, SizeMeasure: stats.SizeMeasure, Top: top})
			}
			body, err := render.RenderHome(stores, f.Replica().Info().ReadingsMark.UTC().Format("2006-01-02 15:04 UTC"))
			if err != nil {
				return nil, err
			}
			return pageAnswer(answer.NewKey(nil, "/", 0), htmlType, body), nil
		}})
}

// acceptsHTML reports whether the request asks for a page: its Accept
// weighs text/html above JSON (package accept).
func acceptsHTML(c *fiber.Ctx) bool {
	return accept.Prefers(c.Request().Header.Peek(fiber.HeaderAccept), fiber.MIMETextHTML, fiber.MIMEApplicationJSON)
}
