package limits

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// Store keeps the day's calls of every subject for the whole fleet: each
// edge adds what it counted, and reads back the sums.
type Store interface {
	// Add adds the deltas to their subjects' days.
	Add(ctx context.Context, deltas []analytics.UsageDelta) error
	// Day returns every subject's calls on the UTC day of day.
	Day(ctx context.Context, day time.Time) (map[string]uint64, error)
}

// ClickHouse returns the store of a fleet: the usage table of db, which
// every edge of the fleet reads and writes.
func ClickHouse(db *analytics.Lazy) Store { return chStore{db} }

type chStore struct{ db *analytics.Lazy }

func (s chStore) Add(ctx context.Context, deltas []analytics.UsageDelta) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	return analytics.WriteUsage(ctx, conn, deltas)
}

func (s chStore) Day(ctx context.Context, day time.Time) (map[string]uint64, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return analytics.LoadUsage(ctx, conn, day)
}

// Memory returns a store in this process's memory: the limits of one
// edge on its own (and of tests that run without ClickHouse). It keeps
// every day it is given.
func Memory() Store { return &memStore{days: map[time.Time]map[string]uint64{}} }

type memStore struct {
	mu   sync.Mutex
	days map[time.Time]map[string]uint64
}

func (s *memStore) Add(_ context.Context, deltas []analytics.UsageDelta) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range deltas {
		day := d.Day.UTC().Truncate(24 * time.Hour)
		if s.days[day] == nil {
			s.days[day] = map[string]uint64{}
		}
		s.days[day][d.Subject] += d.Calls
	}
	return nil
}

func (s *memStore) Day(ctx context.Context, day time.Time) (map[string]uint64, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]uint64, len(s.days[day.UTC().Truncate(24*time.Hour)]))
	for k, v := range s.days[day.UTC().Truncate(24*time.Hour)] {
		out[k] = v
	}
	return out, nil
}
