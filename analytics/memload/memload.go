// Package memload computes in Go, without ClickHouse, what the loaders of
// package analytics read from a database holding the given rows: the
// replica with every listing's history, and the state of every listing at
// an instant (for weekly editions). Tests use it to run the edge on a
// seeded dataset without a server; TestMemloadMatchesClickHouse in
// package analytics checks that both give the same state.
package memload

import (
	"cmp"
	"slices"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/replica"
)

// Data is the rows of the upstream tables, indexed by listing.
type Data struct {
	rowsL     []analytics.ListingRow
	rowsS     []analytics.SnapshotRow
	listings  map[key][]analytics.ListingRow  // versions, oldest crawl first
	snapshots map[key][]analytics.SnapshotRow // readings, oldest first
	keys      []key                           // sorted by store and id
	count     int64                           // snapshot rows
	first     time.Time                       // oldest reading
	last      time.Time                       // newest reading
	lastMeta  time.Time                       // newest metadata version
}

type key struct {
	store views.Store
	id    string
}

// New indexes the rows. Rows of equal crawl times keep their order, the
// later one winning, as a ReplacingMergeTree keeps the last inserted.
func New(listings []analytics.ListingRow, snapshots []analytics.SnapshotRow) *Data {
	d := &Data{rowsL: listings, rowsS: snapshots, listings: map[key][]analytics.ListingRow{},
		snapshots: map[key][]analytics.SnapshotRow{}, count: int64(len(snapshots))}
	for _, l := range listings {
		k := key{l.Store, l.ID}
		if _, ok := d.listings[k]; !ok {
			d.keys = append(d.keys, k)
		}
		d.listings[k] = append(d.listings[k], l)
		if l.CrawledAt.After(d.lastMeta) {
			d.lastMeta = l.CrawledAt
		}
	}
	for _, s := range snapshots {
		k := key{s.Store, s.ID}
		d.snapshots[k] = append(d.snapshots[k], s)
		if d.first.IsZero() || s.CrawledAt.Before(d.first) {
			d.first = s.CrawledAt
		}
		if s.CrawledAt.After(d.last) {
			d.last = s.CrawledAt
		}
	}
	for k := range d.listings {
		slices.SortStableFunc(d.listings[k], func(a, b analytics.ListingRow) int { return a.CrawledAt.Compare(b.CrawledAt) })
	}
	for k := range d.snapshots {
		slices.SortStableFunc(d.snapshots[k], func(a, b analytics.SnapshotRow) int { return a.CrawledAt.Compare(b.CrawledAt) })
	}
	slices.SortFunc(d.keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.store, b.store), cmp.Compare(a.id, b.id)) })
	return d
}

// Add adds rows, as a crawler writing to the tables. It must not run
// while another method of d does.
func (d *Data) Add(listings []analytics.ListingRow, snapshots []analytics.SnapshotRow) {
	*d = *New(append(d.rowsL[:len(d.rowsL):len(d.rowsL)], listings...), append(d.rowsS[:len(d.rowsS):len(d.rowsS)], snapshots...))
}

// Snapshots returns the number of readings, as analytics.CountSnapshots.
func (d *Data) Snapshots() int64 { return d.count }

// Span returns the times of the oldest and newest readings, as
// analytics.DataSpan.
func (d *Data) Span() (first, last time.Time) { return d.first.UTC(), d.last.UTC() }

// size is a reading's size: its usage figure, or on apple its rating
// count.
func size(s *analytics.SnapshotRow) *uint64 {
	if s.Store == views.Apple {
		return s.RatingCount
	}
	return s.Usage
}

