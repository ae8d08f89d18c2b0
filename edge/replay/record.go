package replay

import (
	"bytes"
	"net/netip"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/transport"
)

// note is what the slow path tells the table about a candidate request
// while it serves it (Limited, Answered, Observed).
type note struct {
	limited  bool
	caller   netip.Addr
	admit    Admit
	answer   Answer
	variant  int
	best     bool
	body     []byte // what the answer sends, for its Content-Length
	count    prometheus.Counter
	latency  prometheus.Observer
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

// Noting reports whether the request ctx serves may be recorded, so that
// a caller works out what it would tell the table only then.
func Noting(ctx *fasthttp.RequestCtx) bool { return noteOf(ctx) != nil }

// Limited tells the table that the route applied its limit to the
// request ctx serves, for the client at caller (clientip.Proxies.Of),
// and admitted it; admit applies the same limit to a replayed call. A
// route whose calls take no limit says so with an admit that admits
// every call. A request no limit was applied to is never recorded.
func Limited(ctx *fasthttp.RequestCtx, caller netip.Addr, admit Admit) {
	if n := noteOf(ctx); n != nil {
		n.limited, n.caller, n.admit = true, caller, admit
	}
}

// Answer is an answer the answer cache holds, which a record refers to
// by a Source.
type Answer interface {
	// ReplaySource returns the Source of the answer's body in variant
	// (its content coding), chosen while the answer's best variants were
	// made (best) or not.
	ReplaySource(variant int, best bool) Source
}

// Answered tells the table that the request ctx serves is answered with
// a's body in variant, chosen with best as Answer.ReplaySource says,
// sending body (whole, or nothing for a 304). Only answers the answer
// cache holds may be recorded: they are the same for every request of
// the same bytes until a state is published.
func Answered(ctx *fasthttp.RequestCtx, a Answer, variant int, best bool, body []byte) {
	if n := noteOf(ctx); n != nil {
		n.answered, n.answer, n.variant, n.best, n.body = true, a, variant, best, body
	}
}

// Observed tells the table the route's metrics of the request ctx
// serves: its count by status and its latency.
func Observed(ctx *fasthttp.RequestCtx, count prometheus.Counter, latency prometheus.Observer) {
	if n := noteOf(ctx); n != nil {
		n.count, n.latency = count, latency
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
	if req == nil || !n.answered || !n.limited || n.count == nil || n.latency == nil ||
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
			if h.ContentLength() != len(n.body) {
				return
			}
		} else if !bytes.Equal(ctx.Response.Body(), n.body) {
			return
		}
		h.SetContentLength(len(n.body))
	}
	head := h.AppendBytes(nil)
	r := &record{hash: hash, req: slices.Clone(req), seq: seq, noBody: status == fasthttp.StatusNotModified,
		size: len(n.body), src: n.answer.ReplaySource(n.variant, n.best), caller: n.caller, admit: n.admit, count: n.count, latency: n.latency}
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
