package account

import (
	"context"
	"hash/maphash"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/problem"
)

// signInGuard throttles the account routes. A sign-in attempt is
// reserved in each of its windows before its password is hashed (so a
// thousand parallel guesses are as many attempts, not one), and taken
// back when it succeeds. Failures count per (e-mail address, client
// address), so that nobody can lock an owner out from elsewhere; per
// client address, so that one address cannot try many accounts; and per
// e-mail address alone with a much higher ceiling, which bounds guesses
// at one account from rotating addresses. Sign-ups count per client
// address.
//
// The windows count by a hash of their subjects (attempts.Subject), as
// the fleet's attempts log names them: with a log (Config.Shared), each
// failure and sign-up is recorded there, and every other edge's is
// counted here from when it happened, so that the limits hold for the
// fleet (package attempts). In a fleet (Config.Fleet), while another
// edge leads, each attempt is claimed from the leader at once and the
// leader's windows decide (package claims), so that a burst spread over
// the edges meets the limit once; when the leader cannot answer, this
// edge decides with its own windows.
type signInGuard struct {
	byPair  *limits.Windows[attempts.Key]
	byEmail *limits.Windows[attempts.Key]
	byAddr  *limits.Windows[attempts.Key]
	signUps *limits.Windows[attempts.Key]
	// signUpLimit is the sign-ups an address may make in signUpSpan.
	signUpLimit int
	shared      *attempts.Log  // nil: this edge's attempts alone
	fleet       *claims.Client // nil: this edge decides alone
	budget      time.Duration  // Config.CountWait
	log         *slog.Logger
}

func hashKey(seed maphash.Seed, k attempts.Key) uint64 { return maphash.Bytes(seed, k[:]) }

// subjectsOf returns the keys of a sign-in at email from addr (its
// subject: IPv6 grouped by prefix): the pair, the e-mail address, the
// client address.
func subjectsOf(email string, addr netip.Addr) claims.Keys {
	a := addr.String()
	return claims.Keys{attempts.Subject("pair", email, a), attempts.Subject("email", email), attempts.Subject("addr", a)}
}

// signUpKey returns the key of the sign-ups from addr.
func signUpKey(addr netip.Addr) attempts.Key { return attempts.Subject("signup", addr.String()) }

// newSignInGuard returns the guard of cfg: each of its windows holds at
// most cfg.MaxAddresses keys (EDGE_LIMITS_MAX_ADDRESSES). The ceiling of
// an e-mail address lets go its addresses with the fewest failures
// first, so a flood of sign-ins at other addresses from many clients
// cannot push out the count of one under attack and restart its ceiling.
func newSignInGuard(cfg Config, log *slog.Logger) *signInGuard {
	if log == nil {
		log = slog.Default()
	}
	g := &signInGuard{
		byPair:  limits.NewWindows(cfg.SignInFailures, cfg.SignInWindow, hashKey).Bound(cfg.MaxAddresses),
		byEmail: limits.NewWindows(cfg.SignInEmailFailures, cfg.SignInWindow, hashKey).Bound(cfg.MaxAddresses).EvictFewest(),
		// One address may try a few accounts (a shared office), not many.
		byAddr:      limits.NewWindows(cfg.SignInFailures*3, cfg.SignInWindow, hashKey).Bound(cfg.MaxAddresses),
		signUps:     limits.NewWindows(cfg.SignUps, signUpSpan, hashKey).Bound(cfg.MaxAddresses),
		signUpLimit: cfg.SignUps,
		fleet:       cfg.Fleet,
		budget:      cfg.CountWait,
		log:         log,
	}
	if g.budget <= 0 {
		g.budget = DefaultCountWait
	}
	if cfg.Shared != nil {
		g.shared = attempts.New(cfg.Shared, max(cfg.SignInWindow, signUpSpan), g.count, log)
	}
	return g
}

// signUpSpan is the span of the sign-up limit.
const signUpSpan = time.Hour

// DefaultCountWait is Config.CountWait's default.
const DefaultCountWait = time.Second

// count counts another edge's attempt in its window.
func (g *signInGuard) count(a attempts.Attempt) {
	now := time.Now()
	switch a.Kind {
	case attempts.SignUp:
		g.signUps.AddAt(a.Key, a.Happened, now)
	case attempts.SignInPair:
		g.byPair.AddAt(a.Key, a.Happened, now)
	case attempts.SignInEmail:
		g.byEmail.AddAt(a.Key, a.Happened, now)
	case attempts.SignInAddr:
		g.byAddr.AddAt(a.Key, a.Happened, now)
	}
}

// reservation is a sign-in's attempt reserved: where (by the leader, or
// here) and when, by that one's clock.
type reservation struct {
	keys   claims.Keys
	at     time.Time
	leader bool
}

// reserve takes a sign-in's attempt of email from addr: from the leader
// while another edge leads and answers, else here. It says how long to
// wait when a limit is reached.
func (g *signInGuard) reserve(ctx context.Context, email string, addr netip.Addr) (reservation, bool, time.Duration) {
	k := subjectsOf(email, addr)
	if g.fleet != nil {
		ctx, cancel := context.WithTimeout(ctx, g.budget)
		v, err := g.fleet.Reserve(ctx, k)
		cancel()
		if err == nil {
			return reservation{k, time.Unix(0, v.At), true}, v.OK, v.Retry()
		}
		g.decideHere(err)
	}
	now := time.Now()
	ok, wait := g.Reserve(k, now)
	return reservation{k, now, false}, ok, wait
}

