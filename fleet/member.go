// Package fleet is an edge's membership of its fleet, and the one owner
// of everything the edges of a fleet do together: the election of the
// edge that runs the fleet's once-jobs and builds its state, with its
// lease and epoch (package leader), the trust the edges derive from the
// fleet's token (package trust), and the exchange of the state the leader
// built with the others (package exchange). It hands the rest of the edge
// one value, a Member: whether this edge leads and in which epoch, the
// state builder's source and publish hook, its status and its metrics,
// and the address the fleet's other exchanges (the usage relay, the
// account attempts) reach the leader at. A nil Member is an edge without
// a fleet: it does everything itself.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/builder"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/fleet/exchange"
	"github.com/edge-stats/edge/fleet/leader"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// Config is an edge's place in its fleet.
type Config struct {
	ZooKeeper   string        // the fleet's ZooKeeper servers, host:port comma-separated ("": no fleet)
	Path        string        // the election's node, which names the fleet
	Auth        string        // this edge's ZooKeeper digest credentials, user:password ("": none)
	Listen      string        // the private address this edge serves its state on while it leads ("": every edge loads from ClickHouse)
	Advertise   string        // the URL the other edges reach Listen at ("": from Listen, Advertised)
	FollowEvery time.Duration // how often a follower asks the leader for a newer state
	Exchange    exchange.Config
}

// State is the state builder a member feeds and follows for.
type State struct {
	Published *views.Published[served.State]
	Builder   *builder.Builder
	Exports   *cron.Exports // nil: this edge builds no exports
	Jobs      *cron.Runner  // runs the follow job and, on taking the lead, the once-jobs (cron.Job.OnLead)
}

// Member is an edge's membership of its fleet (the package comment).
type Member struct {
	cfg        Config
	log        *slog.Logger
	elector    atomic.Pointer[leader.Elector]
	pub        *exchange.Publisher
	follower   *exchange.Follower
	leaderHTTP *http.Client
	collectors []prometheus.Collector
}

// New returns the membership cfg describes, not yet joined (Join); nil
// when cfg names no ZooKeeper: an edge without a fleet.
func New(cfg Config, log *slog.Logger) *Member {
	if cfg.ZooKeeper == "" {
		return nil
	}
	m := &Member{cfg: cfg, log: log}
	m.cfg.Exchange.Metrics = exchange.NewMetrics()
	m.collectors = append(m.cfg.Exchange.Metrics.Collectors(), prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "edge_fleet_election_ignored_nodes_total",
		Help: "Nodes under the fleet's election path that took no part (not made by an edge's recipe, not owned by the session they name, or not signed with the fleet's key), each counted once.",
	}, func() float64 {
		if e := m.elector.Load(); e != nil {
			return float64(e.Ignored())
		}
		return 0
	}))
	return m
}

// Leading returns whether this edge leads its fleet now, or nil for an
// edge without a fleet (which runs every job itself).
func (m *Member) Leading() func() bool {
	if m == nil {
		return nil
	}
	return func() bool { e := m.elector.Load(); return e != nil && e.Leading() }
}

// Epoch returns the epoch of this edge's lead (0 while it does not
// lead), or nil for an edge without a fleet.
func (m *Member) Epoch() func() int64 {
	if m == nil {
		return nil
	}
	return func() int64 {
		if e := m.elector.Load(); e != nil {
			return e.Epoch()
		}
		return 0
	}
}

// ElectionWait is how long Join waits for the first entry in the
// election before it goes on (ZooKeeper away at start is waited for in
// the background).
const ElectionWait = 10 * time.Second

// Join enters this edge, listening for people on addr, in its fleet:
// with a fleet address it serves the state st publishes while it leads
// and makes st follow the leader's state while another edge leads; it
// enters the election, and on taking the lead runs the once-jobs and
// offers the state it has. It returns once this edge is in the election,
// or after ElectionWait; an error when ZooKeeper refuses it the election
// (leader.ErrRefused: it would serve outside its fleet's election for
// ever). A nil Member joins nothing.
func (m *Member) Join(ctx context.Context, addr string, st State) error {
	if m == nil {
		return nil
	}
	var advertise string
	if m.cfg.Listen != "" {
		var err error
		if advertise, err = m.exchange(ctx, st); err != nil {
			return err
		}
	}
	host, _ := os.Hostname()
	e, err := leader.Start(leader.Config{Servers: analytics.Addrs(m.cfg.ZooKeeper), Path: m.cfg.Path, ID: host + " " + addr,
		Fleet: advertise, OnLead: func() { m.onLead(st) }, Keys: m.cfg.Exchange.Keys, Auth: m.cfg.Auth}, m.log)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, ElectionWait)
	defer cancel()
	switch err := e.Entered(wctx); {
	case errors.Is(err, leader.ErrRefused):
		e.Close()
		return fmt.Errorf("fleet election: %w", err)
	case err != nil && ctx.Err() == nil:
		m.log.Warn("fleet election: not entered yet (ZooKeeper out of reach?); trying in the background", "waited", ElectionWait)
	}
	m.elector.Store(e)
	return nil
}

// onLead is what this edge does on taking the lead: the fleet's
// once-jobs at once, and its state offered to the others.
func (m *Member) onLead(st State) {
	for _, err := range st.Jobs.RunOnLead() {
		m.log.Warn("once-job on taking the lead", "err", err)
	}
	if s := st.Published.Load(); m.pub != nil && s != nil && s.Figures != nil {
		m.pub.Offer(s.Replica, s.Figures.Summary().Snapshots)
	}
}

