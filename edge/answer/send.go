package answer

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/transport"
)

// Private is the Cache-Control of the v1 API's answers: they vary by
// caller (limits).
const Private = "private, max-age=60"

// Public returns the Cache-Control of the legacy API: no key, no
// per-caller headers, built to sit behind a CDN, which may serve a stale
// copy for five minutes while it revalidates with If-None-Match
// (stale-while-revalidate), and for a day while the edge is down or
// answers with an error (stale-if-error, RFC 5861): the figures change
// once a day, and a day-old figure beats a dark dashboard.
func Public(maxAge time.Duration) string {
	return fmt.Sprintf("public, max-age=%d, stale-while-revalidate=300, stale-if-error=86400", int(maxAge.Seconds()))
}

// Send writes a with its ETag, Last-Modified (when it has one) and
// cacheControl, or 304 with no body when the client's copy is current
// (notModified). A NoStore answer is sent whole with
// Cache-Control: no-store. A large answer goes out by sendfile from its
// memfd when the connection allows (package transport).
func Send(c *fiber.Ctx, a *Answer, cacheControl string) error {
	if a.NoStore {
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderContentType, a.ContentType)
		return c.Send(a.Body)
	}
	h := &c.Response().Header
	h.SetCanonical(headerETag, utils.UnsafeBytes(a.ETag))
	h.SetCanonical(headerCacheControl, utils.UnsafeBytes(cacheControl))
	if a.lastModified != nil {
		h.SetCanonical(headerLastModified, a.lastModified)
	}
	if a.surrogate != nil {
		h.SetCanonical(headerSurrogateKey, a.surrogate)
		h.SetCanonical(headerCacheTag, a.cacheTag)
	}
	if notModified(&c.Request().Header, a) {
		c.Response().SetStatusCode(fiber.StatusNotModified)
		return nil
	}
	h.SetContentType(a.ContentType)
	if transport.Send(c.Context(), a.file) {
		return nil
	}
	return c.Send(a.Body)
}

// notModified reports whether the client's copy is current, by RFC 9110
// section 13.2.2: If-None-Match when the request has it (weak comparison);
// only without it, If-Modified-Since against the answer's Last-Modified
// (a date that is not a valid HTTP date is ignored).
func notModified(req *fasthttp.RequestHeader, a *Answer) bool {
	if inm := req.PeekCanonical(headerIfNoneMatch); len(inm) > 0 {
		return ETagMatches(utils.UnsafeString(inm), a.ETag)
	}
	if a.modified == 0 {
		return false
	}
	ims := req.PeekCanonical(headerIfModifiedSince)
	if len(ims) == 0 {
		return false
	}
	t, err := http.ParseTime(utils.UnsafeString(ims)) // the three forms RFC 9110 section 5.6.7 names
	return err == nil && a.modified <= t.Unix()
}

// Header names in the canonical case fasthttp keeps them in, so that the
// hot path neither normalizes nor allocates them
// (bench/README.md#the-cached-hot-path).
var (
	headerETag            = []byte("Etag")
	headerCacheControl    = []byte("Cache-Control")
	headerIfNoneMatch     = []byte("If-None-Match")
	headerLastModified    = []byte("Last-Modified")
	headerIfModifiedSince = []byte("If-Modified-Since")
	headerSurrogateKey    = []byte("Surrogate-Key")
	headerCacheTag        = []byte("Cache-Tag")
)

// ETagMatches applies If-None-Match's weak comparison (RFC 9110 13.1.2):
// "*" matches any current answer; otherwise any listed tag whose opaque
// part equals ours, weak or not.
func ETagMatches(header, etag string) bool {
	ours := strings.TrimPrefix(etag, "W/")
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == ours {
			return true
		}
	}
	return false
}
