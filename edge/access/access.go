// Package access decides who calls the v1 API and the tool server and
// whether the call runs: it reads the caller's key (never from the URL),
// applies the caller's limits, sets the RateLimit headers, and hands out
// slots of the search pool.
package access

import (
	"bytes"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// Config holds what the gate needs to know beyond the keys and limits.
type Config struct {
	Proxies     clientip.Proxies // which connections may name the client, and in which header
	InvalidKeys int              // invalid keys a minute from one address before its keys are refused unread (for the detail)
}

// Gate checks keys and applies limits. It is safe for concurrent use.
type Gate struct {
	cfg    Config
	keys   *keys.Registry
	limits *limits.Limiter
	replay ratelimit.Admit // the anonymous limits of a replayed call
}

// New returns the gate of the given keys and limits.
func New(cfg Config, k *keys.Registry, l *limits.Limiter) *Gate {
	g := &Gate{cfg: cfg, keys: k, limits: l}
	g.replay = func(caller netip.Addr, now time.Time) (ratelimit.Decision, bool) {
		return l.TryAdmit(limits.Subject{Addr: cfg.Proxies.Subject(caller)}, 0, now)
	}
	return g
}

// internalCallKey marks a v1 request the tool server makes on a caller's
// behalf: the caller's key and limits were applied to its request to
// /mcp, so the v1 limits do not apply again. Only the server sets it.
type internalCallKey struct{}

var internalCall = internalCallKey{}

// MarkInternal marks rc as a call the tool server makes on a caller's
// behalf, which Limit lets pass.
func MarkInternal(rc *fasthttp.RequestCtx) { rc.SetUserValue(internalCall, true) }

// MarkInternalFor is MarkInternal for a call made on who's behalf: its
// misses take who's turns at the miss gate (MissCaller).
func MarkInternalFor(rc *fasthttp.RequestCtx, who Caller) {
	MarkInternal(rc)
	rc.SetUserValue(missCaller, missCallerOf(who))
}

// missCallerKey holds, among a request's values, the caller its misses
// are computed for, when Limit or MarkInternalFor knew it by its key.
type missCallerKey struct{}

var missCaller = missCallerKey{}

func missCallerOf(who Caller) missgate.Caller {
	if who.Key.ID != "" {
		return missgate.Caller{Key: who.Key.ID}
	}
	return missgate.Caller{Addr: who.Subject.Addr}
}

// MissCaller returns who c's uncached answers are computed for, for the
// fair turns of the miss gate: its key, when it sent one, or its address
// (an IPv6 /64).
func (g *Gate) MissCaller(c *fiber.Ctx) missgate.Caller {
	if who, ok := c.Context().UserValue(missCaller).(missgate.Caller); ok {
		return who
	}
	return missgate.Caller{Addr: g.cfg.Proxies.Caller(c)}
}

// Internal reports whether c is a request the server makes itself
// (MarkInternal).
func Internal(c *fiber.Ctx) bool { return c.Locals(internalCall) != nil }

// Header names in the canonical case fasthttp keeps them in, so that
// reading and setting them skips normalizing their names.
var (
	headerRateLimitLimit     = []byte("Ratelimit-Limit")
	headerRateLimitRemaining = []byte("Ratelimit-Remaining")
	headerRateLimitReset     = []byte("Ratelimit-Reset")
	headerRateLimitPolicy    = []byte("Ratelimit-Policy")
	headerAuthorization      = []byte("Authorization")
	headerAPIKey             = []byte("X-Api-Key") // the other header a key may come in
)

// RequestTime returns when the request started, as fasthttp recorded it.
func RequestTime(c *fiber.Ctx) time.Time {
	if t := c.Context().Time(); !t.IsZero() {
		return t
	}
	return time.Now()
}

// keyParams are query parameter names that carry a key in other APIs; a
// request naming one is refused, so a key never travels in a URL.
var keyParams = []string{"key", "apikey", "api_key", "api-key", "x-api-key", "access_token", "token", "auth", "authorization", "bearer"}

// keyInURL returns the name of a query parameter that carries a key, or "".
func keyInURL(c *fiber.Ctx) string {
	var found string
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if found != "" {
			return
		}
		name := utils.UnsafeString(k)
		for _, p := range keyParams {
			if strings.EqualFold(name, p) {
				found = strings.Clone(name)
				return
			}
		}
		if apikey.LooksLikeKey(utils.UnsafeString(v)) || apikey.LooksLikeKey(name) {
			found = strings.Clone(name)
		}
	})
	return found
}

