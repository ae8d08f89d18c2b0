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

// TestAppliedOnlyWhereReplayable checks that a request the replay path
// cannot record (here: not read from a raw connection) keeps no limit:
// the limiters pay for nothing it will not read. The requests it does
// record keep theirs (TestEveryRouteReplaysTheFullPathsBytes, package
// edge, replays every route under its limit).
func TestAppliedOnlyWhereReplayable(t *testing.T) {
	var ctx fasthttp.RequestCtx
	Apply(&ctx, Applied{Caller: netip.MustParseAddr("192.0.2.7"), Admit: func(netip.Addr, time.Time) (Decision, bool) { return Decision{}, true }})
	if a, ok := AppliedTo(&ctx); ok {
		t.Fatalf("a request the replay path cannot record keeps %+v", a)
	}
}
