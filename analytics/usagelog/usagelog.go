// Package usagelog is the fleet's log of API usage, the store under the
// edge's day limits: each edge adds the calls it counted as batches and
// reads back what the others added since it last read, at a position in
// the log. The store is ClickHouse's usage tables for a fleet, or memory
// for one edge; a fleet's follower reads it through its leader
// (fleet/relay), whose answers may come as sums (SummingStore).
package usagelog

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// Store keeps the day's calls of every subject for the whole fleet: each
// edge adds what it counted, as batches, and reads back what the others
// added since it last read.
type Store interface {
	// Add writes deltas as one batch; again says it is written again
	// after a write whose outcome was unknown (which may still arrive):
	// Day counts such a batch once however often it arrived.
	Add(ctx context.Context, batch analytics.UsageBatch, deltas []analytics.UsageDelta, again bool) error
	// Day reads every subject's calls on the UTC day of day, whole, with
	// the position from which Since brings what was added after. Batches
	// from that position on that the totals hold already are listed in
	// Included (others may be in the totals too, and be brought again:
	// applied twice, a call is refused early, never admitted past its day).
	Day(ctx context.Context, day time.Time) (DayRead, error)
	// Since returns the changes to day added from pos on, and the position
	// to ask from next. A change may come again in a later call (readers
	// apply each batch once).
	Since(ctx context.Context, day time.Time, pos Pos) ([]analytics.UsageChange, Pos, error)
	// Has reports whether the store holds batch, whose calls are of days:
	// a write whose outcome is unknown is settled by asking.
	Has(ctx context.Context, batch analytics.UsageBatch, days []time.Time) (bool, error)
}

// Sums is a read of the log answered as sums instead of rows: the
// batches it brought for the first time (New), each subject's calls
// over them, each (batch, subject) row counted once (Totals), and the
// batches it brought again, which the reader applied from an earlier
// read (Seen).
type Sums struct {
	New    []analytics.UsageBatch
	Seen   []analytics.UsageBatch
	Totals map[string]uint64
}

// SummingStore is a Store whose reads of the log may come as sums
// (package relay: a following edge asks the leader for them, so that
// what it receives grows with the subjects, not with the edges).
type SummingStore interface {
	Store
	// SinceSums is Since whose answer may come as sums: then sums is set
	// and changes is nil.
	SinceSums(ctx context.Context, day time.Time, pos Pos) (changes []analytics.UsageChange, sums *Sums, next Pos, err error)
}

// FreshStore is a SummingStore whose reads usually come from another
// edge's record of its reads (package relay: a follower asks its
// leader), which may lag the log by a sync, and which can be asked for a
// read that holds every batch written before it was asked: the leader
// reads the log at once for it. A reservation of keyed calls someone
// waits for needs it (package limits).
type FreshStore interface {
	SummingStore
	// SinceFresh is SinceSums holding every batch written before it.
	SinceFresh(ctx context.Context, day time.Time, pos Pos) (changes []analytics.UsageChange, sums *Sums, next Pos, err error)
}

// DayRead is a day's totals read whole.
type DayRead struct {
	Totals   map[string]uint64
	Pos      Pos
	Included []analytics.UsageBatch
	Edges    []string // the edges that wrote usage in the last FleetWindow
}

// Pos is a position in a store's log of batches.
type Pos struct {
	at time.Time // ClickHouse: the server's clock, whole seconds
	n  int       // Memory: an index in the log
}

// PosOf returns the position made of at and n (Parts), for a store that
// relays another's (package relay).
func PosOf(at time.Time, n int) Pos { return Pos{at: at, n: n} }

// Parts returns the time and index p is made of.
func (p Pos) Parts() (time.Time, int) { return p.at, p.n }

// After reports whether p lies after q in the log.
func (p Pos) After(q Pos) bool {
	if !p.at.Equal(q.at) {
		return p.at.After(q.at)
	}
	return p.n > q.n
}

// Overlap is how far back a read of the ClickHouse log starts before
// the previous read's time: an insert takes its time before its rows can
// be read, and the log's time has whole seconds.
const Overlap = 4 * time.Second

// FleetWindow is how recently an edge must have written usage to count
// as one of the fleet's edges that share a caller's day while the totals
// are stale.
const FleetWindow = time.Hour

// ClickHouse returns the store of a fleet: the usage log and usage tables
// of db, which every edge of the fleet reads and writes.
func ClickHouse(db *analytics.Lazy) Store { return chStore{db} }

