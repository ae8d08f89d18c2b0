package limits

import (
	"net/netip"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// BenchmarkAdmit is the limits' cost of one admitted call, from parallel
// callers: one key (the worst case: every call takes the same lock) and
// one anonymous address. Run with -cpu 1,2 to see the contended cost;
// each call also reads the clock (time.Now), as a request's start time.
func BenchmarkAdmit(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Anonymous = Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	cfg.Keyed = cfg.Anonymous
	for _, sub := range []struct {
		name string
		s    Subject
	}{{"key", Subject{Key: "edge_abcdefgh"}}, {"address", Subject{Addr: netip.MustParseAddr("192.0.2.1")}}} {
		b.Run(sub.name, func(b *testing.B) {
			l := New(cfg, usagelog.Memory())
			publishTotals(l.Usage, dayOf(time.Now()), nil, time.Now().Add(time.Hour))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if d := l.Admit(sub.s, 0, time.Now()); d.Outcome != ratelimit.Admitted {
						b.Fatal(d.Outcome)
					}
				}
			})
		})
	}
}
