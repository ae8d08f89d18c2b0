package leader_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
	"github.com/edge-stats/edge/fleet/leader"
	"github.com/edge-stats/edge/fleet/trust"
)

// eventually waits up to 30 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30 s: %s", what)
		}

		time.Sleep(20 * time.Millisecond)
	}
}

// leaders returns the electors that lead, and whether every elector names
// the same leader.
func leaders(es []*leader.Elector) (leading []*leader.Elector, agree bool) {
	agree = true
	for _, e := range es {
		if e.Leading() {
			leading = append(leading, e)
		}
		// Each edge's fleet address is read from its node with its ID.
		if e.Leader() != es[0].Leader() || e.Leader() == "" || e.LeaderFleet() != "http://"+e.Leader() {
			agree = false
		}
	}
	return leading, agree
}

// TestOneEdgeLeads runs three electors: exactly one leads and all name
// it; when it leaves, another leads; with ZooKeeper away none leads (a
// lease on the session), and once it is back exactly one leads again.
func TestOneEdgeLeads(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	log := slog.New(slog.DiscardHandler)

	var es []*leader.Elector
	for i := range 3 {
		e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: "/edge/test/leader", ID: fmt.Sprintf("edge-%d", i), Fleet: fmt.Sprintf("http://edge-%d", i),
			SessionTimeout: 4 * time.Second}, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
	}
	one := func() *leader.Elector {
		t.Helper()
		var first *leader.Elector
		eventually(t, "one leader that all name", func() bool {
			l, agree := leaders(es)

			if len(l) == 1 && agree && l[0].Leader() != "" {
				first = l[0]
				return true
			}
			return false
		})
		// It stays one: no second edge leads a moment later.
		time.Sleep(300 * time.Millisecond)
		if l, _ := leaders(es); len(l) != 1 || l[0] != first {
			t.Fatalf("%d leaders a moment later", len(l))
		}
		return first
	}
	first := one()
	if first.Leader() == "" {
		t.Fatal("the leader does not know its own ID")
	}
	// Every edge knows the leader's epoch, by its fleet address, as the
	// leader has it (followers order the states they take by it).
	firstEpoch := first.Epoch()
	for _, e := range es {
		if got := e.LeaderEpoch(first.LeaderFleet()); got == 0 || got != firstEpoch || e.LeaderEpoch("http://elsewhere") != 0 {
			t.Fatalf("%s: the leader's epoch %d, the leader says %d", e.Leader(), got, firstEpoch)
		}
	}

	// The leader leaves: another leads, the leaver does not.
	first.Close()
	rest := make([]*leader.Elector, 0, 2)
	for _, e := range es {
		if e != first {
			rest = append(rest, e)
		}
	}
	es = rest
	second := one()
	if second == first || first.Leading() {
		t.Fatal("the edge that left still leads")
	}
	if e := second.Epoch(); e <= firstEpoch {
		t.Fatalf("the next leader's epoch %d, not past the first's %d", e, firstEpoch)
	}
	eventually(t, "the edges know the next leader's epoch", func() bool {
		for _, e := range es {
			if e.LeaderEpoch(second.LeaderFleet()) != second.Epoch() {
				return false
			}
		}
		return true
	})

	// ZooKeeper away: no edge can know it alone leads, so none does.
	z.Pause()
	eventually(t, "no leader without ZooKeeper", func() bool {
		l, _ := leaders(es)
		return len(l) == 0
	})
	// And the edge that led no longer names itself: as a follower it
	// would read the fleet's state from itself.
	eventually(t, "the edge that led forgets itself as the leader", func() bool { return second.LeaderFleet() == "" })
	if err := z.Resume(); err != nil {
		t.Fatal(err)
	}
	one()
}

// TestStartRefusesBadConfig: a path that is not absolute, or no server,
// is refused at once.
func TestStartRefusesBadConfig(t *testing.T) {
	for _, cfg := range []leader.Config{
		{Path: "/edge/x"},
		{Servers: []string{"127.0.0.1:1"}, Path: "edge/x"},
		{Servers: []string{"127.0.0.1:1"}, Path: "/edge/x/"},
	} {
		if e, err := leader.Start(cfg, slog.New(slog.DiscardHandler)); err == nil {
			e.Close()
			t.Errorf("%+v: started", cfg)
		}
	}
}

