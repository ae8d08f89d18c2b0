package pages

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views/editions"
)

// weeksNotReady answers the weeks' pages before any edition is built.
func weeksNotReady(eds *editions.Set) error {
	if len(eds.Weeks()) == 0 {
		return problem.NotReady("Weekly editions are")
	}
	return nil
}

// getWeeksPage answers GET /weeks: every edition, newest first.
func (s *Pages) getWeeksPage(c *fiber.Ctx) (answer.Reply, error) {
	eds := s.editions.Load()
	if err := weeksNotReady(eds); err != nil {
		return answer.Reply{}, err
	}
	var buf [32]byte
	return s.cached(answer.NewKey(buf[:0], "/weeks", uint64(eds.Len())), htmlType, func() ([]byte, error) {
		var refs []render.WeekRef
		for _, w := range eds.Weeks() {
			ref := render.WeekRef{Week: w.String(), Start: w.Start().String(), End: w.Last().String(), URL: "/week/" + w.String()}
			for _, se := range eds.Get(w).Stores {
				ref.Newcomers += se.Totals.Newcomers
				ref.Departures += se.Totals.Departures
				ref.LiveChange += se.Totals.LiveChange
			}
			refs = append(refs, ref)
		}
		return render.RenderWeeks(refs)
	})
}
