package edge_test

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edge-stats/edge/edge/keys"
)

// TestKeyLimitHoldsUnderRaces: creates of keys racing on two edges of a
// fleet (four at once on each) leave the account with at most its most
// active keys, and every key answered 201 is one of them (the same class
// of defect as the webhooks' limit: counted on each edge, then written).
func TestKeyLimitHoldsUnderRaces(t *testing.T) {
	ch := chtestMigrated(t)
	a, b := start(t, ch), start(t, ch)
	email := "keys-racer@example.com"
	if r := call(t, "POST", a.Base+"/account", nil, `{"email":"`+email+`","password":"long enough password"}`); r.status != 201 {
		t.Fatalf("sign up: %d %s", r.status, r.body)
	}
	auth := basic(email, "long enough password")
	var wg sync.WaitGroup
	var created atomic.Int64
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := [2]*harness{a, b}[i%2]
			r := call(t, "POST", h.Base+"/account/keys", auth, "")
			switch r.status {
			case 201:
				created.Add(1)
			case 409:
			default:
				t.Errorf("a racing create answered %d %s", r.status, r.body)
			}
		}()
	}
	wg.Wait()
	var list struct {
		Keys []struct {
			ID      string
			Revoked bool
		}
	}
	r := call(t, "GET", b.Base+"/account/keys", auth, "")
	if err := json.Unmarshal(r.body, &list); err != nil {
		t.Fatalf("keys: %d %s", r.status, r.body)
	}
	active := 0
	for _, k := range list.Keys {
		if !k.Revoked {
			active++
		}
	}
	if active > keys.MaxKeys || int64(active) != created.Load() || active == 0 {
		t.Fatalf("8 racing creates with a most of %d: %d active, %d answered 201", keys.MaxKeys, active, created.Load())
	}
}
