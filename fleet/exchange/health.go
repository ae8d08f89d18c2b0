package exchange

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Status is what an edge knows of its fleet's leader, for /readyz.
type Status struct {
	// Leading says whether this edge leads.
	Leading bool `json:"leading"`
	// Leader is the fleet address of the edge the election names, as
	// this edge last read it ("" when none is known).
	Leader string `json:"leader,omitempty"`
	// LeaderWorking is false while the fleet has no working leader as
	// this edge sees it: no leader named, or the one named answered that
	// it does not lead, or could not be reached, at this edge's last ask.
	// A follower probes its leader each second (probeEvery) and gives it
	// probeWait to answer, so a leader cut off without a word is said
	// not to work within a few seconds; an ask older than the leader's
	// last answer that fails (a long poll held through a cut) does not
	// count.
	LeaderWorking bool `json:"leaderWorking"`
	// NoWorkingLeaderSince is since when LeaderWorking has been false
	// (nil while it is true).
	NoWorkingLeaderSince *time.Time `json:"noWorkingLeaderSince,omitempty"`
}

// Status returns what this edge knows of its fleet's leader.
func (f *Follower) Status() Status {
	if f.leading() {
		return Status{Leading: true, LeaderWorking: true}
	}
	s := Status{Leader: f.leader()}
	f.mu.Lock()
	defer f.mu.Unlock()
	since := f.lost
	if s.Leader == "" && !f.alone.IsZero() && (since.IsZero() || f.alone.Before(since)) {
		since = f.alone
	}
	s.LeaderWorking = s.Leader != "" && since.IsZero()
	if !s.LeaderWorking {
		if since.IsZero() {
			since = time.Now() // none named, and none asked for yet
		}
		s.NoWorkingLeaderSince = &since
	}
	return s
}

// leaderFailed records that the edge the election names answered that it
// does not lead, or could not be reached, and asks for the election to
// be read again (Config.Recheck): the name may be stale.
func (f *Follower) leaderFailed(addr, why string) {
	f.mu.Lock()
	first := f.lost.IsZero()
	if first {
		f.lost = time.Now()
	}
	f.mu.Unlock()
	if first {
		f.log().Warn("fleet: no working leader: the election is read again", "leader", addr, "why", why)
	}
	if f.cfg.Recheck != nil {
		f.cfg.Recheck()
	}
}

// leaderWorked records that the edge the election names, at addr,
// answered as the leader.
func (f *Follower) leaderWorked(addr string) {
	f.mu.Lock()
	was := f.lost
	f.lost = time.Time{}
	f.heard, f.heardBy = time.Now(), addr
	f.mu.Unlock()
	if !was.IsZero() {
		f.log().Info("fleet: a working leader again", "after", time.Since(was).Round(time.Millisecond))
	}
}

// notLeader reports whether a 503 says its edge does not lead (the
// problem's title; its body is read, up to 4 KiB).
func notLeader(resp *http.Response) bool {
	var p struct{ Title string }
	json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&p)
	return p.Title == notLeaderTitle
}

// notLeaderTitle is the title of the problem an edge answers when it
// does not lead.
const notLeaderTitle = "Not the leader"

// heardSince reports whether the leader at addr answered after asked:
// a failure of an ask sent then is older than what the follower knows.
func (f *Follower) heardSince(addr string, asked time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.heardBy == addr && f.heard.After(asked)
}

// How often a follower probes its leader (GET LeaderPath), and how long
// it waits for each answer: the long poll of Watch and a state's
// download may be held for Config.Idle, so they cannot tell a leader
// that stopped answering from one that has nothing new to say.
const (
	probeEvery = time.Second
	probeWait  = 2 * time.Second
)

// probe asks the leader the election names, every probeEvery until ctx
// ends, whether it leads, and records what it answers (or that it did
// not within probeWait) for Status.
func (f *Follower) probe(ctx context.Context) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.probeOnce(ctx)
		}
	}
}

func (f *Follower) probeOnce(ctx context.Context) {
	if f.leading() {
		return
	}
	addr := f.leader()
	if addr == "" || CheckAddress(addr, f.cfg.Keys) != nil {
		return // none to ask: Status says so; leaderAddr logs and counts a bad address
	}
	addr = strings.TrimSuffix(addr, "/")
	pctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, addr+LeaderPath, nil)
	if err != nil {
		return
	}
	asked := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() == nil && !f.heardSince(addr, asked) {
			f.leaderFailed(addr, fmt.Sprintf("out of reach: no answer to its probe within %v (%v)", probeWait, err))
		}
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable && notLeader(resp):
		f.leaderFailed(addr, "it answers that it does not lead")
	case resp.StatusCode == http.StatusNotFound:
		// An edge of the release before, which serves no LeaderPath and
		// answers so whether it leads or not: its status comes from the
		// other asks, as in that release.
	default:
		f.leaderWorked(addr)
	}
}
