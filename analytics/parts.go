package analytics

import (
	"context"
	"fmt"
	"slices"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// DefaultPartSize is how many listings one read of a full load covers
// unless told otherwise: the memory a read needs inside ClickHouse grows
// with its part, not with the whole dataset. The heaviest read is the
// sparklines' (a group per listing and day), part of whose memory is a
// fixed cost per column and data part read, so much smaller parts cost
// more reads for little memory saved (bench/README.md, The real size,
// holds what a part of this size takes).
const DefaultPartSize = 50_000

// A Part is a contiguous key range of one store's listings: those whose
// id is in [From, To), To "" meaning no upper bound. Every table is
// ordered by (store, id, …), so a part's rows are one range of each
// table's primary key and reading a part reads only its granules.
type Part struct {
	Store    views.Store
	From, To string
}

// where returns the condition selecting the part's rows, with its
// arguments (bound on the client, so ids need no quoting here).
func (p Part) where() (string, []any) { return p.whereOn("id") }

// whereOn is where for a table whose listing id column is col.
func (p Part) whereOn(col string) (string, []any) {
	cond, args := "store = ?", []any{uint8(p.Store)}
	if p.From != "" {
		cond, args = cond+" AND "+col+" >= ?", append(args, p.From)
	}
	if p.To != "" {
		cond, args = cond+" AND "+col+" < ?", append(args, p.To)
	}
	return cond, args
}

// String names the part in errors and logs.
func (p Part) String() string {
	return fmt.Sprintf("%s[%q,%q)", p.Store, p.From, p.To)
}

// SplitParts splits the listings into parts of about size listings each
// (DefaultPartSize when size ≤ 0), every store on its own: a store with
// fewer listings is one part. The boundaries come from a sample of ids
// picked by hash (about 32 a part), so finding them needs little memory
// however many listings there are.
func SplitParts(ctx context.Context, conn driver.Conn, size int) ([]Part, error) {
	parts, _, err := splitParts(ctx, conn, size)
	return parts, err
}

// splitParts is SplitParts, also returning how many listings there are.
// It counts them exactly (FINAL merges unmerged versions as it streams,
// in little memory), so that a replica is allocated at its size.
func splitParts(ctx context.Context, conn driver.Conn, size int) ([]Part, int, error) {
	if size <= 0 {
		size = DefaultPartSize
	}
	counts := make([]uint64, views.NumStores)
	rows, err := conn.Query(ctx, "SELECT store, count() FROM listings_latest FINAL GROUP BY store")
	if err != nil {
		return nil, 0, fmt.Errorf("split parts: %w", err)
	}
	for rows.Next() {
		var s uint8
		var n uint64
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return nil, 0, fmt.Errorf("split parts: %w", err)
		}
		if int(s) < len(counts) {
			counts[s] = n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("split parts: %w", err)
	}
	var (
		parts []Part
		total int
	)
	for s, n := range counts {
		total += int(n)
		store := views.Store(s)
		k := int((n + uint64(size) - 1) / uint64(size))
		if k <= 1 {
			parts = append(parts, Part{Store: store})
			continue
		}
		bounds, err := sampleBounds(ctx, conn, store, n, k)
		if err != nil {
			return nil, 0, err
		}
		from := ""
		for _, b := range bounds {
			parts = append(parts, Part{Store: store, From: from, To: b})
			from = b
		}
		parts = append(parts, Part{Store: store, From: from})
	}
	return parts, total, nil
}

// sampleBounds returns up to k-1 ascending ids that split the store's n
// listings into k ranges of about equal size.
func sampleBounds(ctx context.Context, conn driver.Conn, store views.Store, n uint64, k int) ([]string, error) {
	modulus := max(n/uint64(k*32), 1)
	rows, err := conn.Query(ctx, "SELECT DISTINCT id FROM listings_latest WHERE store = ? AND cityHash64(id) % ? = 0",
		uint8(store), modulus)
	if err != nil {
		return nil, fmt.Errorf("split %s: %w", store, err)
	}
	defer rows.Close()
	var sample []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("split %s: %w", store, err)
		}
		sample = append(sample, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("split %s: %w", store, err)
	}
	slices.Sort(sample)
	var bounds []string
	for i := 1; i < k; i++ {
		j := i * len(sample) / k
		if j == 0 || j >= len(sample) {
			continue
		}
		if b := sample[j]; len(bounds) == 0 || b > bounds[len(bounds)-1] {
			bounds = append(bounds, b)
		}
	}
	return bounds, nil
}

// loadWorkers is how many parts a load reads at once: while the edge
// decodes one part, ClickHouse computes the next.
const loadWorkers = 2

// inOrder calls fetch for parts 0 … n-1, at most workers at once and at
// most workers ahead of the next one used, and then use with each result
// in part order. worker (0 … workers-1) tells fetch which of the workers
// runs it, for per-worker state. The first error stops it and is returned.
func inOrder[T any](ctx context.Context, n, workers int, fetch func(ctx context.Context, part, worker int) (T, error),
	use func(part int, v T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		w   int
		err error
	}
	results := make([]chan result, n)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	free := make(chan int, workers)
	for w := range workers {
		free <- w
	}
	go func() {
		for i := range n {
			var w int
			select {
			case w = <-free:
			case <-ctx.Done():
				return
			}
			go func(i, w int) {
				v, err := fetch(ctx, i, w)
				results[i] <- result{v, w, err}
			}(i, w)
		}
	}()
	for i := range n {
		var r result
		select {
		case r = <-results[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		if err := use(i, r.v); err != nil {
			return err
		}
		// The worker is free again once its result is used, so that at
		// most workers results wait in memory.
		free <- r.w
	}
	return nil
}
