package limits

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// Policy is a class of callers' limits.
type Policy struct {
	PerMinute int    // calls in any 60 seconds
	PerDay    uint64 // calls a UTC day
}

// Config holds the limits.
type Config struct {
	Anonymous   Policy        // callers without a key, per address
	Keyed       Policy        // callers with a key, per key (a key's own daily limit replaces PerDay)
	InvalidKeys int           // invalid keys a minute from one address before its keys are refused unread
	SearchSlots int           // searches running at once, across every caller
	SearchRate  float64       // searches started a second, across every caller (0: no bound)
	StaleAfter  time.Duration // how old the fleet's daily totals may be before each caller gets only this edge's share of its day
	// MaxActive bounds the callers held with their minute's window
	// (DefaultMaxActive when 0); MaxSubjects bounds the callers of the day
	// held in the fleet's totals (DefaultMaxSubjects when 0).
	MaxActive, MaxSubjects int
	// MaxAddresses bounds the addresses each per-address window (invalid
	// keys) holds (DefaultMaxKeys when 0).
	MaxAddresses int
	Now          func() time.Time
}

// DefaultConfig returns the spec's limits.
func DefaultConfig() Config {
	return Config{
		Anonymous:    Policy{PerMinute: 30, PerDay: 500},
		Keyed:        Policy{PerMinute: 120, PerDay: 20_000},
		InvalidKeys:  30,
		SearchSlots:  4,
		SearchRate:   20,
		StaleAfter:   15 * time.Second,
		MaxActive:    DefaultMaxActive,
		MaxSubjects:  DefaultMaxSubjects,
		MaxAddresses: DefaultMaxKeys,
	}
}

// Limiter applies the limits. It is safe for concurrent use.
type Limiter struct {
	cfg     Config
	now     func() time.Time
	invalid *Windows[netip.Addr]
	// Usage is each subject's counts: the minute's, and the day's shared
	// with the fleet. Its Sync must run every few seconds.
	Usage *Usage
	// Search is the pool every search takes a slot of.
	Search *Pool

	anonPolicy, keyedPolicy string // RateLimit-Policy of the default limits
}

// New returns a limiter whose daily counts sync with store.
func New(cfg Config, store usagelog.Store) *Limiter {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	l := &Limiter{
		cfg:     cfg,
		now:     now,
		invalid: NewWindows(cfg.InvalidKeys, time.Minute, HashAddr).Bound(cfg.MaxAddresses),
		Usage:   NewUsage(store, cfg.StaleAfter, now),
		Search:  NewPool(cfg.SearchSlots, cfg.SearchRate),
	}
	if cfg.MaxActive > 0 {
		l.Usage.maxActive = cfg.MaxActive
	}
	if cfg.MaxSubjects > 0 {
		l.Usage.maxSubjects = cfg.MaxSubjects
	}
	l.anonPolicy = policy(cfg.Anonymous.PerMinute, cfg.Anonymous.PerDay)
	l.keyedPolicy = policy(cfg.Keyed.PerMinute, cfg.Keyed.PerDay)
	return l
}

func policy(perMinute int, perDay uint64) string {
	return strconv.Itoa(perMinute) + ";w=60, " + strconv.FormatUint(perDay, 10) + ";w=86400"
}

// crowdedRetry is how long a Crowded caller is asked to wait: about a
// Sync's interval.
const crowdedRetry = 5 * time.Second

// unsettledRetry is how long an Unsettled caller is asked to wait: as
// for a day that cannot be checked.
const unsettledRetry = 5 * time.Second

// at returns now, or the configured clock's time when there is one
// (tests).
func (l *Limiter) at(now time.Time) time.Time {
	if l.cfg.Now != nil || now.IsZero() {
		return l.now()
	}
	return now
}

