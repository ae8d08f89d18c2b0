package exports

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/lake"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// writeStore writes store s's files of day d into dir: the NDJSON and
// CSV files (formats), then the listings' Parquet file.
func writeStore(ctx context.Context, conn driver.Conn, dir string, s views.Store, d views.Day) ([]File, error) {
	nd, err := create(dir, s, "ndjson")
	if err != nil {
		return nil, err
	}
	defer nd.f.Close()
	cs, err := create(dir, s, "csv")
	if err != nil {
		return nil, err
	}
	defer cs.f.Close()
	pq, err := createParquet(dir, ParquetName(TableListings, s, d), s, TableListings)
	if err != nil {
		return nil, err
	}
	defer pq.f.Close()
	lw := lake.NewListingsWriter(pq.cnt)
	cw := csvw.NewWriter(cs.gz)
	cw.Write(csvHeader)
	enc := json.NewEncoder(nd.gz)
	rows := 0
	err = analytics.StreamExportRows(ctx, conn, s, d, func(r *analytics.ExportRow) error {
		rows++
		doc := document(r)
		if err := enc.Encode(&doc); err != nil {
			return err
		}
		if err := lw.Write(r); err != nil {
			return err
		}
		return cw.Write(record(&doc, len(r.Readings)))
	})
	if err != nil {
		return nil, err
	}
	n, err := lw.Close()
	lf, err := pq.close(n, err)
	if err != nil {
		return nil, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return nil, err
	}
	var files []File
	for _, o := range []*output{nd, cs} {
		f, err := o.close()
		if err != nil {
			return nil, err
		}
		f.Rows = rows
		files = append(files, f)
	}
	return append(files, lf), nil
}

// event is a line of a day's events file: a change of a listing, as
// GET /api/v1/events gives it, with the listing's name in the version
// that holds it.
type event struct {
	At      time.Time `json:"at"`
	Store   string    `json:"store"`
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Before  *string   `json:"before"`
	After   *string   `json:"after"`
	Added   []string  `json:"added"`
	Removed []string  `json:"removed"`
	Widened *bool     `json:"widened"`
}

// writeEvents writes store s's events of day d into dir: every change of
// a listing seen by a crawl of that day, one a line.
func writeEvents(ctx context.Context, conn driver.Conn, dir string, s views.Store, d views.Day) (File, error) {
	o, err := createNamed(dir, eventsName(s), s, ContentEvents, "ndjson")
	if err != nil {
		return File{}, err
	}
	defer o.f.Close()
	enc := json.NewEncoder(o.gz)
	rows := 0
	err = analytics.StreamDayChanges(ctx, conn, s, d, func(c *analytics.DayChange) error {
		rows++
		e := event{At: time.Unix(c.At, 0).UTC(), Store: s.String(), ID: c.ID, Name: c.Name, Kind: c.Kind.String()}
		switch c.Kind {
		case changes.Permissions, changes.HostAccess:
			e.Added, e.Removed = append([]string{}, c.Added()...), append([]string{}, c.Removed()...)
			if c.Kind == changes.HostAccess {
				e.Widened = &c.Widened
			}
		default:
			if c.Before != "" {
				e.Before = &c.Before
			}
			if c.After != "" {
				e.After = &c.After
			}
		}
		return enc.Encode(&e)
	})
	if err != nil {
		return File{}, err
	}
	f, err := o.close()
	f.Rows = rows
	return f, err
}

// reading is a reading in an NDJSON line.
type reading struct {
	ReadAt          time.Time `json:"readAt"`
	Size            *uint64   `json:"size"`
	Usage           *uint64   `json:"usage"`
	WeeklyDownloads *uint64   `json:"weeklyDownloads"`
	Rating          *float64  `json:"rating"`
	RatingCount     *uint64   `json:"ratingCount"`
}

// line is one listing in an NDJSON file.
type line struct {
	Store      string     `json:"store"`
	ID         string     `json:"id"`
	Slug       *string    `json:"slug"`
	Name       string     `json:"name"`
	Developer  string     `json:"developer"`
	Category   string     `json:"category"`
	Kind       string     `json:"kind"`
	Version    string     `json:"version"`
	Updated    *string    `json:"updated"`
	Created    *string    `json:"created"`
	FirstSeen  time.Time  `json:"firstSeen"`
	DelistedAt *time.Time `json:"delistedAt"`
	MetadataAt time.Time  `json:"metadataAt"`
	Latest     *reading   `json:"latest"`   // the latest reading in the week up to the day's end
	Readings   []reading  `json:"readings"` // the day's readings, oldest first
}

func toReading(s views.Store, r *analytics.ExportReading) reading {
	out := reading{ReadAt: r.At, Usage: r.Usage, WeeklyDownloads: r.WeeklyDownloads, Rating: r.Rating, RatingCount: r.RatingCount, Size: r.Usage}
	if s == views.Apple {
		out.Size = r.RatingCount
	}
	return out
}

func date(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.DateOnly)
	return &s
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func document(r *analytics.ExportRow) line {
	l := line{Store: r.Store.String(), ID: r.ID, Slug: r.Slug, Name: r.Name, Developer: r.Developer, Category: r.Category,
		Kind: r.Kind.String(), Version: r.Version, Updated: date(r.Updated), Created: date(r.Created), FirstSeen: r.FirstSeen,
		DelistedAt: utc(r.DelistedAt), MetadataAt: r.MetadataAt, Readings: make([]reading, len(r.Readings))}
	if r.Latest != nil {
		x := toReading(r.Store, r.Latest)
		l.Latest = &x
	}
	for i := range r.Readings {
		l.Readings[i] = toReading(r.Store, &r.Readings[i])
	}
	return l
}

func record(l *line, dayReadings int) []string {
	var readAt, size, usage, weekly, rating, count string
	if r := l.Latest; r != nil {
		readAt, size, usage, weekly, rating, count = csvw.Time(&r.ReadAt), csvw.Uint(r.Size), csvw.Uint(r.Usage), csvw.Uint(r.WeeklyDownloads), csvw.Float(r.Rating), csvw.Uint(r.RatingCount)
	}
	return []string{l.Store, csvw.Text(l.ID), csvw.Text(csvw.String(l.Slug)), csvw.Text(l.Name), csvw.Text(l.Developer), csvw.Text(l.Category), l.Kind, csvw.Text(l.Version),
		csvw.String(l.Updated), csvw.String(l.Created), csvw.Time(&l.FirstSeen), csvw.Time(l.DelistedAt), csvw.Time(&l.MetadataAt), readAt, size, usage, weekly, rating, count,
		strconv.Itoa(dayReadings)}
}
