package analytics

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/series"
)

// HistoryDays is how far back listing histories reach, and so how many days
// the ranks job keeps ranked.
const HistoryDays = 730

// RankDay is a UTC day of readings and how many crawls it held when read.
type RankDay struct {
	Day    time.Time
	Crawls uint64
}

// RankLookback is how far back a day's ranking looks for a listing's
// newest size (views.RankLookback: the document's rank follows the same
// rule).
const RankLookback = views.RankLookback

// RankRule is the version of the daily ranks' rule this release writes:
// 1 ranks each day in its category too (category_rank). A day whose
// newest ranking was made under an earlier rule is ranked again.
const RankRule = 1

// DaysToRank returns the days from from on whose daily store ranks are
// missing or stale, newest first: a day is stale when it has gained crawls
// since it was ranked, or was ranked under a rule before RankRule, and so
// are the RankLookback-1 days after it, whose rankings read it.
func DaysToRank(ctx context.Context, conn driver.Conn, from time.Time) ([]RankDay, error) {
	rows, err := conn.Query(ctx, `
		SELECT d, c, done, rule FROM (
			SELECT toDate(crawled_at, 'UTC') AS d, count() AS c FROM snapshots
			WHERE crawled_at >= ? GROUP BY d) AS crawled
		ANY LEFT JOIN (
			SELECT day AS d, argMax(crawls, version) AS done, argMax(rule, version) AS rule
			FROM daily_ranks_days GROUP BY d) AS ranked
		USING d
		ORDER BY d DESC`, from.UTC())
	if err != nil {
		return nil, fmt.Errorf("days to rank: %w", err)
	}
	defer rows.Close()
	var all []RankDay
	var changed []bool
	for rows.Next() {
		var d RankDay
		var done uint64
		var rule uint8
		if err := rows.Scan(&d.Day, &d.Crawls, &done, &rule); err != nil {
			return nil, fmt.Errorf("days to rank: %w", err)
		}
		d.Day = d.Day.UTC()
		all = append(all, d)
		changed = append(changed, d.Crawls != done || rule < RankRule)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("days to rank: %w", err)
	}
	// all is newest first: a changed day makes the days before it in the
	// list (after it in time) within the lookback stale too.
	var out []RankDay
	for i, d := range all {
		stale := false
		for k := i; k < len(all) && d.Day.Sub(all[k].Day) < RankLookback*24*time.Hour; k++ {
			stale = stale || changed[k]
		}
		if stale {
			out = append(out, d)
		}
	}
	return out, nil
}