// Caller is who a request is counted for, once its key is checked.
type Caller struct {
	Subject limits.Subject
	Key     keys.Key // the zero Key without a key
}

// unauthorized is the 401 of a refused key: every refusal reads the same,
// so the answer does not tell an unknown key from a revoked one.
func unauthorized(code, detail string) *problem.Problem {
	return problem.New(http.StatusUnauthorized, detail).WithHeader(fiber.HeaderWWWAuthenticate,
		`Bearer realm="edge", error="`+code+`", error_description="`+strings.ReplaceAll(detail, `"`, `'`)+`"`)
}

// Identify reads the caller's key, if any, from Authorization: Bearer or,
// when no Authorization header is sent, X-Api-Key. Authorization wins when
// both are sent. An address that sent too many invalid keys this minute
// has its keys refused unread.
func (g *Gate) Identify(c *fiber.Ctx) (Caller, error) {
	addr := g.cfg.Proxies.Caller(c)
	if name := keyInURL(c); name != "" {
		if apikey.LooksLikeKey(name) {
			name = "A query parameter"
		}
		return Caller{}, problem.Newf(http.StatusBadRequest,
			"%s: keys are never accepted in the URL, where logs and caches keep them. Remove the parameter and send the key in the header Authorization: Bearer <key> (or X-Api-Key: <key>); if the key was shared, revoke it and make a new one.", name)
	}
	authz := c.Request().Header.PeekCanonical(headerAuthorization)
	xkey := c.Request().Header.PeekCanonical(headerAPIKey)
	if len(authz) == 0 && len(xkey) == 0 {
		return Caller{Subject: limits.Subject{Addr: addr}}, nil
	}
	now := RequestTime(c)
	if blocked, wait := g.limits.InvalidKeysBlocked(addr, now); blocked {
		return Caller{}, problem.Newf(http.StatusTooManyRequests,
			"More than %d invalid keys were sent from your address in the last minute, so keys from it are refused unread. Wait %d seconds and send a valid key, or send no key for the anonymous limits.",
			g.cfg.InvalidKeys, problem.Seconds(wait)).RetryAfter(problem.Seconds(wait))
	}
	key, ok := headerKey(authz, xkey)
	if !ok {
		g.limits.InvalidKey(addr, now)
		return Caller{}, unauthorized("invalid_request",
			"Authorization must use the Bearer scheme: send Authorization: Bearer <key>, or X-Api-Key: <key>, or no key for the anonymous limits.")
	}
	k, verdict := g.keys.Verify(utils.UnsafeString(key))
	switch verdict {
	case keys.Unavailable:
		return Caller{}, problem.New(http.StatusServiceUnavailable,
			"Keys cannot be checked for a moment (the key list is loading). Retry in 5 seconds.").RetryAfter(5)
	case keys.Invalid:
		g.limits.InvalidKey(addr, now)
		return Caller{}, unauthorized("invalid_token",
			"The key is not valid: it is wrong, revoked, or its account is disabled. Send a valid key, or send no key for the anonymous limits.")
	}
	return Caller{Subject: limits.Subject{Key: k.ID}, Key: k}, nil
}

// Admit applies the caller's limits to one call and sets the RateLimit
// headers; it returns the problem to answer when the call is refused.
func (g *Gate) Admit(c *fiber.Ctx, who Caller) error {
	return g.Apply(c, who, g.limits.Admit(who.Subject, who.Key.DailyLimit, RequestTime(c)))
}

// Apply sets the RateLimit headers of d and returns the problem to answer
// when d refuses the call.
func (g *Gate) Apply(c *fiber.Ctx, who Caller, d ratelimit.Decision) error {
	if d.Outcome == ratelimit.UsageUnknown || d.Outcome == ratelimit.Crowded || d.Outcome == ratelimit.Unsettled {
		return Refusal(who, d) // no count to report
	}
	h := &c.Response().Header
	var buf [20]byte
	h.SetCanonical(headerRateLimitLimit, d.AppendField(buf[:0], ratelimit.FieldLimit))
	h.SetCanonical(headerRateLimitRemaining, d.AppendField(buf[:0], ratelimit.FieldRemaining))
	h.SetCanonical(headerRateLimitReset, d.AppendField(buf[:0], ratelimit.FieldReset))
	h.SetCanonical(headerRateLimitPolicy, utils.UnsafeBytes(d.Policy))
	if p := Refusal(who, d); p != nil {
		return p
	}
	return nil
}

