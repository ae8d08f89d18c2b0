package leader

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-zookeeper/zk"
)

// member is what an edge's node holds: JSON, so that edges of a later
// release can add to it.
type member struct {
	ID    string `json:"id"`
	Fleet string `json:"fleet,omitempty"`
	// Session is the ZooKeeper session that owns the node, in hex: a node
	// copied into another session's is not the edge's.
	Session string `json:"session"`
	// Sig is the fleet's signature of the fields above
	// (trust.Keys.SignMember), "" without keys.
	Sig string `json:"sig,omitempty"`
	// Pin is the pin of the edge's certificate (trust.Keys.Pin), and
	// PinSig the fleet's signature of it with the fields above: a
	// follower dials the leader's address and holds what answers to that
	// key. Fields of their own, so that an earlier release, which checks
	// Sig over its fields and ignores the rest, still reads the node; a
	// node without them (an earlier release's) binds nothing.
	Pin    string `json:"pin,omitempty"`
	PinSig string `json:"pinSig,omitempty"`
	// epoch is the leadership's epoch when this member leads (its node's
	// sequence number and one), as decide found it; not in the node.
	epoch int64
}

// fields are what a member's signature covers.
func (m *member) fields(path string) []string {
	return []string{"election", path, m.Session, m.ID, m.Fleet}
}

// pinFields are what a member's PinSig covers.
func (m *member) pinFields(path string) []string {
	return []string{"election pin", path, m.Session, m.ID, m.Fleet, m.Pin}
}

// nodeName is the name of a node the election's recipe makes
// (CreateProtectedEphemeralSequential with the prefix n_).
var nodeName = regexp.MustCompile(`^_c_[0-9a-f]{32}-n_([0-9]{10})$`)

// check reads a node's data and tells whether it takes part: "" when it
// does, else why not.
func (e *Elector) check(data []byte, stat *zk.Stat) (*member, string) {
	var m member
	switch {
	case json.Unmarshal(data, &m) != nil || m.ID == "":
		return nil, "its data is not an edge's"
	case stat == nil || stat.EphemeralOwner == 0:
		return nil, "it is not ephemeral"
	case m.Session != strconv.FormatInt(stat.EphemeralOwner, 16):
		return nil, "it is not owned by the session it names"
	case e.cfg.Keys != nil && !e.cfg.Keys.VerifyMember(m.Sig, m.fields(e.cfg.Path)...):
		return nil, "it is not signed with the fleet's key"
	case e.cfg.Keys != nil && (m.Pin != "" || m.PinSig != "") && !e.cfg.Keys.VerifyMember(m.PinSig, m.pinFields(e.cfg.Path)...):
		return nil, "its certificate's pin is not signed with the fleet's key"
	}
	return &m, ""
}

// ignore logs a node that takes no part, once.
func (e *Elector) ignore(name, why string) {
	if e.seen[name] {
		return
	}
	e.seen[name] = true
	e.ignored.Add(1)
	e.log.Warn("fleet election: a node that takes no part", "path", e.cfg.Path, "node", name, "why", why)
}

// enter creates this edge's node (and the path's parents).
func (e *Elector) enter() (string, error) {
	parts := strings.Split(strings.TrimPrefix(e.cfg.Path, "/"), "/")
	for i := range parts {
		p := "/" + strings.Join(parts[:i+1], "/")
		if _, err := e.conn.Create(p, nil, 0, e.acl); errors.Is(err, zk.ErrNoAuth) {
			return "", fmt.Errorf("%w: create %s: its parent's ACL does not let this edge's ZooKeeper identity create nodes (CREATE): "+
				"give it CREATE there, or choose another path (EDGE_ZK_PATH)", ErrRefused, p)
		} else if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return "", fmt.Errorf("create %s: %w", p, err)
		}
	}
	if e.cfg.Auth != "" {
		if err := e.closePath(); err != nil {
			return "", err
		}
	}
	m := member{ID: e.cfg.ID, Fleet: e.cfg.Fleet, Session: strconv.FormatInt(e.conn.SessionID(), 16)}
	if e.cfg.Keys != nil {
		m.Sig = e.cfg.Keys.SignMember(m.fields(e.cfg.Path)...)
		m.Pin = e.cfg.Keys.Pin()
		m.PinSig = e.cfg.Keys.SignMember(m.pinFields(e.cfg.Path)...)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("enter the election: %w", err)
	}
	// Without credentials the node is still read-only to others: nobody
	// else may rewrite what it names.
	acl := e.acl
	if e.cfg.Auth == "" {
		acl = zk.WorldACL(zk.PermRead)
	}
	node, err := e.conn.CreateProtectedEphemeralSequential(e.cfg.Path+"/n_", data, acl)
	if errors.Is(err, zk.ErrNoAuth) {
		return "", fmt.Errorf("%w: %s's ACL does not let this edge's ZooKeeper identity create its node (CREATE): "+
			"delete the path (deleteall %s) so that the edges make it again, or set its ACL", ErrRefused, e.cfg.Path, e.cfg.Path)
	}
	if err != nil {
		return "", fmt.Errorf("enter the election: %w", err)
	}
	return node, nil
}

