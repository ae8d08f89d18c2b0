package replay

import (
	"bytes"
	"net/netip"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/edge/transport"
)

// note is what the slow path tells the table about a candidate request
// while it serves it (Answered).
type note struct {
	entry    Entry
	answered bool
}

// noteOf returns the note of the request ctx serves, or nil when it is
// not a candidate of a table (Wrap).
func noteOf(ctx *fasthttp.RequestCtx) *note {
	p := transport.Note(ctx)
	if p == nil {
		return nil
	}
	n, _ := (*p).(*note)
	return n
}

// Entry is what the one place that sends answers (answer.Responder) tells
// the table of an answer it sent: everything a record needs to answer
// the same request again as the full path would.
type Entry struct {
	// Answer is the answer sent, in content coding Variant, chosen with
	// its best variants made (Best) or not (see Answer.ReplaySource).
	// Only answers the answer cache holds are told: they are the same for
	// every request of the same bytes until a state is published.
	Answer  Answer
	Variant int
	Best    bool
	// Body is the body written, for its Content-Length; nil for a 304.
	Body []byte
	// Limit is the limit the route applied to the request (a request no
	// limit was applied to is never recorded); a route whose calls take
	// no limit says so with an Admit that admits every call.
	Limit ratelimit.Applied
	// Count and Latency are the route's metrics: its count of the
	// answer's status, and its latency.
	Count   prometheus.Counter
	Latency prometheus.Observer
}

// Answer is an answer the answer cache holds, which a record refers to
// by a Source.
type Answer interface {
	// ReplaySource returns the Source of the answer's body in variant
	// (its content coding), chosen while the answer's best variants were
	// made (best) or not.
	ReplaySource(variant int, best bool) Source
}

// Noting reports whether the request ctx serves may be recorded, so
// that the responder gathers an Entry only then.
func Noting(ctx *fasthttp.RequestCtx) bool { return noteOf(ctx) != nil }

// Answered tells the table how the request ctx serves was answered. It
// is the table's one hook into the full path.
func Answered(ctx *fasthttp.RequestCtx, e Entry) {
	if n := noteOf(ctx); n != nil {
		n.entry, n.answered = e, true
	}
}

// Wrap returns h, recording the answers of the candidate requests it
// serves (transport.Candidate).
func (t *Table) Wrap(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		p := transport.Note(ctx)
		if p == nil {
			h(ctx)
			return
		}
		n, _ := (*p).(*note)
		if n == nil {
			n = new(note)
			*p = n
		}
		*n = note{}
		seq := t.cfg.Seq()
		h(ctx)
		t.record(ctx, n, seq)
		*n = note{} // keeps nothing alive
	}
}

// record keeps the answer of the request ctx served, when it may be
// replayed: a GET answered whole (200) or as a 304 from the answer cache,
// its limit applied and its metrics known, with a state published before
// it began still current, and its connection kept open.
func (t *Table) record(ctx *fasthttp.RequestCtx, n *note, seq uint64) {
	req := transport.Candidate(ctx)
	status := ctx.Response.StatusCode()
	e := &n.entry
	if req == nil || !n.answered || e.Limit.Admit == nil || e.Answer == nil || e.Count == nil || e.Latency == nil ||
		!ctx.IsGet() || (status != fasthttp.StatusOK && status != fasthttp.StatusNotModified) ||
		ctx.Response.ConnectionClose() || ctx.Request.Header.ConnectionClose() ||
		t.cfg.Draining.Load() || seq != t.cfg.Seq() || hasCookie(&ctx.Response.Header) {
		return
	}
	// Recorded at the second sighting (see the package's doc).
	hash := hashOf(req)
	if seen := &t.seen[hash&(uint64(len(t.seen))-1)]; seen.Load() != hash {
		seen.Store(hash)
		return
	}
	var h fasthttp.ResponseHeader
	ctx.Response.Header.CopyTo(&h)
	if status == fasthttp.StatusOK {
		// The body sent must be the answer's.
		if ctx.Response.IsBodyStream() {
			if h.ContentLength() != len(e.Body) {
				return
			}
		} else if !bytes.Equal(ctx.Response.Body(), e.Body) {
			return
		}
		h.SetContentLength(len(e.Body))
	}
	head := h.AppendBytes(nil)
	r := &record{hash: hash, req: slices.Clone(req), seq: seq, noBody: status == fasthttp.StatusNotModified,
		size: len(e.Body), src: e.Answer.ReplaySource(e.Variant, e.Best), caller: e.Limit.Caller, admit: e.Limit.Admit, count: e.Count, latency: e.Latency}
	if c, ok := ctx.Conn().RemoteAddr().(interface{ AddrPort() netip.AddrPort }); ok {
		r.remote = c.AddrPort().Addr().Unmap()
	} else if a, ok := netip.AddrFromSlice(ctx.RemoteIP()); ok {
		r.remote = a.Unmap()
	}
	r.viaProxy = t.cfg.Proxies.Trusted.Contains(r.remote)
	r.head, r.fields = split(head)
	t.slots[r.hash&t.mask].Store(r)
	t.recorded.Inc()
}

// split cuts head before each dynamic value and after it.
func split(head []byte) (parts [][]byte, fields []field) {
	type at struct {
		start, end int
		f          field
	}
	var found []at
	for _, d := range dynamic {
		i := bytes.Index(head, []byte(d.prefix))
		if i < 0 {
			continue
		}
		start := i + len(d.prefix)
		end := bytes.Index(head[start:], []byte("\r\n"))
		if end < 0 {
			continue
		}
		found = append(found, at{start, start + end, d.f})
	}
	slices.SortFunc(found, func(a, b at) int { return a.start - b.start })
	prev := 0
	for _, a := range found {
		parts = append(parts, head[prev:a.start])
		fields = append(fields, a.f)
		prev = a.end
	}
	return append(parts, head[prev:]), fields
}

func hasCookie(h *fasthttp.ResponseHeader) bool {
	found := false
	h.VisitAllCookie(func(_, _ []byte) { found = true })
	return found
}