// Replica returns the replica analytics.LoadReplica and
// analytics.AddHistory load, as generation gen, its growth bases computed
// at computedAt.
func (d *Data) Replica(gen uint64, computedAt time.Time) *replica.Replica {
	start := time.Now()
	info := replica.NewInfo(d.lastMeta.UTC(), d.last.UTC())
	info.Generation, info.HasHistory, info.LoadedAt = gen, true, computedAt
	b := replica.NewBuilder(len(d.keys))
	in := replica.NewInterner()
	for _, k := range d.keys {
		versions := d.listings[k]
		l := listing(&versions[len(versions)-1], in)
		if snaps := d.snapshots[k]; len(snaps) > 0 {
			newest := &snaps[len(snaps)-1]
			read(&l, newest)
			history(&l, snaps, newest.CrawledAt, info)
			l.Hist.SetComputedAt(time.Unix(l.ReadAt, 0)) // as analytics' loads: the listing's newest reading
		} else {
			l.SetUsage(0, false)
			l.SetWeeklyDownloads(0, false)
			l.SetRatingCount(0, false)
			l.SetRating(0, false)
		}
		b.Add(&l)
	}
	info.LoadTime = time.Since(start)
	return b.Build(info)
}

// listing is a metadata version as analytics.LoadReplica reads it. Its
// string slices are copies: the interner writes into them, and a replica
// published before may hold the rows' own.
func listing(r *analytics.ListingRow, in *replica.Interner) views.Listing {
	l := views.Listing{
		Store: r.Store, ID: r.ID, Name: r.Name, Developer: in.String(r.Developer), Category: in.String(r.Category),
		Kind: r.Kind, Description: analytics.TruncateRunes(r.Description, views.DescriptionLimit), Icon: r.Icon, Version: r.Version,
		Updated: views.UpdatedAsRead(dayOf(r.StoreUpdated), r.CrawledAt.Unix()), Created: dayOf(r.StoreCreated), FirstSeen: r.FirstSeen.Unix(), MetaAt: r.CrawledAt.Unix(), Featured: r.Featured,
		ManifestVersion: r.ManifestVersion, Permissions: in.Strings(slices.Clone(r.Permissions)),
		HostAccess: in.Strings(slices.Clone(r.HostAccess)), AccessLevel: r.AccessLevel, Topics: in.Strings(slices.Clone(r.Topics)),
	}
	if r.Slug != nil {
		l.Slug = *r.Slug
	}
	if r.DelistedAt != nil {
		l.Delisted = r.DelistedAt.Unix()
	}
	return l
}

// read sets the figures of the newest reading.
func read(l *views.Listing, s *analytics.SnapshotRow) {
	l.ReadAt = s.CrawledAt.Unix()
	l.SetUsage(opt(s.Usage))
	l.SetWeeklyDownloads(opt(s.WeeklyDownloads))
	l.SetRatingCount(opt(s.RatingCount))
	if s.Rating != nil {
		l.SetRating(*s.Rating, true)
	} else {
		l.SetRating(0, false)
	}
	if len(s.Stars) == 5 {
		copy(l.Stars[:], s.Stars)
		l.HasStars = true
	}
}

