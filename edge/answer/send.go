package answer

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/problem"
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

// send writes a with its ETag, Last-Modified (when it has one) and
// cacheControl, or 304 with no body when the client's copy is current
// (notModified). Its Link names the figures' definitions and, for an
// API answer with one, its page (page). A NoStore answer is sent whole with
// Cache-Control: no-store.
//
// The body goes out in the content coding the request's Accept-Encoding
// prefers among those a offers (package coding; 406 when it accepts
// none), with Vary: Accept-Encoding on every answer that has codings to
// offer, 304s included. The v1 API's answers (cacheControl Private) also
// vary by key: a browser must not answer a keyed request with the copy
// of a request made without one (their RateLimit headers differ); an
// answer chosen by the request's Accept (varyAccept) names it too. Every
// coding shares the answer's weak ETag (docs/api-v1.md, Compression). A
// large body goes out by sendfile from its memfd when the connection
// allows (package transport).
func send(c *fiber.Ctx, a *Answer, cacheControl string, page Page, varyAccept bool) (sent, error) {
	h := &c.Response().Header
	offered := a.offered()
	if v := varies[b2i(offered != coding.IdentityOnly)][b2i(cacheControl == Private)][b2i(varyAccept)]; v != nil {
		h.SetCanonical(headerVary, v)
	}
	// The coding first: a refusal (406) carries none of the answer's
	// validators. An empty Accept-Encoding and none lead to the same
	// choice (identity), so fasthttp's not telling them apart does not
	// matter.
	ae := c.Request().Header.PeekCanonical(headerAcceptEncoding)
	order := coding.FastFirst
	if a.best.Load() {
		order = coding.SmallFirst
	}
	enc, ok := coding.Choose(ae, len(ae) > 0, offered, order)
	if !ok {
		return sent{}, problem.Newf(http.StatusNotAcceptable,
			"Accept-Encoding refuses every coding of this answer (%s): allow identity, or one of gzip, br and zstd for answers of %d bytes or more.",
			offeredNames(offered), MinCompressSize)
	}
	if a.NoStore {
		h.SetCanonical(headerCacheControl, noStore)
	} else {
		h.SetCanonical(headerETag, utils.UnsafeBytes(a.ETag))
		h.SetCanonical(headerCacheControl, utils.UnsafeBytes(cacheControl))
		if a.lastModified != nil {
			h.SetCanonical(headerLastModified, a.lastModified)
		}
		if a.surrogate != nil {
			h.SetCanonical(headerSurrogateKey, a.surrogate)
			h.SetCanonical(headerCacheTag, a.cacheTag)
		}
		if offered != coding.IdentityOnly && !a.best.Load() && !a.once {
			if cp, ok := c.Context().UserValue(captureKey{}).(*Capture); ok {
				cp.add(a)
			}
		}
		if notModified(&c.Request().Header, a) {
			c.Response().SetStatusCode(fiber.StatusNotModified)
			return sent{variant: enc, best: order == coding.SmallFirst}, nil
		}
	}
	setLink(h, c.Request().URI(), page, a.links)
	if a.disposition != nil {
		h.SetCanonical(headerContentDisposition, a.disposition)
	}
	h.SetContentType(a.ContentType)
	body, file := a.Body, a.file
	if enc != coding.Identity {
		v, err := a.variant(enc)
		if err != nil {
			return sent{}, fmt.Errorf("answer in %v: %w", enc, err)
		}
		h.SetCanonical(headerContentEncoding, encodingNames[enc])
		body, file = v.body, v.file
	}
	out := sent{variant: enc, best: order == coding.SmallFirst, body: body}
	if a.once && enc == coding.Identity {
		// A draft sent once: its pooled buffer goes back when the
		// handler returns (Answer.recycle), so the response keeps a copy.
		c.Response().SetBody(body)
		return out, nil
	}
	if transport.Send(c.Context(), file) {
		return out, nil
	}
	return out, c.Send(body)
}

// offeredNames lists the codings of offered, for a problem's detail.
func offeredNames(offered coding.Set) string {
	var names []string
	for c := coding.Identity; c < coding.Count; c++ {
		if offered.Has(c) {
			names = append(names, c.String())
		}
	}
	return strings.Join(names, ", ")
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
	headerETag = []byte("Etag")
	headerLink = []byte("Link")
	// linkDefinitions is the Link of every answer with a body: where the
	// figures it carries are defined (GET /api/v1/definitions).
	linkDefinitions          = []byte(`</api/v1/definitions>; rel="describedby"`)
	headerCacheControl       = []byte("Cache-Control")
	headerIfNoneMatch        = []byte("If-None-Match")
	headerLastModified       = []byte("Last-Modified")
	headerIfModifiedSince    = []byte("If-Modified-Since")
	headerSurrogateKey       = []byte("Surrogate-Key")
	headerCacheTag           = []byte("Cache-Tag")
	headerVary               = []byte("Vary")
	headerAcceptEncoding     = []byte("Accept-Encoding")
	headerContentEncoding    = []byte("Content-Encoding")
	headerContentDisposition = []byte("Content-Disposition")

	noStore = []byte("no-store")
	// varies are the Vary values by whether the answer has codings to
	// offer, is the API's (Private: it varies by key) and was chosen by
	// Accept, each made once; nil: no Vary.
	varies = [2][2][2][]byte{
		{{nil, []byte("Accept")}, {[]byte("Authorization, X-Api-Key"), []byte("Authorization, X-Api-Key, Accept")}},
		{{[]byte("Accept-Encoding"), []byte("Accept-Encoding, Accept")},
			{[]byte("Accept-Encoding, Authorization, X-Api-Key"), []byte("Accept-Encoding, Authorization, X-Api-Key, Accept")}},
	}
	encodingNames = func() (n [coding.Count][]byte) {
		for c := range n {
			n[c] = []byte(coding.Coding(c).String())
		}
		return n
	}()
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

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
