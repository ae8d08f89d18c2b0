package edge

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dgraph-io/ristretto/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/prometheus/client_golang/prometheus"
)

// Answer is an encoded response body with its weak ETag. Answers are
// immutable once made: the cache and every request share them.
type Answer struct {
	Body        []byte
	ETag        string // weak: W/"<hash of the body>"
	ContentType string
	// NoStore marks an answer cut short by its time budget: it is neither
	// kept in the cache nor cacheable by the client, and carries no ETag.
	NoStore bool
	file    *bodyFile // the body in a memfd, sent by sendfile; nil for small or uncached answers
}

// NewAnswer returns the answer for body. The ETag is a hash of the bytes,
// so an unchanged answer keeps its ETag across view generations.
func NewAnswer(body []byte, contentType string) *Answer {
	return &Answer{Body: body, ContentType: contentType,
		ETag: `W/"` + strconv.FormatUint(xxhash.Sum64(body), 36) + `"`}
}

// JSONAnswer encodes v as the answer.
func JSONAnswer(v any) (*Answer, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	return NewAnswer(b, fiber.MIMEApplicationJSON), nil
}

// searchAnswer encodes v, a search's answer; partial marks it cut short by
// its time budget, so that it is not cached.
func searchAnswer(v any, partial bool) (*Answer, error) {
	a, err := JSONAnswer(v)
	if err == nil && partial {
		a.NoStore, a.ETag = true, ""
	}
	return a, err
}

// Cache-Control policies.
const (
	// cachePrivate is the v1 API's: answers vary by caller (limits).
	cachePrivate = "private, max-age=60"
)

// publicCacheControl is the legacy API's policy: no key, no per-caller
// headers, built to sit behind a CDN, which may serve a stale copy for five
// minutes while it revalidates with If-None-Match.
func publicCacheControl(maxAge time.Duration) string {
	return fmt.Sprintf("public, max-age=%d, stale-while-revalidate=300", int(maxAge.Seconds()))
}

// answerCache keeps encoded answers, bounded in bytes. ristretto may drop
// or refuse an item: a miss just encodes the answer again from the views.
//
// An answer is found by two independent 64-bit hashes of its key (as
// ristretto does for string keys): the first is ristretto's key, the
// second is checked against the one stored with the answer. The key's
// bytes are neither kept nor copied, so a caller may build them in a
// buffer of its own.
type answerCache struct {
	c      *ristretto.Cache[uint64, *cachedAnswer]
	seed   maphash.Seed
	hits   prometheus.Counter
	misses prometheus.Counter
}

// cachedAnswer is an answer in the cache with its key's second hash.
type cachedAnswer struct {
	check uint64
	a     *Answer
}

func newAnswerCache(maxBytes int64) (*answerCache, error) {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, *cachedAnswer]{
		NumCounters:        max(maxBytes/1000, 1000), // about 10x the answers that fit (answers ~10 KB)
		MaxCost:            maxBytes,
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, fmt.Errorf("answer cache: %w", err)
	}
	return &answerCache{
		c:    c,
		seed: maphash.MakeSeed(),
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_answer_cache_hits_total",
			Help: "Answers served from the answer cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_answer_cache_misses_total",
			Help: "Answers encoded because the cache did not hold them."}),
	}, nil
}

// get returns the cached answer for key, or builds, caches and returns it.
// key is only read during the call.
func (ac *answerCache) get(key string, build func() (*Answer, error)) (*Answer, error) {
	h, check := xxhash.Sum64String(key), maphash.String(ac.seed, key)
	if e, ok := ac.c.Get(h); ok && e.check == check {
		ac.hits.Inc()
		return e.a, nil
	}
	ac.misses.Inc()
	a, err := build()
	if err != nil {
		return nil, err
	}
	if a.NoStore {
		return a, nil
	}
	if len(a.Body) >= sendfileMin {
		a.file = newBodyFile(a, a.Body)
	}
	ac.c.Set(h, &cachedAnswer{check: check, a: a}, cost(a))
	return a, nil
}

// cost is what keeping a costs the cache: its body and bookkeeping, and
// the body again when a large answer is also in a memfd.
func cost(a *Answer) int64 {
	n := int64(len(a.Body) + 128)
	if a.file != nil {
		n += int64(len(a.Body))
	}
	return n
}

// An alias is a second key of an answer: the request as it came (route,
// generation and raw query), so that asking again the same way skips
// parsing the query and building its canonical key. Each spelling of a
// query gets its own alias to the one answer of its canonical key.

// aliased returns the answer cached under the alias key, counted as a
// hit; a miss is not counted, as the canonical lookup that follows it
// counts. key is only read during the call.
func (ac *answerCache) aliased(key []byte) (*Answer, bool) {
	if key == nil {
		return nil, false
	}
	e, ok := ac.c.Get(xxhash.Sum64(key))
	if !ok || e.check != maphash.Bytes(ac.seed, key) {
		return nil, false
	}
	ac.hits.Inc()
	return e.a, true
}

// alias caches a under the alias key too. It costs as much as the answer
// itself, as if it were a copy: should the canonical key be evicted, the
// alias alone keeps the answer alive, and the cache's bound in bytes
// must still hold.
func (ac *answerCache) alias(key []byte, a *Answer) {
	if key == nil || a.NoStore {
		return
	}
	ac.c.Set(xxhash.Sum64(key), &cachedAnswer{check: maphash.Bytes(ac.seed, key), a: a}, cost(a))
}

// aliasKey appends the alias key of a request to b: its route's name,
// the generation of the published views and the raw query string. It
// returns nil until the views are published, and for a query too long to
// be worth an alias.
func (s *Server) aliasKey(b []byte, route string, c *fiber.Ctx) []byte {
	st := s.state.Load()
	raw := c.Context().URI().QueryString()
	if st == nil || st.Figures == nil || len(raw) > 512 {
		return nil
	}
	gen := st.Replica.Info().Generation
	b = append(append(b, route...), '?')
	b = strconv.AppendUint(b, gen, 10)
	return append(append(b, ':'), raw...)
}

// send writes a with its ETag and Cache-Control, or 304 with no body when
// the request's If-None-Match matches. A NoStore answer is sent whole with
// Cache-Control: no-store.
func send(c *fiber.Ctx, a *Answer, cacheControl string) error {
	if a.NoStore {
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderContentType, a.ContentType)
		return c.Send(a.Body)
	}
	h := &c.Response().Header
	h.SetCanonical(headerETag, utils.UnsafeBytes(a.ETag))
	h.SetCanonical(headerCacheControl, utils.UnsafeBytes(cacheControl))
	if inm := c.Request().Header.PeekCanonical(headerIfNoneMatch); len(inm) > 0 && etagMatches(utils.UnsafeString(inm), a.ETag) {
		c.Response().SetStatusCode(fiber.StatusNotModified)
		return nil
	}
	h.SetContentType(a.ContentType)
	return sendBody(c, a)
}

// Header names in the canonical case fasthttp keeps them in, so that the
// hot path neither normalizes nor allocates them.
var (
	headerETag         = []byte("Etag")
	headerCacheControl = []byte("Cache-Control")
	headerIfNoneMatch  = []byte("If-None-Match")
)

// etagMatches applies If-None-Match's weak comparison (RFC 9110 13.1.2):
// "*" matches any current answer; otherwise any listed tag whose opaque
// part equals ours, weak or not.
func etagMatches(header, etag string) bool {
	ours := strings.TrimPrefix(etag, "W/")
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == ours {
			return true
		}
	}
	return false
}