// history sets the growth bases, the chart sizes, the climb base and the
// sparkline, as analytics.LoadReplica and analytics.AddHistory read them:
// a window's start is the figure at one window before the newest reading
// (readAt) and a chart size the size at an end of the charts' window,
// both by views.ValueAt; the climb base is the newest size at or before
// the climb time; a sparkline point is each day's latest reading that
// has a size.
func history(l *views.Listing, snaps []analytics.SnapshotRow, readAt time.Time, info replica.Info) {
	base := func(figure func(*analytics.SnapshotRow) *uint64, before int64) views.Base {
		for i := len(snaps) - 1; i >= 0; i-- {
			if t := snaps[i].CrawledAt.Unix(); t <= before {
				if v := figure(&snaps[i]); v != nil && t > 0 {
					return views.Base{Value: int64(*v), At: t}
				}
			}
		}
		return views.Base{}
	}
	ratings := func(s *analytics.SnapshotRow) *uint64 { return s.RatingCount }
	// after is the oldest reading with the figure after instant.
	after := func(figure func(*analytics.SnapshotRow) *uint64, instant int64) views.Reading {
		for i := range snaps {
			if t := snaps[i].CrawledAt.Unix(); t > instant {
				if v := figure(&snaps[i]); v != nil {
					return views.Reading{Value: int64(*v), At: t}
				}
			}
		}
		return views.Reading{}
	}
	start := func(figure func(*analytics.SnapshotRow) *uint64, w views.Window) views.Base {
		instant := readAt.Unix() - int64(w.Days())*86400
		before := base(figure, instant)
		b, _ := views.ValueAt(instant, views.Reading{Value: before.Value, At: before.At}, after(figure, instant), w.MaxGap())
		return b
	}
	for _, w := range views.Windows {
		l.Hist.SetSizeBase(w, start(size, w))
	}
	for _, w := range views.Windows[:2] {
		l.Hist.SetRatingBase(w, start(ratings, w))
	}
	chartFrom, chartTo := info.ChartWindow()
	sizeAt := func(instant int64) (views.Base, bool) {
		before := base(size, instant)
		return views.ValueAt(instant, views.Reading{Value: before.Value, At: before.At}, after(size, instant), views.GapFor(views.ChartDays*86400))
	}
	from, fromOK := sizeAt(chartFrom)
	to, toOK := sizeAt(chartTo)
	l.Hist.SetChartSizes(from, fromOK, to, toOK)
	l.Hist.SetClimbBase(base(size, info.ClimbAt.Unix()))

	lastDay := views.DayOf(info.ReadingsMark)
	var points []views.SparkPoint
	var lastAt time.Time
	for i := range snaps {
		day := views.DayOf(snaps[i].CrawledAt)
		v := size(&snaps[i])
		if day < lastDay-views.SparkDays+1 || day > lastDay || v == nil {
			continue
		}
		if n := len(points); n > 0 && points[n-1].Day == day {
			// A later reading of the day; of two at the same second, the larger.
			if at := snaps[i].CrawledAt; at.After(lastAt) || int64(*v) > points[n-1].Value {
				points[n-1].Value, lastAt = int64(*v), at
			}
			continue
		}
		points = append(points, views.SparkPoint{Day: day, Value: int64(*v)})
		lastAt = snaps[i].CrawledAt
	}
	if len(points) > 0 {
		l.Hist.SetSparkline(views.EncodeSparkline(points))
	}
}

// WeekState returns the state of every listing at instant at, as
// analytics.LoadWeekState reads it: the newest metadata version crawled
// before at, and the newest reading with each figure in the lookback
// before at.
func (d *Data) WeekState(at time.Time) *editions.State {
	st := &editions.State{At: at.UTC()}
	end, from := at.Unix(), at.Add(-analytics.WeekLookback).Unix()
	for _, k := range d.keys {
		var meta *analytics.ListingRow
		for i, v := range d.listings[k] {
			if v.CrawledAt.Unix() < end {
				meta = &d.listings[k][i]
			}
		}
		if meta == nil {
			continue
		}
		l := editions.Listing{Store: k.store, ID: k.id, Name: meta.Name, Category: meta.Category, FirstSeen: meta.FirstSeen.Unix()}
		if meta.DelistedAt != nil {
			l.Delisted = meta.DelistedAt.Unix()
		}
		var haveSize, haveRating, haveCount bool
		snaps := d.snapshots[k]
		for i := len(snaps) - 1; i >= 0; i-- {
			s := &snaps[i]
			t := s.CrawledAt.Unix()
			if t >= end {
				continue
			}
			if t < from {
				break
			}
			if l.ReadAt == 0 {
				l.ReadAt = t
			}
			if v := size(s); v != nil && !haveSize {
				l.Size, l.HasSize, haveSize = int64(*v), true, true
			}
			if s.Rating != nil && !haveRating {
				l.Rating, l.Rated, haveRating = *s.Rating, true, true
			}
			if s.RatingCount != nil && !haveCount {
				l.RatingCount, haveCount = int64(*s.RatingCount), true
			}
		}
		st.Listings = append(st.Listings, l)
	}
	return st
}

func dayOf(t *time.Time) views.Day {
	if t == nil {
		return views.NoDay
	}
	return views.DayOf(*t)
}

func opt(v *uint64) (int64, bool) {
	if v == nil {
		return 0, false
	}
	return int64(*v), true
}
