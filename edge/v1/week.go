package v1

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views/editions"
)

// editionAnswer serves an edition, cached by week and edition count.
func (s *API) editionAnswer(c *fiber.Ctx, eds *editions.Set, e *editions.Edition) error {
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/week/:id", uint64(eds.Len())).Str("w", e.Week)
	a, err := s.answers.Get(key, func() (*answer.Answer, error) { return answer.JSON(e) })
	if err != nil {
		return err
	}
	return answer.Send(c, a, answer.Private)
}

// getLatestWeek answers GET /api/v1/week.
func (s *API) getLatestWeek(c *fiber.Ctx) error {
	eds := s.editions.Load()
	e := eds.Latest()
	if e == nil {
		return problem.NotReady("Weekly editions are")
	}
	return s.editionAnswer(c, eds, e)
}

// getWeek answers GET /api/v1/week/{id}.
func (s *API) getWeek(c *fiber.Ctx) error {
	w, err := editions.ParseWeek(c.Params("id"))
	if err != nil {
		return problem.New(http.StatusBadRequest, err.Error())
	}
	eds := s.editions.Load()
	if eds == nil {
		return problem.NotReady("Weekly editions are")
	}
	e := eds.Get(w)
	if e == nil {
		return problem.Newf(http.StatusNotFound, "There is no edition of week %s: editions exist for complete weeks in the data, the latest being %s.", w, eds.Latest().Week)
	}
	return s.editionAnswer(c, eds, e)
}
