package edge_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge/limits"
)

// TestToolCallsPastTheDaySayTheDay: a key whose day
// is used up is refused for the day however often it asks, on /api/v1
// (TestMinuteAndDayLimits) and on /mcp, where every request counts
// against the minute: once the minute is full too, the refusal says the
// day's Retry-After (until midnight), not the minute's.
func TestToolCallsPastTheDaySayTheDay(t *testing.T) {
	h := start(t, seeded(t), withLimits(limits.Policy{PerMinute: 100, PerDay: 100}, limits.Policy{PerMinute: 5, PerDay: 3}))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	key, _ := signUpWithKey(t, h, "mcpday@example.com")
	hdr := map[string]string{"Authorization": "Bearer " + key}
	tags := func(id int) answer {
		return rpc(t, h, hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_tags","arguments":{}}}`, id))
	}
	for i := range 3 {
		if a := tags(i); a.status != 200 {
			t.Fatalf("call %d: %d %s", i, a.status, a.body)
		}
	}
	// More refused requests than the minute holds (5): each is refused
	// for the day, with the day's Retry-After.
	for i := range 8 {
		a := tags(100 + i)
		_, remaining, reset, _ := rateHeaders(a)
		ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
		if a.status != http.StatusTooManyRequests || remaining != 0 || ra < reset-1 || ra > reset+1 || !strings.Contains(string(a.body), "calls are used") {
			t.Fatalf("tool call %d after the day was used: %d remaining %d reset %d Retry-After %d: %s", i, a.status, remaining, reset, ra, a.body)
		}
	}
	// The API says the day for the same key.
	a := call(t, "GET", h.Base+"/api/v1/tags", hdr, "")
	_, _, reset, _ := rateHeaders(a)
	if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); a.status != http.StatusTooManyRequests || ra < reset-1 {
		t.Fatalf("API after the day was used: %d Retry-After %d reset %d", a.status, ra, reset)
	}
}