// RankOneDay computes the store ranks of day d.Day and records the day as
// ranked with d.Crawls. A day's ranking counts every listing of the store
// not delisted by the day's end by its newest size in the RankLookback
// days up to the day (its latest reading with a size, day by day); a
// listing's rank is 1 plus the number of those with a larger size (usage;
// ratings on apple), so ties share a rank, as in every rank of the API.
// Its category rank is the same among those of its category (the
// listing's category now, as the listing document ranks it). Listings
// without a size in the lookback have neither.
//
// It reads one part of about partSize listings at a time (SplitParts), so
// no query needs memory that grows with the store: a first pass collects
// each store's sizes (8 bytes a listing, in Go), a second reads each part
// again and writes its ranks.
func RankOneDay(ctx context.Context, conn driver.Conn, d RankDay, partSize int) error {
	day := d.Day.UTC().Format(time.DateOnly)
	parts, err := SplitParts(ctx, conn, partSize)
	if err != nil {
		return fmt.Errorf("rank %s: %w", day, err)
	}
	version := uint64(time.Now().UnixNano())
	for s := range views.NumStores {
		store := views.Store(s)
		var sizes daySizeSet
		var mine []Part
		for _, p := range parts {
			if p.Store != store {
				continue
			}
			mine = append(mine, p)
			err := daySizes(ctx, conn, d.Day, p, func(_, category string, size uint64) error {
				sizes.add(category, size)
				return nil
			})
			if err != nil {
				return fmt.Errorf("rank %s: %w", day, err)
			}
		}
		sizes.sort()
		for _, p := range mine {
			if err := writeRanks(ctx, conn, d.Day, p, &sizes, version); err != nil {
				return fmt.Errorf("rank %s: %w", day, err)
			}
		}
		if err := writeCategoryTotals(ctx, conn, store, d.Day, &sizes, version); err != nil {
			return fmt.Errorf("rank %s: %w", day, err)
		}
	}
	if err := writePermissionCounts(ctx, conn, d.Day, version); err != nil {
		return fmt.Errorf("rank %s: %w", day, err)
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO daily_ranks_days (day, version, crawls, rule)")
	if err != nil {
		return fmt.Errorf("rank %s: %w", day, err)
	}
	defer b.Close()
	if err := b.Append(d.Day.UTC(), uint64(time.Now().UnixNano()), d.Crawls, uint8(RankRule)); err != nil {
		return fmt.Errorf("rank %s: %w", day, err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("rank %s: %w", day, err)
	}
	return nil
}

// daySizeSet is every ranking size of a store on a day, largest first,
// and the same by category: what a listing's ranks are counted among.
type daySizeSet struct {
	all   []uint64
	byCat map[string][]uint64
}

func (s *daySizeSet) add(category string, size uint64) {
	if s.byCat == nil {
		s.byCat = map[string][]uint64{}
	}
	s.all = append(s.all, size)
	s.byCat[category] = append(s.byCat[category], size)
}

func (s *daySizeSet) sort() {
	largestFirst := func(a, b uint64) int { return cmp.Compare(b, a) }
	slices.SortFunc(s.all, largestFirst)
	for _, sizes := range s.byCat {
		slices.SortFunc(sizes, largestFirst)
	}
}

// ranks returns the store rank and the category rank of size: 1 plus
// the number of larger sizes.
func (s *daySizeSet) ranks(category string, size uint64) (store, cat uint32) {
	larger := func(sizes []uint64) uint32 {
		n, _ := slices.BinarySearchFunc(sizes, size, func(e, t uint64) int { return cmp.Compare(t, e) })
		return uint32(n + 1)
	}
	return larger(s.all), larger(s.byCat[category])
}

// writeCategoryTotals writes each category's ranked listings of store on
// day and the sum of their sizes.
func writeCategoryTotals(ctx context.Context, conn driver.Conn, store views.Store, day time.Time, sizes *daySizeSet, version uint64) error {
	if len(sizes.byCat) == 0 {
		return nil
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO daily_categories (store, category, day, listings, total_size, version)")
	if err != nil {
		return fmt.Errorf("category totals of %s: %w", store, err)
	}
	defer b.Close()
	for cat, ss := range sizes.byCat {
		var total uint64
		for _, v := range ss {
			total += v
		}
		if err := b.Append(uint8(store), cat, day.UTC(), uint32(len(ss)), total, version); err != nil {
			return fmt.Errorf("category totals of %s: %w", store, err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("category totals of %s: %w", store, err)
	}
	return nil
}

// daySizes calls fn with the id, category (as it is now) and ranking size
// of every listing of part p ranked on day: its newest size in the
// lookback, unless delisted by the day's end.
func daySizes(ctx context.Context, conn driver.Conn, day time.Time, p Part, fn func(id, category string, size uint64) error) error {
	sel := selectPart(p)
	end := day.UTC().Add(24 * time.Hour).Unix()
	rows, err := conn.Query(ctx, `
		SELECT id, size, category FROM (
			SELECT id, argMax(assumeNotNull(`+sizeExpr+`), day) AS size
			FROM snapshots_daily FINAL
			WHERE day >= toDate(?) - `+strconv.Itoa(RankLookback-1)+` AND day <= toDate(?)
				AND isNotNull(`+sizeExpr+`) AND `+sel.where+`
				AND (store, id) NOT IN (
					SELECT store, id FROM listings_latest FINAL
					WHERE isNotNull(delisted_at) AND toUInt32(assumeNotNull(delisted_at)) < ? AND `+sel.where+`)
			GROUP BY id) AS sized
		ANY LEFT JOIN (SELECT id, category FROM listings_latest FINAL WHERE `+sel.where+`) AS meta USING id`,
		append(append(append([]any{day.UTC().Format(time.DateOnly), day.UTC().Format(time.DateOnly)}, sel.args...),
			append([]any{end}, sel.args...)...), sel.args...)...)
	if err != nil {
		return fmt.Errorf("sizes of %s: %w", p, err)
	}
	defer rows.Close()
	var (
		id, category string
		size         uint64
	)
	for rows.Next() {
		if err := rows.Scan(&id, &size, &category); err != nil {
			return fmt.Errorf("sizes of %s: %w", p, err)
		}
		if err := fn(id, category, size); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sizes of %s: %w", p, err)
	}
	return nil
}

// writeRanks writes the store and category ranks of part p on day, given
// every size of its store.
func writeRanks(ctx context.Context, conn driver.Conn, day time.Time, p Part, sizes *daySizeSet, version uint64) error {
	b, err := conn.PrepareBatch(ctx, "INSERT INTO daily_ranks (store, id, day, rank, version, category_rank)")
	if err != nil {
		return fmt.Errorf("ranks of %s: %w", p, err)
	}
	defer b.Close()
	n := 0
	err = daySizes(ctx, conn, day, p, func(id, category string, size uint64) error {
		rank, cat := sizes.ranks(category, size)
		n++
		return b.Append(uint8(p.Store), id, day.UTC(), rank, version, cat)
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("ranks of %s: %w", p, err)
	}
	return nil
}

// Snapshot is one UTC day of a listing's history (series.Snapshot):
// the documents of the history and the listing's page hold it, which
// import no database.
type Snapshot = series.Snapshot

// DailyHistory is a listing's history: one snapshot a day, oldest first.
type DailyHistory struct {
	Snapshots []Snapshot
	Truncated bool // the window held more than maxCrawls crawls: only the newest days are kept
}

// LoadDailyHistory reads a listing's snapshots from from on, one a UTC day
// (the day's latest crawl), with the daily store ranks. When the window
// holds more than maxCrawls crawls it keeps the newest days that fit and
// sets Truncated.
func LoadDailyHistory(ctx context.Context, conn driver.Conn, store views.Store, id string, from time.Time, maxCrawls int) (DailyHistory, error) {
	var h DailyHistory
	rows, err := conn.Query(ctx, `
		SELECT toDate(crawled_at, 'UTC') AS d, toUInt64(count()), max(crawled_at),
			`+latestNullable("usage", "crawled_at")+`, `+latestNullable("weekly_downloads", "crawled_at")+`,
			`+latestNullable("rating", "crawled_at")+`, `+latestNullable("rating_count", "crawled_at")+`
		FROM snapshots
		WHERE store = ? AND id = ? AND crawled_at >= ?
		GROUP BY d ORDER BY d`, uint8(store), id, from.UTC())
	if err != nil {
		return h, fmt.Errorf("load history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			day, at           time.Time
			crawls            uint64
			usage, weekly, rc *uint64
			rating            *float64
			snap              Snapshot
		)
		if err := rows.Scan(&day, &crawls, &at, &usage, &weekly, &rating, &rc); err != nil {
			return h, fmt.Errorf("load history: %w", err)
		}
		snap.Day, snap.ReadAt, snap.Crawls = day.UTC().Format(time.DateOnly), at.UTC(), int(crawls)
		snap.Usage, snap.WeeklyDownloads, snap.RatingCount, snap.Rating = i64(usage), i64(weekly), i64(rc), rating
		snap.Size = snap.Usage
		if store == views.Apple {
			snap.Size = snap.RatingCount
		}
		h.Snapshots = append(h.Snapshots, snap)
	}
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("load history: %w", err)
	}
	h.keepNewest(maxCrawls)
	if len(h.Snapshots) == 0 {
		return h, nil
	}
	if err := h.addRanks(ctx, conn, store, id); err != nil {
		return h, err
	}
	return h, nil
}

// keepNewest keeps the newest days whose crawls add up to at most
// maxCrawls, and sets Truncated when it drops any.
func (h *DailyHistory) keepNewest(maxCrawls int) {
	total, keep := 0, len(h.Snapshots)
	for i := len(h.Snapshots) - 1; i >= 0; i-- {
		if total+h.Snapshots[i].Crawls > maxCrawls {
			h.Truncated = true
			break
		}
		total += h.Snapshots[i].Crawls
		keep = i
	}
	if h.Truncated {
		h.Snapshots = h.Snapshots[keep:]
	}
}

// addRanks sets each day's store and category ranks, from the daily
// ranks, on the days that have a size to rank (a category rank of 0, from
// a release that wrote none, is none).
func (h *DailyHistory) addRanks(ctx context.Context, conn driver.Conn, store views.Store, id string) error {
	first, _ := time.Parse(time.DateOnly, h.Snapshots[0].Day)
	ranks, err := conn.Query(ctx, `
		SELECT day, argMax(rank, version), argMax(category_rank, version) FROM daily_ranks
		WHERE store = ? AND id = ? AND day >= toDate(?)
		GROUP BY day`, uint8(store), id, first.Format(time.DateOnly))
	if err != nil {
		return fmt.Errorf("load daily ranks: %w", err)
	}
	defer ranks.Close()
	type dayRanks struct{ store, cat int64 }
	byDay := make(map[string]dayRanks)
	for ranks.Next() {
		var (
			day       time.Time
			rank, cat uint32
		)
		if err := ranks.Scan(&day, &rank, &cat); err != nil {
			return fmt.Errorf("load daily ranks: %w", err)
		}
		byDay[day.UTC().Format(time.DateOnly)] = dayRanks{int64(rank), int64(cat)}
	}
	if err := ranks.Err(); err != nil {
		return fmt.Errorf("load daily ranks: %w", err)
	}
	for i := range h.Snapshots {
		r, ok := byDay[h.Snapshots[i].Day]
		if !ok || h.Snapshots[i].Size == nil {
			continue
		}
		h.Snapshots[i].StoreRank = &r.store
		if r.cat > 0 {
			h.Snapshots[i].CategoryRank = &r.cat
		}
	}
	return nil
}

func i64(v *uint64) *int64 {
	if v == nil {
		return nil
	}
	x := int64(*v)
	return &x
}
