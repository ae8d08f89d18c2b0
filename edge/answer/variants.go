package answer

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/transport"
)

// MinCompressSize is the smallest answer sent compressed: below it, the
// bytes saved are fewer than a compressed answer's headers and the
// client's work cost.
const MinCompressSize = 1024

// variant is an answer's body in one content coding, with its memfd when
// it is large enough for sendfile. Variants are immutable; an answer's
// variants may be set after the answer is shared (atomically, see
// Answer.variant), and an answer unchanged across view generations
// shares its variants with its predecessor (Precompressor).
type variant struct {
	body []byte
	file *transport.File
}

func newVariant(body []byte) *variant { return &variant{body: body, file: transport.NewFile(body)} }

// offered returns the codings a has: every one from MinCompressSize on,
// identity alone below it.
func (a *Answer) offered() coding.Set {
	if len(a.Body) >= MinCompressSize {
		return coding.All
	}
	return coding.IdentityOnly
}

// variant returns a's body in coding c (not Identity), compressing it at
// the fast level when no request asked for c before: each variant is
// compressed once, the first time a client asks for it, or before anyone
// asks when a state is published (Precompressor). A new variant counts
// against the cache's bytes.
func (a *Answer) variant(c coding.Coding) (*variant, error) {
	if v := a.vars[c].Load(); v != nil {
		return v, nil
	}
	body, err := coding.Compress(c, coding.Fast, a.Body)
	if err != nil {
		return nil, err
	}
	v := &variant{body: body}
	if a.scratch == nil {
		v = newVariant(body) // a draft is sent once, or by few at once: no memfd
	}
	if !a.vars[c].CompareAndSwap(nil, v) {
		return a.vars[c].Load(), nil // another request made it first
	}
	a.recost()
	return a.vars[c].Load(), nil
}

// recost tells the cache that holds a what it costs now, unless the
// cache was emptied since a was kept (an answer of a replaced state is
// not brought back).
func (a *Answer) recost() {
	if h := a.home; h != nil && h.cache.epoch.Load() == h.epoch {
		h.cache.c.Set(h.h, h, cost(a))
	}
}

// cost is what keeping a costs the cache: its body and bookkeeping, each
// variant's bytes, and the bytes again of those also in a memfd.
func cost(a *Answer) int64 {
	n := int64(len(a.Body) + 128)
	if a.file != nil && a.file.Memfd() {
		n += int64(len(a.Body))
	}
	for c := range a.vars {
		if v := a.vars[c].Load(); v != nil {
			n += int64(len(v.body) + 32)
			if v.file != nil && v.file.Memfd() {
				n += int64(len(v.body))
			}
		}
	}
	return n
}

// Precompressor encodes answers derived from a published state in every
// coding at the best level before anyone asks for them (package edge
// asks for them when a state is published). An answer whose bytes did
// not change since the previous round takes the variants made then.
// It is not safe for concurrent use: one goroutine runs the rounds.
type Precompressor struct {
	last, next map[string]*Answer // by ETag: the answers of the previous round and of this one
}

// Round starts a round of answers: the previous round's are kept for
// reuse until this one ends.
func (p *Precompressor) Round() {
	if p.next != nil {
		p.last = p.next
	}
	p.next = make(map[string]*Answer)
}

// Compress gives a, an answer asked for in this round, its variants at the
// best level, unless it has them. It reports whether it compressed
// anything (rather than reusing the previous round's variants).
func (p *Precompressor) Compress(a *Answer) (bool, error) {
	if p.next == nil {
		p.Round()
	}
	if a.NoStore || a.best.Load() || len(a.Body) < MinCompressSize {
		return false, nil
	}
	if prev := p.last[a.ETag]; prev != nil && prev != a && bytes.Equal(prev.Body, a.Body) {
		for c := coding.Identity + 1; c < coding.Count; c++ {
			a.vars[c].Store(prev.vars[c].Load())
		}
		a.best.Store(true)
		a.recost()
		p.next[a.ETag] = a
		return false, nil
	}
	for c := coding.Identity + 1; c < coding.Count; c++ {
		body, err := coding.Compress(c, coding.Best, a.Body)
		if err != nil {
			return false, fmt.Errorf("precompress %v: %w", c, err)
		}
		a.vars[c].Store(newVariant(body))
	}
	a.best.Store(true)
	a.recost()
	p.next[a.ETag] = a
	return true, nil
}

// Capture collects the answers sent to an internal request that asked
// for them (CaptureAnswers), for a Precompressor: only answers without
// their best variants are collected.
type Capture struct {
	mu      sync.Mutex
	answers []*Answer
}

// Answers returns the answers captured so far and forgets them.
func (c *Capture) Answers() []*Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.answers
	c.answers = nil
	return out
}

func (c *Capture) add(a *Answer) {
	c.mu.Lock()
	c.answers = append(c.answers, a)
	c.mu.Unlock()
}

// captureKey is the request value under which a Capture waits.
type captureKey struct{}

// CaptureAnswers makes every answer sent to rc that lacks its best
// variants go to c too. Only the server's own requests set it.
func CaptureAnswers(rc *fasthttp.RequestCtx, c *Capture) { rc.SetUserValue(captureKey{}, c) }

// Capturing reports whether rc is a request made to capture answers: the
// server's own, which its request metrics leave out.
func Capturing(rc *fasthttp.RequestCtx) bool { return rc.UserValue(captureKey{}) != nil }