// settle counts a reserved attempt as a failure, or takes it back, where
// it was reserved. A failure the leader cannot take is counted here, so
// the fleet's log has it still.
func (g *signInGuard) settle(ctx context.Context, r reservation, failed bool) {
	if r.leader {
		ctx, cancel := context.WithTimeout(ctx, g.budget)
		err := g.fleet.Settle(ctx, r.keys, r.at.UnixNano(), failed)
		cancel()
		if err == nil || !failed {
			return
		}
		g.decideHere(err)
		r.at = time.Now()
		g.byPair.Add(r.keys[0], r.at)
		g.byEmail.Add(r.keys[1], r.at)
		g.byAddr.Add(r.keys[2], r.at)
	}
	g.Settle(r.keys, r.at, failed)
}

// signUp takes a sign-up from addr, or refuses it: 429 past the limit;
// 503 while the fleet's count cannot be read (its log out of reach),
// since only the fleet's count bounds sign-ups. While another edge leads
// and answers, it decides.
func (g *signInGuard) signUp(ctx context.Context, addr netip.Addr) error {
	key := signUpKey(addr)
	if g.fleet != nil {
		ctx, cancel := context.WithTimeout(ctx, g.budget)
		v, err := g.fleet.SignUp(ctx, key)
		cancel()
		if err == nil {
			return signUpProblem(v.Status, v.Retry())
		}
		g.decideHere(err)
	}
	return signUpProblem(g.SignUp(ctx, key, time.Now()))
}

// decideHere logs why a claim is decided by this edge (not when no other
// edge leads: then it is this edge's to decide).
func (g *signInGuard) decideHere(err error) {
	if err != claims.ErrNoLeader {
		g.log.Debug("account attempt decided by this edge: the leader did not answer", "err", err)
	}
}

// signUpProblem is the problem of a sign-up's verdict (nil: admitted).
func signUpProblem(status int, wait time.Duration) error {
	switch status {
	case 0:
		return nil
	case http.StatusServiceUnavailable:
		return problem.Newf(http.StatusServiceUnavailable, "Sign-ups are counted across every edge, and this edge cannot reach that count now. Retry in %d seconds.",
			problem.Seconds(wait)).RetryAfter(problem.Seconds(wait))
	default:
		return problem.Newf(http.StatusTooManyRequests, "Too many accounts were made from your address in the last hour. Retry in %d seconds.",
			problem.Seconds(wait)).RetryAfter(problem.Seconds(wait))
	}
}

// SignUp decides a sign-up under key at now (claims.Decider): admitted
// (0), or refused with its status and when to retry. With the fleet's
// log it is decided there (attempts.Log.Admit): written before it is
// admitted and counted with every edge's, so that no kill forgets it and
// edges deciding alone (no leader, or none that answers) admit no more
// than the limit together; a log that cannot be written or read refuses
// it for now (503). Without one, this edge's windows decide.
func (g *signInGuard) SignUp(ctx context.Context, key attempts.Key, now time.Time) (int, time.Duration) {
	if g.shared != nil {
		ctx, cancel := context.WithTimeout(ctx, g.budget)
		defer cancel()
		ok, wait, err := g.shared.Admit(ctx, attempts.SignUp, key, g.signUpLimit, signUpSpan)
		switch {
		case err != nil:
			g.log.Warn("sign-up refused: the fleet's count of sign-ups cannot be read", "err", err)
			return http.StatusServiceUnavailable, uncountedRetry
		case !ok:
			return http.StatusTooManyRequests, wait
		}
		return 0, 0
	}
	if ok, wait := g.signUps.Allow(key, now); !ok {
		return http.StatusTooManyRequests, wait
	}
	return 0, 0
}

// uncountedRetry is how long a sign-up refused for want of the fleet's
// count is to wait (the contract's Retry-After for a count that cannot
// be checked).
const uncountedRetry = 5 * time.Second

// Reserve takes a sign-in's attempt under k at now in every window, or
// none and says how long to wait when one of them is full
// (claims.Decider).
func (g *signInGuard) Reserve(k claims.Keys, now time.Time) (bool, time.Duration) {
	if ok, wait := g.byPair.Allow(k[0], now); !ok {
		return false, wait
	}
	if ok, wait := g.byEmail.Allow(k[1], now); !ok {
		g.byPair.Release(k[0], now)
		return false, wait
	}
	if ok, wait := g.byAddr.Allow(k[2], now); !ok {
		g.byPair.Release(k[0], now)
		g.byEmail.Release(k[1], now)
		return false, wait
	}
	return true, 0
}

// Settle records the attempt reserved under k at at as a failure, for
// the fleet, or takes it back (claims.Decider).
func (g *signInGuard) Settle(k claims.Keys, at time.Time, failed bool) {
	if !failed {
		g.byPair.Release(k[0], at)
		g.byEmail.Release(k[1], at)
		g.byAddr.Release(k[2], at)
		return
	}
	if g.shared != nil {
		g.shared.Record(attempts.SignInPair, k[0], at)
		g.shared.Record(attempts.SignInEmail, k[1], at)
		g.shared.Record(attempts.SignInAddr, k[2], at)
	}
}
