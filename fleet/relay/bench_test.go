package relay

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
)

// BenchmarkUsageAnswer measures the leader's answer to a follower's
// usage read when each of the fleet's edges wrote one batch of the same
// 1,000 subjects: as rows (a follower of the release before) and as sums
// (B/answer is its size).
func BenchmarkUsageAnswer(b *testing.B) {
	for _, edges := range []int{10, 100} {
		base := usagelog.Memory()
		rec := NewRecorder(base)
		ctx := context.Background()
		read, err := rec.Day(ctx, day)
		if err != nil {
			b.Fatal(err)
		}
		for e := range edges {
			deltas := make([]analytics.UsageDelta, 1000)
			for i := range deltas {
				deltas[i] = analytics.UsageDelta{Day: day, Subject: fmt.Sprintf("203.0.113.%d/%d", i%256, i), Calls: 3}
			}
			if err := base.Add(ctx, analytics.UsageBatch{Edge: fmt.Sprintf("edge-%03d", e), Seq: 42}, deltas, false); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := rec.Since(ctx, day, read.Pos); err != nil {
			b.Fatal(err)
		}
		at, n := posJSON(read.Pos)
		for _, sum := range []bool{false, true} {
			q := url.Values{"day": {day.Format("2006-01-02")}, "at": {fmt.Sprint(at)}, "n": {fmt.Sprint(n)}}
			name := "rows"
			if sum {
				q.Set("sum", "1")
				name = "sums"
			}
			b.Run(fmt.Sprintf("%s/edges=%d", name, edges), func(b *testing.B) {
				size := 0
				for b.Loop() {
					w := httptest.NewRecorder()
					rec.ServeHTTP(w, httptest.NewRequest("GET", UsagePath+"?"+q.Encode(), nil))
					size = w.Body.Len()
				}
				b.ReportMetric(float64(size), "B/answer")
			})
		}
	}
}
