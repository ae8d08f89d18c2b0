package exchange

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/edge-stats/edge/fleet/trust"
	"github.com/edge-stats/edge/views/replica"
)

// TestFollowerHoldsTheLeaderToItsPin: an edge of the fleet (it holds the
// token: its certificate is the fleet's) that serves at the address the
// election names, while the elected node names another edge's pin, is
// refused in the handshake (trust.ErrNotElected), and the follower takes
// nothing from it; the edge whose pin the node names is taken; an elected
// node without a pin (an earlier release's) is taken on the fleet's
// authority alone; an address the election does not name is not dialed.
func TestFollowerHoldsTheLeaderToItsPin(t *testing.T) {
	elected := keysOf(t, testToken)
	impostor, err := trust.New(testToken) // the same fleet, a key of its own
	if err != nil {
		t.Fatal(err)
	}
	l := startLeader(t, withKeys(DefaultConfig(), impostor))
	l.offer(t, synth(500, 9), 100)
	at, err := url.Parse(l.url)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		pin     string
		elected bool
	}
	var pins atomic.Pointer[answer]
	cfg := withKeys(DefaultConfig(), keysOf(t, testToken+"-follower"))
	cfg.Keys = elected // a follower of the same fleet
	var logs lockedLog
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	cfg.LeaderPin = func(hostport string) (string, bool) {
		a := pins.Load()
		if hostport != at.Host {
			t.Errorf("dialed %s, the leader is at %s", hostport, at.Host)
		}
		return a.pin, a.elected
	}
	f := follower(t, cfg, l.url, false)
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		pins  answer
		taken bool
		err   error
	}{
		{"another edge's pin", answer{elected.Pin(), true}, false, trust.ErrNotElected},
		{"not the elected address", answer{impostor.Pin(), false}, false, ErrNotElectedAddress},
		{"its own pin", answer{impostor.Pin(), true}, true, nil},
		{"an earlier release's node, no pin", answer{"", true}, true, nil},
	} {
		pins.Store(&c.pins)
		f.client.CloseIdleConnections() // each case dials afresh
		got, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 1})
		if (got != nil) != c.taken || (c.err != nil && !errors.Is(err, c.err)) || (c.err == nil && err != nil) {
			t.Errorf("%s: taken %v, %v; want taken %v, %v", c.name, got != nil, err, c.taken, c.err)
		}
	}
	if n := cfg.Metrics.Refused("pin"); n != 1 {
		t.Errorf("%v refusals counted for the pin, want 1", n)
	}
	// The log says it is a refusal, not a network fault.
	if got := logs.String(); !strings.Contains(got, `why="refused: the edge at the leader's address is not the elected one`) || strings.Contains(got, "out of reach") {
		t.Errorf("the log does not say the leader was refused for its key:\n%s", got)
	}
}
