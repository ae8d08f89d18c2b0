package leader

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/edge-stats/edge/fleet/trust"
)

// TestNodesNameTheirPin: an edge's node names its certificate's pin,
// signed with the rest; a node whose pin is not the one signed, or
// signed with another fleet's key, takes no part; a node of an earlier
// release (no pin) takes part and binds nothing; LeaderPin gives the
// leader's pin only for the leader's own address.
func TestNodesNameTheirPin(t *testing.T) {
	keys := fuzzKeys()
	other, err := trust.New("Y4NZrV6Axj0o05F15hRuSs6XdM8LDwPomKEsT76zWe2Nq5lNXOWW0ECOSQoQ23Y0")
	if err != nil {
		t.Fatal(err)
	}
	e := &Elector{cfg: Config{Path: "/edge/fleets/x", Keys: keys}}
	signed := func(k *trust.Keys, pin string, edit func(*member)) []byte {
		m := member{ID: "edge-1", Fleet: "https://10.0.0.5:8081", Session: strconv.FormatInt(77, 16)}
		m.Sig = keys.SignMember(m.fields(e.cfg.Path)...)
		if pin != "" {
			m.Pin = pin
			m.PinSig = k.SignMember(m.pinFields(e.cfg.Path)...)
		}
		if edit != nil {
			edit(&m)
		}
		b, _ := json.Marshal(m)
		return b
	}
	for _, c := range []struct {
		name    string
		data    []byte
		why     string // "" when it takes part
		wantPin string
	}{
		{"pinned", signed(keys, keys.Pin(), nil), "", keys.Pin()},
		{"of an earlier release", signed(keys, "", nil), "", ""},
		{"another pin than the one signed", signed(keys, keys.Pin(), func(m *member) { m.Pin = other.Pin() }), "its certificate's pin is not signed with the fleet's key", ""},
		{"a pin without its signature", signed(keys, keys.Pin(), func(m *member) { m.PinSig = "" }), "its certificate's pin is not signed with the fleet's key", ""},
		{"a signature without its pin", signed(keys, keys.Pin(), func(m *member) { m.Pin = "" }), "its certificate's pin is not signed with the fleet's key", ""},
		{"a pin signed by another fleet", signed(other, other.Pin(), nil), "its certificate's pin is not signed with the fleet's key", ""},
	} {
		m, why := e.check(c.data, &zk.Stat{EphemeralOwner: 77})
		if why != c.why || (why == "" && m.Pin != c.wantPin) {
			t.Errorf("%s: %+v %q, want %q with pin %q", c.name, m, why, c.why, c.wantPin)
		}
	}
	e.leader.Store(&member{ID: "edge-1", Fleet: "https://10.0.0.5:8081", Pin: keys.Pin()})
	for _, c := range []struct {
		hostport string
		pin      string
		elected  bool
	}{
		{"10.0.0.5:8081", keys.Pin(), true},
		{"10.0.0.5:8082", "", false},
		{"10.0.0.6:8081", "", false},
	} {
		if pin, elected := e.LeaderPin(c.hostport); pin != c.pin || elected != c.elected {
			t.Errorf("LeaderPin(%s) = %q %v, want %q %v", c.hostport, pin, elected, c.pin, c.elected)
		}
	}
	e.leader.Store(&member{ID: "edge-2", Fleet: "https://Fleet.Example", Pin: keys.Pin()})
	if pin, elected := e.LeaderPin("fleet.example:443"); pin != keys.Pin() || !elected {
		t.Errorf("a leader's address without its port: %q %v", pin, elected)
	}
	e.leader.Store(&member{ID: "edge-3", Fleet: "https://[::1]:8081", Pin: keys.Pin()})
	if pin, elected := e.LeaderPin("[::1]:8081"); pin != keys.Pin() || !elected {
		t.Errorf("a leader's IPv6 address: %q %v", pin, elected)
	}
	e.leader.Store(&member{ID: "edge-0", Fleet: "https://10.0.0.5:8081"}) // an earlier release's
	if pin, elected := e.LeaderPin("10.0.0.5:8081"); pin != "" || !elected {
		t.Errorf("an earlier release's leader: %q %v", pin, elected)
	}
}
