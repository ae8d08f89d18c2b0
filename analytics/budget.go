package analytics

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// SearchBudget bounds a text search that ClickHouse runs per request. Past
// either bound ClickHouse stops reading and answers with what it found so
// far, and the search says it is partial. The time is rounded up to whole
// seconds, the finest ClickHouse 18.16 takes; the row bound is what makes
// a budget exact (and testable) at any speed.
type SearchBudget struct {
	Time    time.Duration // 0: no time bound
	MaxRows uint64        // rows ClickHouse may read; 0: no row bound
}

// seconds is the time bound in whole seconds, rounded up; 0 for none.
func (b SearchBudget) seconds() int {
	if b.Time <= 0 {
		return 0
	}
	return int((b.Time + time.Second - 1) / time.Second)
}

// settings is the SETTINGS clause of a query under the budget. Its values
// are numbers formatted here, never caller input. ClickHouse 18.16 takes
// the string-valued overflow modes only this way: clickhouse-go cannot
// send string settings to it.
func (b SearchBudget) settings() string {
	s := ""
	add := func(kv string) {
		if s == "" {
			s = "\n\t\tSETTINGS " + kv
		} else {
			s += ", " + kv
		}
	}
	if secs := b.seconds(); secs > 0 {
		add(fmt.Sprintf("max_execution_time = %d, timeout_overflow_mode = 'break'", secs))
	}
	if b.MaxRows > 0 {
		add(fmt.Sprintf("max_rows_to_read = %d, read_overflow_mode = 'break'", b.MaxRows))
	}
	return s
}

// budgetRun follows one query under a budget: the rows ClickHouse reports
// read and the time since it started.
type budgetRun struct {
	b     SearchBudget
	rows  atomic.Uint64
	start time.Time
}

// start returns ctx with a progress callback that counts the rows read,
// and the run that tells afterwards whether the budget stopped the query.
func (b SearchBudget) start(ctx context.Context) (context.Context, *budgetRun) {
	r := &budgetRun{b: b, start: time.Now()}
	return clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) {
		r.rows.Add(p.Rows)
	})), r
}

// partial reports whether the query ran into its budget: it read as many
// rows as the budget allows, or took as long as its time bound.
func (r *budgetRun) partial() bool {
	if r.b.MaxRows > 0 && r.rows.Load() >= r.b.MaxRows {
		return true
	}
	secs := r.b.seconds()
	return secs > 0 && time.Since(r.start) >= time.Duration(secs)*time.Second
}
