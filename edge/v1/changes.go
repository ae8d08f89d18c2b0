package v1

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/feed"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

const (
	changesDefaultLimit = 100
	changesMaxLimit     = 1000
)

// changeCursor is what a change feed's nextCursor carries: the place
// after the last change returned.
type changeCursor struct {
	Version int    `json:"v"`
	At      int64  `json:"t"`
	Store   uint8  `json:"s"`
	ID      string `json:"i"`
}

// changeEntry is one listing of the change feed.
type changeEntry struct {
	Store      string     `json:"store"`
	ID         string     `json:"id"`
	Name       *string    `json:"name"` // null until the listing is read
	ChangedAt  time.Time  `json:"changedAt"`
	MetadataAt *time.Time `json:"metadataAt"`
	ReadAt     *time.Time `json:"readAt"`
	Live       bool       `json:"live"`
	Size       *int64     `json:"size"`
}

// changesAnswer is the answer of GET /api/v1/changes.
type changesAnswer struct {
	Changes    []changeEntry `json:"changes"`
	NextCursor string        `json:"nextCursor"`
	Remaining  int           `json:"remaining"`
	AsOf       struct {
		Listings time.Time `json:"listings"`
		Readings time.Time `json:"readings"`
	} `json:"asOf"`
	// limit is the page's size, which a file's next link repeats.
	limit int
}

// sincePos reads since: a nextCursor, an RFC 3339 time (the changes
// strictly after it: a client resuming from the last changedAt it saw
// gets no change twice) or a date (the changes on that day or later);
// absent, the feed's beginning.
func sincePos(raw string) (feed.Pos, error) {
	if raw == "" {
		return feed.Pos{}, nil
	}
	if at, ok := sinceInstant(raw); ok {
		return feed.Pos{At: at, Store: views.NumStores}, nil // after every change at that second
	}
	c, ok := document.DecodeCursor[changeCursor](raw)
	if !ok || c.Version != 1 || c.Store > uint8(views.NumStores) || len(c.ID) > 512 {
		return feed.Pos{}, problem.New(http.StatusBadRequest,
			"since: send the nextCursor of the previous answer unchanged, a time (RFC 3339, such as 2026-03-01T00:00:00Z) or a date (yyyy-MM-dd); omit it to start from the beginning.")
	}
	return feed.Pos{At: c.At, Store: views.Store(c.Store), ID: c.ID}, nil
}

// sinceInstant reads a since given as a time (RFC 3339: what comes
// strictly after it) or a date (yyyy-MM-dd: what comes on that day or
// later), as the second after which a feed resumes: the change feed's
// and the event feed's places both start after every entry of it.
func sinceInstant(raw string) (at int64, ok bool) {
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return t.Unix(), true
	}
	if t, err := time.Parse(time.DateOnly, raw); err == nil {
		return t.Unix() - 1, true
	}
	return 0, false
}

// ChangesParams are a change feed query as read: the published figures,
// where the page starts and its size.
type ChangesParams struct {
	Figures *figures.Figures
	Pos     feed.Pos
	Limit   int
}

// ChangesRead is the read of the change feed (GET /api/v1/changes): the
// listings whose metadata or newest reading changed after since, oldest
// change first, from the published state (what the refresh job has read
// up to its watermarks). A listing is in the feed once, at its latest
// change. nextCursor always moves forward, or stays where it was when
// nothing changed since: ask again with it later. Each call declares it
// anew.
func (s *API) ChangesRead() *read.Read[ChangesParams, changesAnswer] {
	return &read.Read[ChangesParams, changesAnswer]{
		Cheap:    true,
		Route:    "/api/v1/changes",
		NotReady: "The change feed is",
		Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (ChangesParams, error) {
			p := ChangesParams{Figures: st.Figures}
			var err error
			if p.Pos, err = sincePos(c.Query("since")); err != nil {
				return p, err
			}
			p.Pos.ID = strings.Clone(p.Pos.ID)
			p.Limit, err = limitParam(c, changesDefaultLimit, changesMaxLimit)
			return p, err
		},
		Key: func(k answer.Key, p *ChangesParams) answer.Key {
			return k.Int("t", p.Pos.At).Int("s", int64(p.Pos.Store)).Str("id", p.Pos.ID).Int("limit", int64(p.Limit))
		},
		Run: runChanges,
	}
}

