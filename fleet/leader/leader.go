// Package leader elects one edge of a fleet through ZooKeeper, for the
// jobs a fleet needs done once (the ranks of histories, the usage
// retention): each edge holds an ephemeral sequential node under one
// path, and the edge with the lowest leads. Leadership is a lease on the
// edge's ZooKeeper session: an edge that loses its connection stops
// leading at once, and its node goes when the session expires, so that
// the next edge leads.
//
// The lease is also timed, so that no two edges lead at once even when
// the leader cannot tell it lost its connection (a process paused, a
// network that drops without a word): each time ZooKeeper answers the
// leader, it may lead for half the session timeout ZooKeeper granted
// from the moment it asked, and it asks every sixth of it. ZooKeeper ends
// a session a whole timeout after it last heard from it, so the leader's
// lease has ended at least half a timeout before another edge can be
// elected. Each leadership has an epoch (Epoch), larger for each later
// leader, for the work a leader writes to fence an earlier one's late
// writes with (the webhooks' cursors).
//
// ZooKeeper may be reachable by others than the fleet, so a node takes
// part only when the edge's own recipe made it: its name is that of a
// protected ephemeral sequential node (_c_<32 hex>-n_<10 digits>), it is
// ephemeral and owned by the session its data names, and, with the
// fleet's keys (package trust), its data is signed with the fleet's
// member key. Anything else under the path is ignored and logged. With
// ZooKeeper credentials (Config.Auth) the path and the nodes are also
// closed to every other ZooKeeper user by a digest ACL.
package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/edge-stats/edge/fleet/trust"
)

// Config says where the election takes place.
type Config struct {
	Servers []string // ZooKeeper host:port
	// Path is the election's node; every edge of one fleet (one database)
	// uses the same. Its parents are created when missing.
	Path string
	// ID names this edge in its node (its host name and address, say),
	// for Leader and logs.
	ID string
	// Fleet, when set, is the address (http://host:port) where this edge
	// serves its fleet's state while it leads (package fleet/exchange); the
	// other edges read it from its node (LeaderFleet).
	Fleet string
	// SessionTimeout is how long after losing this edge ZooKeeper ends
	// its session, and so its leadership (DefaultSessionTimeout when 0).
	SessionTimeout time.Duration
	// OnLead, when set, is called (in a goroutine of its own) each time
	// this edge comes to lead: a job skipped while another edge led can
	// run at once instead of at its next time.
	OnLead func()
	// Keys, when set, sign this edge's node and check every other's: a
	// node not signed with the fleet's member key takes no part.
	Keys *trust.Keys
	// Reread is how often the election is read again even when no watch
	// fired (DefaultReread when 0): a watch is one-shot, and a session
	// that loses READ on a node is told nothing of its changes.
	Reread time.Duration
	// Auth, when set ("user:password"), is this edge's ZooKeeper digest
	// identity: the election's path and nodes are made readable and
	// writable by it alone (an existing path's ACL is set to it).
	Auth string
}

// DefaultSessionTimeout is Config.SessionTimeout's default.
const DefaultSessionTimeout = 10 * time.Second

// DefaultReread is Config.Reread's default.
const DefaultReread = 5 * time.Second

