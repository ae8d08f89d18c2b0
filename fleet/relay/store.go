package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
)

// Client asks the fleet's leader.
type Client struct {
	// Leader returns the leader's fleet address, "" when this edge leads
	// or none is known: then every read goes to the store.
	Leader func() string
	// HTTP is the client to ask with (nil: one with a 2-second timeout):
	// in a fleet with a token, one whose transport proves this edge holds
	// it and requires the leader to prove the same (exchange.Transport).
	HTTP *http.Client
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) (int, error) {
	addr := c.Leader()
	if addr == "" {
		return 0, errNoLeader
	}
	u := addr + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return resp.StatusCode, fmt.Errorf("leader answered %s", resp.Status)
	}
	return resp.StatusCode, json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out)
}

var defaultHTTP = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}}

// Store is a following edge's usage store: reads of the log ask the
// leader first, everything else goes to the store it wraps.
type Store struct {
	usagelog.Store
	c                 *Client
	relayed, directly atomic.Int64
	summed, rows      atomic.Int64
	fresh             atomic.Int64 // reads asked fresh (SinceFresh)
	mu                sync.Mutex
	lastPos           usagelog.Pos // the position the last answer as sums gave
	lastRead          uint64       // and the last read it spanned (0: none)
	skipUntil         time.Time    // until when reads go to the store without asking the leader
}

// leaderBackoff is how long a follower reads the store itself after its
// leader did not answer (no answer within the client's timeout, or a
// 5xx), rather than wait on it at every read: a paused leader costs a
// follower one wait, not one every sync. A leader's refusal to answer a
// position (410) is not such a failure.
const leaderBackoff = 5 * time.Second

var (
	errSkipped  = errors.New("the leader did not answer lately")
	errNoLeader = errors.New("no leader")
)

// NewStore returns a store that reads the log through c's leader, and
// otherwise from base.
func NewStore(base usagelog.Store, c *Client) *Store { return &Store{Store: base, c: c} }

// Since asks the leader for what was added from pos on, as rows; when
// it cannot answer, it reads the store.
func (s *Store) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	changes, _, next, err := s.since(ctx, day, pos, false, false)
	return changes, next, err
}

// SinceSums asks the leader for what was added from pos on, as sums: a
// leader of the release before answers rows, and when none can answer
// the store is read (rows too).
func (s *Store) SinceSums(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, *usagelog.Sums, usagelog.Pos, error) {
	return s.since(ctx, day, pos, true, false)
}

// SinceFresh is SinceSums whose answer holds every batch written before
// it was asked (usagelog.FreshStore): the leader reads the log for it
// at once, for every follower asking at the same time (Recorder's
// fresh=1). A leader of the release before answers from its record; the
// asker then reads it back at a later sync.
func (s *Store) SinceFresh(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, *usagelog.Sums, usagelog.Pos, error) {
	s.fresh.Add(1)
	return s.since(ctx, day, pos, true, true)
}

func (s *Store) since(ctx context.Context, day time.Time, pos usagelog.Pos, sum, fresh bool) ([]analytics.UsageChange, *usagelog.Sums, usagelog.Pos, error) {
	at, n := posJSON(pos)
	q := url.Values{"day": {dayKey(day).Format(time.DateOnly)}, "at": {strconv.FormatInt(at, 10)}, "n": {strconv.Itoa(n)}}
	if fresh {
		q.Set("fresh", "1")
	}
	if sum {
		q.Set("sum", "1")
		s.mu.Lock()
		if s.lastRead > 0 && !pos.After(s.lastPos) && !s.lastPos.After(pos) {
			q.Set("after", strconv.FormatUint(s.lastRead, 10))
		}
		s.mu.Unlock()
	}
	var a usageAnswer
	s.mu.Lock()
	skip := time.Now().Before(s.skipUntil)
	s.mu.Unlock()
	status, err := 0, errSkipped
	if !skip {
		status, err = s.c.get(ctx, UsagePath, q, &a)
	}
	if err != nil {
		s.directly.Add(1)
		s.mu.Lock()
		s.lastRead = 0
		if !skip && err != errNoLeader && (status == 0 || status >= 500) {
			// The leader did not answer (gone, paused, cut off): the
			// next reads go to the store without waiting on it again.
			s.skipUntil = time.Now().Add(leaderBackoff)
		}
		s.mu.Unlock()
		changes, next, err := s.Store.Since(ctx, day, pos)
		return changes, nil, next, err
	}
	s.relayed.Add(1)
	next := posOf(a.At, a.N)
	s.mu.Lock()
	s.lastPos, s.lastRead = next, 0
	if a.Sum {
		s.lastRead = a.Read
	}
	s.mu.Unlock()
	if a.Sum {
		sums := &usagelog.Sums{Totals: a.Totals, New: batchesOf(a.Batches), Seen: batchesOf(a.Seen)}
		s.summed.Add(1)
		return nil, sums, next, nil
	}
	s.rows.Add(1)
	changes := make([]analytics.UsageChange, len(a.Changes))
	for i, c := range a.Changes {
		changes[i] = analytics.UsageChange{Batch: analytics.UsageBatch{Edge: c.Edge, Seq: c.Seq}, Subject: c.Subject, Calls: c.Calls}
	}
	return changes, nil, posOf(a.At, a.N), nil
}

func batchesOf(ids []batchID) []analytics.UsageBatch {
	out := make([]analytics.UsageBatch, len(ids))
	for i, id := range ids {
		out[i] = analytics.UsageBatch{Edge: id.Edge, Seq: id.Seq}
	}
	return out
}

// Reads returns how many reads of the log the leader answered, and how
// many went to the store.
func (s *Store) Reads() (relayed, directly int64) { return s.relayed.Load(), s.directly.Load() }

// Forms returns how many of the leader's answers came as sums, and how
// many as rows.
func (s *Store) Forms() (sums, rows int64) { return s.summed.Load(), s.rows.Load() }

// Fresh returns how many of its reads were asked fresh (SinceFresh).
func (s *Store) Fresh() int64 { return s.fresh.Load() }