// runChanges reads the page of the change feed p asks for.
func runChanges(_ *fiber.Ctx, _ *served.State, p *ChangesParams, _ read.Needs) (*changesAnswer, error) {
	f := p.Figures
	info := f.Replica().Info()
	ls, next := f.Feed().Page(p.Pos, p.Limit)
	out := &changesAnswer{Changes: make([]changeEntry, len(ls)), Remaining: f.Feed().Count(next)}
	out.AsOf.Listings, out.AsOf.Readings = info.ListingsMark.UTC(), info.ReadingsMark.UTC()
	for i, l := range ls {
		e := changeEntry{Store: l.Store.String(), ID: l.ID, ChangedAt: time.Unix(l.ChangedAt(), 0).UTC(), Live: l.Live()}
		if l.Name != "" {
			e.Name = &l.Name
		}
		if l.MetaAt > 0 {
			t := time.Unix(l.MetaAt, 0).UTC()
			e.MetadataAt = &t
		}
		if l.ReadAt > 0 {
			t := time.Unix(l.ReadAt, 0).UTC()
			e.ReadAt = &t
		}
		if v, ok := l.Size(); ok {
			e.Size = &v
		}
		out.Changes[i] = e
	}
	out.NextCursor = *document.EncodeCursor(changeCursor{Version: 1, At: next.At, Store: uint8(next.Store), ID: next.ID})
	out.limit = p.Limit
	return out, nil
}

// changesJSON writes a page of the change feed as JSON.
var changesJSON = read.Codec[changesAnswer]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, v *changesAnswer) (*answer.Answer, error) { return answer.JSON(v) }}

// changesCSVHeader names the columns of the change feed's CSV: a change
// entry's fields.
var changesCSVHeader = []string{"store", "id", "name", "changed_at", "metadata_at", "read_at", "live", "size"}

// changesFiles are the codecs that write a page of the change feed as
// files: CSV, one change entry a row, and NDJSON, one entry's object a
// line, each the JSON page's entries (limit, at most changesMaxLimit) in
// its order; their Link names the next page's file (rel="next": since
// the page's nextCursor) while more changes remain.
var changesFiles = []read.Codec[changesAnswer]{
	{Name: "csv", Type: "text/csv", Encode: func(_ *fiber.Ctx, v *changesAnswer) (*answer.Answer, error) {
		rows := make([][]string, len(v.Changes))
		for i, e := range v.Changes {
			name := ""
			if e.Name != nil {
				name = csvw.Text(*e.Name)
			}
			rows[i] = []string{e.Store, csvw.Text(e.ID), name, csvw.Time(&e.ChangedAt), csvw.Time(e.MetadataAt), csvw.Time(e.ReadAt),
				strconv.FormatBool(e.Live), csvw.Int(e.Size)}
		}
		a, err := csvFile("changes.csv", changesCSVHeader, rows)
		if err != nil {
			return nil, err
		}
		return nextChanges(a, v, "csv"), nil
	}},
	{Name: "ndjson", Type: NDJSONContentType, Encode: func(_ *fiber.Ctx, v *changesAnswer) (*answer.Answer, error) {
		a, err := ndjsonFile("changes.ndjson", v.Changes)
		if err != nil {
			return nil, err
		}
		return nextChanges(a, v, "ndjson"), nil
	}},
}

// nextChanges names in a's Link the file after v's page, in format,
// while changes remain after it.
func nextChanges(a *answer.Answer, v *changesAnswer, format string) *answer.Answer {
	if v.Remaining > 0 {
		a.SetNext("/api/v1/changes?since=" + url.QueryEscape(v.NextCursor) + "&limit=" + strconv.Itoa(v.limit) + "&format=" + format)
	}
	return a
}
