package exchange

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Watch tells this edge of its leader's new states as they come, so that
// it takes each within a moment of the leader's publish, not at its next
// scheduled ask (EDGE_FOLLOW_EVERY). It asks the leader to answer once
// its newest state is no longer the one have names (a long poll: HEAD
// with If-None-Match and Prefer: wait, RFC 7240, which the leader holds
// until then or for the wait), and calls changed when it is; then it asks
// again. At most one ask a second: a leader of an earlier release, which
// answers at once, is asked as often as that. Meanwhile it probes the
// leader each second with a short wait (probe), for Status: a long poll
// held says nothing of whether the leader still answers. It returns when
// ctx ends.
func (f *Follower) Watch(ctx context.Context, have func() string, changed func()) {
	go f.probe(ctx)
	wait := max(f.cfg.Idle-5*time.Second, time.Second)
	for ctx.Err() == nil {
		start := time.Now()
		if f.watchOnce(ctx, have(), wait) {
			changed()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second - time.Since(start)):
		}
	}
}

// watchOnce makes one long poll from the state tag names, and reports
// whether the leader has a newer one.
func (f *Follower) watchOnce(ctx context.Context, tag string, wait time.Duration) bool {
	if tag == "" || f.leading() {
		return false // no state of the leader's held, or this edge leads: the jobs ask
	}
	addr, err := f.leaderAddr()
	if err != nil {
		return false
	}
	// Given up once the election names another leader: one cut off
	// without a word would hold it for Config.Idle, and the new one's
	// states would wait for the follow job.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		t := time.NewTicker(probeEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if strings.TrimSuffix(f.leader(), "/") != addr {
					cancel()
					return
				}
			}
		}
	}()
	// A-IM as the follow job asks: a leader that holds a delta from tag
	// answers as soon as it is written, before the whole state is.
	resp, err := f.ask(ctx, http.MethodHead, addr, StatePath, http.Header{
		"If-None-Match": {tag}, "A-IM": {deltaIM}, "Prefer": {fmt.Sprintf("wait=%d", int(wait/time.Second))}})
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
