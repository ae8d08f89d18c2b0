package v1

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/feed"
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

// getChanges answers GET /api/v1/changes: the listings whose metadata or
// newest reading changed after since, oldest change first, from the
// published state (what the refresh job has read up to its watermarks).
// A listing is in the feed once, at its latest change. nextCursor always
// moves forward, or stays where it was when nothing changed since: ask
// again with it later.
func (s *API) getChanges(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.Figures("The change feed is")
	if err != nil {
		return answer.Reply{}, err
	}
	info := f.Replica().Info()
	pos, err := sincePos(c.Query("since"))
	if err != nil {
		return answer.Reply{}, err
	}
	limit, err := limitParam(c, changesDefaultLimit, changesMaxLimit)
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [640]byte
	key := answer.NewKey(buf[:0], "/api/v1/changes", gen).
		Int("t", pos.At).Int("s", int64(pos.Store)).Str("id", pos.ID).Int("limit", int64(limit))
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		ls, next := f.Feed().Page(pos, limit)
		out := changesAnswer{Changes: make([]changeEntry, len(ls)), Remaining: f.Feed().Count(next)}
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
		return answer.JSON(out)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}
