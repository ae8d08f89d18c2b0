package exchange

import (
	"encoding/json"
	"io"
	"net/http"
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

// leaderWorked records that the edge the election names leads.
func (f *Follower) leaderWorked() {
	f.mu.Lock()
	was := f.lost
	f.lost = time.Time{}
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
