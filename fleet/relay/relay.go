// Package relay lets the edges of a fleet read what the fleet's usage
// log and key list changed from the edge that leads, instead of each
// asking ClickHouse every few seconds: with the state built once per
// fleet, these polls are what each edge would still ask of ClickHouse.
//
// The leading edge reads the usage log as a lone edge does; a Recorder
// around its store keeps what each read brought for two minutes and
// serves it (UsagePath). A following edge's Store asks the leader first
// and reads ClickHouse itself when the leader cannot answer (none, out of
// reach, or its record does not reach back to the position asked): the
// rows it gets are those a read of its own would get, so its totals are
// the same. Each edge still writes its own calls to ClickHouse.
//
// A follower asks for sums (sum=1): the leader answers each subject's
// calls over the batches brought first from the follower's position,
// with the lists of those batches and of the batches brought again, so
// that what it sends grows with the subjects rather than with the edges
// times the subjects. The follower applies the sums only when it has
// applied every batch brought again and none of those brought first;
// otherwise it reads the rows (usagelog.SummingStore). A leader of the
// release before ignores sum=1 and answers rows, which the follower
// takes as before; a follower that does not ask for sums gets rows.
//
// For the keys, the leader serves a version that changes whenever its
// key list changed (KeysPath), and a following edge reloads its keys only
// when the version moved, or every few minutes regardless (KeysGate).
package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
)

// The paths the leader serves.
const (
	UsagePath = "/fleet/v1/usage"
	KeysPath  = "/fleet/v1/keys"
)

// keepFor is how long a Recorder keeps what a read brought: long enough
// for a follower that missed a few syncs to catch up from it.
const keepFor = 2 * time.Minute

// maxWindows bounds the reads a Recorder keeps.
const maxWindows = 1024

// maxReach is how long before the position asked the read that holds it
// may have started: the leader's sync interval and then some. Past it
// the answer could hold batches the asker applied longer ago than it
// remembers (limits: three log overlaps, 12 s).
const maxReach = 4 * time.Second

type window struct {
	seq      uint64 // the recorder's count of reads, at this one
	day      time.Time
	from, to usagelog.Pos
	changes  []analytics.UsageChange
	began    time.Time // when the read was asked of the store
	at       time.Time // when it came back
	// first holds, for each batch of changes, the seq of the first kept
	// read that brought it.
	first map[analytics.UsageBatch]uint64
}

// Recorder is a usagelog.Store that keeps what its reads of the log
// (Since) brought, for the fleet's other edges (ServeHTTP).
type Recorder struct {
	usagelog.Store
	mu      sync.Mutex
	windows []window
	seq     uint64
	first   map[analytics.UsageBatch]uint64 // the batches of windows, and the first read that brought each
	now     func() time.Time
	// freshMu makes one fresh read at a time (ServeHTTP, fresh=1): asks
	// that arrive while one is under way wait for it, then find a read
	// begun after them or make the next.
	freshMu sync.Mutex
	// last is the last answer as sums: the followers of a fleet ask from
	// the same position, so one computes what all get.
	last struct {
		key  sumsKey
		body []byte
	}
}

// sumsKey names what an answer as sums is made of: the position asked
// and the reads it spans.
type sumsKey struct {
	day         time.Time
	pos         usagelog.Pos
	first, last uint64
	after       uint64
}

// NewRecorder returns a recorder around base.
func NewRecorder(base usagelog.Store) *Recorder {
	return &Recorder{Store: base, now: time.Now}
}

