package edge_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edge-stats/edge/edge"
)

// cacheCounts reads the answer cache's hits and misses from /metrics.
func cacheCounts(t *testing.T, h *harness) (hits, misses int) {
	t.Helper()
	for line := range strings.SplitSeq(string(get(t, "GET", h.Base+"/metrics").body), "\n") {
		if v, ok := strings.CutPrefix(line, "edge_answer_cache_hits_total "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			hits = int(f)
		}
		if v, ok := strings.CutPrefix(line, "edge_answer_cache_misses_total "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			misses = int(f)
		}
	}
	return hits, misses
}

// TestJunkParametersDoNotEvictHotAnswers is the cache-pollution attack:
// ignored parameters make endless spellings of one
// answer (/api/extensions?pageSize=200&x=1, &x=2, …). After 100,000 such
// requests, at least 95% of a hot set of 20,000 answers is still cached.
func TestJunkParametersDoNotEvictHotAnswers(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.CacheMB = 256 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	fetch := func(path string) {
		resp, err := client.Get(h.Base + path)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	run := func(n int, path func(i int) string) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n && !t.Failed(); i = int(next.Add(1)) - 1 {
					fetch(path(i))
				}
			})
		}
		wg.Wait()
	}
	// The hot set: 20,000 distinct answers (100 page sizes × 200 pages),
	// asked three times: the first ask keeps no answer (they are kept on
	// their second), and the cache admits them on the third.
	hot := func(i int) string {
		return fmt.Sprintf("/api/extensions?pageSize=%d&page=%d", 1+i%100, 1+i/100)
	}
	const hotN, junkN = 20000, 100000
	run(hotN, hot)
	run(hotN, hot)
	run(hotN, hot)
	_, before := cacheCounts(t, h)
	run(hotN, hot)
	_, after := cacheCounts(t, h)
	if missed := after - before; missed > hotN/100 {
		t.Fatalf("the hot set is not cached to begin with: %d of %d missed", missed, hotN)
	}
	// The attack: one large answer under 100,000 spellings.
	run(junkN, func(i int) string { return "/api/extensions?pageSize=200&x=" + strconv.Itoa(i) })
	_, before = cacheCounts(t, h)
	run(hotN, hot)
	_, after = cacheCounts(t, h)
	if missed := after - before; missed > hotN*5/100 {
		t.Fatalf("after %d junk-parameter requests %d of the %d hot answers were evicted (more than 5%%)", junkN, missed, hotN)
	}
}
