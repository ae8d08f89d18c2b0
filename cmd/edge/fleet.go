package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/cron/fleet"
	"github.com/edge-stats/edge/cron/leader"
	"github.com/edge-stats/edge/edge/limits/relay"
)

// startElection enters this edge in its fleet's election (package
// leader), named by its host name and listening address, with the
// address it serves the fleet's state on when it leads ("" for none).
func startElection(c *serveConfig, addr, fleetAddr string, onLead func(), log *slog.Logger) (*leader.Elector, error) {
	path := c.electionPath()
	host, _ := os.Hostname()
	return leader.Start(leader.Config{Servers: analytics.Addrs(c.zk), Path: path, ID: host + " " + addr, Fleet: fleetAddr, OnLead: onLead,
		Keys: c.fleet.Keys, Auth: c.zkAuth}, log)
}

// electionPath is the ZooKeeper node of the fleet's election: --zk-path,
// or one named by the ClickHouse database. It names the fleet, and salts
// its own keys (--fleet-salt fleet).
func (c *serveConfig) electionPath() string {
	if c.zkPath != "" {
		return c.zkPath
	}
	return "/edge/fleets/" + c.ch.Database
}

// electionWait is how long serve waits for its first entry in the
// election before it goes on (ZooKeeper away at start is waited for in
// the background).
const electionWait = 10 * time.Second

// enteredElection waits for e's first entry in the election: an error
// when ZooKeeper refuses this edge the election (leader.ErrRefused: the
// edge would serve outside its fleet's election for ever), nil once it is
// in or after electionWait.
func enteredElection(ctx context.Context, e *leader.Elector, log *slog.Logger) error {
	wctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	err := e.Entered(wctx)
	switch {
	case errors.Is(err, leader.ErrRefused):
		return fmt.Errorf("fleet election: %w", err)
	case err != nil && ctx.Err() == nil:
		log.Warn("fleet election: not entered yet (ZooKeeper out of reach?); trying in the background", "waited", electionWait)
	}
	return nil
}

// startFleet, when c has a fleet address, listens on it, serves the
// state this edge publishes while it leads (package cron/fleet), and
// makes the views follow the leader's state while another edge leads. It
// returns the publisher, the URL the other edges reach it at, and the
// client that asks the leader for the usage and keys' changes (package
// relay), and the follower; nil, "", nil, nil when c has no fleet
// address (every edge loads from ClickHouse).
func startFleet(ctx context.Context, c *serveConfig, jobs *cron.Runner, built *serveJobs, leading func() bool,
	elector func() *leader.Elector, log *slog.Logger) (*fleet.Publisher, string, *relay.Client, *fleet.Follower, error) {
	if c.fleetListen == "" {
		return nil, "", nil, nil, nil
	}
	pub, err := fleet.NewPublisher(c.fleet, leading, log)
	if err != nil {
		return nil, "", nil, nil, err
	}
	ln, err := net.Listen("tcp", c.fleetListen)
	if err != nil {
		return nil, "", nil, nil, fmt.Errorf("--fleet-listen %s: %w", c.fleetListen, err)
	}
	advertise := fleetAdvertised(c, ln.Addr().String())
	if err := fleet.CheckAddress(advertise, c.fleet.Keys); err != nil {
		ln.Close()
		return nil, "", nil, nil, fmt.Errorf("--fleet-advertise: the other edges would not take this edge's state: %w", err)
	}
	go pub.Run(ctx)
	go func() {
		if err := pub.Serve(ctx, ln); err != nil {
			log.Error("fleet address", "err", err)
		}
	}()
	leaderFleet := func() string {
		if e := elector(); e != nil {
			return e.LeaderFleet()
		}
		return ""
	}
	fcfg := c.fleet
	fcfg.Log = log
	fcfg.Recheck = func() {
		if e := elector(); e != nil {
			e.Recheck()
		}
	}
	fcfg.LeaderEpoch = func(addr string) int64 {
		if e := elector(); e != nil {
			return e.LeaderEpoch(addr)
		}
		return 0
	}
	fcfg.LeaderPin = func(hostport string) (string, bool) {
		if e := elector(); e != nil {
			return e.LeaderPin(hostport)
		}
		return "", false
	}
	follower := fleet.NewFollower(fcfg, leaderFleet, leading)
	built.views.OnPublish(pub.Offer)
	built.views.FollowFrom(follower)
	if built.exports != nil {
		// The exports too: the leader builds them, the others copy them.
		pub.ServeExports(built.exports.Dir(), built.exports.Days)
		built.exports.FollowFrom(follower)
	}
	if err := jobs.Add(built.views.FollowJob(fmt.Sprintf("@every %s", c.followEvery))); err != nil {
		return nil, "", nil, nil, err
	}
	// A new state of the leader's is taken within a moment of its
	// publish, not at the next scheduled ask.
	go follower.Watch(ctx, built.views.FollowedTag, func() {
		if err := jobs.RunNow("follow"); err != nil {
			log.Debug("follow after the leader's new state", "err", err)
		}
	})
	log.Info("fleet address", "listen", ln.Addr().String(), "advertised", advertise)
	client := &relay.Client{HTTP: &http.Client{Timeout: 2 * time.Second, Transport: fleet.BoundTransport(c.fleet.Keys, fcfg.LeaderPin)}, Leader: func() string {
		if leading() {
			return ""
		}
		if addr := leaderFleet(); fleet.CheckAddress(addr, c.fleet.Keys) == nil {
			return addr
		}
		return ""
	}}
	return pub, advertise, client, follower, nil
}

// leaderMetrics are the gauges of whether the fleet has a working leader,
// as this edge sees it (fleet.Follower.Status).
func leaderMetrics(f *fleet.Follower) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_fleet_leader_working",
			Help: "1 while this edge leads or the edge its election names answers as the leader; 0 while none is named, or the one named answers that it does not lead or is out of reach."},
			func() float64 {
				if f.Status().LeaderWorking {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_fleet_no_working_leader_seconds",
			Help: "How long the fleet has had no working leader as this edge sees it (edge_fleet_leader_working 0); 0 while it has one."},
			func() float64 {
				if since := f.Status().NoWorkingLeaderSince; since != nil {
					return time.Since(*since).Seconds()
				}
				return 0
			}),
	}
}
