package edge

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/views"
)

// healthz answers 200 while the process runs.
func (s *Server) healthz(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"status": "ok"})
}

// readiness is the body of /readyz.
type readiness struct {
	Ready        bool           `json:"ready"`
	Generation   uint64         `json:"generation"`
	Listings     map[string]int `json:"listings"`
	LoadedAt     *time.Time     `json:"loadedAt"`
	LoadSeconds  float64        `json:"loadSeconds"`
	DataAsOf     *time.Time     `json:"dataAsOf"`     // newest reading in the replica
	Figures      bool           `json:"figures"`      // computed figures are published
	BuildSeconds float64        `json:"buildSeconds"` // of the published figures
	Editions     int            `json:"editions"`     // weekly editions built
	Jobs         []cron.Status  `json:"jobs"`
	// Fleet is what this edge knows of its fleet's leader (with a fleet
	// address): whether a working leader answers, and since when none
	// has. An edge that holds a state stays ready without one: it serves
	// that state, and the fleet's lack of a leader is said here.
	Fleet        any       `json:"fleet,omitempty"`
	ServerTimeUT time.Time `json:"serverTime"`
}

// readyz answers 503 until the replica is loaded and 200 after.
func (s *Server) readyz(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	r := readiness{Listings: map[string]int{}, Jobs: s.jobs(), ServerTimeUT: time.Now().UTC(),
		Editions: s.editions.Load().Len()}
	if s.fleet != nil {
		r.Fleet = s.fleet()
	}
	if r.Jobs == nil {
		r.Jobs = []cron.Status{}
	}
	st := s.state.Load()
	if st == nil {
		c.Set(fiber.HeaderRetryAfter, "5")
		return c.Status(http.StatusServiceUnavailable).JSON(r)
	}
	info := st.Replica.Info()
	r.Ready, r.Generation, r.LoadSeconds = true, info.Generation, info.LoadTime.Seconds()
	r.LoadedAt = &info.LoadedAt
	if !info.ReadingsMark.IsZero() {
		r.DataAsOf = &info.ReadingsMark
	}
	if st.Figures != nil {
		_, took := st.Figures.BuiltAt()
		r.Figures, r.BuildSeconds = true, took.Seconds()
	}
	for i, n := range st.Replica.Counts() {
		r.Listings[views.Store(i).String()] = n
	}
	return c.JSON(r)
}