// Admit decides a call of s made at now (the request's start): first the
// minute's limit, then the day's. dayLimit replaces the policy's PerDay
// when not 0 (a key's raised limit).
func (l *Limiter) Admit(s Subject, dayLimit uint64, now time.Time) ratelimit.Decision {
	return l.decide(s, dayLimit, now, true)
}

// TryAdmit admits a call of s made at now when both of its limits have
// room, as Admit does, and reports true; otherwise it counts nothing and
// reports false, for the caller to decide the call with Admit (which
// counts a refusal as Admit does). It is Admit for a path that answers
// admitted calls only (the replay path, package replay).
func (l *Limiter) TryAdmit(s Subject, dayLimit uint64, now time.Time) (ratelimit.Decision, bool) {
	now = l.at(now)
	d := l.decision(s, dayLimit, now)
	if !l.Usage.loaded() {
		return d, false
	}
	e := l.Usage.lock(s, now, false) // the replay path never waits
	if e == nil {
		return d, false
	}
	limit := l.Usage.dayLimit(e, d.Limit, now)
	if s.Key != "" {
		limit = d.Limit // a key's calls are admitted against its reservations (reserve.go)
		e.lower(limit)
	}
	if s.Key == "" && e.used() >= limit || s.Key != "" && e.rsv.avail == 0 {
		e.mu.Unlock()
		return d, false
	}
	if ok, _ := e.minute.allow(limit32(d.PerMinute), minuteWidth, now.UnixNano()); !ok {
		e.mu.Unlock()
		return d, false
	}
	if s.Key != "" {
		d.Remaining, _ = l.Usage.reserved(s, e, limit, uint64(max(d.PerMinute, 0)), now, false)
		return d, true
	}
	n, _ := e.take(limit)
	e.mu.Unlock()
	d.Remaining = limit - min(limit, n)
	return d, true
}

// AdmitMinute decides a request of s against the minute's limit only; the
// day is left as it is (the tool server counts only tool calls against
// the day: see CountDay).
func (l *Limiter) AdmitMinute(s Subject, dayLimit uint64, now time.Time) ratelimit.Decision {
	return l.decide(s, dayLimit, now, false)
}

// CountDay counts one call of s against the day, for a request AdmitMinute
// admitted; the decision is DayFull when the day's limit is used.
func (l *Limiter) CountDay(s Subject, dayLimit uint64, now time.Time) ratelimit.Decision {
	now = l.at(now)
	d := l.decision(s, dayLimit, now)
	if !l.Usage.loaded() {
		d.Outcome, d.RetryAfter = ratelimit.UsageUnknown, 5*time.Second
		return d
	}
	e := l.Usage.lock(s, now, true)
	if e == nil {
		d.Outcome, d.RetryAfter = ratelimit.Crowded, crowdedRetry
		return d
	}
	if s.Key != "" {
		return l.keyedDay(s, e, d, now)
	}
	limit := l.Usage.dayLimit(e, d.Limit, now)
	n, ok := e.take(limit)
	e.mu.Unlock()
	d.Remaining = limit - min(limit, n)
	if !ok {
		d.Outcome, d.RetryAfter = ratelimit.DayFull, d.Reset
	}
	return d
}

// keyedDay decides the day of a keyed call whose entry e is locked, and
// unlocks it: against the key's reservations (reserve.go), waiting for
// one when none is left.
func (l *Limiter) keyedDay(s Subject, e *entry, d ratelimit.Decision, now time.Time) ratelimit.Decision {
	d.Remaining, d.Outcome = l.Usage.reserved(s, e, d.Limit, uint64(max(d.PerMinute, 0)), now, true)
	switch d.Outcome {
	case ratelimit.DayFull:
		d.RetryAfter = d.Reset
	case ratelimit.Unsettled:
		d.RetryAfter = unsettledRetry
	case ratelimit.Crowded:
		d.RetryAfter = crowdedRetry
	}
	return d
}

