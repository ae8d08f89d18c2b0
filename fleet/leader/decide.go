package leader

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// watched is the node this edge watches, as ZooKeeper's election recipe
// has it: the member just before its own, or its own while it leads; and
// the watch's channel (nil when none is set). A follower whose member
// before is not the leader also watches the leader's node (lead, leadCh),
// as Curator's LeaderLatch has every member learn of the leader's end: a
// leader gone wakes every follower, so that each names the next one when
// ZooKeeper ends the old leader's session, not at its next reread.
type watched struct {
	name   string
	ch     <-chan zk.Event
	lead   string
	leadCh <-chan zk.Event
}

// wake says why wait returned.
type wake int

const (
	wakeStop  wake = iota // ctx ended
	wakeWatch             // the watched node changed (the watch is spent)
	wakeLead              // the leader's node, watched beside it, changed (that watch is spent)
	wakeRead              // anything else that calls for the election to be read again
)

// run follows the election until ctx ends: it makes this edge's node
// when the session has none, and decides who leads whenever the node it
// watches or the connection changes, when asked to (Recheck), and every
// Config.Reread: a watch is one-shot, and a session that loses READ on a
// node is told nothing of it, so nothing cached is trusted for longer.
func (e *Elector) run(ctx context.Context) {
	defer close(e.done)
	var (
		node    string // this edge's node, "" when it has none in this session
		session int64
		authed  bool // credentials given to this connection (resent on reconnects)
		w       watched
	)
	defer func() {
		if node != "" {
			e.conn.Delete(node, -1)
		}
	}()
	var fails failures // the tries in a row that failed, said at ERROR
	retry := time.NewTimer(0)
	defer retry.Stop()
	beat := time.NewTimer(e.beat())
	defer beat.Stop()
	reread := time.NewTicker(e.cfg.Reread)
	defer reread.Stop()
	for {
		if e.conn.State() != zk.StateHasSession {
			e.lose("no ZooKeeper session")
			w = watched{}
		} else {
			if id := e.conn.SessionID(); id != session {
				node, session, w = "", id, watched{} // a new session: the old node and watches went with the old one
			}
			err := e.join(&node, &authed)
			if err == nil {
				err = e.decide(node, time.Now(), &w)
			}
			switch {
			case errors.Is(err, errGone):
				node, w = "", watched{} // our node is gone: enter again
				continue
			case errors.Is(err, errNoGrant), errors.Is(err, errAgain):
				retry.Reset(20 * time.Millisecond)
			case errors.Is(err, ErrRefused):
				// Not a passing fault: it lasts until an operator mends the
				// path.
				e.lose(err.Error())
				fails.failed(e, err)
				e.refusal.CompareAndSwap(nil, &err)
				e.onceOut.Do(func() { close(e.refused) })
				retry.Reset(5 * time.Second)
			case err != nil:
				e.lose(err.Error())
				fails.failed(e, err)
				retry.Reset(time.Second)
			default:
				fails.mended(e)
			}
		}
		switch e.wait(ctx, node, w, retry.C, reread.C, beat) {
		case wakeStop:
			return
		case wakeWatch:
			e.woken.Add(1)
			w = watched{} // spent: set again by decide
		case wakeLead:
			e.woken.Add(1)
			w.lead, w.leadCh = "", nil // spent: set again by decide
		}
	}
}

// join gives the connection this edge's credentials and makes its node,
// when not done yet in this session.
func (e *Elector) join(node *string, authed *bool) error {
	if e.cfg.Auth != "" && !*authed {
		if err := e.conn.AddAuth("digest", []byte(e.cfg.Auth)); err != nil {
			return fmt.Errorf("ZooKeeper credentials: %w", err)
		}
		*authed = true
	}
	if *node != "" {
		return nil
	}
	n, err := e.enter()
	if err != nil {
		return err
	}
	*node = n
	e.onceIn.Do(func() { close(e.entered) })
	return nil
}

// wait renews the lease at each beat while this edge leads, until ctx
// ends or something calls for the election to be read again: a
// connection or session change, the watch, the retry, a Recheck, the
// reread's tick, or this edge's node gone.
func (e *Elector) wait(ctx context.Context, node string, w watched, retry, reread <-chan time.Time, beat *time.Timer) wake {
	for {
		select {
		case <-ctx.Done():
			return wakeStop
		case ev := <-e.events:
			// A connection or session change; a watch's event comes here
			// too, and on its own channel, which says whose it is.
			if ev.Type == zk.EventSession || ev.Type == zk.EventNotWatching {
				return wakeRead
			}
		case <-w.ch: // the node before ours, or our own while it leads, changed
			return wakeWatch
		case <-w.leadCh: // the leader's node, when it is not the one before ours
			return wakeLead
		case <-e.recheck:
			return wakeRead
		case <-reread:
			return wakeRead
		case <-retry:
			return wakeRead
		case <-beat.C:
			// Re-armed first, whatever the renewal gives: a lead won after
			// this edge's node went must be renewed too.
			beat.Reset(e.beat())
			if e.leading.Load() && node != "" {
				e.lapsed()
				if err := e.renew(node, time.Now()); errors.Is(err, errGone) {
					return wakeRead
				}
			}
		}
	}
}

// errAgain says the election changed while it was read: read it again.
var errAgain = errors.New("the election changed while it was read")

// candidate is a node of the election's name form, with its sequence.
type candidate struct {
	name string
	seq  int64
}

