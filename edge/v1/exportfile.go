package v1

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/byterange"
	"github.com/edge-stats/edge/edge/problem"
)

// exportTarget is a file an export address names.
type exportTarget struct {
	path     string
	file     exports.File
	cache    string // Cache-Control
	location string // Content-Location: the set's own address of a latest file
	filename string // of Content-Disposition
}

// latestCache is the Cache-Control of a latest address: its bytes change
// once a day, so a cache keeps them for minutes and revalidates (the
// strong ETag tells a new day's bytes).
const latestCache = "public, max-age=300"

// exposedFileHeaders is Access-Control-Expose-Headers on an export
// file's answers.
const exposedFileHeaders = "ETag, Content-Range, Accept-Ranges, Content-Length, Content-Location, Content-Disposition, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After"

// parquetType is the media type of a Parquet file (IANA, 2024).
const parquetType = "application/vnd.apache.parquet"

// findExport returns the file that day and name (the rest of the path)
// name: a day's file, a file of a latest set (day "latest", name
// "<set day>/<file>"), or the newest set's file (day "latest").
func (s *API) findExport(day, name string) (exportTarget, bool) {
	name, err := url.PathUnescape(name)
	if err != nil {
		return exportTarget{}, false
	}
	if day != exports.LatestDir {
		for _, m := range s.exports.Days() {
			if m.Day != day {
				continue
			}
			path, f, ok := exports.Path(s.exports.Dir(), m, name)
			return exportTarget{path: path, file: f, cache: immutable, filename: downloadName(m.Day, f)}, ok
		}
		return exportTarget{}, false
	}
	sets := s.exports.Latest()
	if set, rest, ok := strings.Cut(name, "/"); ok {
		if _, err := time.Parse(time.DateOnly, set); err == nil {
			for _, m := range sets {
				if m.Day == set {
					path, f, ok := exports.LatestPath(s.exports.Dir(), m, rest)
					return exportTarget{path: path, file: f, cache: immutable, filename: downloadName("latest-"+m.Day, f)}, ok
				}
			}
			return exportTarget{}, false
		}
	}
	if len(sets) == 0 {
		return exportTarget{}, false
	}
	path, f, ok := exports.LatestPath(s.exports.Dir(), sets[0], name)
	return exportTarget{path: path, file: f, cache: latestCache, filename: downloadName("latest-"+sets[0].Day, f),
		location: exportsPath + exports.LatestDir + "/" + sets[0].Day + "/" + name}, ok
}

// ifMatch says whether If-Match header h names etag (RFC 9110 13.1.1:
// a strong comparison; "*" any file).
func ifMatch(h, etag string) bool {
	for _, t := range strings.Split(h, ",") {
		if t = strings.TrimSpace(t); t == "*" || t == etag {
			return true
		}
	}
	return false
}

// contentTypeOf returns the media type of file f.
func contentTypeOf(f exports.File) string {
	switch f.Format {
	case exports.FormatParquet:
		return parquetType
	case exports.FormatSchema:
		return fiber.MIMEApplicationJSON
	}
	return "application/gzip"
}

// downloadName is the name a file is saved as.
func downloadName(day string, f exports.File) string {
	switch f.Format {
	case exports.FormatParquet:
		return day + "-" + f.Content + "-" + f.Store + ".parquet"
	case exports.FormatSchema:
		return day + "-" + f.Content + "-schema.json"
	}
	return day + "-" + f.Name
}

// getExportFile answers GET /api/v1/exports/{day}/{file}: a file of a
// day's export or of a latest set, for callers with a key, with a strong
// ETag (its SHA-256), byte ranges (RFC 9110: 206 of one range or of
// several as multipart/byteranges, 416, If-Range) and the reading's count
// (fileReads). Only files a published manifest lists are served. The
// route checks keys and counts calls itself, not through the API's
// middleware: a reading of a file is one call however many ranges it
// takes.
func (s *API) getExportFile(c *fiber.Ctx) error {
	if s.exports == nil {
		return problem.New(http.StatusServiceUnavailable, "This edge keeps no exports (its exports job is off). Ask another edge of the service, or retry later.").RetryAfter(60)
	}
	who, err := s.gate.Identify(c)
	if err != nil {
		return err
	}
	if who.Key.ID == "" {
		return problem.New(http.StatusUnauthorized, "The exports need a key: send Authorization: Bearer <key> (make one at /account).").
			WithHeader(fiber.HeaderWWWAuthenticate, `Bearer realm="edge", error="invalid_request", error_description="The exports need a key."`)
	}
	day, name := c.Params("day"), c.Params("*")
	t, ok := s.findExport(day, name)
	if !ok {
		if err := s.gate.Admit(c, who); err != nil {
			return err
		}
		if day == exports.LatestDir {
			return problem.Newf(http.StatusNotFound, "There is no file %.80q in the latest sets kept: GET /api/v1/exports lists the newest set's files (latest), and each day's.", apikey.Redact(name))
		}
		return problem.Newf(http.StatusNotFound, "There is no export file %.80q of day %.20q: GET /api/v1/exports lists the days kept, the latest files and their names.", apikey.Redact(name), apikey.Redact(day))
	}
	return s.sendExport(c, who, t)
}

