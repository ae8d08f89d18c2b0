package analytics

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// A state is read as of one bound: every crawl of the listings table up to
// its listings watermark, every crawl of the snapshots table up to its
// readings watermark, both read once when the state's read begins
// (ReadWatermarks), and nothing crawled later, whenever it was inserted
// during the read. Each query of the read says so in its WHERE, so that a
// crawl inserted between two of them lands in none, and the state is the
// same whichever moment each query ran at: one Last-Modified (the newest
// reading the state holds, at or before the bound) never stands for two
// bodies. The crawler's contract this rests on: a
// table's crawls are inserted in the order of their crawled_at (several
// inserts may share a second), so that when a crawl is read at the bound,
// every crawl before it is in ClickHouse; a crawl inserted later with an
// older crawled_at (docs/operations.md, "What a state holds") is read by
// the next full reload.
//
// The newest rows come from listings_latest and snapshots_latest, which
// keep one row a listing: a listing crawled after the bound has lost its
// row as of the bound there (once merged), so such listings are read
// again, as of the bound, from listings and snapshots, which keep every
// crawl (asOf.whole; fixUp).
type asOf struct {
	listings, readings int64 // the bound: unix seconds, inclusive
	// whole reads from the tables of every crawl (listings, snapshots)
	// rather than the newest rows (listings_latest, snapshots_latest).
	whole bool
}

// upTo returns the bound w, read from the newest rows.
func upTo(w Watermarks) asOf { return asOf{listings: w.Listings.Unix(), readings: w.Readings.Unix()} }

// inWhole returns a read as of the same bound from the tables of every crawl.
func (a asOf) inWhole() asOf { a.whole = true; return a }

// marks returns the bound as watermarks.
func (a asOf) marks() Watermarks {
	return Watermarks{Listings: time.Unix(a.listings, 0).UTC(), Readings: time.Unix(a.readings, 0).UTC()}
}

// listingsAsOfQuery is listingsQuery as of a bound, from every metadata
// version: each listing's newest version at or before it.
const listingsAsOfQuery = `
SELECT store, id, slug, name, developer, category, kind, description, icon, version,
       store_updated, store_created, first_seen, delisted_at, featured, manifest_version,
       ` + joinedPermissions + `, ` + joinedHosts + `, access_level, ` + joinedTopics + `, toUInt32(crawled_at)
FROM listings WHERE (%s) AND toUInt32(crawled_at) <= %d
ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id`

// readingsAsOfQuery is readingsQuery as of a bound, from every crawl.
const readingsAsOfQuery = `
SELECT store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars
FROM snapshots WHERE (%s) AND toUInt32(crawled_at) <= %d
ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id`

// listingsSQL returns the metadata query of sel as of a.
func (a asOf) listingsSQL(sel selection) string {
	if a.whole {
		return fmt.Sprintf(listingsAsOfQuery, sel.where, a.listings)
	}
	return fmt.Sprintf(listingsQuery, sel.where, a.listings)
}

// readingsSQL returns the readings query of sel as of a.
func (a asOf) readingsSQL(sel selection) string {
	if a.whole {
		return fmt.Sprintf(readingsAsOfQuery, sel.where, a.readings)
	}
	return fmt.Sprintf(readingsQuery, sel.where, a.readings)
}

// newestSQL returns the subquery of historyQuery that gives each selected
// listing's newest reading (read_at) as of a.
func (a asOf) newestSQL(where string) string {
	if a.whole {
		return fmt.Sprintf(`SELECT store, id, max(crawled_at) AS read_at FROM snapshots WHERE (%s) AND toUInt32(crawled_at) <= %d GROUP BY store, id`, where, a.readings)
	}
	return fmt.Sprintf(`SELECT store, id, crawled_at AS read_at FROM snapshots_latest FINAL WHERE (%s) AND toUInt32(crawled_at) <= %d`, where, a.readings)
}

// fixUp reads again into b, as of a from the tables of every crawl, the
// listings crawled after a (while b was read): their rows as of a may be
// missing from what the newest rows gave (a listing crawled during the
// read has its newer row there, which the bound leaves out). It returns
// how many listings it read.
func fixUp(ctx context.Context, conn driver.Conn, b *replica.Builder, a asOf, info replica.Info, share *replica.Replica) (int, error) {
	cb := replica.NewBuilder(0)
	if err := load(ctx, conn, cb, replica.NewInterner(), changedSince(a.marks()), info, share, a.inWhole()); err != nil {
		return 0, fmt.Errorf("listings crawled during the read: %w", err)
	}
	fixed := cb.Build(info).All()
	var added []views.Listing
	for _, l := range fixed {
		if at := b.Find(l.Store, l.ID); at != nil {
			*at = l
		} else {
			added = append(added, l)
		}
	}
	for i := range added {
		b.Add(&added[i])
	}
	return len(fixed), nil
}

// readingsMark returns a state's readings watermark: the newest reading b
// holds, never after the bound, or the bound when b holds none.
func readingsMark(a asOf, b *replica.Builder) time.Time {
	if n := b.NewestReading(); n > 0 {
		return time.Unix(min(n, a.readings), 0).UTC()
	}
	return time.Unix(a.readings, 0).UTC()
}

// changedOnly returns a builder of the listings of read that old does not
// hold as they are: a listing a refresh selected for a crawl after its
// bound reads as old has it, and is no change.
func changedOnly(read, old *replica.Replica) *replica.Builder {
	b := replica.NewBuilder(0)
	var x, y []byte
	for i := range read.All() {
		l := &read.All()[i]
		if o := old.Lookup(l.Store, l.ID); o != nil {
			x, y = views.AppendListing(x[:0], l), views.AppendListing(y[:0], o)
			if bytes.Equal(x, y) {
				continue
			}
		}
		b.Add(l)
	}
	return b
}
