package pages

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// homeTop is how many entries of each store's trending chart the home
// page shows, and storeTop of each chart a store's page shows.
const (
	homeTop  = 5
	storeTop = 10
)

// getHomePage answers GET / for a browser (Accept: text/html preferred to JSON): the five
// stores with the top of their trending charts. A program, or a browser
// before the figures are built, gets the home of the API's links.
func (s *Pages) getHomePage(c *fiber.Ctx) error {
	if !acceptsHTML(c) {
		return c.Next()
	}
	f, gen, err := s.api.Figures("The stores' figures are")
	if err != nil {
		return c.Next()
	}
	var buf [32]byte
	reply, err := s.htmlAnswer(f, answer.NewKey(buf[:0], "/", gen), func(f *figures.Figures) ([]byte, error) {
		var stores []render.StoreSummary
		for _, st := range views.Stores {
			stats := f.Stats(st)
			top := chartList(trimChart(document.NewChart(f, st, figures.ChartTrending, ""), homeTop), st, "/charts/"+st.String()+chartQuery(figures.ChartTrending, ""))
			stores = append(stores, render.StoreSummary{Store: st.String(), URL: "/stores/" + st.String(), Live: stats.Live,
				TotalSize: stats.TotalSize, SizeMeasure: stats.SizeMeasure, Top: top})
		}
		return render.RenderHome(stores, f.Replica().Info().ReadingsMark.UTC().Format("2006-01-02 15:04 UTC"))
	})
	if err != nil {
		return err
	}
	reply.VaryAccept = true
	return s.respond.Handle(func(*fiber.Ctx) (answer.Reply, error) { return reply, nil })(c)
}

// acceptsHTML reports whether the request asks for a page: its Accept
// weighs text/html above JSON (package accept).
func acceptsHTML(c *fiber.Ctx) bool {
	return accept.Prefers(c.Request().Header.Peek(fiber.HeaderAccept), fiber.MIMETextHTML, fiber.MIMEApplicationJSON)
}
