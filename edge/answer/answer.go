package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/transport"
	"github.com/edge-stats/edge/internal/jsonw"
)

// Answer is an encoded response body with its weak ETag, and the same
// body in each content coding (gzip, br, zstd) from MinCompressSize on.
// Answers are immutable once made, but for variants added as they are
// first asked for: the cache and every request share them.
type Answer struct {
	Body        []byte
	ETag        string // weak: W/"<hash of the body>"
	ContentType string
	// NoStore marks an answer cut short by its time budget: it is neither
	// kept in the cache nor cacheable by the client, and carries no ETag.
	NoStore bool
	file    *transport.File // the body in a memfd, sent by sendfile; nil for small or uncached answers
	// modified is the answer's Last-Modified in unix seconds (0: none),
	// and lastModified the same as an HTTP date, formatted once.
	modified     int64
	lastModified []byte
	// surrogate and cacheTag name what the answer derives from, for a
	// CDN's purge by tag: Surrogate-Key (space-separated: Fastly, Varnish
	// xkey) and Cache-Tag (comma-separated: Cloudflare, Akamai). nil: none.
	surrogate, cacheTag []byte
	// vars are the body in each content coding but identity (index 0),
	// each set once, when first asked for or by a Precompressor; best
	// says they are all there at the best level. home is the cache entry
	// that holds the answer (nil: none), told when a variant adds to its
	// cost.
	vars [coding.Count]atomic.Pointer[variant]
	best atomic.Bool
	home *cached
	// scratch is the pooled buffer that holds Body while the answer is a
	// draft (Draft), until the cache keeps it (keep: Body copied out) or
	// lets it go unkept; nil for every other answer. once says that one
	// request alone has the unkept draft: the Responder copies its body
	// into the response and gives the buffer back (recycle).
	scratch *[]byte
	once    bool
	// links are link-values added to the Link header (a file's next part)
	// and disposition the Content-Disposition (a file's name); nil: none.
	links, disposition []byte
}

// SetNext names the answer's next part in its Link header (rel="next"),
// target a URI reference the caller made safe (percent-encoded). Call it
// before the answer is shared.
func (a *Answer) SetNext(target string) {
	a.links = append(append(append(a.links, ", <"...), target...), `>; rel="next"`...)
}

// SetFile makes the answer a file to save as name (Content-Disposition:
// attachment), name made of letters, digits, '.', '-' and '_' only. Call
// it before the answer is shared.
func (a *Answer) SetFile(name string) {
	a.disposition = []byte(`attachment; filename="` + name + `"`)
}

// Tag sets the answer's cache tags (lower-case letters, digits and '-'
// each) and returns it. Call it before the answer is shared.
func (a *Answer) Tag(tags ...string) *Answer {
	a.surrogate = []byte(strings.Join(tags, " "))
	a.cacheTag = []byte(strings.Join(tags, ","))
	return a
}

// SetModified sets the answer's Last-Modified to t (to the second); the
// zero t leaves it without one. Call it before the answer is shared.
func (a *Answer) SetModified(t time.Time) {
	if t.IsZero() || a.NoStore {
		a.modified, a.lastModified = 0, nil
		return
	}
	a.modified = t.Unix()
	a.lastModified = t.UTC().AppendFormat(nil, http.TimeFormat)
}

// Modified returns the answer's Last-Modified, or the zero time.
func (a *Answer) Modified() time.Time {
	if a.modified == 0 {
		return time.Time{}
	}
	return time.Unix(a.modified, 0).UTC()
}

// New returns the answer for body. The ETag is a hash of the bytes, so an
// unchanged answer keeps its ETag across view generations.
func New(body []byte, contentType string) *Answer {
	return &Answer{Body: body, ContentType: contentType,
		ETag: `W/"` + strconv.FormatUint(xxhash.Sum64(body), 36) + `"`}
}

// JSON encodes v as the answer: by its own AppendJSON when it has one
// (the pages of listings, of package jsonw's appenders), else by
// encoding/json.
func JSON(v any) (*Answer, error) {
	if a, ok := v.(jsonw.Appender); ok {
		d := Draft(a)
		d.keep()
		return d, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	return New(b, fiber.MIMEApplicationJSON), nil
}

// Draft encodes v as an answer whose body stays in a pooled buffer: the
// answer of a builder of Cache.GetQuery, which the cache either keeps
// (its body copied to its size) or, when no one asked for it before,
// lets the Responder send once and recycle (Cache.SetMinUses). A draft
// used anywhere else is correct but holds the pooled buffer: use JSON.
func Draft(v jsonw.Appender) *Answer {
	p, _ := scratch.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
	}
	*p = v.AppendJSON((*p)[:0])
	a := New(*p, fiber.MIMEApplicationJSON)
	a.scratch = p
	return a
}

// keep makes a draft an answer of its own: its body copied out of the
// pooled buffer, which goes back to the pool.
func (a *Answer) keep() {
	if a.scratch == nil {
		return
	}
	a.Body = bytes.Clone(a.Body)
	putScratch(a.scratch)
	a.scratch, a.once = nil, false
}

// recycle gives back the pooled buffer of a draft sent once (a.once),
// whose body the response has copied; a shared or kept answer is left
// alone. Only the Responder calls it, after the answer is written.
func (a *Answer) recycle() {
	if a == nil || !a.once || a.scratch == nil {
		return
	}
	p := a.scratch
	a.Body, a.scratch, a.once = nil, nil, false
	putScratch(p)
}

// scratch recycles the buffers that Appenders write into, up to
// maxScratch bytes each (a page of 200 listings is about 600 KB).
var scratch sync.Pool

const maxScratch = 4 << 20

func putScratch(p *[]byte) {
	if cap(*p) <= maxScratch {
		*p = (*p)[:0]
		scratch.Put(p)
	}
}

// Search encodes v, a search's answer; partial marks it cut short by its
// time budget, so that it is not cached.
func Search(v any, partial bool) (*Answer, error) {
	a, err := JSON(v)
	if err == nil && partial {
		a.NoStore, a.ETag = true, ""
	}
	return a, err
}

// SearchDraft is Search for a builder of Cache.GetQuery: the answer is a
// Draft.
func SearchDraft(v jsonw.Appender, partial bool) *Answer {
	a := Draft(v)
	if partial {
		a.NoStore, a.ETag = true, ""
	}
	return a
}
