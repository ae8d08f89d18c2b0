package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
)

// versionsQuery reads what a change compares of every metadata version of
// the selected listings, in each listing's order. Repeated rows (a version
// written twice) have the same crawled_at and diff to nothing.
const versionsQuery = `
SELECT store, id, toUInt32(crawled_at), version, developer, name, category, featured, delisted_at,
       manifest_version, access_level, ` + joinedPermissions + `, ` + joinedHosts + `
FROM listings WHERE %s ORDER BY store, id, crawled_at`

// LoadChanges reads every metadata version of every listing crawled at or
// before r's listings watermark (the bound r was read as of: asOf), one
// part at a time, and returns the changes between consecutive versions that
// happened at or after from, as a log. Each change's id is r's listing's
// own string where r has the listing.
func LoadChanges(ctx context.Context, conn driver.Conn, r *replica.Replica, from time.Time) (*changes.Log, error) {
	bound := upTo(Watermarks{Listings: r.Info().ListingsMark})
	parts, _, err := splitParts(ctx, conn, DefaultPartSize)
	if err != nil {
		return nil, err
	}
	in := replica.NewInterner()
	var all []changes.Change
	err = inOrder(ctx, len(parts), loadWorkers, func(ctx context.Context, i, _ int) ([]changes.Change, error) {
		var cs []changes.Change
		err := streamVersions(ctx, conn, replica.NewInterner(), selectPart(parts[i]).upTo(bound), func(s views.Store, id string, prev, next *changes.Meta) {
			if next.At >= from.Unix() {
				cs = changes.Diff(cs, s, id, prev, next)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("load changes of part %s: %w", parts[i], err)
		}
		return cs, nil
	}, func(_ int, cs []changes.Change) error {
		all = append(all, share(cs, r, in)...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return changes.NewLog(all, from.Unix()), nil
}

// RefreshChanges returns old's log with the changes of the versions
// crawled after old's listings watermark and at or before r's (the
// bound r was read as of), each diffed against the version
// before it (the first against old's listing), kept from from on. It
// reads only the new versions.
func RefreshChanges(ctx context.Context, conn driver.Conn, old, r *replica.Replica, log *changes.Log, from time.Time) (*changes.Log, error) {
	mark := old.Info().ListingsMark
	sel := selection{"toUInt32(crawled_at) > ?", []any{mark.Unix()}}.upTo(upTo(Watermarks{Listings: r.Info().ListingsMark}))
	var cs []changes.Change
	var key struct {
		s  views.Store
		id string
	}
	var last changes.Meta
	err := streamVersionRows(ctx, conn, replica.NewInterner(), sel, func(s views.Store, id string, m *changes.Meta) {
		if key.s != s || key.id != id {
			key.s, key.id = s, id
			last = changes.Meta{}
			if l := old.Lookup(s, id); l != nil {
				last = changes.MetaOf(l)
			}
		}
		if last.At != m.At {
			cs = changes.Diff(cs, s, id, &last, m)
		}
		last = *m
	})
	if err != nil {
		return nil, fmt.Errorf("refresh changes: %w", err)
	}
	return log.With(share(cs, r, replica.NewInterner()), from.Unix()), nil
}

// share points each change's id and values at strings r's listings or in
// already hold, so that the log adds little beside its own records.
func share(cs []changes.Change, r *replica.Replica, in *replica.Interner) []changes.Change {
	var last *views.Listing
	for i := range cs {
		c := &cs[i]
		if last == nil || last.Store != c.Store || last.ID != c.ID {
			last = r.Lookup(c.Store, c.ID)
		}
		if last != nil {
			c.ID = last.ID
		}
		c.Before, c.After = in.String(c.Before), in.String(c.After)
		c.Set = in.Strings(c.Set)
	}
	return cs
}

// streamVersions calls fn with each version of each selected listing and
// the version before it (a listing's first version is not a change).
func streamVersions(ctx context.Context, conn driver.Conn, in *replica.Interner, sel selection, fn func(s views.Store, id string, prev, next *changes.Meta)) error {
	var (
		have bool
		ks   views.Store
		kid  string
		prev changes.Meta
	)
	return streamVersionRows(ctx, conn, in, sel, func(s views.Store, id string, m *changes.Meta) {
		if have && ks == s && kid == id {
			if prev.At != m.At {
				fn(s, id, &prev, m)
			}
		} else {
			have, ks, kid = true, s, id
		}
		prev = *m
	})
}

// streamVersionRows calls fn with each selected metadata version, in
// (store, id, crawled_at) order.
func streamVersionRows(ctx context.Context, conn driver.Conn, in *replica.Interner, sel selection, fn func(s views.Store, id string, m *changes.Meta)) error {
	rows, err := conn.Query(ctx, fmt.Sprintf(versionsQuery, sel.where), sel.args...)
	if err != nil {
		return fmt.Errorf("query versions: %w", err)
	}
	defer rows.Close()
	var (
		store, featured, manifest, access      uint8
		id, version, developer, name, category string
		permissions, hosts                     string
		at                                     uint32
		delisted                               *time.Time
		m                                      changes.Meta
	)
	for rows.Next() {
		if err := rows.Scan(&store, &id, &at, &version, &developer, &name, &category, &featured, &delisted,
			&manifest, &access, &permissions, &hosts); err != nil {
			return fmt.Errorf("scan version: %w", err)
		}
		m = changes.Meta{At: int64(at), Version: version, Developer: in.String(developer), Name: name,
			Category: in.String(category), Featured: featured != 0, ManifestVersion: manifest, AccessLevel: access}
		if delisted != nil {
			m.Delisted = delisted.Unix()
		}
		if m.Permissions, err = in.List(permissions, splitJoined); err == nil {
			m.HostAccess, err = in.List(hosts, splitJoined)
		}
		if err != nil {
			return fmt.Errorf("scan version of %d/%s: %w", store, id, err)
		}
		fn(views.Store(store), id, &m)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read versions: %w", err)
	}
	return nil
}

// DayChange is one change of a day's events file: the change, and the
// listing's name in the version that holds it.
type DayChange struct {
	changes.Change
	Name string
}

// StreamDayChanges calls fn with every change of store s's listings seen
// by a crawl of day d (UTC), in the feed's order within each listing and
// listings in id order: every version of each listing with a version
// that day is read, so that its first version of the day is diffed with
// the one before it.
func StreamDayChanges(ctx context.Context, conn driver.Conn, s views.Store, d views.Day, fn func(*DayChange) error) error {
	from, to := d.Time().Unix(), (d + 1).Time().Unix()
	sel := selection{`store = ? AND id IN (SELECT id FROM listings WHERE store = ? AND toUInt32(crawled_at) >= ? AND toUInt32(crawled_at) < ?)`,
		[]any{uint8(s), uint8(s), from, to}}
	var (
		cs  []changes.Change
		err error
	)
	streamErr := streamVersions(ctx, conn, replica.NewInterner(), sel, func(s views.Store, id string, prev, next *changes.Meta) {
		if err != nil || next.At < from || next.At >= to {
			return
		}
		cs = changes.Diff(cs[:0], s, id, prev, next) // in kind order
		for i := range cs {
			if err = fn(&DayChange{Change: cs[i], Name: next.Name}); err != nil {
				return
			}
		}
	})
	if streamErr != nil {
		return fmt.Errorf("changes of %s on %s: %w", s, d, streamErr)
	}
	return err
}