// sendExport answers file t: the conditional and range answers first
// decided, then counted, then sent.
func (s *API) sendExport(c *fiber.Ctx, who access.Caller, t exportTarget) error {
	f := t.file
	etag := `"` + f.SHA256 + `"`
	if im := c.Get(fiber.HeaderIfMatch); im != "" && !ifMatch(im, etag) {
		// A reader that pinned the bytes (the latest address moves once a
		// day) is told they changed, and counted as a refusal is.
		if err := s.gate.Admit(c, who); err != nil {
			return err
		}
		return problem.Newf(http.StatusPreconditionFailed, "The file is no longer the one of ETag %.80s (If-Match): its ETag is now %s. Read the file of that ETag at its set's address (Content-Location), or read this one again from its start.", apikey.Redact(im), etag).
			WithHeader(fiber.HeaderETag, etag)
	}
	status, ranges, n := http.StatusOK, []byterange.Range(nil), f.Size
	if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && answer.ETagMatches(inm, etag) {
		status, n = http.StatusNotModified, 0
	} else if rh := c.Get(fiber.HeaderRange); rh != "" && ifRange(c.Get(fiber.HeaderIfRange), etag) {
		var out byterange.Outcome
		switch ranges, out = byterange.Parse(rh, f.Size); out {
		case byterange.Partial:
			status, n = http.StatusPartialContent, 0
			for _, r := range ranges {
				n += r.Length
			}
		case byterange.Unsatisfiable:
			status, n = http.StatusRequestedRangeNotSatisfiable, 0
		}
	}
	if status == http.StatusPartialContent && len(ranges) > 1 {
		n = byterange.NewMultipart(nil, f.Size, ranges, contentTypeOf(f), boundaryOf(f)).Len() // the parts' headers too
	}
	if c.Method() == fiber.MethodHead {
		n = 0
	}
	// A file that changed since its check is refused before it counts.
	if status != http.StatusNotModified && !s.exports.Intact(t.path, f) {
		return problem.New(http.StatusServiceUnavailable, "This file changed on disk since it was checked against its listed size and SHA-256, so it is not served; it is checked and built again within the hour. Retry later, or ask another edge of the service.").RetryAfter(60)
	}
	now := access.RequestTime(c)
	caller := who.Subject.String()
	if !s.reads.take(caller, f.SHA256, n, now) {
		if err := s.gate.Admit(c, who); err != nil {
			return err
		}
		s.reads.start(caller, f.SHA256, f.Size, n, now)
	}
	h := &c.Response().Header
	fileHeaders(h, t, etag)
	switch status {
	case http.StatusNotModified:
		c.Status(status)
		return nil
	case http.StatusRequestedRangeNotSatisfiable:
		return problem.Newf(status, "No range of %.80q is inside the file, which has %d bytes: ask for bytes=0-%d or less, or send no Range for all of it.",
			c.Get(fiber.HeaderRange), f.Size, max(f.Size-1, 0)).WithHeader(fiber.HeaderContentRange, byterange.Unsatisfied(f.Size))
	}
	file, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return problem.New(http.StatusNotFound, "The file was removed since it was listed (its day is past the days kept): GET /api/v1/exports lists the days kept.")
	}
	if err != nil {
		return s.readProblem("the export file", err)
	}
	contentType := contentTypeOf(f)
	h.Set(fiber.HeaderContentDisposition, `attachment; filename="`+t.filename+`"`)
	c.Status(status)
	switch {
	case status == http.StatusOK:
		h.SetContentType(contentType)
		c.Response().SetBodyStream(file, int(f.Size))
	case len(ranges) == 1:
		h.SetContentType(contentType)
		h.Set(fiber.HeaderContentRange, byterange.ContentRange(ranges[0], f.Size))
		c.Response().SetBodyStream(readCloser{io.NewSectionReader(file, ranges[0].Start, ranges[0].Length), file}, int(ranges[0].Length))
	default:
		m := byterange.NewMultipart(file, f.Size, ranges, contentType, boundaryOf(f))
		h.SetContentType(m.ContentType())
		c.Response().SetBodyStream(readCloser{m.Reader(), file}, int(m.Len()))
	}
	return nil
}

// fileHeaders sets the headers every answer of file t carries.
func fileHeaders(h *fasthttp.ResponseHeader, t exportTarget, etag string) {
	// What a reader in a browser needs to read of a range's answer, beside
	// what every answer of the API exposes (package edge, CORS).
	h.Set(fiber.HeaderAccessControlExposeHeaders, exposedFileHeaders)
	h.Set(fiber.HeaderETag, etag)
	h.Set(fiber.HeaderCacheControl, t.cache)
	h.Set(fiber.HeaderVary, "Authorization, X-Api-Key")
	h.Set(fiber.HeaderAcceptRanges, "bytes")
	if t.location != "" {
		h.Set(fiber.HeaderContentLocation, t.location)
	}
}

// boundaryOf is the multipart boundary of f's ranges: its SHA-256's
// first half, which the file's bytes are unlikely to hold.
func boundaryOf(f exports.File) string { return "edge-" + f.SHA256[:32] }

// ifRange reports whether a range request with If-Range v may be
// answered with ranges: without the header, or with the file's strong
// ETag (a date or another tag asks for the whole file, RFC 9110 13.1.5).
func ifRange(v, etag string) bool {
	return v == "" || v == etag
}

// readCloser is a body read from part of a file, closing the file when
// the answer is sent.
type readCloser struct {
	io.Reader
	io.Closer
}