// plant connects to ZooKeeper as an outsider would (no credentials, or
// the ones given) and returns the connection.
func plant(t *testing.T, addr, auth string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	eventually(t, "the outsider's session", func() bool { return c.State() == zk.StateHasSession })
	if auth != "" {
		if err := c.AddAuth("digest", []byte(auth)); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

var testKeys = sync.OnceValue(func() *trust.Keys {
	k, err := trust.New("tLbM3sDoyVZSHJhb742t4TeTWclm98Y200qUgU0oo22KvFJDfonev96ydkdXdmYP")
	if err != nil {
		panic(err)
	}
	return k
})

// TestPlantedNodesTakeNoPart: an outsider who can write to ZooKeeper
// plants nodes that sort before the fleet's: one named "!", one of the
// recipe's own name form numbered 0 (persistent), one of that form in
// its own ephemeral session naming the fake leader with a forged
// signature, and a copy of the real leader's data in its own session.
// The real leader keeps leading, every edge keeps naming it, and each
// planted node is logged and counted once.
func TestPlantedNodesTakeNoPart(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	path := "/edge/test/planted"
	var logs syncLog
	log := slog.New(slog.NewTextHandler(&logs, nil))
	// The path's sequence is moved on, so that the planted nodes can sort
	// before the fleet's.
	out := plant(t, addr, "")
	for _, p := range []string{"/edge", "/edge/test", path} {
		out.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	for range 5 {
		n, err := out.Create(path+"/x", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		out.Delete(n, -1)
	}
	var es []*leader.Elector
	for i := range 2 {
		e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, ID: fmt.Sprintf("edge-%d", i), Fleet: fmt.Sprintf("https://edge-%d", i),
			SessionTimeout: 4 * time.Second, Keys: testKeys()}, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
		if i == 0 {
			eventually(t, "the first edge leads", e.Leading)
		}
	}
	eventually(t, "both name the first", func() bool { return es[1].LeaderFleet() == "https://edge-0" })

	children, _, err := out.Children(path)
	if err != nil || len(children) != 2 {
		t.Fatalf("children %v, %v", children, err)
	}
	slices.Sort(children)
	realData, _, err := out.Get(path + "/" + children[0])
	if err != nil {
		t.Fatal(err)
	}
	fake := `{"id":"x","fleet":"https://outsider:1"}`
	forged := fmt.Sprintf(`{"id":"x","fleet":"https://outsider:1","session":"%x","sig":"AAAA"}`, out.SessionID())
	for _, p := range []struct {
		name, data string
		flags      int32
	}{
		{"!", fake, 0},
		{"_c_00000000000000000000000000000000-n_0000000000", fake, 0},
		{"_c_00000000000000000000000000000001-n_0000000000", forged, zk.FlagEphemeral},
		{"_c_00000000000000000000000000000002-n_0000000001", string(realData), zk.FlagEphemeral},
	} {
		if _, err := out.Create(path+"/"+p.name, []byte(p.data), p.flags, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("plant %s: %v", p.name, err)
		}
	}
	eventually(t, "every planted node ignored by every edge", func() bool {
		return es[0].Ignored() == 4 && es[1].Ignored() == 4
	})
	time.Sleep(300 * time.Millisecond)
	if !es[0].Leading() || es[1].Leading() || es[1].LeaderFleet() != "https://edge-0" || es[0].LeaderFleet() != "https://edge-0" {
		t.Fatalf("after the planting: leading %v %v, naming %q %q", es[0].Leading(), es[1].Leading(), es[0].LeaderFleet(), es[1].LeaderFleet())
	}
	if strings.Contains(logs.String(), "no longer leading") || strings.Count(logs.String(), "a node that takes no part") != 8 {
		t.Errorf("the log:\n%s", logs.String())
	}
	// Nobody else may rewrite what an edge's node names.
	if _, err := out.Set(path+"/"+children[0], []byte(fake), -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an outsider rewrote an edge's node: %v", err)
	}
	// The leader leaves: the next edge leads, not a planted node.
	es[0].Close()
	eventually(t, "the second edge leads", es[1].Leading)
}

// TestZooKeeperCredentials: with credentials the election's path is
// closed to every other ZooKeeper user (an existing path's ACL is set),
// and edges with the credentials still elect one.
func TestZooKeeperCredentials(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	path := "/edge/test/closed"
	// The path exists, open to all, before the fleet has credentials.
	out := plant(t, addr, "")
	for _, p := range []string{"/edge", "/edge/test", path} {
		out.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	var es []*leader.Elector
	for i := range 2 {
		e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, ID: fmt.Sprintf("edge-%d", i),
			SessionTimeout: 4 * time.Second, Auth: "fleet:secret"}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
	}
	eventually(t, "one edge leads", func() bool {
		return es[0].Leading() != es[1].Leading() && es[0].Leader() != "" && es[1].Leader() == es[0].Leader()
	})
	if _, err := out.Create(path+"/!", []byte("x"), 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an outsider planted a node: %v", err)
	}
	if _, _, err := out.Children(path); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an outsider read the election: %v", err)
	}
	wrong := plant(t, addr, "fleet:other")
	if _, err := wrong.Create(path+"/!", []byte("x"), 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("other credentials planted a node: %v", err)
	}
	if _, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, Auth: "no-colon"}, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("credentials without a password were taken")
	}
}

