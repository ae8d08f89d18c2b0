package exchange

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views/replica"
)

// States in the format a follower reads. A follower names the formats of
// state it reads in its ask's Accept, one media range a format, newest
// first:
//
//	Accept: application/vnd.edge.state; v=4, application/vnd.edge.state; v=3
//
// The leader answers in the newest of them it writes (replica.Formats),
// naming it in FormatHeader, or 406 Not Acceptable (problem+json) when it
// writes none of them: the follower then loads from ClickHouse at once.
// An ask that names no format (a follower of a release before this
// exchange, or curl) reads replica.LegacyFormat. A delta is served only
// in the format of the leader's newest state, to a follower that reads it.

const (
	// stateMedia is the media type a follower names its formats by.
	stateMedia = "application/vnd.edge.state"
	// FormatHeader carries the format of the state or delta answered.
	FormatHeader = "Edge-State-Format"
)

// acceptHeader returns the Accept of a follower that reads formats.
func acceptHeader(formats []uint64) string {
	parts := make([]string, len(formats))
	for i, f := range formats {
		parts[i] = stateMedia + "; v=" + strconv.FormatUint(f, 10)
	}
	return strings.Join(parts, ", ")
}

// acceptedFormats returns the formats an ask's Accept names, in its
// order; an ask that names none reads replica.LegacyFormat (named false).
// A range "v=N" after one of the state's media type, as in `…state; v=3,
// v=4`, names N too.
func acceptedFormats(h http.Header) (formats []uint64, named bool) {
	inState := false
	for _, v := range h.Values("Accept") {
		for _, rng := range strings.Split(v, ",") {
			params := strings.Split(rng, ";")
			typ := strings.ToLower(strings.TrimSpace(params[0]))
			switch {
			case typ == stateMedia:
				inState, named = true, true
				params = params[1:]
			case inState && strings.HasPrefix(typ, "v="):
			default:
				inState = false
				continue
			}
			for _, p := range params {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if !strings.EqualFold(strings.TrimSpace(k), "v") {
					continue
				}
				if n, err := strconv.ParseUint(strings.Trim(strings.TrimSpace(val), `"`), 10, 64); err == nil && !slices.Contains(formats, n) {
					formats = append(formats, n)
				}
			}
		}
	}
	if !named {
		return []uint64{replica.LegacyFormat}, false
	}
	return formats, true
}

// negotiate returns the format to answer an ask in, of those the leader
// writes (writes, newest first), or false after answering 406.
func negotiate(w http.ResponseWriter, r *http.Request, writes []uint64) (uint64, bool) {
	w.Header().Add("Vary", "Accept")
	reads, _ := acceptedFormats(r.Header)
	for _, f := range writes {
		if slices.Contains(reads, f) {
			return f, true
		}
	}
	problem(w, http.StatusNotAcceptable, "No state in a format the edge reads",
		fmt.Sprintf("this leader writes states of format %v and the asking edge reads %v: that edge loads from ClickHouse; run releases that share a format (docs/operations.md, Upgrades)", writes, reads), 0)
	return 0, false
}

// unreadable is a state of the leader this follower could not read: it
// is not taken again while the leader serves it.
type unreadable struct {
	addr, etag string
	gen        uint64
	why        string
}

// remember records that the state etag (of generation gen) at addr could
// not be read, saying why once.
func (f *Follower) remember(u unreadable) {
	f.mu.Lock()
	old := f.unread
	f.unread = &u
	f.mu.Unlock()
	f.cfg.Metrics.refuse("format")
	if old == nil || old.addr != u.addr || old.why != u.why {
		f.log().Warn("fleet: the leader's state is of a format this edge does not read: it loads from ClickHouse, and takes the leader's states again once they are of a format it reads",
			"leader", u.addr, "generation", u.gen, "why", u.why, "reads", fmt.Sprint(replica.Formats))
	}
}

// unreadableAt returns the state of the leader at addr this follower
// could not read, or nil.
func (f *Follower) unreadableAt(addr string) *unreadable {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unread != nil && f.unread.addr != addr {
		f.unread = nil
	}
	return f.unread
}

// readable records that the leader's state could be read.
func (f *Follower) readable() {
	f.mu.Lock()
	f.unread = nil
	f.mu.Unlock()
}

// stillUnreadable returns an error wrapping follow.ErrNoSource when the
// leader at addr still serves the state this follower could not read (a
// 304 to its ETag), so that it is not taken again; nil when there is
// none or the leader has a newer one.
func (f *Follower) stillUnreadable(ctx context.Context, addr string) error {
	u := f.unreadableAt(addr)
	if u == nil || u.etag == "" {
		return nil
	}
	resp, err := f.get(ctx, addr, StatePath, http.Header{"Accept": {acceptHeader(replica.Formats)}, "If-None-Match": {u.etag}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return fmt.Errorf("fleet: leader at %s still serves generation %d, which this edge does not read (%s): %w", addr, u.gen, u.why, follow.ErrNoSource)
	}
	return nil
}