// decision returns the figures of s's headers, before any outcome.
func (l *Limiter) decision(s Subject, dayLimit uint64, now time.Time) ratelimit.Decision {
	p := l.cfg.Anonymous
	if s.Key != "" {
		p = l.cfg.Keyed
	}
	if dayLimit == 0 {
		dayLimit = p.PerDay
	}
	d := ratelimit.Decision{Limit: dayLimit, Reset: UntilMidnight(now), PerMinute: p.PerMinute}
	switch {
	case dayLimit == l.cfg.Keyed.PerDay && s.Key != "":
		d.Policy = l.keyedPolicy
	case dayLimit == l.cfg.Anonymous.PerDay && s.Key == "":
		d.Policy = l.anonPolicy
	default:
		d.Policy = policy(p.PerMinute, dayLimit)
	}
	return d
}

func (l *Limiter) decide(s Subject, dayLimit uint64, now time.Time, day bool) ratelimit.Decision {
	now = l.at(now)
	d := l.decision(s, dayLimit, now)
	// Only an edge that never read the day's totals cannot tell a caller's
	// day: one whose totals are stale goes on with its share of each
	// caller's remainder (Usage.dayLimit).
	if !l.Usage.loaded() {
		d.Outcome, d.RetryAfter = ratelimit.UsageUnknown, 5*time.Second
		return d
	}
	// One lock for both counts: the minute's first, then the day's. A
	// caller whose day is used up is refused for the day at once, and the
	// call counts against neither: its Retry-After is the day's (until
	// midnight), however many refused calls it makes in a minute.
	e := l.Usage.lock(s, now, true)
	if e == nil {
		d.Outcome, d.RetryAfter = ratelimit.Crowded, crowdedRetry
		return d
	}
	limit := l.Usage.dayLimit(e, d.Limit, now)
	if s.Key != "" {
		limit = d.Limit // a key's calls are admitted against its reservations (reserve.go)
	}
	if day && e.dayUsed(s, limit) {
		e.mu.Unlock()
		d.Outcome, d.RetryAfter, d.Remaining = ratelimit.DayFull, d.Reset, 0
		return d
	}
	ok, wait := e.minute.allow(limit32(d.PerMinute), minuteWidth, now.UnixNano())
	var n uint64
	switch {
	case !ok && !day && e.dayUsed(s, limit):
		// The tool server's minute (AdmitMinute) refuses a caller whose
		// day is used up too: the wait that matters is the day's.
		e.mu.Unlock()
		d.Outcome, d.RetryAfter, d.Remaining = ratelimit.DayFull, d.Reset, 0
		return d
	case !ok:
		d.Outcome, d.RetryAfter = ratelimit.MinuteFull, wait
		n = e.spent()
	case !day:
		n = e.spent()
	case s.Key != "":
		return l.keyedDay(s, e, d, now)
	default:
		n, ok = e.take(limit)
		if !ok {
			d.Outcome, d.RetryAfter = ratelimit.DayFull, d.Reset
		}
	}
	e.mu.Unlock()
	d.Remaining = limit - min(limit, n)
	return d
}

// dayUsed reports whether s's day is used up on e, locked: its calls
// reach limit, and for a key, none of its reserved calls is left or on
// its way (reserve.go).
func (e *entry) dayUsed(s Subject, limit uint64) bool {
	if s.Key != "" && (e.rsv.avail > 0 || e.rsv.held > 0) {
		return false
	}
	return e.used() >= limit
}

// InvalidKeysBlocked reports whether a has sent more invalid keys in the
// last minute than allowed, and for how much longer its keys are refused
// unread.
func (l *Limiter) InvalidKeysBlocked(a netip.Addr, now time.Time) (bool, time.Duration) {
	return l.invalid.Full(a, l.at(now))
}

// InvalidKey records an invalid key sent from a at now.
func (l *Limiter) InvalidKey(a netip.Addr, now time.Time) { l.invalid.Add(a, l.at(now)) }