// syncLog is a log's buffer written from many goroutines.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLeaseEndsBeforeAnotherLeads cuts the leader off from ZooKeeper
// without a word (its packets go nowhere, as from a paused process or a
// network that drops them): its lease ends by its own clock before
// ZooKeeper ends its session and another edge leads, the two never lead
// at once, and the new leader's epoch is larger. Once the link is back,
// the first edge follows the second.
func TestLeaseEndsBeforeAnotherLeads(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	cut, err := faultproxy.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	start := func(id, server string) *leader.Elector {
		e, err := leader.Start(leader.Config{Servers: []string{server}, Path: "/edge/test/lease", ID: id, SessionTimeout: 2 * time.Second},
			slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	a := start("edge-a", cut.Addr())
	eventually(t, "the first edge leads", a.Leading)
	b := start("edge-b", addr)
	eventually(t, "the second edge follows", func() bool { return b.Leader() == "edge-a" && !b.Leading() })
	epochA := a.Epoch()
	if epochA <= 0 || b.Epoch() != 0 {
		t.Fatalf("epochs: the leader's %d, the other's %d", epochA, b.Epoch())
	}

	cut.Set(faultproxy.Blackhole, 0, 0)
	var leaseEnd, aStopped, bLed time.Time
	for deadline := time.Now().Add(30 * time.Second); bLed.IsZero(); time.Sleep(time.Millisecond) {
		la, lb := a.Leading(), b.Leading()
		now := time.Now()
		if la && lb {
			t.Fatal("both edges lead")
		}
		if la {
			leaseEnd = a.LeaseEnd()
		} else if aStopped.IsZero() {
			aStopped = now
		}
		if lb {
			bLed = now
		}
		if now.After(deadline) {
			t.Fatal("the second edge did not lead within 30 s of the first losing ZooKeeper")
		}
	}
	if aStopped.IsZero() || !aStopped.Before(bLed) || !leaseEnd.Before(bLed) {
		t.Fatalf("the first edge stopped leading at %v (its lease ending at %v), the second led at %v", aStopped, leaseEnd, bLed)
	}
	if b.Epoch() <= epochA {
		t.Fatalf("the new leader's epoch %d, not larger than the first's %d", b.Epoch(), epochA)
	}
	t.Logf("the first edge's lease ended %v before the second led", bLed.Sub(leaseEnd))

	cut.Set(faultproxy.None, 0, 0)
	eventually(t, "the first edge follows the second", func() bool { return a.Leader() == "edge-b" && !a.Leading() && b.Leading() })
}

// revokeAndDelete is what a ZooKeeper writer can do to an election without
// credentials: take READ on the path from everyone (so that ZooKeeper
// drops the edges' watches on it), delete an edge's node, and give the
// path its open ACL back.
func revokeAndDelete(t *testing.T, out *zk.Conn, path, node string) {
	t.Helper()
	if err := out.AddAuth("digest", []byte("evil:evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := out.SetACL(path, zk.DigestACL(zk.PermAll, "evil", "evil"), -1); err != nil {
		t.Fatalf("take READ from the path: %v", err)
	}
	if err := out.Delete(path+"/"+node, -1); err != nil {
		t.Fatalf("delete %s: %v", node, err)
	}
	if _, err := out.SetACL(path, zk.WorldACL(zk.PermAll), -1); err != nil {
		t.Fatalf("give the path its ACL back: %v", err)
	}
}

// TestLeaseRenewedAfterTheNodeWent: a ZooKeeper writer deletes the
// leader's node while the leader's watch is gone, so that the leader
// learns it at a renewal of its lease. The edge enters again and leads,
// and its lease goes on being renewed: it still leads, with a later
// lease end, after several lease lengths.
func TestLeaseRenewedAfterTheNodeWent(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	path := "/edge/test/regone"
	var logs syncLog
	e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, ID: "edge-a", SessionTimeout: 2 * time.Second},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	eventually(t, "the edge leads", e.Leading)
	out := plant(t, addr, "")
	children, _, err := out.Children(path)
	if err != nil || len(children) != 1 {
		t.Fatalf("children %v, %v", children, err)
	}
	revokeAndDelete(t, out, path, children[0])
	eventually(t, "the edge enters again and leads", func() bool {
		now, _, err := out.Children(path)
		return err == nil && len(now) == 1 && now[0] != children[0] && e.Leading()
	})
	// Lease lengths (1 s here: half the session timeout) pass: the edge
	// leads throughout, its lease's end moving on.
	end := e.LeaseEnd()
	for range 40 {
		time.Sleep(100 * time.Millisecond)
		if !e.Leading() {
			t.Fatalf("the edge's lease lapsed after it led again (its end %v, now %v); log:\n%s", e.LeaseEnd(), time.Now(), logs.String())
		}
	}
	if !e.LeaseEnd().After(end) {
		t.Fatalf("the lease's end did not move: %v, then %v", end, e.LeaseEnd())
	}
}

// TestRefusedWithoutAdmin: with credentials, a path made beforehand
// whose ACL gives them no ADMIN keeps the edge out of the election:
// Entered says so, naming the path, the missing permission and the fix,
// and the edge logs it at ERROR.
func TestRefusedWithoutAdmin(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	out := plant(t, addr, "")
	for _, p := range []string{"/sec", "/sec/pre"} {
		if _, err := out.Create(p, nil, 0, zk.WorldACL(zk.PermCreate|zk.PermDelete|zk.PermRead|zk.PermWrite)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	var logs syncLog
	e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: "/sec/pre", ID: "edge-a", SessionTimeout: 2 * time.Second, Auth: "fleet:secret"},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = e.Entered(ctx)
	if !errors.Is(err, leader.ErrRefused) || !strings.Contains(err.Error(), "/sec/pre") || !strings.Contains(err.Error(), "ADMIN") ||
		!strings.Contains(err.Error(), "deleteall /sec/pre") {
		t.Fatalf("Entered: %v", err)
	}
	if e.Leading() || !strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("leading %v; log:\n%s", e.Leading(), logs.String())
	}
}

// TestElectionMendsAfterALostWatch is the attack of a ZooKeeper writer on
// a fleet without credentials: READ taken from the election's path (so
// that ZooKeeper drops the edges' watches on it), the leader's node
// deleted, the path's ACL given back. The edges read the election again
// (here on Recheck, as a follower does when its leader says it does not
// lead; the reread's timer is out of play): exactly one leads and the
// other names it, not each the other.
// twoElectors starts edge-a, waits for it to lead, then starts edge-b and
// waits for it to follow edge-a; both re-read the election every reread.
func twoElectors(t *testing.T, addr, path string, reread time.Duration) (a, b *leader.Elector) {
	t.Helper()
	start := func(id string) *leader.Elector {
		e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, ID: id, Fleet: "http://" + id, SessionTimeout: 2 * time.Second,
			Reread: reread}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	a = start("edge-a")
	eventually(t, "the first edge leads", a.Leading)
	b = start("edge-b")
	eventually(t, "the second edge follows", func() bool { return b.Leader() == "edge-a" && !b.Leading() })
	return a, b
}

func TestElectionMendsAfterALostWatch(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	path := "/edge/test/mend"
	a, b := twoElectors(t, addr, path, time.Hour)
	out := plant(t, addr, "")
	children, _, err := out.Children(path)
	if err != nil || len(children) != 2 {
		t.Fatalf("children %v, %v", children, err)
	}
	bySequence(children) // the first edge's node first
	revokeAndDelete(t, out, path, children[0])
	eventually(t, "one edge leads and the other names it", func() bool {
		a.Recheck()
		b.Recheck()
		la, lb := a.Leading(), b.Leading()
		return la != lb && a.Leader() == b.Leader() && (la && a.Leader() == "edge-a" || lb && b.Leader() == "edge-b")
	})
	// And it stays so.
	time.Sleep(500 * time.Millisecond)
	if a.Leading() == b.Leading() || a.Leader() != b.Leader() {
		t.Fatalf("leading %v %v, naming %q %q", a.Leading(), b.Leading(), a.Leader(), b.Leader())
	}
}

// TestElectionRereadOnATimer: the same attack with no Recheck: the
// edges read the election again on their timer and mend it alone.
func TestElectionRereadOnATimer(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	path := "/edge/test/reread"
	a, b := twoElectors(t, addr, path, time.Second)
	out := plant(t, addr, "")
	children, _, err := out.Children(path)
	if err != nil || len(children) != 2 {
		t.Fatalf("children %v, %v", children, err)
	}
	bySequence(children)
	revokeAndDelete(t, out, path, children[0])
	eventually(t, "one edge leads and the other names it", func() bool {
		la, lb := a.Leading(), b.Leading()
		return la != lb && a.Leader() == b.Leader() && a.Leader() != ""
	})
}

// TestEachEdgeWatchesOneNode: four edges in line; when the second
// leaves, only the third (which watched its node) is woken by a watch,
// not the leader nor the fourth (which watch their own node before and
// the leader's); all still name the leader.
func TestEachEdgeWatchesOneNode(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	path := "/edge/test/watches"
	var es []*leader.Elector
	for i := range 4 {
		e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, ID: fmt.Sprintf("edge-%d", i), SessionTimeout: 4 * time.Second,
			Reread: time.Hour}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
		// In line: each enters once the one before it is in.
		eventually(t, "the edge names the first", func() bool { return e.Leader() == "edge-0" })
	}
	time.Sleep(300 * time.Millisecond)
	before := make([]int64, 4)
	for i, e := range es {
		before[i] = e.Woken()
	}
	es[1].Close()
	eventually(t, "the third edge is woken", func() bool { return es[2].Woken() > before[2] })
	time.Sleep(500 * time.Millisecond)
	if es[0].Woken() != before[0] || es[3].Woken() != before[3] {
		t.Fatalf("woken: the leader %d → %d, the fourth %d → %d", before[0], es[0].Woken(), before[3], es[3].Woken())
	}
	if !es[0].Leading() || es[2].Leader() != "edge-0" || es[3].Leader() != "edge-0" {
		t.Fatalf("after the second left: leading %v, naming %q %q", es[0].Leading(), es[2].Leader(), es[3].Leader())
	}
}

// TestRecheckFindsTheNewLeader: three edges in line, the timer out of
// play. When the leader leaves, the second leads (it watched the
// leader's node) and the third names it: it watches the leader's node
// beside the second's (TestEveryEdgeLearnsOfTheLeadersEnd), and reads the
// election again when its follower asks (Recheck) as the edge it names
// is gone.
func TestRecheckFindsTheNewLeader(t *testing.T) {
	newLeaderFound(t, "/edge/test/recheck", time.Hour, true)
}

// TestRereadFindsTheNewLeader: as TestRecheckFindsTheNewLeader with no
// Recheck: the third edge learns who leads at its reread's tick.
func TestRereadFindsTheNewLeader(t *testing.T) {
	newLeaderFound(t, "/edge/test/reread-leader", 500*time.Millisecond, false)
}

func newLeaderFound(t *testing.T, path string, reread time.Duration, recheck bool) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	var es []*leader.Elector
	for i := range 3 {
		e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: path, ID: fmt.Sprintf("edge-%d", i),
			SessionTimeout: 4 * time.Second, Reread: reread}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
		eventually(t, "the edge names the first", func() bool { return e.Leader() == "edge-0" })
	}
	es[0].Close()
	eventually(t, "the second edge leads", es[1].Leading)
	eventually(t, "the third names the second once it reads the election again", func() bool {
		if recheck {
			es[2].Recheck()
		}
		return es[2].Leader() == "edge-1" && !es[2].Leading()
	})
}