// closePath sets the election path's ACL to this edge's credentials when
// it is another (a path made before the fleet had credentials).
func (e *Elector) closePath() error {
	acl, stat, err := e.conn.GetACL(e.cfg.Path)
	if errors.Is(err, zk.ErrNoAuth) {
		return e.noAdmin()
	}
	if err != nil {
		return fmt.Errorf("read the ACL of %s: %w", e.cfg.Path, err)
	}
	if slices.Equal(acl, e.acl) {
		return nil
	}
	if _, err := e.conn.SetACL(e.cfg.Path, e.acl, stat.Aversion); errors.Is(err, zk.ErrNoAuth) {
		return e.noAdmin()
	} else if err != nil {
		return fmt.Errorf("close %s to other ZooKeeper users: %w", e.cfg.Path, err)
	}
	e.log.Info("fleet election: the path is now closed to other ZooKeeper users", "path", e.cfg.Path)
	return nil
}

// noAdmin is the refusal of a path this edge cannot close to others.
func (e *Elector) noAdmin() error {
	user, _, _ := strings.Cut(e.cfg.Auth, ":")
	return fmt.Errorf("%w: %s exists with an ACL that does not give this edge's ZooKeeper identity (digest %s, EDGE_ZK_AUTH) ADMIN, "+
		"so the edge cannot close it to other ZooKeeper users: delete the path (deleteall %s) so that the edges make it again, "+
		"or set its ACL to that identity with all permissions (setAcl %s digest:%s:<hash>:cdrwa)", ErrRefused, e.cfg.Path, user, e.cfg.Path, e.cfg.Path, user)
}

// errGone says this edge's node is gone from the election.
var errGone = errors.New("this edge's node is gone")

// errNoGrant says this edge would lead but does not know yet for how
// long it may.
var errNoGrant = errors.New("the session timeout ZooKeeper granted is not known yet")

// lose ends this edge's leadership, saying why once.
//
// It also forgets the leader it knew when that was this edge: an edge
// that does not lead must never name itself (a follower would read the
// fleet's state from itself until its session came back). Another edge
// it named may still lead, and is kept until the election is read again.
func (e *Elector) lose(why string) {
	if e.leading.Swap(false) {
		e.log.Warn("no longer leading the fleet's once-jobs", "why", why)
	}
	if m := e.leader.Load(); m != nil && m.ID == e.cfg.ID && m.Fleet == e.cfg.Fleet {
		e.leader.CompareAndSwap(m, nil)
	}
}

// zkLogger sends the ZooKeeper client's lines to slog, at debug level
// (it logs every reconnection attempt), and takes from them the session
// timeout ZooKeeper granted, which the client does not otherwise tell.
type zkLogger struct {
	log     *slog.Logger
	granted *atomic.Int64
}

// grantedLine is the line the client logs when ZooKeeper grants a session.
const grantedLine = "authenticated: id=%d, timeout=%d"

func (l zkLogger) Printf(format string, args ...any) {
	if format == grantedLine && len(args) == 2 {
		if ms, ok := args[1].(int32); ok && ms > 0 {
			l.granted.Store(int64(ms))
		}
	}
	l.log.Debug(fmt.Sprintf(format, args...), "from", "zookeeper")
}
