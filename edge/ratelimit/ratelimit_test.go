package ratelimit

import (
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestAppendField(t *testing.T) {
	d := Decision{Limit: 1000, Remaining: 998, Reset: 1500 * time.Millisecond, Policy: `60;w=60, 1000;w=86400`}
	for f, want := range map[Field]string{FieldLimit: "1000", FieldRemaining: "998", FieldReset: "2", FieldPolicy: d.Policy} {
		if got := string(d.AppendField([]byte("x"), f)); got != "x"+want {
			t.Errorf("field %d: %q, want %q", f, got, "x"+want)
		}
	}
}

// TestApplied checks that the limit a route applied is found on its
// request, and that a request no limit was applied to has none.
func TestApplied(t *testing.T) {
	var ctx fasthttp.RequestCtx
	if _, ok := AppliedTo(&ctx); ok {
		t.Fatal("a limit on a request none was applied to")
	}
	caller := netip.MustParseAddr("192.0.2.7")
	Apply(&ctx, Applied{Caller: caller, Admit: func(netip.Addr, time.Time) (Decision, bool) { return Decision{Limit: 7}, true }})
	a, ok := AppliedTo(&ctx)
	if !ok || a.Caller != caller {
		t.Fatalf("applied %+v %v", a, ok)
	}
	if d, ok := a.Admit(caller, time.Now()); !ok || d.Limit != 7 {
		t.Fatalf("admit: %+v %v", d, ok)
	}
}
