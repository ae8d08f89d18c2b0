package leader

import (
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/edge-stats/edge/fleet/trust"
)

var fuzzKeys = sync.OnceValue(func() *trust.Keys {
	k, err := trust.New("RPrTTxdJxWuPgh2bbPXo1opGmwaFtmSBdcki191sjLjrmgfC0TYY7EXOnEmJuj4S")
	if err != nil {
		panic(err)
	}
	return k
})

// FuzzMemberCheck: whatever data a node holds (anyone who writes to
// ZooKeeper chooses it) and whatever session owns it, the check never
// panics, and takes part only a node owned by the session its data names
// and signed with the fleet's member key over exactly its fields, and,
// when it names its certificate's pin, over the pin too.
func FuzzMemberCheck(f *testing.F) {
	keys := fuzzKeys()
	e := &Elector{cfg: Config{Path: "/edge/fleets/x", Keys: keys}}
	good := member{ID: "edge-1", Fleet: "https://10.0.0.5:8081", Session: strconv.FormatInt(77, 16)}
	good.Sig = keys.SignMember(good.fields(e.cfg.Path)...)
	data, _ := json.Marshal(good)
	f.Add(data, int64(77))
	pinned := good
	pinned.Pin = keys.Pin()
	pinned.PinSig = keys.SignMember(pinned.pinFields(e.cfg.Path)...)
	data, _ = json.Marshal(pinned)
	f.Add(data, int64(77))
	pinned.Pin = "another"
	data, _ = json.Marshal(pinned)
	f.Add(data, int64(77))
	f.Add(data, int64(78))
	f.Add([]byte(`{"id":"x","fleet":"https://outsider:1"}`), int64(0))
	f.Add([]byte(`{"id":"x","fleet":"https://outsider:1","session":"4d","sig":"AAAA"}`), int64(77))
	f.Add([]byte(`edge-1 127.0.0.1:8080`), int64(5))
	f.Fuzz(func(t *testing.T, data []byte, owner int64) {
		m, why := e.check(data, &zk.Stat{EphemeralOwner: owner})
		if why != "" {
			if m != nil {
				t.Fatalf("refused (%s) with a member", why)
			}
			return
		}
		if owner == 0 || m.Session != strconv.FormatInt(owner, 16) || !keys.VerifyMember(m.Sig, m.fields(e.cfg.Path)...) {
			t.Fatalf("took part: %+v owned by %d", m, owner)
		}
		if (m.Pin != "" || m.PinSig != "") && !keys.VerifyMember(m.PinSig, m.pinFields(e.cfg.Path)...) {
			t.Fatalf("took part with a pin not signed: %+v", m)
		}
	})
}