// decide reads the election's nodes: this edge leads when its node is
// the lowest that takes part. As in ZooKeeper's recipe, each edge watches
// one node only, so that a change wakes one edge, not the fleet: the
// member just before its own, or its own while it leads (to learn at once
// that it is gone). Who leads is read from the lowest member each time
// the election is read (cached by node name: a member's node does not
// change).
//
// sent is when it asks: a leader's lease runs from then.
func (e *Elector) decide(node string, sent time.Time, w *watched) error {
	nodes, err := e.candidates()
	if err != nil {
		return err
	}
	own := node[strings.LastIndex(node, "/")+1:]
	i := slices.IndexFunc(nodes, func(c candidate) bool { return c.name == own })
	if i < 0 {
		e.lose("this edge's node is gone")
		return errGone
	}
	// The leader is the lowest node that takes part: this edge's own, or
	// the first before it that checks out.
	lead, li := &member{ID: e.cfg.ID, Fleet: e.cfg.Fleet}, i
	if e.cfg.Keys != nil {
		lead.Pin = e.cfg.Keys.Pin()
	}
	for j, c := range nodes[:i] {
		m, err := e.memberOf(c.name)
		if err != nil {
			return err
		}
		if m != nil {
			lead, li = m, j
			break
		}
	}
	// The member just before this edge's own (the leader at the latest).
	target := own
	for j := i - 1; j >= li; j-- {
		m, err := e.memberOf(nodes[j].name)
		if err != nil {
			return err
		}
		if m != nil {
			target = nodes[j].name
			break
		}
	}
	// That node watched, and the leader's too when it is another.
	if err := e.watchBefore(target, w); err != nil {
		return err
	}
	if err := e.watchLead(nodes[li].name, li < i && nodes[li].name != target, w); err != nil {
		return err
	}
	found := *lead
	found.epoch = nodes[li].seq + 1
	lead = &found
	if old := e.leader.Load(); old == nil || *old != *lead {
		e.leader.Store(lead)
	}
	if li < i {
		e.lose("another edge leads")
		return nil
	}
	if e.lease() == 0 {
		// ZooKeeper's grant is logged just after the session is made:
		// decide again in a moment.
		e.lose("the session timeout ZooKeeper granted is not known yet")
		return errNoGrant
	}
	e.until.Store(sent.Add(e.lease()).UnixNano())
	e.lapse.Store(false)
	e.epoch.Store(nodes[i].seq + 1) // the first node's sequence number is 0
	if !e.leading.Swap(true) {
		e.log.Info("leading the fleet's once-jobs", "node", node)
		if e.cfg.OnLead != nil {
			go e.cfg.OnLead()
		}
	}
	return nil
}

// watchBefore sets w's watch of target, the member just before this
// edge's own (its own while it leads), unless set already.
func (e *Elector) watchBefore(target string, w *watched) error {
	if target == w.name && w.ch != nil {
		return nil
	}
	ok, _, ch, err := e.conn.ExistsW(e.cfg.Path + "/" + target)
	switch {
	case err != nil:
		return fmt.Errorf("watch the election: %w", err)
	case !ok:
		return errAgain // gone meanwhile
	}
	*w = watched{name: target, ch: ch}
	e.log.Debug("fleet election: watching", "node", target)
	return nil
}

// watchLead sets w's watch of the leader's node, head, when apart (it
// leads another edge than this one, and is not the node before this
// edge's), and drops it otherwise.
func (e *Elector) watchLead(head string, apart bool, w *watched) error {
	switch {
	case !apart:
		w.lead, w.leadCh = "", nil
		return nil
	case head == w.lead && w.leadCh != nil:
		return nil // set already
	}
	ok, _, ch, err := e.conn.ExistsW(e.cfg.Path + "/" + head)
	switch {
	case err != nil:
		return fmt.Errorf("watch the election's leader: %w", err)
	case !ok:
		return errAgain // gone meanwhile
	}
	w.lead, w.leadCh = head, ch
	e.log.Debug("fleet election: watching the leader", "node", head)
	return nil
}

// candidates reads the election's children (no watch: each edge watches
// one node) and returns those of the recipe's name form, lowest first;
// the others are ignored, and what is remembered of nodes gone is
// forgotten.
func (e *Elector) candidates() ([]candidate, error) {
	children, _, err := e.conn.Children(e.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("read the election: %w", err)
	}
	var nodes []candidate
	present := make(map[string]bool, len(children))
	for _, c := range children {
		present[c] = true
		m := nodeName.FindStringSubmatch(c)
		if m == nil {
			e.ignore(c, "its name is not of the election's recipe")
			continue
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		nodes = append(nodes, candidate{c, n})
	}
	for name := range e.seen {
		if !present[name] {
			delete(e.seen, name) // gone: a node of that name again is logged again
		}
	}
	for name := range e.known {
		if !present[name] {
			delete(e.known, name)
		}
	}
	slices.SortFunc(nodes, func(a, b candidate) int { return cmp.Or(cmp.Compare(a.seq, b.seq), strings.Compare(a.name, b.name)) })
	return nodes, nil
}

// memberOf returns the member a node holds; nil when it takes no part
// (ignored, and logged once) or is gone.
func (e *Elector) memberOf(name string) (*member, error) {
	if e.seen[name] {
		return nil, nil // ignored already: a node's owner and signature do not change
	}
	if m := e.known[name]; m != nil {
		return m, nil
	}
	data, stat, err := e.conn.Get(e.cfg.Path + "/" + name)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil // gone meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("read the election: %w", err)
	}
	m, why := e.check(data, stat)
	if why != "" {
		e.ignore(name, why)
		return nil, nil
	}
	e.known[name] = m
	return m, nil
}