func dayKey(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// Day reads the day from the store; the reads recorded before it no
// longer join the reads after it, so they are dropped.
func (r *Recorder) Day(ctx context.Context, day time.Time) (usagelog.DayRead, error) {
	read, err := r.Store.Day(ctx, day)
	if err == nil {
		r.mu.Lock()
		r.windows, r.first = nil, nil
		r.mu.Unlock()
	}
	return read, err
}

// Since reads the log from the store, and records what it brought.
func (r *Recorder) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	began := r.now()
	changes, next, err := r.Store.Since(ctx, day, pos)
	if err != nil {
		return changes, next, err
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	drop := 0
	for drop < len(r.windows) && (now.Sub(r.windows[drop].at) > keepFor || len(r.windows)-drop >= maxWindows) {
		drop++
	}
	w := r.window(dayKey(day), pos, next, changes, now)
	w.began = began
	r.windows = append(r.windows[drop:], w)
	return changes, next, nil
}

// freshTimeout bounds the read of the log a fresh ask makes the leader
// do: within the relay client's patience (2 s).
const freshTimeout = 1500 * time.Millisecond

// freshen makes the record hold a read of day begun at or after asked:
// the leader reads the log itself, from where its last read of day
// ended, unless another read did since (its own sync, or the fresh read
// of another ask). An ask that needs it has just written a batch (a
// reservation of a key's calls, package limits) and waits to read it
// back; the read it makes is one of ClickHouse's for every follower
// asking at once, not one each. A failed read leaves the record as it
// was: the answer is then what it held.
func (r *Recorder) freshen(ctx context.Context, day time.Time, asked time.Time) {
	r.freshMu.Lock()
	defer r.freshMu.Unlock()
	r.mu.Lock()
	var from usagelog.Pos
	found := false
	for _, w := range r.windows {
		if !w.day.Equal(day) {
			continue
		}
		if !w.began.Before(asked) {
			r.mu.Unlock()
			return // a read begun after the ask is recorded
		}
		if !found || w.to.After(from) {
			from, found = w.to, true
		}
	}
	r.mu.Unlock()
	if !found {
		return // nothing to read on from: the follower reads the store (410)
	}
	ctx, cancel := context.WithTimeout(ctx, freshTimeout)
	defer cancel()
	_, _, _ = r.Since(ctx, day, from)
}

// window makes the record of a read and notes the batches it brought
// first. r.mu must be held.
func (r *Recorder) window(day time.Time, from, to usagelog.Pos, changes []analytics.UsageChange, at time.Time) window {
	if r.first == nil {
		r.first = map[analytics.UsageBatch]uint64{}
	}
	if len(r.windows) > 0 {
		oldest := r.windows[0].seq
		for b, s := range r.first {
			if s < oldest {
				delete(r.first, b)
			}
		}
	}
	r.seq++
	w := window{seq: r.seq, day: day, from: from, to: to, changes: changes, at: at, first: map[analytics.UsageBatch]uint64{}}
	for _, c := range changes {
		s, ok := r.first[c.Batch]
		if !ok {
			s = r.seq
			r.first[c.Batch] = s
		}
		w.first[c.Batch] = s
	}
	return w
}

// answer returns what the recorded reads hold of day from pos on, and
// the position to ask from next; ok is false when they do not reach back
// to pos (without a gap), so that the asker reads the store itself.
func (r *Recorder) answer(day time.Time, pos usagelog.Pos) (ws []window, next usagelog.Pos, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	day = dayKey(day)
	start := -1
	for i, w := range r.windows {
		if w.day.Equal(day) && !w.from.After(pos) {
			start = i // the last read that starts at or before pos
		}
	}
	if start < 0 {
		return nil, pos, false
	}
	// The rows of the read that holds pos go back to its start: a reader
	// remembers the batches it applied for a few seconds only, so a read
	// that started long before pos (the leader's syncs stalled) could
	// bring batches it applied long ago, to be counted twice. The store
	// answers then.
	if at, _ := pos.Parts(); !at.IsZero() {
		if from, _ := r.windows[start].from.Parts(); at.Sub(from) > maxReach {
			return nil, pos, false
		}
	}
	next = pos
	for i := start; i < len(r.windows); i++ {
		w := r.windows[i]
		if !w.day.Equal(day) || (i > start && w.from.After(r.windows[i-1].to)) {
			return nil, pos, false // a gap: another day's, or a read that failed in between
		}
		ws = append(ws, w)
		if w.to.After(next) {
			next = w.to
		}
	}
	return ws, next, true
}

// usageAnswer is the JSON of an answer to UsagePath.
// The rows form (Changes) lists every row of every batch; the sums form,
// asked for with sum=1, lists the batches instead, with each subject's
// calls over those brought first (Totals), and says so (Sum).
type usageAnswer struct {
	At      int64             `json:"at"` // the next position's time, Unix nanoseconds (0: none)
	N       int               `json:"n"`  // and its index
	Sum     bool              `json:"sum,omitempty"`
	Read    uint64            `json:"read,omitempty"` // the last read the sums span: the next ask's after
	Changes []change          `json:"changes,omitempty"`
	Batches []batchID         `json:"batches,omitempty"` // brought first from the position asked
	Seen    []batchID         `json:"seen,omitempty"`    // brought again: in reads before the position
	Totals  map[string]uint64 `json:"totals,omitempty"`
}

type batchID struct {
	Edge string `json:"edge"`
	Seq  uint64 `json:"seq"`
}

type change struct {
	Edge    string `json:"edge"`
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	Calls   uint64 `json:"calls"`
}

func posJSON(p usagelog.Pos) (int64, int) {
	at, n := p.Parts()
	if at.IsZero() {
		return 0, n
	}
	return at.UnixNano(), n
}

func posOf(at int64, n int) usagelog.Pos {
	if at == 0 {
		return usagelog.PosOf(time.Time{}, n)
	}
	return usagelog.PosOf(time.Unix(0, at).UTC(), n)
}

// ServeHTTP answers GET UsagePath?day=YYYY-MM-DD&at=&n= with what the
// recorded reads hold from that position on (200), or 410 Gone when they
// do not reach back to it: as rows, or as sums with sum=1 (and after=,
// the read the asker's last answer spanned up to, when it has one). With
// fresh=1 the answer holds a read of the log begun after the ask arrived
// (freshen): every batch written before the ask is in it.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	asked := r.now()
	q := req.URL.Query()
	day, err := time.Parse(time.DateOnly, q.Get("day"))
	at, errAt := strconv.ParseInt(q.Get("at"), 10, 64)
	n, errN := strconv.Atoi(q.Get("n"))
	if err != nil || errAt != nil || errN != nil || n < 0 {
		http.Error(w, "want day=YYYY-MM-DD, at=<Unix nanoseconds> and n=<index>", http.StatusBadRequest)
		return
	}
	if q.Get("fresh") == "1" {
		r.freshen(req.Context(), dayKey(day), asked)
	}
	ws, next, ok := r.answer(day, posOf(at, n))
	if !ok {
		http.Error(w, "the leader's record does not reach back to that position: read the store", http.StatusGone)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if q.Get("sum") == "1" {
		after, _ := strconv.ParseUint(q.Get("after"), 10, 64)
		w.Write(r.sums(sumsKey{dayKey(day), posOf(at, n), ws[0].seq, ws[len(ws)-1].seq, after}, ws, next))
		return
	}
	a := rowsOf(ws)
	a.At, a.N = posJSON(next)
	json.NewEncoder(w).Encode(a)
}

// sums returns the JSON of the answer as sums of the reads ws, named by
// k, up to next: the last one made when k names it too.
func (r *Recorder) sums(k sumsKey, ws []window, next usagelog.Pos) []byte {
	r.mu.Lock()
	if r.last.key == k && r.last.body != nil {
		body := r.last.body
		r.mu.Unlock()
		return body
	}
	r.mu.Unlock()
	a := sumsOf(ws, k.pos, k.after)
	a.At, a.N = posJSON(next)
	body, _ := json.Marshal(a)
	body = append(body, '\n')
	r.mu.Lock()
	r.last.key, r.last.body = k, body
	r.mu.Unlock()
	return body
}

// rowsOf is the answer of the reads ws as rows.
func rowsOf(ws []window) usageAnswer {
	var a usageAnswer
	for _, w := range ws {
		for _, c := range w.changes {
			a.Changes = append(a.Changes, change{Edge: c.Batch.Edge, Seq: c.Batch.Seq, Subject: c.Subject, Calls: c.Calls})
		}
	}
	return a
}

// sumsOf is the answer of the reads ws, asked from pos, as sums. A batch
// that a read up to the asker's last answer (after, the last read it
// spanned), or else a read ending at or before pos, brought is listed as
// seen: the reads overlap, and the asker applied it. (Positions have
// whole seconds: two reads may end at the same one.) The
// others are summed, each batch once however many reads brought it, and
// each (batch, subject) row once. The asker checks both lists against
// the batches it applied, so that a guess wrong here costs a read of
// the rows, never a call counted twice or missed.
func sumsOf(ws []window, pos usagelog.Pos, after uint64) usageAnswer {
	a := usageAnswer{Sum: true, Totals: map[string]uint64{}, Read: ws[len(ws)-1].seq}
	start := ws[len(ws)-1].seq + 1
	for _, w := range ws {
		if w.to.After(pos) {
			start = w.seq
			break
		}
	}
	if after > 0 {
		start = after + 1
	}
	type row struct {
		batch   analytics.UsageBatch
		subject string
	}
	listed := map[analytics.UsageBatch]bool{}
	rows := map[row]bool{}
	for _, w := range ws {
		for _, c := range w.changes {
			if !listed[c.Batch] {
				listed[c.Batch] = true
				id := batchID{Edge: c.Batch.Edge, Seq: c.Batch.Seq}
				if w.first[c.Batch] < start {
					a.Seen = append(a.Seen, id)
				} else {
					a.Batches = append(a.Batches, id)
				}
			}
			if w.first[c.Batch] < start || rows[row{c.Batch, c.Subject}] {
				continue
			}
			rows[row{c.Batch, c.Subject}] = true
			a.Totals[c.Subject] += c.Calls
		}
	}
	return a
}
