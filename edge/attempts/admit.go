package attempts

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// Admit decides an attempt of kind under key that counts against limit
// attempts in span, in the log itself rather than in this edge's
// windows: an admitted attempt is written to the store before Admit
// returns, so no kill of this edge or of any other forgets it, and the
// count it is decided by is read from the store, so every admission of
// every edge that returned before is in it, whichever edge led then or
// whether one did.
//
// It reads the subject's attempts of the span; at the limit it refuses
// without writing. Otherwise it writes the attempt and reads again: past
// the limit (others wrote meanwhile) it refuses and writes the attempt's
// revocation (Revoked), so that a refused attempt stops counting. Two
// edges deciding the same subject at once may so both refuse where one
// could have been admitted; no order of writes and reads admits past the
// limit, since the last of the admitted attempts to read counts every
// admitted one. Decisions of one subject at one edge are made one at a
// time, so a burst at one edge (the leader, which takes the fleet's
// claims) admits exactly the limit.
//
// A refusal says when the subject's oldest attempt that counts leaves the
// span. An error (the store out of reach, or an answer that cannot be
// trusted) decides nothing: the caller refuses for now; the attempt may
// have been written and then counts, which refuses early, never admits
// past the limit.
func (l *Log) Admit(ctx context.Context, kind Kind, key Key, limit int, span time.Duration) (bool, time.Duration, error) {
	mu := &l.admits[key[0]%byte(len(l.admits))]
	mu.Lock()
	defer mu.Unlock()
	subject := hex.EncodeToString(key[:])
	now := l.now()
	since := now.Add(-span)
	live, err := l.live(ctx, kind, subject, since)
	if err != nil {
		return false, 0, err
	}
	if len(live) >= limit {
		return false, retryAfter(live, limit, span, now), nil
	}
	a := analytics.Attempt{Edge: l.name, Seq: l.seq.Add(1), Kind: uint8(kind), Subject: subject, Happened: now}
	if err := l.store.Write(ctx, []analytics.Attempt{a}); err != nil {
		return false, 0, fmt.Errorf("write the attempt: %w", err)
	}
	if live, err = l.live(ctx, kind, subject, since); err != nil {
		return false, 0, err
	}
	if len(live) > limit {
		r := a
		r.Kind, r.Seq = uint8(Revoked), l.seq.Add(1)
		if err := l.store.Write(ctx, []analytics.Attempt{r}); err != nil {
			// Unrevoked, the refused attempt counts until it leaves the
			// span: early refusals, never an admission past the limit.
			l.log.Warn("attempts: a refused attempt could not be revoked", "err", err)
		}
		return false, retryAfter(live, limit, span, now), nil
	}
	l.counted.WithLabelValues(kindNames[kind], "edge").Inc()
	return true, 0, nil
}

// live returns the times of the attempts of kind of subject since
// since that count (those revoked taken out), oldest first.
func (l *Log) live(ctx context.Context, kind Kind, subject string, since time.Time) ([]time.Time, error) {
	rows, err := l.store.Of(ctx, subject, []uint8{uint8(kind), uint8(Revoked)}, since)
	if err != nil {
		return nil, fmt.Errorf("read the subject's attempts: %w", err)
	}
	var live, revoked []time.Time
	for _, r := range rows {
		if Kind(r.Kind) == Revoked {
			revoked = append(revoked, r.Happened)
		} else {
			live = append(live, r.Happened)
		}
	}
	slices.SortFunc(live, time.Time.Compare)
	for _, t := range revoked {
		if i := slices.IndexFunc(live, t.Equal); i >= 0 {
			live = slices.Delete(live, i, i+1)
		}
	}
	return live, nil
}

// retryAfter is how long until fewer than limit of the attempts live
// (oldest first) are within span of now: at least a second.
func retryAfter(live []time.Time, limit int, span time.Duration, now time.Time) time.Duration {
	i := max(len(live)-limit, 0)
	return max(live[i].Add(span).Sub(now), time.Second)
}