// bySequence sorts an election's node names by their sequence numbers.
func bySequence(names []string) {
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a[len(a)-10:], b[len(b)-10:]) })
}

// TestFailureToEnterIsLoggedAtError: any lasting failure to take part in
// the election (here a path that is an ephemeral node, which can have no
// children) is said at ERROR, once for its start and not at every retry.
func TestFailureToEnterIsLoggedAtError(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	out := plant(t, addr, "")
	if _, err := out.Create("/blocked", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := out.Create("/blocked/path", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var logs syncLog
	e, err := leader.Start(leader.Config{Servers: []string{addr}, Path: "/blocked/path", ID: "edge-a", SessionTimeout: 2 * time.Second},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	eventually(t, "the failure logged at ERROR", func() bool {
		return strings.Contains(logs.String(), "level=ERROR") && strings.Contains(logs.String(), "/blocked/path")
	})
	// Retries go on each second; the run is said once (within a minute).
	time.Sleep(3 * time.Second)
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 {
		t.Fatalf("%d ERROR lines for one run of failures; log:\n%s", n, logs.String())
	}
	if e.Leading() {
		t.Fatal("leads outside the election")
	}
}

// TestEveryEdgeLearnsOfTheLeadersEnd: three edges in line, the reread's
// timer out of play and no Recheck; the leader is cut off from ZooKeeper
// without a word. When ZooKeeper ends its session the second edge leads,
// and the third, whose member before is the second, names it too: every
// follower watches the leader's node beside the one before its own, so
// that a silent cut is mended within the session timeout, not at a
// follower's next reread.
func TestEveryEdgeLearnsOfTheLeadersEnd(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	addr := "127.0.0.1:" + strconv.Itoa(z.Port)
	cut, err := faultproxy.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	path := "/edge/test/leaders-end"
	var es []*leader.Elector
	for i := range 3 {
		server := addr
		if i == 0 {
			server = cut.Addr()
		}
		e, err := leader.Start(leader.Config{Servers: []string{server}, Path: path, ID: fmt.Sprintf("edge-%d", i),
			SessionTimeout: 2 * time.Second, Reread: time.Hour}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		es = append(es, e)
		eventually(t, "the edge names the first", func() bool { return e.Leader() == "edge-0" })
	}
	woken := es[2].Woken()
	cut.Set(faultproxy.Blackhole, 0, 0)
	eventually(t, "the second edge leads", es[1].Leading)
	eventually(t, "the third names the second without a reread", func() bool { return es[2].Leader() == "edge-1" && !es[2].Leading() })
	if es[2].Woken() <= woken {
		t.Fatalf("the third edge was not woken by a watch (%d, %d before)", es[2].Woken(), woken)
	}
	cut.Set(faultproxy.None, 0, 0)
	eventually(t, "the first edge follows the second", func() bool { return es[0].Leader() == "edge-1" && !es[0].Leading() })
}
