package main

import (
	"net/http"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/fleet"
	"github.com/edge-stats/edge/fleet/relay"
)

// electionPath is the ZooKeeper node of the fleet's election: --zk-path,
// or one named by the ClickHouse database. It names the fleet, and salts
// its own keys (--fleet-salt fleet).
func (c *serveConfig) electionPath() string {
	if c.zkPath != "" {
		return c.zkPath
	}
	return "/edge/fleets/" + c.ch.Database
}

// fleetConfig is this edge's place in its fleet, from its flags.
func (c *serveConfig) fleetConfig() fleet.Config {
	return fleet.Config{ZooKeeper: c.zk, Path: c.electionPath(), Auth: c.zkAuth, Listen: c.fleetListen, Advertise: c.fleetAdvertise,
		FollowEvery: c.followEvery, Exchange: c.fleet}
}

// relayed sets src's usage, keys and account attempts to be read from
// the fleet's leader while another edge leads (package relay), from
// ClickHouse otherwise, and serves this edge's own on its fleet address
// for when it leads; the keys' and the attempts' changes are served once
// the server exists (serveRelayed). It does nothing when m exchanges no
// state.
func relayed(m *fleet.Member, src *edge.Sources, syncDB *analytics.Lazy, keysEvery time.Duration, token bool) {
	if !m.Exchanges() {
		return
	}
	httpClient, leaderAddr := m.Leader()
	client := &relay.Client{HTTP: httpClient, Leader: leaderAddr}
	recorder := relay.NewRecorder(usagelog.ClickHouse(syncDB))
	src.Usage = recorder
	m.Handle(http.MethodGet, relay.UsagePath, recorder, true)
	if token {
		src.Usage = relay.NewStore(recorder, client)
	}
	src.KeysGate = relay.NewKeysGate(client, 5*time.Minute, keysEvery)
	if token {
		// The account attempts: claimed from the leader at once, each
		// bounded by the guard's --count-wait, not the client's timeout.
		claimsHTTP := *client.HTTP
		claimsHTTP.Timeout = 0
		src.Claims = &claims.Client{Leader: client.Leader, HTTP: &claimsHTTP}
	}
}

// serveRelayed serves server's keys' and account attempts' changes on
// m's fleet address, for the other edges while this one leads.
func serveRelayed(m *fleet.Member, server *edge.Server) {
	m.Handle(http.MethodGet, relay.KeysPath, relay.KeysHandler(server.KeysVersion), false)
	m.Handle(http.MethodPost, claims.Path, server.ClaimsHandler(), true)
}