type chStore struct{ db *analytics.Lazy }

func (s chStore) Add(ctx context.Context, batch analytics.UsageBatch, deltas []analytics.UsageDelta, again bool) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	return analytics.WriteUsage(ctx, conn, batch, deltas, again)
}

func (s chStore) Day(ctx context.Context, day time.Time) (DayRead, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return DayRead{}, err
	}
	now, err := analytics.ServerNow(ctx, conn)
	if err != nil {
		return DayRead{}, err
	}
	pos := Pos{at: now.Add(-Overlap)}
	// The batches first, then the totals: a batch written in between is
	// in the totals but not listed, applied twice (refusing early) rather
	// than listed but missing (admitting too many).
	recent, err := analytics.LoadUsageSince(ctx, conn, day, pos.at)
	if err != nil {
		return DayRead{}, err
	}
	totals, err := analytics.LoadUsage(ctx, conn, day)
	if err != nil {
		return DayRead{}, err
	}
	edges, err := analytics.LoadUsageEdges(ctx, conn, now.Add(-FleetWindow))
	if err != nil {
		return DayRead{}, err
	}
	read := DayRead{Totals: totals, Pos: pos, Edges: edges}
	seen := map[analytics.UsageBatch]bool{}
	for _, c := range recent {
		if !seen[c.Batch] {
			seen[c.Batch] = true
			read.Included = append(read.Included, c.Batch)
		}
	}
	return read, nil
}

func (s chStore) Since(ctx context.Context, day time.Time, pos Pos) ([]analytics.UsageChange, Pos, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, pos, err
	}
	now, err := analytics.ServerNow(ctx, conn)
	if err != nil {
		return nil, pos, err
	}
	changes, err := analytics.LoadUsageSince(ctx, conn, day, pos.at)
	if err != nil {
		return nil, pos, err
	}
	return changes, Pos{at: now.Add(-Overlap)}, nil
}

func (s chStore) Has(ctx context.Context, batch analytics.UsageBatch, days []time.Time) (bool, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	return analytics.HasUsageBatch(ctx, conn, batch, days)
}

// Memory returns a store in this process's memory: the limits of one
// edge on its own (and of tests that run without ClickHouse). It keeps
// every batch it is given.
func Memory() Store { return &memStore{} }

type memStore struct {
	mu  sync.Mutex
	log []memChange
}

type memChange struct {
	day time.Time
	analytics.UsageChange
}

func dayKey(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

func (s *memStore) Add(ctx context.Context, batch analytics.UsageBatch, deltas []analytics.UsageDelta, _ bool) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("write usage: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range deltas {
		s.log = append(s.log, memChange{dayKey(d.Day), analytics.UsageChange{Batch: batch, Subject: d.Subject, Calls: d.Calls}})
	}
	return nil
}

func (s *memStore) Day(ctx context.Context, day time.Time) (DayRead, error) {
	if err := ctx.Err(); err != nil {
		return DayRead{}, fmt.Errorf("read usage: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	read := DayRead{Totals: map[string]uint64{}, Pos: Pos{n: len(s.log)}}
	type row struct {
		batch   analytics.UsageBatch
		subject string
	}
	counted := map[row]bool{} // a batch that arrived twice counts once, as in ClickHouse
	for _, c := range s.log {
		if r := (row{c.Batch, c.Subject}); c.day.Equal(dayKey(day)) && !counted[r] {
			counted[r] = true
			read.Totals[c.Subject] += c.Calls
		}
		if !slices.Contains(read.Edges, c.Batch.Edge) {
			read.Edges = append(read.Edges, c.Batch.Edge)
		}
	}
	return read, nil
}

func (s *memStore) Has(ctx context.Context, batch analytics.UsageBatch, _ []time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("check usage batch: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.log, func(c memChange) bool { return c.Batch == batch }), nil
}

func (s *memStore) Since(ctx context.Context, day time.Time, pos Pos) ([]analytics.UsageChange, Pos, error) {
	if err := ctx.Err(); err != nil {
		return nil, pos, fmt.Errorf("read usage: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []analytics.UsageChange
	for _, c := range s.log[min(pos.n, len(s.log)):] {
		if c.day.Equal(dayKey(day)) {
			out = append(out, c.UsageChange)
		}
	}
	return out, Pos{n: len(s.log)}, nil
}