// Refusal returns the problem that refuses a call of who by decision d,
// or nil when d admits it. It writes no header, so a call inside another
// request (a tool call of a JSON-RPC batch) can use it.
func Refusal(who Caller, d ratelimit.Decision) *problem.Problem {
	switch d.Outcome {
	case ratelimit.UsageUnknown:
		return problem.New(http.StatusServiceUnavailable,
			"The day's usage cannot be checked for a moment (the usage store is out of reach). Retry in 5 seconds.").RetryAfter(5)
	case ratelimit.Unsettled:
		return problem.New(http.StatusServiceUnavailable,
			"The day's usage of this key cannot be checked for a moment: this edge admits a key's calls only once it has written them to the fleet's usage log, and the log is out of reach. Retry in 5 seconds.").RetryAfter(5)
	case ratelimit.Crowded:
		return problem.Newf(http.StatusServiceUnavailable,
			"This edge is counting as many callers as it can hold, and none of their calls can be let go until they reach the fleet's totals (the usage store may be out of reach). Retry in %d seconds.",
			problem.Seconds(d.RetryAfter)).RetryAfter(problem.Seconds(d.RetryAfter))
	case ratelimit.MinuteFull:
		advice := "send a key for higher limits"
		if who.Key.ID != "" {
			advice = "spread calls over the minute"
		}
		return problem.Newf(http.StatusTooManyRequests, "More than %d calls in a minute. Wait %d seconds, or %s.",
			d.PerMinute, problem.Seconds(d.RetryAfter), advice).RetryAfter(problem.Seconds(d.RetryAfter))
	case ratelimit.DayFull:
		advice := "send a key for a higher daily limit"
		if who.Key.ID != "" {
			advice = "ask for a higher daily limit for this key"
		}
		return problem.Newf(http.StatusTooManyRequests, "The day's %d calls are used; the count restarts at 00:00 UTC, in %d seconds. Wait, or %s.",
			d.Limit, problem.Seconds(d.Reset), advice).RetryAfter(problem.Seconds(d.Reset))
	}
	return nil
}

// headerKey returns the key a request sends: the token of Authorization
// when that header is present (it wins over X-Api-Key), else X-Api-Key.
// ok is false for an Authorization of another scheme than Bearer (in any
// case) or without a token. The key aliases the headers' bytes.
func headerKey(authz, xkey []byte) (key []byte, ok bool) {
	if len(authz) == 0 {
		return xkey, true
	}
	scheme, token, _ := bytes.Cut(bytes.TrimSpace(authz), []byte(" "))
	token = bytes.TrimSpace(token)
	if !bytes.EqualFold(scheme, []byte("Bearer")) || len(token) == 0 {
		return nil, false
	}
	return token, true
}

// Limit is the v1 API's middleware: it checks the caller's key and
// applies the limits before the route runs. A call the tool server makes
// on a caller's behalf (MarkInternal) passes: its /mcp request was
// counted.
func (g *Gate) Limit(c *fiber.Ctx) error {
	if Internal(c) {
		return c.Next()
	}
	who, err := g.Identify(c)
	if err != nil {
		return err
	}
	if err := g.Admit(c, who); err != nil {
		return err
	}
	if who.Key.ID != "" {
		c.Context().SetUserValue(missCaller, missCallerOf(who))
	}
	if who.Key.ID == "" && ratelimit.Wanted(c.Context()) {
		// An anonymous call's answer may be replayed to the same caller,
		// under the same limits (package replay).
		ratelimit.Apply(c.Context(), ratelimit.Applied{Caller: g.cfg.Proxies.Of(c), Admit: g.replay})
	}
	return c.Next()
}

// SearchSlot takes a slot of the shared search pool, or answers 429 with
// Retry-After: 5 when the pool is full. Call the returned func when the
// search ends.
func (g *Gate) SearchSlot() (func(), error) {
	release, ok := g.limits.Search.TryAcquire()
	if !ok {
		return nil, problem.New(http.StatusTooManyRequests,
			"The search pool shared by every caller is full. Retry in 5 seconds, or ask without q (searches answered before come from the cache).").RetryAfter(5).
			ForReaders("Too many searches are running just now. A search made before, or the listings without a search, can be shown at once.")
	}
	return release, nil
}
