package edge

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/limits"
)

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

// requestTime returns when the request started, as fasthttp recorded it.
func requestTime(c *fiber.Ctx) time.Time {
	if t := c.Context().Time(); !t.IsZero() {
		return t
	}
	return time.Now()
}

// keyParams are query parameter names that carry a key in other APIs; a
// request naming one is refused, so a key never travels in a URL.
var keyParams = []string{"key", "apikey", "api_key", "api-key", "x-api-key", "access_token", "token", "auth", "authorization", "bearer"}

// seconds rounds d up to whole seconds, at least 1, for Retry-After.
func seconds(d time.Duration) int { return max(int(math.Ceil(d.Seconds())), 1) }

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
		if keys.LooksLikeKey(utils.UnsafeString(v)) || keys.LooksLikeKey(name) {
			found = strings.Clone(name)
		}
	})
	return found
}

// caller is who a request is counted for, once its key is checked.
type caller struct {
	Subject limits.Subject
	Key     keys.Key // the zero Key without a key
}

// unauthorized is the 401 of a refused key: every refusal reads the same,
// so the answer does not tell an unknown key from a revoked one.
func unauthorized(code, detail string) *Problem {
	return NewProblem(http.StatusUnauthorized, detail).WithHeader(fiber.HeaderWWWAuthenticate,
		`Bearer realm="edge", error="`+code+`", error_description="`+strings.ReplaceAll(detail, `"`, `'`)+`"`)
}

// identify reads the caller's key, if any, from Authorization: Bearer or,
// when no Authorization header is sent, X-Api-Key. Authorization wins when
// both are sent. An address that sent too many invalid keys this minute
// has its keys refused unread.
func (s *Server) identify(c *fiber.Ctx) (caller, error) {
	addr := clientAddr(c, s.cfg.TrustedProxies)
	if name := keyInURL(c); name != "" {
		if keys.LooksLikeKey(name) {
			name = "A query parameter"
		}
		return caller{}, Problemf(http.StatusBadRequest,
			"%s: keys are never accepted in the URL, where logs and caches keep them. Remove the parameter and send the key in the header Authorization: Bearer <key> (or X-Api-Key: <key>); if the key was shared, revoke it and make a new one.", name)
	}
	authz := c.Request().Header.PeekCanonical(headerAuthorization)
	xkey := c.Request().Header.PeekCanonical(headerAPIKey)
	if len(authz) == 0 && len(xkey) == 0 {
		return caller{Subject: limits.Subject{Addr: addr}}, nil
	}
	now := requestTime(c)
	if blocked, wait := s.limits.InvalidKeysBlocked(addr, now); blocked {
		return caller{}, Problemf(http.StatusTooManyRequests,
			"More than %d invalid keys were sent from your address in the last minute, so keys from it are refused unread. Wait %d seconds and send a valid key, or send no key for the anonymous limits.",
			s.cfg.Limits.InvalidKeys, seconds(wait)).RetryAfter(seconds(wait))
	}
	key := xkey
	if len(authz) > 0 {
		scheme, token, _ := bytes.Cut(bytes.TrimSpace(authz), []byte(" "))
		if !bytes.EqualFold(scheme, []byte("Bearer")) || len(bytes.TrimSpace(token)) == 0 {
			s.limits.InvalidKey(addr, now)
			return caller{}, unauthorized("invalid_request",
				"Authorization must use the Bearer scheme: send Authorization: Bearer <key>, or X-Api-Key: <key>, or no key for the anonymous limits.")
		}
		key = bytes.TrimSpace(token)
	}
	k, verdict := s.keys.Verify(utils.UnsafeString(key))
	switch verdict {
	case keys.Unavailable:
		return caller{}, NewProblem(http.StatusServiceUnavailable,
			"Keys cannot be checked for a moment (the key list is loading). Retry in 5 seconds.").RetryAfter(5)
	case keys.Invalid:
		s.limits.InvalidKey(addr, now)
		return caller{}, unauthorized("invalid_token",
			"The key is not valid: it is wrong, revoked, or its account is disabled. Send a valid key, or send no key for the anonymous limits.")
	}
	return caller{Subject: limits.Subject{Key: k.ID}, Key: k}, nil
}

// admit applies the caller's limits to one call and sets the RateLimit
// headers; it returns the problem to answer when the call is refused.
func (s *Server) admit(c *fiber.Ctx, who caller) error {
	return s.apply(c, who, s.limits.Admit(who.Subject, who.Key.DailyLimit, requestTime(c)))
}

