// Package leader elects one edge of a fleet through ZooKeeper, for the
// jobs a fleet needs done once (the ranks of histories, the usage
// retention): each edge holds an ephemeral sequential node under one
// path, and the edge with the lowest leads. Leadership is a lease on the
// edge's ZooKeeper session: an edge that loses its connection stops
// leading at once, and its node goes when the session expires, so that
// the next edge leads; no two edges lead while ZooKeeper can tell.
package leader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
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
	// serves its fleet's state while it leads (package cron/fleet); the
	// other edges read it from its node (LeaderFleet).
	Fleet string
	// SessionTimeout is how long after losing this edge ZooKeeper ends
	// its session, and so its leadership (DefaultSessionTimeout when 0).
	SessionTimeout time.Duration
	// OnLead, when set, is called (in a goroutine of its own) each time
	// this edge comes to lead: a job skipped while another edge led can
	// run at once instead of at its next time.
	OnLead func()
}

// DefaultSessionTimeout is Config.SessionTimeout's default.
const DefaultSessionTimeout = 10 * time.Second

// Elector takes part in an election until Close.
type Elector struct {
	cfg     Config
	log     *slog.Logger
	conn    *zk.Conn
	events  <-chan zk.Event
	leading atomic.Bool
	leader  atomic.Pointer[member] // the leading node's, nil when unknown
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
	conn, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout, zk.WithLogger(zkLogger{log}))
	if err != nil {
		return nil, fmt.Errorf("leader: connect to ZooKeeper: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Elector{cfg: cfg, log: log, conn: conn, events: events, cancel: cancel, done: make(chan struct{})}
	go e.run(ctx)
	return e, nil
}

// Leading reports whether this edge leads now.
func (e *Elector) Leading() bool { return e.leading.Load() }

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

// member is what an edge's node holds: JSON, so that edges of a later
// release can add to it.
type member struct {
	ID    string `json:"id"`
	Fleet string `json:"fleet,omitempty"`
}

// parseMember reads a node's data; a node of an earlier release holds
// the bare ID.
func parseMember(data []byte) *member {
	var m member
	if json.Unmarshal(data, &m) != nil || m.ID == "" {
		return &member{ID: string(data)}
	}
	return &m
}

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

// run follows the election until ctx ends: it makes this edge's node
// when the session has none, and decides who leads whenever the nodes or
// the connection change.
func (e *Elector) run(ctx context.Context) {
	defer close(e.done)
	var (
		node    string // this edge's node, "" when it has none in this session
		session int64
	)
	defer func() {
		if node != "" {
			e.conn.Delete(node, -1)
		}
	}()
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		var watch <-chan zk.Event
		if e.conn.State() != zk.StateHasSession {
			e.lose("no ZooKeeper session")
		} else {
			if id := e.conn.SessionID(); id != session {
				node, session = "", id // a new session: the old node went with the old one
			}
			var err error
			if node == "" {
				node, err = e.enter()
			}
			if err == nil {
				watch, err = e.decide(node)
			}
			switch {
			case errors.Is(err, errGone):
				node = "" // our node is gone: enter again
				continue
			case err != nil:
				e.lose(err.Error())
				retry.Reset(time.Second)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-e.events: // a connection or session change
		case <-watch: // the node before ours, or the leader, changed
		case <-retry.C:
		}
	}
}

// enter creates this edge's node (and the path's parents).
func (e *Elector) enter() (string, error) {
	parts := strings.Split(strings.TrimPrefix(e.cfg.Path, "/"), "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		if _, err := e.conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return "", fmt.Errorf("create %s: %w", p, err)
		}
	}
	data, err := json.Marshal(member{ID: e.cfg.ID, Fleet: e.cfg.Fleet})
	if err != nil {
		return "", fmt.Errorf("enter the election: %w", err)
	}
	node, err := e.conn.CreateProtectedEphemeralSequential(e.cfg.Path+"/n_", data, zk.WorldACL(zk.PermAll))
	if err != nil {
		return "", fmt.Errorf("enter the election: %w", err)
	}
	return node, nil
}

// errGone says this edge's node is gone from the election.
var errGone = errors.New("this edge's node is gone")

// decide reads the election's nodes, and watches them: this edge leads
// when its node is the lowest. Every edge watches the whole list, not
// just the node before its own, so that each knows who leads (Leader);
// a fleet is tens of edges, so a change wakes tens of watchers.
func (e *Elector) decide(node string) (<-chan zk.Event, error) {
	children, _, watch, err := e.conn.ChildrenW(e.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("read the election: %w", err)
	}
	slices.SortFunc(children, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
	mine := slices.Index(children, node[strings.LastIndex(node, "/")+1:])
	if mine < 0 {
		e.lose("this edge's node is gone")
		return nil, errGone
	}
	if data, _, err := e.conn.Get(e.cfg.Path + "/" + children[0]); err == nil {
		e.leader.Store(parseMember(data))
	}
	if mine == 0 {
		if !e.leading.Swap(true) {
			e.log.Info("leading the fleet's once-jobs", "node", node)
			if e.cfg.OnLead != nil {
				go e.cfg.OnLead()
			}
		}
	} else {
		e.lose("another edge leads")
	}
	return watch, nil
}

// lose ends this edge's leadership, saying why once.
func (e *Elector) lose(why string) {
	if e.leading.Swap(false) {
		e.log.Warn("no longer leading the fleet's once-jobs", "why", why)
	}
}

// seq returns a node name's sequence number (the 10 digits that
// ZooKeeper appends): the protected prefix before it differs by edge.
func seq(name string) string {
	if len(name) < 10 {
		return name
	}
	return name[len(name)-10:]
}

// zkLogger sends the ZooKeeper client's lines to slog, at debug level:
// it logs every reconnection attempt.
type zkLogger struct{ log *slog.Logger }

func (l zkLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "from", "zookeeper")
}
