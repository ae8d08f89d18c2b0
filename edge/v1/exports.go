package v1

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
)

// Exports are the daily bulk exports the API lists and serves (package
// cron builds them).
type Exports interface {
	Days() []exports.Manifest   // newest first
	Latest() []exports.Manifest // the latest sets, newest first
	Dir() string
	// Intact reports whether the file at path, listed as f, is as it
	// was when it passed its check against its manifest.
	Intact(path string, f exports.File) bool
}

// exportFile is a file in the exports listing.
type exportFile struct {
	exports.File
	Store *string `json:"store"` // null on a schema file: the API's members are null, never missing
	URL   string  `json:"url"`
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
// first, with each file's name, store, format, size, rows and SHA-256
// (the lake's Parquet files after the others, then its schema files), and the newest latest set
// at its stable addresses.
func (s *API) getExports(c *fiber.Ctx) (answer.Reply, error) {
	if s.exports == nil {
		return answer.Reply{}, problem.New(http.StatusServiceUnavailable, "This edge keeps no exports (its exports job is off). Ask another edge of the service, or retry later.").RetryAfter(60)
	}
	days := s.exports.Days()
	out := struct {
		Days   []exportDay `json:"days"`
		Latest *exportDay  `json:"latest"`
	}{Days: make([]exportDay, len(days))}
	for i, m := range days {
		out.Days[i] = exportDay{Day: m.Day, Files: exportFiles(exportsPath+m.Day+"/", m.Files, m.Parquet, m.Schemas)}
	}
	if sets := s.exports.Latest(); len(sets) > 0 {
		out.Latest = &exportDay{Day: sets[0].Day, Files: exportFiles(exportsPath+exports.LatestDir+"/", sets[0].Parquet, sets[0].Schemas)}
	}
	a, err := answer.JSON(out)
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// exportFiles returns files as listed, each at prefix and its name.
func exportFiles(prefix string, lists ...[]exports.File) []exportFile {
	out := []exportFile{}
	for _, files := range lists {
		for _, f := range files {
			e := exportFile{File: f, URL: prefix + f.Name}
			if f.Store != "" {
				e.Store = &f.Store
			}
			out = append(out, e)
		}
	}
	return out
}
