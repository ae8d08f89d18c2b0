package replay

import (
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/edge/transport"
)

const testHead = "HTTP/1.1 200 OK\r\nDate: Wed, 25 Nov 2026 00:00:00 GMT\r\nContent-Type: application/json\r\nContent-Length: 4\r\n" +
	"Ratelimit-Limit: 500\r\nRatelimit-Remaining: 499\r\nRatelimit-Reset: 3600\r\nRatelimit-Policy: 30;w=60, 500;w=86400\r\nEtag: W/\"x\"\r\n\r\n"

func TestSplit(t *testing.T) {
	parts, fields := split([]byte(testHead))
	if len(parts) != 6 || len(fields) != 5 {
		t.Fatalf("%d parts, %d fields", len(parts), len(fields))
	}
	want := []field{fieldDate, fieldLimit, fieldRemaining, fieldReset, fieldPolicy}
	var b strings.Builder
	for i, p := range parts {
		b.Write(p)
		if i < len(fields) {
			if fields[i] != want[i] {
				t.Errorf("field %d: %d, want %d", i, fields[i], want[i])
			}
			b.WriteString("<>")
		}
	}
	if got := b.String(); got != "HTTP/1.1 200 OK\r\nDate: <>\r\nContent-Type: application/json\r\nContent-Length: 4\r\n"+
		"Ratelimit-Limit: <>\r\nRatelimit-Remaining: <>\r\nRatelimit-Reset: <>\r\nRatelimit-Policy: <>\r\nEtag: W/\"x\"\r\n\r\n" {
		t.Errorf("split: %q", got)
	}
	// A head without dynamic values is one part.
	if parts, fields := split([]byte("HTTP/1.1 304 Not Modified\r\nEtag: W/\"x\"\r\n\r\n")); len(parts) != 1 || len(fields) != 0 {
		t.Errorf("no dynamic values: %d parts, %d fields", len(parts), len(fields))
	}
}

func TestCallerOf(t *testing.T) {
	proxy, client, other := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("10.0.0.2")
	trusted := clientip.Prefixes{netip.MustParsePrefix("10.0.0.0/8")}
	direct := &record{remote: client, caller: client}
	viaHeader := &record{remote: proxy, caller: client, viaProxy: true}
	viaNone := &record{remote: proxy, caller: proxy, viaProxy: true} // no header: the proxy is the caller
	cases := []struct {
		name string
		r    *record
		peer netip.Addr
		want netip.Addr
		ok   bool
	}{
		{"direct, another address", direct, netip.MustParseAddr("192.0.2.9"), netip.MustParseAddr("192.0.2.9"), true},
		{"direct, from a proxy", direct, proxy, netip.Addr{}, false},
		{"a header, from another proxy", viaHeader, other, client, true},
		{"a header, from no proxy", viaHeader, client, netip.Addr{}, false},
		{"the proxy itself, the same proxy", viaNone, proxy, proxy, true},
		{"the proxy itself, another proxy", viaNone, other, netip.Addr{}, false},
	}
	for _, c := range cases {
		got, ok := c.r.callerOf(c.peer, trusted)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// fakeConn is a transport.Conn that keeps what it is sent.
type fakeConn struct {
	peer       netip.Addr
	head, body []byte
}

func (c *fakeConn) Peer() netip.Addr { return c.peer }
func (c *fakeConn) Scratch() []byte  { return nil }
func (c *fakeConn) Respond(head, body []byte, _ *transport.File) error {
	c.head, c.body = append([]byte(nil), head...), body
	return nil
}

// fakeSource is a Source of a fixed body that may stop holding.
type fakeSource struct {
	body  []byte
	holds atomic.Bool
	hits  atomic.Int64
}

func (s *fakeSource) Payload() ([]byte, *transport.File, bool) { return s.body, nil, s.holds.Load() }
func (s *fakeSource) Hit()                                     { s.hits.Add(1) }

// TestReplay replays a record made by hand and checks each reason a
// record is left to the slow path.
func TestReplay(t *testing.T) {
	var seq atomic.Uint64
	var draining atomic.Bool
	tb := New(Config{Slots: 16, Seq: seq.Load, Draining: &draining})
	src := &fakeSource{body: []byte("body")}
	src.holds.Store(true)
	admitted := true
	req := []byte("GET /api/v1/tags HTTP/1.1\r\nHost: x\r\n\r\n")
	parts, fields := split([]byte(testHead))
	counted := prometheus.NewCounter(prometheus.CounterOpts{Name: "c"})
	r := &record{req: req, seq: 0, head: parts, fields: fields, size: 4, src: src, admit: func(netip.Addr, time.Time) (ratelimit.Decision, bool) {
		return ratelimit.Decision{Limit: 500, Remaining: 41, Reset: 90 * time.Second, Policy: "30;w=60, 500;w=86400"}, admitted
	}, count: counted, latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h"})}
	r.hash = hashOf(req)
	tb.slots[r.hash&tb.mask].Store(r)
	c := &fakeConn{peer: netip.MustParseAddr("192.0.2.1")}

	if ok, err := tb.Replay(c, req); !ok || err != nil {
		t.Fatalf("Replay: %v %v", ok, err)
	}
	head := string(c.head)
	for _, want := range []string{"\r\nRatelimit-Remaining: 41\r\n", "\r\nRatelimit-Reset: 90\r\n", "\r\nRatelimit-Limit: 500\r\n", "\r\nEtag: W/\"x\"\r\n\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("head lacks %q: %q", want, head)
		}
	}
	if date, _, _ := strings.Cut(strings.SplitN(head, "Date: ", 2)[1], "\r\n"); len(date) != 29 || !strings.HasSuffix(date, " GMT") {
		t.Errorf("Date %q", date)
	}
	if string(c.body) != "body" {
		t.Errorf("body %q", c.body)
	}
	refused := []struct {
		name  string
		req   []byte
		setup func()
	}{
		{"other bytes", []byte("GET /api/v1/tags HTTP/1.1\r\nHost: y\r\n\r\n"), func() {}},
		{"a publish", req, func() { seq.Add(1) }},
		{"draining", req, func() { draining.Store(true) }},
		{"the answer gone", req, func() { src.holds.Store(false) }},
		{"another length", req, func() { src.body = []byte("bodies") }},
		{"not admitted", req, func() { admitted = false }},
	}
	for _, c2 := range refused {
		c2.setup()
		if ok, _ := tb.Replay(c, c2.req); ok {
			t.Errorf("%s: replayed", c2.name)
		}
		seq.Store(0)
		draining.Store(false)
		src.holds.Store(true)
		src.body = []byte("body")
		admitted = true
	}
	if ok, _ := tb.Replay(c, req); !ok {
		t.Error("not replayed once restored")
	}
	// Hits are counted for answers replayed only.
	if n := src.hits.Load(); n != 2 {
		t.Errorf("%d cache hits counted, want 2", n)
	}
}
