//go:build linux

package edge_test

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
)

// metricSum returns the sum of the samples of /metrics whose line starts
// with prefix (a name, or a name and the start of its labels).
func metricSum(t *testing.T, h *harness, prefix string) float64 {
	t.Helper()
	sum := 0.0
	for line := range strings.SplitSeq(string(get(t, "GET", h.Base+"/metrics").body), "\n") {
		if strings.HasPrefix(line, prefix) {
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", line, err)
			}
			sum += v
		}
	}
	return sum
}

// TestSuggestionsStopWhenTheClientLeaves sends, over a raw TCP
// connection, the worst search of the listings page (a fruitless q of as
// many junk words as a URI holds, whose suggestions would try 4 prefixes
// and 4 words) and closes the connection at once: the edge stops its
// suggestion searches before their last (edge_page_suggestion_searches_total;
// none ran in every run seen) and counts them stopped because the client
// left, and that page, cut
// short, is not kept: the same search asked by a client that waits runs
// its suggestions (and is kept then).
func TestSuggestionsStopWhenTheClientLeaves(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.PageRate, c.Replay = 0, false })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	var words []string
	for i := 0; len(strings.Join(words, "+")) < 7600; i++ {
		words = append(words, "zqxj"+strconv.Itoa(i))
	}
	path := "/listings?q=" + strings.Join(words, "+") // about 1,000 words, 7.6 KB
	const (
		searches = "edge_page_suggestion_searches_total "
		gone     = `edge_page_suggestion_searches_stopped_total{why="gone"} `
		answered = `edge_http_requests_total{route="/listings",`
	)
	searched, left, done := metricSum(t, h, searches), metricSum(t, h, gone), metricSum(t, h, answered)

	conn, err := net.Dial("tcp", strings.TrimPrefix(h.Base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: edge.test\r\nAccept: text/html\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// Until the edge has answered it (to no one); a bound, not a measure.
	for end := time.Now().Add(20 * time.Second); metricSum(t, h, answered) == done; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the edge never answered the search its client left")
		}
	}
	// The client's FIN is on the socket before the page's own search
	// ends: none of the 8 runs, and if it came later, fewer than 8.
	if n := metricSum(t, h, searches) - searched; n >= 8 {
		t.Errorf("the client left before its suggestions, and all %v of their searches ran", n)
	} else if n != 0 {
		t.Logf("%v suggestion searches ran before the edge saw the client leave", n)
	}
	if n := metricSum(t, h, gone) - left; n != 1 {
		t.Errorf("%v suggestions counted stopped because their client left, want 1", n)
	}

	// The same search asked by a client that waits: its page was not
	// kept without its suggestions.
	searched, left = metricSum(t, h, searches), metricSum(t, h, gone)
	if a := ask(t, h, path, "text/html"); a.status != 200 || !strings.Contains(string(a.body), "isting matches") {
		t.Fatalf("%d: the search of junk words finds listings: %.300s", a.status, a.body)
	}
	ran := metricSum(t, h, searches) - searched
	if ran == 0 {
		t.Error("the search asked again ran no suggestion: the page of the client that left, without them, was kept")
	}
	if n := metricSum(t, h, gone) - left; n != 0 {
		t.Errorf("a client that waits had its suggestions stopped as gone (%v times)", n)
	}
	searched = metricSum(t, h, searches)
	ask(t, h, path, "text/html")
	if n := metricSum(t, h, searches) - searched; n != 0 {
		t.Errorf("the search's page with its suggestions was not kept: asked again, %v suggestion searches ran", n)
	}
	t.Logf("suggestion searches of the search asked by a client that waits: %v", ran)
}
