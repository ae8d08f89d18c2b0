// Package ratelimit holds what a limit decided about one call: its
// outcome and the figures of its RateLimit headers, written alike by
// every path that answers (the full path and the replay path). It is a
// leaf: no state, no I/O.
package ratelimit

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/transport"
)

// Outcome says whether a call is admitted.
type Outcome int

// The outcomes of Admit.
const (
	Admitted     Outcome = iota
	MinuteFull           // the per-minute limit is used: not counted against the day
	DayFull              // the day's limit is used
	UsageUnknown         // the day's usage cannot be checked (its totals were never read)
	// Crowded: the edge holds as many callers as it may (MaxActive), each
	// with calls not yet in the fleet's totals, and a Sync waited for let
	// none go (the usage store is out of reach): it cannot count a new
	// caller for now.
	Crowded
	// Unsettled: a keyed call found no calls reserved for its key on this
	// edge, and none could be written to the usage log and read back
	// within the wait (the log out of reach): the day cannot be checked
	// for a moment.
	Unsettled
)

// Decision is the outcome of a call and the figures of its RateLimit
// headers.
type Decision struct {
	Outcome    Outcome
	RetryAfter time.Duration // when refused
	Limit      uint64        // the day's limit
	Remaining  uint64        // calls left today
	Reset      time.Duration // until 00:00 UTC, when the day restarts
	PerMinute  int
	// Policy is the RateLimit-Policy header (IETF draft-06 form): both
	// windows, in seconds.
	Policy string
}

// Field is one of the RateLimit headers a Decision fills.
type Field uint8

// The RateLimit headers, in the order answers carry them.
const (
	FieldLimit     Field = iota // RateLimit-Limit: the day's limit
	FieldRemaining              // RateLimit-Remaining: calls left today
	FieldReset                  // RateLimit-Reset: seconds until the day restarts
	FieldPolicy                 // RateLimit-Policy: both windows
)

// AppendField appends the value of the RateLimit header f for d, as
// every answer writes it (the reset in whole seconds, rounded up): the
// full path's headers and the replay path's (package replay) alike.
func (d *Decision) AppendField(b []byte, f Field) []byte {
	switch f {
	case FieldLimit:
		return strconv.AppendUint(b, d.Limit, 10)
	case FieldRemaining:
		return strconv.AppendUint(b, d.Remaining, 10)
	case FieldReset:
		return strconv.AppendInt(b, int64(problem.Seconds(d.Reset)), 10)
	}
	return append(b, d.Policy...)
}

// Admit applies a route's limit to a call of caller (the client's
// address, clientip.Proxies.Of) at now: ok is false, with nothing
// counted, when the call is not admitted at once. d fills the answer's
// RateLimit headers, when it has them. The replay path applies a route's
// limit to a replayed call with it.
type Admit func(caller netip.Addr, now time.Time) (d Decision, ok bool)

// Applied is the limit a route applied to a request it admitted: the
// caller it counted, and how to apply the same limit to another call of
// the same request (Admit).
type Applied struct {
	Caller netip.Addr
	Admit  Admit
}

// appliedKey is the request value Apply stores.
type appliedKey struct{}

// Wanted reports whether the limit applied to the request ctx serves is
// wanted (Apply): only when the replay path may record the request
// (transport.Candidate), its only reader. A limiter works out what it
// would apply (the caller's address) only then.
func Wanted(ctx *fasthttp.RequestCtx) bool { return transport.Candidate(ctx) != nil }

// Apply records on the request ctx serves that the route applied its
// limit to it (see Applied), for what answers it (answer.Responder),
// when it is Wanted; other requests keep nothing.
func Apply(ctx *fasthttp.RequestCtx, a Applied) {
	if Wanted(ctx) {
		ctx.SetUserValue(appliedKey{}, &a)
	}
}

// AppliedTo returns the limit applied to the request ctx serves; ok is
// false when none was (Apply).
func AppliedTo(ctx *fasthttp.RequestCtx) (a Applied, ok bool) {
	p, ok := ctx.UserValue(appliedKey{}).(*Applied)
	if !ok {
		return Applied{}, false
	}
	return *p, true
}
