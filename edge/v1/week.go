package v1

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// WeekParams are an edition's query as read: the set of editions
// published when it was read, and the edition asked for (the newest
// when the address names no week).
type WeekParams struct {
	Set     *editions.Set
	Edition *editions.Edition
}

// Week is an edition as the week's reads give it: the edition (its
// JSON), the set it belongs to (a page links its neighbours) and the
// replica its listings are looked up in (a page names their developers).
type Week struct {
	Edition *editions.Edition
	Set     *editions.Set
	Replica *replica.Replica
}

// WeekRead is the read of an edition (GET /api/v1/week/{id}, and
// /api/v1/week, the newest, whose address names no week): a document of
// several lists, answered as JSON (and as a page by package pages).
// Each call declares it anew: a page's route changes its own.
func (s *API) WeekRead() *read.Read[WeekParams, Week] {
	return &read.Read[WeekParams, Week]{
		Cheap:    true,
		Route:    "/api/v1/week/:id",
		NotReady: "Weekly editions are",
		Page:     answer.SamePage,
		Parse:    s.parseWeek,
		Key: func(k answer.Key, p *WeekParams) answer.Key {
			return k.Uint("n", uint64(p.Set.Len())).Str("w", p.Edition.Week)
		},
		Run: func(_ *fiber.Ctx, st *served.State, p *WeekParams, _ read.Needs) (*Week, error) {
			return &Week{Edition: p.Edition, Set: p.Set, Replica: st.Replica}, nil
		},
	}
}

// parseWeek reads the week c's address names ({id}; none: the newest
// edition) and finds its edition: a 503 before any edition is built, a
// 400 for a week written wrong, a 404 for a week without an edition.
func (s *API) parseWeek(c *fiber.Ctx, _ *served.State, _ read.Needs) (WeekParams, error) {
	eds := s.editions.Load()
	weeks := eds.Weeks()
	id := c.Params("id")
	if id == "" {
		e := eds.Latest()
		if e == nil {
			return WeekParams{}, problem.NotReady("Weekly editions are")
		}
		return WeekParams{Set: eds, Edition: e}, nil
	}
	w, err := editions.ParseWeek(id)
	if err != nil {
		return WeekParams{}, problem.New(http.StatusBadRequest, err.Error()).
			ForReaders(fmt.Sprintf("There is no week %.40q: a week is written as its year and number, such as 2026-W05. The page of weeks lists every edition.", id))
	}
	if len(weeks) == 0 {
		return WeekParams{}, problem.NotReady("Weekly editions are")
	}
	e := eds.Get(w)
	if e == nil {
		return WeekParams{}, problem.Newf(http.StatusNotFound, "There is no edition of week %s: editions exist from %s to %s, one for each complete week of the data; /api/v1/weeks lists them.",
			w, weeks[len(weeks)-1], weeks[0]).
			ForReaders(fmt.Sprintf("There is no edition of week %s. The page of weeks lists every edition.", w))
	}
	return WeekParams{Set: eds, Edition: e}, nil
}

// weekJSON writes an edition as JSON.
var weekJSON = read.Codec[Week]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, w *Week) (*answer.Answer, error) { return answer.JSON(w.Edition) }}

// WeeksParams are the list of editions as read: the set published when
// it was read.
type WeeksParams struct{ Set *editions.Set }

// WeekRef is an edition in the list of editions.
type WeekRef struct {
	Week  string `json:"week"`
	Start string `json:"start"` // Monday
	End   string `json:"end"`   // Sunday
}

// Weeks is the list of editions, newest first, and the set they are
// of (a page sums each edition's totals).
type Weeks struct {
	Weeks []WeekRef     `json:"weeks"`
	Set   *editions.Set `json:"-"`
}

// WeeksRead is the read of the list of editions (GET /api/v1/weeks, the
// weeks' page and their feed): every week with an edition, newest first.
// Each call declares it anew: a page's route changes its own.
func (s *API) WeeksRead() *read.Read[WeeksParams, Weeks] {
	return &read.Read[WeeksParams, Weeks]{
		Cheap:    true,
		Route:    "/api/v1/weeks",
		NotReady: "Weekly editions are",
		Page:     answer.SamePage,
		Parse: func(_ *fiber.Ctx, _ *served.State, _ read.Needs) (WeeksParams, error) {
			eds := s.editions.Load()
			if len(eds.Weeks()) == 0 {
				return WeeksParams{}, problem.NotReady("Weekly editions are")
			}
			return WeeksParams{Set: eds}, nil
		},
		Key: func(k answer.Key, p *WeeksParams) answer.Key { return k.Uint("n", uint64(p.Set.Len())) },
		Run: func(_ *fiber.Ctx, _ *served.State, p *WeeksParams, _ read.Needs) (*Weeks, error) {
			weeks := p.Set.Weeks()
			out := &Weeks{Weeks: make([]WeekRef, len(weeks)), Set: p.Set}
			for i, w := range weeks {
				out.Weeks[i] = WeekRef{Week: w.String(), Start: w.Start().String(), End: w.Last().String()}
			}
			return out, nil
		},
	}
}

// weeksJSON writes the list of editions as JSON.
var weeksJSON = read.Codec[Weeks]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, w *Weeks) (*answer.Answer, error) { return answer.JSON(w) }}

// WeeksFiles returns the codecs that write the list of editions as
// files: CSV, one row a week (week, start, end), and NDJSON, one week's
// object a line, each every edition there is, newest first (a few
// hundred at most: no cap).
func WeeksFiles() []read.Codec[Weeks] {
	return []read.Codec[Weeks]{
		{Name: "csv", Type: "text/csv", Encode: func(_ *fiber.Ctx, w *Weeks) (*answer.Answer, error) {
			rows := make([][]string, len(w.Weeks))
			for i, r := range w.Weeks {
				rows[i] = []string{r.Week, r.Start, r.End}
			}
			return csvFile("weeks.csv", []string{"week", "start", "end"}, rows)
		}},
		{Name: "ndjson", Type: NDJSONContentType, Encode: func(_ *fiber.Ctx, w *Weeks) (*answer.Answer, error) {
			return ndjsonFile("weeks.ndjson", w.Weeks)
		}},
	}
}
