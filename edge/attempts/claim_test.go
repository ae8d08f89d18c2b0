package attempts

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Claims are ordered by when they happened, whichever edge wrote them:
// of three claims against a limit of two, the later one is refused on
// either edge; a revoked claim stops counting, for the fleet's order and
// for another edge's windows; with the store away, a claim says so.
func TestClaimsOrderTheFleetAndRevokeTakesBack(t *testing.T) {
	ctx := context.Background()
	store := Memory()
	a, _ := newLog(store)
	b, fromA := newLog(store)
	key := Subject("signup", "192.0.2.1")
	lim := Limit{Kind: SignUp, Key: key, Max: 2, Span: time.Hour}
	// Made at once (a claim waits for the fleet's earlier ones), the
	// last written first.
	now := time.Now()
	var (
		wg      sync.WaitGroup
		tickets [3]Ticket
		oks     [3]bool
		errs    [3]error
	)
	for i, l := range []*Log{a, b, a} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(2-i) * 20 * time.Millisecond)
			tickets[i], oks[i], errs[i] = l.Claim(ctx, now.Add(time.Duration(i)*time.Millisecond), lim)
		}()
	}
	wg.Wait()
	if errs != [3]error{} || oks != [3]bool{true, true, false} {
		t.Fatalf("three claims against 2: %v %v, want the third refused", oks, errs)
	}
	first := tickets[0]
	if err := a.Revoke(ctx, first); err != nil {
		t.Fatal(err)
	}
	// The refused third still counts: one more is refused, until the
	// first's revocation leaves room for exactly one.
	if _, ok, err := b.Claim(ctx, time.Now(), lim); err != nil || ok {
		t.Errorf("a claim after two admitted, one refused and one revoked: %v %v, want refused", ok, err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	n, revoked := 0, 0
	for _, at := range fromA.got {
		if at.Key == key && at.Revoked {
			revoked++
		} else if at.Key == key {
			n++
		}
	}
	if n != 2 || revoked != 1 {
		t.Errorf("b took %d of a's attempts and %d revocations, want 2 and 1", n, revoked)
	}
	store.Fail.Store(true)
	if tk, ok, err := a.Claim(ctx, time.Now(), lim); err == nil || ok || tk.Written() {
		t.Errorf("a claim with the store away: %v %v %v, want an error and nothing written", ok, err, tk.Written())
	}
}