// exchange listens on the fleet address, serves the state st publishes
// while this edge leads (package exchange), and makes st follow the
// leader's state while another edge leads. It returns the URL the other
// edges reach this edge at.
func (m *Member) exchange(ctx context.Context, st State) (string, error) {
	pub, err := exchange.NewPublisher(m.cfg.Exchange, m.Leading(), m.log)
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return "", fmt.Errorf("--fleet-listen %s: %w", m.cfg.Listen, err)
	}
	advertise := Advertised(m.cfg.Advertise, ln.Addr().String(), m.cfg.Exchange.Keys != nil)
	if err := exchange.CheckAddress(advertise, m.cfg.Exchange.Keys); err != nil {
		ln.Close()
		return "", fmt.Errorf("--fleet-advertise: the other edges would not take this edge's state: %w", err)
	}
	go pub.Run(ctx)
	go func() {
		if err := pub.Serve(ctx, ln); err != nil {
			m.log.Error("fleet address", "err", err)
		}
	}()
	fcfg := m.cfg.Exchange
	fcfg.Log = m.log
	fcfg.Recheck = func() {
		if e := m.elector.Load(); e != nil {
			e.Recheck()
		}
	}
	fcfg.LeaderEpoch = func(addr string) int64 {
		if e := m.elector.Load(); e != nil {
			return e.LeaderEpoch(addr)
		}
		return 0
	}
	fcfg.LeaderPin = func(hostport string) (string, bool) {
		if e := m.elector.Load(); e != nil {
			return e.LeaderPin(hostport)
		}
		return "", false
	}
	m.pub, m.follower = pub, exchange.NewFollower(fcfg, m.leaderFleet, m.Leading())
	st.Builder.OnPublish(pub.Offer)
	st.Builder.FollowFrom(m.follower)
	if st.Exports != nil {
		// The exports too: the leader builds them, the others copy them.
		pub.ServeExports(st.Exports.Dir(), st.Exports.Days)
		pub.ServeLatest(st.Exports.Latest)
		st.Exports.FollowFrom(m.follower)
	}
	if err := st.Jobs.Add(st.Builder.FollowJob(fmt.Sprintf("@every %s", m.cfg.FollowEvery))); err != nil {
		return "", err
	}
	// A new state of the leader's goes to the state builder within a
	// moment of its publish, not at the next scheduled ask.
	go m.follower.Watch(ctx, st.Builder.FollowedTag, func() {
		if err := st.Builder.FollowNow(ctx); err != nil {
			m.log.Debug("follow after the leader's new state", "err", err)
		}
	})
	m.leaderHTTP = &http.Client{Timeout: 2 * time.Second, Transport: exchange.BoundTransport(m.cfg.Exchange.Keys, fcfg.LeaderPin)}
	m.log.Info("fleet address", "listen", ln.Addr().String(), "advertised", advertise)
	return advertise, nil
}

// leaderFleet is the fleet address of the leader the election names.
func (m *Member) leaderFleet() string {
	if e := m.elector.Load(); e != nil {
		return e.LeaderFleet()
	}
	return ""
}

// Advertised returns the URL the other edges reach a fleet address at:
// advertise, or else http(s):// (https with the fleet's keys) and listen
// (the listener's address), with this host's name when listen names no
// host.
func Advertised(advertise, listen string, keys bool) string {
	if advertise != "" {
		return advertise
	}
	host, port, _ := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host, _ = os.Hostname()
	}
	scheme := "http://"
	if keys {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, port)
}

// Exchanges reports whether this edge exchanges state with its fleet (it
// has a fleet address): the other exchanges with the leader (Leader,
// Handle) exist only then.
func (m *Member) Exchanges() bool { return m != nil && m.pub != nil }

// Leader returns the client that reaches the leader's fleet address,
// holding it to the key its election node names, and the leader's
// address: "" while this edge leads or no leader it may reach is named.
func (m *Member) Leader() (*http.Client, func() string) {
	return m.leaderHTTP, func() string {
		if m.Leading()() {
			return ""
		}
		if addr := m.leaderFleet(); exchange.CheckAddress(addr, m.cfg.Exchange.Keys) == nil {
			return addr
		}
		return ""
	}
}

// Handle serves h on the fleet address for method and path;
// needsToken serves it only to the fleet's edges (their certificates
// checked against the fleet's authority). An edge that does not exchange
// state serves nothing.
func (m *Member) Handle(method, path string, h http.Handler, needsToken bool) {
	if !m.Exchanges() {
		return
	}
	m.pub.HandleMethod(method, path, h, needsToken)
}

// Status returns the fleet's status as this edge sees it (for /readyz),
// or nil for an edge that does not exchange state.
func (m *Member) Status() func() any {
	if !m.Exchanges() {
		return nil
	}
	return func() any { return m.follower.Status() }
}

// Collectors returns the fleet's metrics.
func (m *Member) Collectors() []prometheus.Collector {
	if m == nil {
		return nil
	}
	if !m.Exchanges() {
		return m.collectors
	}
	return append(m.collectors, leaderMetrics(m.follower)...)
}

// Close leaves the election.
func (m *Member) Close() {
	if m == nil {
		return
	}
	if e := m.elector.Load(); e != nil {
		e.Close()
	}
}

// leaderMetrics are the gauges of whether the fleet has a working leader,
// as this edge sees it (exchange.Follower.Status).
func leaderMetrics(f *exchange.Follower) []prometheus.Collector {
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
