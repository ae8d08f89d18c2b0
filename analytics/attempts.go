package analytics

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Attempt is one row of the attempts log: an attempt at the account
// routes that counts against one of their limits, seen by an edge.
type Attempt struct {
	Edge     string    // the edge that saw it (a name it draws when it starts)
	Seq      uint64    // the batch it was written in, of that edge
	Kind     uint8     // which limit it counts against
	Subject  string    // a hash of what the limit counts by
	Happened time.Time // when the edge saw it (milliseconds)
	At       time.Time // when the log took it (ClickHouse's clock, whole seconds; set by reads)
}

// WriteAttempts writes attempts as one batch (one insert: all its rows or
// none) into the attempts log.
func WriteAttempts(ctx context.Context, conn driver.Conn, attempts []Attempt) error {
	if len(attempts) == 0 {
		return nil
	}
	return sendBatch(ctx, conn, "INSERT INTO attempts_log (day, edge, seq, kind, subject, happened)", "attempts_log", func(b driver.Batch) error {
		for _, a := range attempts {
			day := a.Happened.UTC().Truncate(24 * time.Hour)
			if err := b.Append(day, a.Edge, a.Seq, a.Kind, a.Subject, uint64(a.Happened.UnixMilli())); err != nil {
				return err
			}
		}
		return nil
	})
}

// LoadAttemptsSince returns the attempts log's rows written at or after
// since (ClickHouse's clock, whole seconds), and the newest time read
// (since itself when none), from where the next read goes on.
func LoadAttemptsSince(ctx context.Context, conn driver.Conn, since time.Time) ([]Attempt, time.Time, error) {
	rows, err := conn.Query(ctx, "SELECT edge, seq, kind, subject, happened, at FROM attempts_log WHERE day >= toDate(?) AND at >= ?",
		since.UTC().Add(-24*time.Hour).Format(time.DateOnly), since.UTC())
	if err != nil {
		return nil, since, fmt.Errorf("read attempts log: %w", err)
	}
	defer rows.Close()
	var out []Attempt
	newest := since
	for rows.Next() {
		var (
			a        Attempt
			happened uint64
			at       time.Time
		)
		if err := rows.Scan(&a.Edge, &a.Seq, &a.Kind, &a.Subject, &happened, &at); err != nil {
			return nil, since, fmt.Errorf("read attempts log: %w", err)
		}
		a.Happened, a.At = time.UnixMilli(int64(happened)).UTC(), at
		if at.After(newest) {
			newest = at
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, since, fmt.Errorf("read attempts log: %w", err)
	}
	return out, newest, nil
}

// LoadAttemptsOf returns the attempts log's rows of subject of the given
// kinds whose attempt happened at or after since (milliseconds), oldest
// first: what one limit counts of one subject now. A write that returned
// before it is among them (on a cluster too: writes wait for every shard,
// clusterSettings).
func LoadAttemptsOf(ctx context.Context, conn driver.Conn, subject string, kinds []uint8, since time.Time) ([]Attempt, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	// The kinds are numbers of the code's, written into the query: a
	// []uint8 parameter would be bound as a string.
	in := make([]string, len(kinds))
	for i, k := range kinds {
		in[i] = strconv.Itoa(int(k))
	}
	rows, err := conn.Query(ctx, "SELECT edge, seq, kind, subject, happened, at FROM attempts_log WHERE day >= toDate(?) AND subject = ? AND kind IN ("+
		strings.Join(in, ", ")+") AND happened >= ? ORDER BY happened", since.UTC().Format(time.DateOnly), subject, uint64(since.UnixMilli()))
	if err != nil {
		return nil, fmt.Errorf("read attempts log of a subject: %w", err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		var (
			a        Attempt
			happened uint64
		)
		if err := rows.Scan(&a.Edge, &a.Seq, &a.Kind, &a.Subject, &happened, &a.At); err != nil {
			return nil, fmt.Errorf("read attempts log of a subject: %w", err)
		}
		a.Happened = time.UnixMilli(int64(happened)).UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read attempts log of a subject: %w", err)
	}
	return out, nil
}

// DropAttemptsLogBefore drops the attempts log's days before before.
func DropAttemptsLogBefore(ctx context.Context, conn driver.Conn, before time.Time) ([]string, error) {
	return dropDaysBefore(ctx, conn, "attempts_log", before)
}
