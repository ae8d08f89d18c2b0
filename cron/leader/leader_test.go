package leader_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/cron/leader"
)

// startZooKeeper starts a ZooKeeper for one test; without one the test
// skips, except under CI.
func startZooKeeper(t *testing.T) *chtest.ZooKeeper {
	t.Helper()
	z, err := chtest.StartZooKeeper()
	switch {
	case err == nil:
		t.Cleanup(z.Stop)
		return z
	case errors.Is(err, chtest.ErrNoZooKeeper) && os.Getenv("CI") != "true":
		t.Skip(err)
	}
	t.Fatal(err)
	return nil
}

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
	z := startZooKeeper(t)
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

	// ZooKeeper away: no edge can know it alone leads, so none does.
	z.Pause()
	eventually(t, "no leader without ZooKeeper", func() bool {
		l, _ := leaders(es)
		return len(l) == 0
	})
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