// Elector takes part in an election until Close.
type Elector struct {
	cfg     Config
	log     *slog.Logger
	conn    *zk.Conn
	events  <-chan zk.Event
	leading atomic.Bool
	until   atomic.Int64          // the lease's end, unix nanoseconds
	epoch   atomic.Int64          // Epoch's, while this edge leads
	granted atomic.Int64          // the session timeout ZooKeeper granted, ms (0: not yet known)
	lapse   atomic.Bool           // the lease lapsed and that was logged
	entered chan struct{}         // closed once this edge's node is first made
	refused chan struct{}         // closed once ZooKeeper first refuses this edge the election (ErrRefused)
	refusal atomic.Pointer[error] // that refusal, nil while none
	onceIn  sync.Once
	onceOut sync.Once
	leader  atomic.Pointer[member] // the leading node's, nil when unknown
	acl     []zk.ACL               // of the nodes this edge creates
	ignored atomic.Int64           // nodes ignored (Ignored)
	seen    map[string]bool        // the nodes ignored and logged, by name (run's goroutine only)
	known   map[string]*member     // the members read, by node name (run's goroutine only)
	recheck chan struct{}          // Recheck's
	woken   atomic.Int64           // Woken's
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// Start connects to ZooKeeper and enters the election; the elector then
// follows it in the background. It fails only when cfg is unusable:
// ZooKeeper away at start is waited for in the background.
func Start(cfg Config, log *slog.Logger) (*Elector, error) {
	if len(cfg.Servers) == 0 || !strings.HasPrefix(cfg.Path, "/") || strings.HasSuffix(cfg.Path, "/") {
		return nil, fmt.Errorf("leader: want ZooKeeper servers and an absolute node path, got %v and %q", cfg.Servers, cfg.Path)
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.Reread <= 0 {
		cfg.Reread = DefaultReread
	}
	acl := zk.WorldACL(zk.PermAll)
	if cfg.Auth != "" {
		user, pass, ok := strings.Cut(cfg.Auth, ":")
		if !ok || user == "" || pass == "" {
			return nil, errors.New("leader: ZooKeeper credentials: want user:password")
		}
		acl = zk.DigestACL(zk.PermAll, user, pass)
	}
	e := &Elector{cfg: cfg, log: log, acl: acl, seen: map[string]bool{}, known: map[string]*member{}, done: make(chan struct{}), recheck: make(chan struct{}, 1),
		entered: make(chan struct{}), refused: make(chan struct{})}
	conn, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout, zk.WithLogger(zkLogger{log, &e.granted}))
	if err != nil {
		return nil, fmt.Errorf("leader: connect to ZooKeeper: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.conn, e.events, e.cancel = conn, events, cancel
	go e.run(ctx)
	return e, nil
}

// ErrRefused says ZooKeeper refuses this edge a part in the election:
// the election's path (or a parent) exists with an ACL that does not give
// this edge's identity the permissions it needs. It lasts until an
// operator changes the path; the edge keeps trying meanwhile.
var ErrRefused = errors.New("ZooKeeper refuses this edge the election")

// Entered waits until this edge's node is first made in the election
// (nil), ZooKeeper refuses it the election (an error wrapping
// ErrRefused, which says what to change), or ctx ends (ctx's error): an
// edge may refuse to start rather than serve outside its fleet's
// election.
func (e *Elector) Entered(ctx context.Context) error {
	select {
	case <-e.entered:
		return nil
	case <-e.refused:
		return *e.refusal.Load()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leading reports whether this edge leads now: it won the election and
// its lease has not run out.
func (e *Elector) Leading() bool {
	return e.leading.Load() && time.Now().UnixNano() < e.until.Load()
}

// Epoch returns the epoch of this edge's leadership while it leads, else
// 0: one more than the sequence number of its node, which ZooKeeper makes
// larger for each node of the election, so that a leader elected after
// another has a larger epoch.
func (e *Elector) Epoch() int64 {
	if !e.Leading() {
		return 0
	}
	return e.epoch.Load()
}

// LeaseEnd returns when this edge's lease ends if ZooKeeper does not
// answer it again; the zero time when it does not lead.
func (e *Elector) LeaseEnd() time.Time {
	if !e.leading.Load() {
		return time.Time{}
	}
	return time.Unix(0, e.until.Load())
}

// lease returns how long a leader may lead from a moment ZooKeeper
// answered a request it sent: half the session timeout ZooKeeper granted
// (which may be shorter than the one asked for), 0 while that is not
// known.
func (e *Elector) lease() time.Duration {
	return time.Duration(e.granted.Load()) * time.Millisecond / 2
}

// beat returns how often a leader renews its lease: a third of it, so
// that two answers may go missing before it runs out (a sixth of the
// session timeout asked for while the grant is not known).
func (e *Elector) beat() time.Duration {
	if l := e.lease(); l > 0 {
		return l / 3
	}
	return e.cfg.SessionTimeout / 6
}

// renew extends the lease from sent, when this edge's node is still
// there: ZooKeeper answered a request sent then, so the session had not
// ended.
func (e *Elector) renew(node string, sent time.Time) error {
	ok, _, err := e.conn.Exists(node)
	switch {
	case err != nil:
		return err // the lease runs out unless a later request is answered
	case !ok:
		e.lose("this edge's node is gone")
		return errGone
	}
	e.until.Store(sent.Add(e.lease()).UnixNano())
	e.lapse.Store(false)
	return nil
}

// lapsed logs, once a lapse, that this edge won the lead but its lease
// ran out: ZooKeeper did not answer its renewals in time, so it answers
// as a follower until an answer comes.
func (e *Elector) lapsed() {
	if time.Now().UnixNano() >= e.until.Load() && !e.lapse.Swap(true) {
		e.log.Warn("the lead's lease lapsed: ZooKeeper did not answer this edge's renewals in time; it does not lead until one is answered",
			"path", e.cfg.Path, "lease", e.lease())
	}
}

// Leader returns the ID of the edge that leads, as this edge last saw
// it; "" when it does not know.
func (e *Elector) Leader() string {
	if m := e.leader.Load(); m != nil {
		return m.ID
	}
	return ""
}

// LeaderFleet returns the fleet address of the edge that leads, as this
// edge last saw it (Config.Fleet); "" when it does not know or the leader
// has none.
func (e *Elector) LeaderFleet() string {
	if m := e.leader.Load(); m != nil {
		return m.Fleet
	}
	return ""
}

// LeaderEpoch returns the epoch of the leader this edge last saw
// (Epoch's, as that edge has it) when its fleet address is addr; 0 when
// another edge's address, or none is known: a follower orders the states
// it takes by (epoch, generation).
func (e *Elector) LeaderEpoch(addr string) int64 {
	if m := e.leader.Load(); m != nil && m.Fleet != "" && strings.TrimSuffix(m.Fleet, "/") == strings.TrimSuffix(addr, "/") {
		return m.epoch
	}
	return 0
}

// LeaderPin returns the pin of the certificate of the leader this edge
// last saw (trust.Keys.Pin) when its fleet address is at hostport
// (host:port): "" when its node names none (an earlier release's edge);
// elected is false when the leader this edge knows is at another address,
// or none is known.
func (e *Elector) LeaderPin(hostport string) (pin string, elected bool) {
	m := e.leader.Load()
	if m == nil || m.Fleet == "" {
		return "", false
	}
	if !sameHostPort(m.Fleet, hostport) {
		return "", false
	}
	return m.Pin, true
}

// sameHostPort reports whether the URL addr is at hostport, as an HTTP
// client dials it (the scheme's port when it names none).
func sameHostPort(addr, hostport string) bool {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host, p, err := net.SplitHostPort(hostport)
	return err == nil && p == port && strings.EqualFold(host, u.Hostname())
}

// Recheck asks for the election to be read again now: a follower calls
// it when the edge the election names answers that it does not lead,
// since a cached leader may be stale (a watch lost with READ on the path).
// It does not wait.
func (e *Elector) Recheck() {
	select {
	case e.recheck <- struct{}{}:
	default:
	}
}

// Woken returns how many times a watch woke this edge: each edge watches
// one node, so a change of the election wakes one edge.
func (e *Elector) Woken() int64 { return e.woken.Load() }

// Ignored returns how many nodes under the election's path this edge
// ignored, each counted once.
func (e *Elector) Ignored() int64 { return e.ignored.Load() }

// Close leaves the election: the node is deleted, so that the next edge
// leads at once rather than after the session's timeout.
func (e *Elector) Close() error {
	e.once.Do(func() {
		e.cancel()
		<-e.done
		e.leading.Store(false)
		e.conn.Close()
	})
	return nil
}
