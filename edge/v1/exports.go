package v1

import (
	"errors"
	"net/http"
	"os"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
)

// Exports are the daily bulk exports the API lists and serves (package
// cron builds them).
type Exports interface {
	Days() []exports.Manifest // newest first
	Dir() string
}

// exportFile is a file in the exports listing.
type exportFile struct {
	exports.File
	URL string `json:"url"`
}

// exportDay is a day in the exports listing.
type exportDay struct {
	Day   string       `json:"day"`
	Files []exportFile `json:"files"`
}

// exportsPath is where the files are served.
const exportsPath = "/api/v1/exports/"

// immutable is the Cache-Control of an export file: its bytes never
// change. It needs a key, and varies by it: a shared cache keeps one copy
// a key.
const immutable = "public, max-age=31536000, immutable"

// getExports answers GET /api/v1/exports: every day exported, newest
// first, with each file's name, store, format, size, rows and SHA-256.
func (s *API) getExports(c *fiber.Ctx) (answer.Reply, error) {
	if s.exports == nil {
		return answer.Reply{}, problem.New(http.StatusServiceUnavailable, "This edge keeps no exports (its exports job is off). Ask another edge of the service, or retry later.").RetryAfter(60)
	}
	days := s.exports.Days()
	out := struct {
		Days []exportDay `json:"days"`
	}{Days: make([]exportDay, len(days))}
	for i, m := range days {
		d := exportDay{Day: m.Day, Files: make([]exportFile, len(m.Files))}
		for j, f := range m.Files {
			d.Files[j] = exportFile{File: f, URL: exportsPath + m.Day + "/" + f.Name}
		}
		out.Days[i] = d
	}
	a, err := answer.JSON(out)
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// getExportFile answers GET /api/v1/exports/{day}/{file}: a file of a
// day's export, for callers with a key, as immutable bytes with a strong
// ETag (its SHA-256). Only files a published manifest lists are served.
func (s *API) getExportFile(c *fiber.Ctx) error {
	if s.exports == nil {
		return problem.New(http.StatusServiceUnavailable, "This edge keeps no exports (its exports job is off). Ask another edge of the service, or retry later.").RetryAfter(60)
	}
	if len(c.Request().Header.Peek(fiber.HeaderAuthorization)) == 0 && len(c.Request().Header.Peek("X-Api-Key")) == 0 {
		return problem.New(http.StatusUnauthorized, "The exports need a key: send Authorization: Bearer <key> (make one at /account).").
			WithHeader(fiber.HeaderWWWAuthenticate, `Bearer realm="edge", error="invalid_request", error_description="The exports need a key."`)
	}
	day, name := c.Params("day"), c.Params("file")
	for _, m := range s.exports.Days() {
		if m.Day != day {
			continue
		}
		path, f, ok := exports.Path(s.exports.Dir(), m, name)
		if !ok {
			break
		}
		h := &c.Response().Header
		etag := `"` + f.SHA256 + `"`
		h.Set(fiber.HeaderETag, etag)
		h.Set(fiber.HeaderCacheControl, immutable)
		h.Set(fiber.HeaderVary, "Authorization, X-Api-Key")
		if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && answer.ETagMatches(inm, etag) {
			c.Status(http.StatusNotModified)
			return nil
		}
		file, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			break // pruned since it was listed
		}
		if err != nil {
			return s.readProblem("the export file", err)
		}
		h.SetContentType("application/gzip")
		h.Set(fiber.HeaderContentDisposition, `attachment; filename="`+m.Day+"-"+f.Name+`"`)
		c.Response().SetBodyStream(file, int(f.Size))
		return nil
	}
	return problem.Newf(http.StatusNotFound, "There is no export file %.40q of day %.20q: GET /api/v1/exports lists the days kept and their files.", name, day)
}
