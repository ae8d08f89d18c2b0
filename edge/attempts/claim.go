package attempts

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// revokedBit marks a row of the log that takes back an attempt of its
// kind, subject, edge and time: a sign-in checked against the fleet's
// count before its password, which then succeeded.
const revokedBit = 0x80

// The timing of a Claim. An attempt counts for the fleet only if its
// write was acknowledged within claimWrite of when it happened, and each
// Claim reads the log claimSettle after its own attempt happened: so
// every counted attempt that happened before it (by up to claimSettle -
// claimWrite of clock difference between edges) is in what it reads.
const (
	claimWrite  = 700 * time.Millisecond
	claimSettle = time.Second
)

// ErrLate is what Claim answers when the write of an attempt was not
// acknowledged in time: the fleet's order of attempts cannot be known.
var ErrLate = errors.New("the attempts log took the attempt too late to order it")

// Limit is one limit an attempt counts against (Claim): at most Max
// attempts of Kind at Key within Span.
type Limit struct {
	Kind Kind
	Key  Key
	Max  int
	Span time.Duration
}

// Claim decides at once, for the whole fleet, whether an attempt that
// happened at now is within each of its limits: it writes the attempt,
// waits until every attempt of the fleet that happened before it was
// acknowledged, and reads back every attempt of its subjects. The fleet's
// attempts are ordered by when they happened (then by edge and batch):
// the attempt is within a limit when fewer than Max attempts of that
// limit's window come before it. Since every edge orders them alike, a
// burst spread over the edges admits exactly Max, wherever each lands.
// An attempt written counts, admitted or not, until Revoke; an error
// (the log out of reach, or ErrLate) leaves the decision to the caller.
func (l *Log) Claim(ctx context.Context, now time.Time, limits ...Limit) (Ticket, bool, error) {
	now = time.UnixMilli(now.UnixMilli()).UTC() // as the log keeps it
	t := Ticket{seq: l.seq.Add(1), happened: now}
	rows := make([]analytics.Attempt, len(limits))
	subjects := make([]string, len(limits))
	var span time.Duration
	for i, lim := range limits {
		subjects[i] = hex.EncodeToString(lim.Key[:])
		rows[i] = analytics.Attempt{Edge: l.name, Seq: t.seq, Kind: uint8(lim.Kind), Subject: subjects[i], Happened: now}
		span = max(span, lim.Span)
	}
	wctx, cancel := context.WithDeadline(ctx, now.Add(claimWrite))
	err := l.store.Write(wctx, rows)
	cancel()
	if err != nil {
		return t, false, fmt.Errorf("write attempt: %w", err)
	}
	t.rows = rows
	for _, lim := range limits {
		l.counted.WithLabelValues(kindNames[lim.Kind], "edge").Inc()
	}
	if l.now().After(now.Add(claimWrite)) {
		return t, false, ErrLate
	}
	select {
	case <-ctx.Done():
		return t, false, ctx.Err()
	case <-time.After(time.Until(now.Add(claimSettle))):
	}
	got, err := l.store.Of(ctx, subjects, now.Add(-span), now)
	if err != nil {
		return t, false, fmt.Errorf("read attempts back: %w", err)
	}
	for _, lim := range limits {
		if before(got, l.name, t.seq, lim, now) >= lim.Max {
			return t, false, nil
		}
	}
	return t, true, nil
}

// before counts the attempts of lim in got, not revoked, within its span
// before (edge, seq) at now.
func before(got []analytics.Attempt, edge string, seq uint64, lim Limit, now time.Time) int {
	subject := hex.EncodeToString(lim.Key[:])
	type mark struct {
		edge     string
		happened int64
	}
	revoked := map[mark]int{}
	for _, r := range got {
		if r.Subject == subject && r.Kind == uint8(lim.Kind)|revokedBit {
			revoked[mark{r.Edge, r.Happened.UnixMilli()}]++
		}
	}
	n := 0
	from := now.Add(-lim.Span)
	for _, r := range got {
		if r.Subject != subject || r.Kind != uint8(lim.Kind) || !r.Happened.After(from) {
			continue
		}
		m := mark{r.Edge, r.Happened.UnixMilli()}
		if revoked[m] > 0 {
			revoked[m]--
			continue
		}
		h := r.Happened.UnixMilli()
		if h < now.UnixMilli() || h == now.UnixMilli() && (r.Edge < edge || r.Edge == edge && r.Seq < seq) {
			n++
		}
	}
	return n
}

// Ticket is an attempt Claim wrote, for Revoke.
type Ticket struct {
	seq      uint64
	happened time.Time
	rows     []analytics.Attempt
}

// Written reports whether the attempt is in the log (its write returned):
// when it is not, the caller records it for the next Sync.
func (t Ticket) Written() bool { return len(t.rows) > 0 }

// Revoke takes back an attempt Claim wrote that turned out not to count
// (a sign-in whose password was right): the fleet stops counting it.
func (l *Log) Revoke(ctx context.Context, t Ticket) error {
	if len(t.rows) == 0 {
		return nil
	}
	seq := l.seq.Add(1)
	rows := make([]analytics.Attempt, len(t.rows))
	for i, r := range t.rows {
		r.Seq, r.Kind = seq, r.Kind|revokedBit
		rows[i] = r
	}
	if err := l.store.Write(ctx, rows); err != nil {
		return fmt.Errorf("revoke attempt: %w", err)
	}
	return nil
}
