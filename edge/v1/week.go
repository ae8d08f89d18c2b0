package v1

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views/editions"
)

// editionAnswer serves an edition, cached by week and edition count.
func (s *API) editionAnswer(c *fiber.Ctx, eds *editions.Set, e *editions.Edition) (answer.Reply, error) {
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/week/:id", uint64(eds.Len())).Str("w", e.Week)
	a, err := s.answers.Get(key, func() (*answer.Answer, error) { return answer.JSON(e) })
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// getLatestWeek answers GET /api/v1/week.
func (s *API) getLatestWeek(c *fiber.Ctx) (answer.Reply, error) {
	eds := s.editions.Load()
	e := eds.Latest()
	if e == nil {
		return answer.Reply{}, problem.NotReady("Weekly editions are")
	}
	return s.editionAnswer(c, eds, e)
}

// getWeek answers GET /api/v1/week/{id}.
func (s *API) getWeek(c *fiber.Ctx) (answer.Reply, error) {
	w, err := editions.ParseWeek(c.Params("id"))
	if err != nil {
		return answer.Reply{}, problem.New(http.StatusBadRequest, err.Error())
	}
	eds := s.editions.Load()
	weeks := eds.Weeks()
	if len(weeks) == 0 {
		return answer.Reply{}, problem.NotReady("Weekly editions are")
	}
	e := eds.Get(w)
	if e == nil {
		return answer.Reply{}, problem.Newf(http.StatusNotFound, "There is no edition of week %s: editions exist from %s to %s, one for each complete week of the data; /api/v1/weeks lists them.",
			w, weeks[len(weeks)-1], weeks[0])
	}
	return s.editionAnswer(c, eds, e)
}

// weekRef is an edition in the list of editions.
type weekRef struct {
	Week  string `json:"week"`
	Start string `json:"start"` // Monday
	End   string `json:"end"`   // Sunday
}

// getWeeks answers GET /api/v1/weeks: every week with an edition, newest
// first.
func (s *API) getWeeks(c *fiber.Ctx) (answer.Reply, error) {
	eds := s.editions.Load()
	weeks := eds.Weeks()
	if len(weeks) == 0 {
		return answer.Reply{}, problem.NotReady("Weekly editions are")
	}
	var buf [32]byte
	key := answer.NewKey(buf[:0], "/api/v1/weeks", uint64(eds.Len()))
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		out := make([]weekRef, len(weeks))
		for i, w := range weeks {
			out[i] = weekRef{Week: w.String(), Start: w.Start().String(), End: w.Last().String()}
		}
		return answer.JSON(map[string][]weekRef{"weeks": out})
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}