// apply sets the RateLimit headers of d and returns the problem to answer
// when d refuses the call.
func (s *Server) apply(c *fiber.Ctx, who caller, d limits.Decision) error {
	if d.Outcome == limits.UsageUnknown {
		return NewProblem(http.StatusServiceUnavailable,
			"The day's usage cannot be checked for a moment (the usage store is out of reach). Retry in 5 seconds.").RetryAfter(5)
	}
	h := &c.Response().Header
	var buf [20]byte
	h.SetCanonical(headerRateLimitLimit, strconv.AppendUint(buf[:0], d.Limit, 10))
	h.SetCanonical(headerRateLimitRemaining, strconv.AppendUint(buf[:0], d.Remaining, 10))
	h.SetCanonical(headerRateLimitReset, strconv.AppendInt(buf[:0], int64(seconds(d.Reset)), 10))
	h.SetCanonical(headerRateLimitPolicy, utils.UnsafeBytes(d.Policy))
	switch d.Outcome {
	case limits.MinuteFull:
		advice := "send a key for higher limits"
		if who.Key.ID != "" {
			advice = "spread calls over the minute"
		}
		return Problemf(http.StatusTooManyRequests, "More than %d calls in a minute. Wait %d seconds, or %s.",
			d.PerMinute, seconds(d.RetryAfter), advice).RetryAfter(seconds(d.RetryAfter))
	case limits.DayFull:
		advice := "send a key for a higher daily limit"
		if who.Key.ID != "" {
			advice = "ask for a higher daily limit for this key"
		}
		return Problemf(http.StatusTooManyRequests, "The day's %d calls are used; the count restarts at 00:00 UTC, in %d seconds. Wait, or %s.",
			d.Limit, seconds(d.Reset), advice).RetryAfter(seconds(d.Reset))
	}
	return nil
}

// limit is the v1 API's middleware: it checks the caller's key and
// applies the limits before the route runs.
func (s *Server) limit(c *fiber.Ctx) error {
	if c.Locals(internalCall) != nil {
		return c.Next()
	}
	who, err := s.identify(c)
	if err != nil {
		return err
	}
	if err := s.admit(c, who); err != nil {
		return err
	}
	return c.Next()
}

// searchSlot takes a slot of the shared search pool, or answers 429 with
// Retry-After: 5 when the pool is full. Call the returned func when the
// search ends.
func (s *Server) searchSlot() (func(), error) {
	release, ok := s.limits.Search.TryAcquire()
	if !ok {
		return nil, NewProblem(http.StatusTooManyRequests,
			"The search pool shared by every caller is full. Retry in 5 seconds, or ask without q (searches answered before come from the cache).").RetryAfter(5)
	}
	return release, nil
}

// syncAccess loads the keys and syncs the day's usage until ctx ends,
// every cfg.KeysEvery and cfg.UsageEvery.
func (s *Server) syncAccess(ctx context.Context) {
	keysT := time.NewTicker(s.cfg.KeysEvery)
	usageT := time.NewTicker(s.cfg.UsageEvery)
	defer keysT.Stop()
	defer usageT.Stop()
	var keysErr, usageErr bool
	for {
		select {
		case <-ctx.Done():
			return
		case <-keysT.C:
			keysErr = s.report(s.loadKeys(ctx), keysErr, "keys")
		case <-usageT.C:
			usageErr = s.report(s.syncUsage(ctx), usageErr, "usage")
		}
	}
}

// report logs a failure once and the recovery that ends it.
func (s *Server) report(err error, failing bool, what string) bool {
	switch {
	case err != nil && !failing:
		s.log.Warn("sync failing; will retry", "what", what, "err", err)
	case err == nil && failing:
		s.log.Info("sync recovered", "what", what)
	}
	return err != nil
}

func (s *Server) loadKeys(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadBudget+5*time.Second)
	defer cancel()
	return s.keys.Load(ctx)
}

func (s *Server) syncUsage(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(s.cfg.UsageEvery, 2*time.Second))
	defer cancel()
	if err := s.limits.Usage.Sync(ctx); err != nil {
		return fmt.Errorf("sync usage: %w", err)
	}
	return nil
}

// flushUsage writes the calls counted since the last sync; a graceful stop
// calls it once no request is in flight.
func (s *Server) flushUsage() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.limits.Usage.Flush(ctx); err != nil {
		return fmt.Errorf("flush usage: %w", err)
	}
	return nil
}
