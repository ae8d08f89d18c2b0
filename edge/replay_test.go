package edge_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/views"
)

// rawClient is one keep-alive connection that sends requests as bytes
// and reads answers as bytes.
type rawClient struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

func dialRaw(t testing.TB, h *harness) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.Base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(time.Minute))
	return &rawClient{t: t, conn: conn, br: bufio.NewReader(conn)}
}

// rawRequest spells a GET of path with the given header lines.
func rawRequest(path string, headers ...string) string {
	var b strings.Builder
	b.WriteString("GET " + path + " HTTP/1.1\r\nHost: edge.test\r\n")
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// rawAnswer is an answer as it came: its head's bytes and its body.
type rawAnswer struct {
	head string
	body []byte
}

func (a rawAnswer) status() int {
	s, _ := strconv.Atoi(strings.Fields(a.head)[1])
	return s
}

// header returns the value of the header line named (as the edge spells
// it), or "".
func (a rawAnswer) header(name string) string {
	for line := range strings.SplitSeq(a.head, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return v
		}
	}
	return ""
}

// send writes req and reads one answer (to a GET).
func (c *rawClient) send(req string) rawAnswer {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, req); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

func (c *rawClient) read() rawAnswer {
	c.t.Helper()
	var head bytes.Buffer
	for !bytes.HasSuffix(head.Bytes(), []byte("\r\n\r\n")) {
		line, err := c.br.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("reading an answer's head after %q: %v", head.String(), err)
		}
		head.Write(line)
	}
	a := rawAnswer{head: head.String()}
	if n, err := strconv.Atoi(a.header("Content-Length")); err == nil && n > 0 {
		a.body = make([]byte, n)
		if _, err := io.ReadFull(c.br, a.body); err != nil {
			c.t.Fatal(err)
		}
	}
	return a
}

// perCall are the values of a head that differ from one call to the
// next: the date and the caller's count.
var perCall = regexp.MustCompile(`(?m)^(Date|Ratelimit-Remaining|Ratelimit-Reset): [^\r]*`)

func sameButPerCall(a, b rawAnswer) bool {
	return perCall.ReplaceAllString(a.head, "$1: -") == perCall.ReplaceAllString(b.head, "$1: -") && bytes.Equal(a.body, b.body)
}

// TestReplayedAnswersMatchTheSlowPath asks each of the cached answers a
// dashboard or a CDN asks (both APIs, every coding, 304s by either
// validator) four times on one connection: the first two are answered by
// fasthttp and fiber (the second is recorded), the next two are replayed
// (the replay metric says so), and all must be the same bytes but for the
// date and the caller's count, which goes down by one a call.
func TestReplayedAnswersMatchTheSlowPath(t *testing.T) {
	h := legacyEdge(t)
	etag := get(t, "GET", h.Base+"/api/v1/listings").header.Get("ETag")
	lastMod := get(t, "GET", h.Base+"/api/summary").header.Get("Last-Modified")
	if etag == "" || lastMod == "" {
		t.Fatalf("no validators: %q %q", etag, lastMod)
	}
	cases := []struct {
		path    string
		headers []string
		status  int
	}{
		{"/api/summary", nil, 200},
		{"/api/summary", []string{"Accept-Encoding: gzip"}, 200},
		{"/api/summary", []string{"If-Modified-Since: " + lastMod}, 304},
		{"/api/extensions?platform=0", []string{"Accept-Encoding: gzip, deflate, br, zstd", "User-Agent: Mozilla/5.0"}, 200},
		{"/api/extensions?platform=0&page=2", []string{"Accept-Encoding: br;q=0.5, gzip;q=0.9"}, 200},
		{"/api/categories", []string{"Accept-Encoding: zstd"}, 200},
		{"/api/v1/listings", []string{"Accept-Encoding: gzip"}, 200},
		{"/api/v1/listings", []string{"Accept-Encoding: gzip", "If-None-Match: " + etag}, 304},
		{"/api/v1/listings", []string{"If-None-Match: W/\"other\""}, 200},
		{"/api/v1/listings?store=chrome&sort=installs&pageSize=5", []string{"Accept-Encoding: br"}, 200},
		{"/api/v1/categories/chrome", []string{"Accept-Encoding: identity"}, 200},
		{"/api/v1/tags", []string{"Origin: https://dash.example"}, 200},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %v", c.path, c.headers), func(t *testing.T) {
			cl := dialRaw(t, h)
			req := rawRequest(c.path, c.headers...)
			get(t, "GET", h.Base+c.path) // a query's answer is kept on its second ask
			before := metricOf(t, h.Base, "edge_replayed_total")
			first := cl.send(req)
			if first.status() != c.status {
				t.Fatalf("status %d, want %d: %s", first.status(), c.status, first.head)
			}
			for i := range 3 {
				again := cl.send(req)
				if !sameButPerCall(first, again) {
					t.Fatalf("call %d differs from the first:\n%s\n%s", i+2, first.head, again.head)
				}
				if _, err := http.ParseTime(again.header("Date")); err != nil {
					t.Errorf("Date %q: %v", again.header("Date"), err)
				}
				if strings.HasPrefix(c.path, "/api/v1/") {
					r0, _ := strconv.Atoi(first.header("Ratelimit-Remaining"))
					r1, _ := strconv.Atoi(again.header("Ratelimit-Remaining"))
					reset, err := strconv.Atoi(again.header("Ratelimit-Reset"))
					if r1 != r0-1-i || err != nil || reset <= 0 || reset > 86400 {
						t.Errorf("call %d: RateLimit-Remaining %d after %d, Reset %d", i+2, r1, r0, reset)
					}
				}
			}
			if got := metricOf(t, h.Base, "edge_replayed_total") - before; got != 2 {
				t.Errorf("%v calls replayed, want 2", got)
			}
		})
	}
}

// TestReplayLeavesTheRestToTheSlowPath checks what is never replayed:
// a keyed call, a HEAD, a refusal, a request whose answer is not cached,
// and a request asking to close its connection.
func TestReplayLeavesTheRestToTheSlowPath(t *testing.T) {
	h := legacyEdge(t)
	cases := []struct {
		name string
		req  string
	}{
		{"a key", rawRequest("/api/v1/listings", "Authorization: Bearer edge_0000000000000000000000000000000000")},
		{"a refusal", rawRequest("/api/v1/listings?cursor=%25%25%25")},
		{"not found", rawRequest("/api/v1/nothing")},
		{"not cached", rawRequest("/readyz")},
		{"406", rawRequest("/api/summary", "Accept-Encoding: identity;q=0, *;q=0")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := dialRaw(t, h)
			before := metricOf(t, h.Base, "edge_replay_records_total")
			first := cl.send(c.req)
			cl.send(c.req)
			again := cl.send(c.req)
			if first.status() != again.status() {
				t.Errorf("status %d then %d", first.status(), again.status())
			}
			if n := metricOf(t, h.Base, "edge_replay_records_total") - before; n != 0 {
				t.Errorf("%v answers recorded: %s", n, first.head)
			}
		})
	}
	// Connection: close is answered, and the connection closed.
	cl := dialRaw(t, h)
	req := rawRequest("/api/summary", "Connection: close")
	cl.send(req)
	if _, err := io.WriteString(cl.conn, req); err == nil {
		if b, _ := io.ReadAll(cl.br); len(b) > 0 {
			t.Errorf("an answer after Connection: close: %q", b)
		}
	}
}

// TestReplayKeepsTheLimits attacks the v1 limits and the legacy fair use
// through answers the replay path holds: the same bytes again, from many
// connections at once, with rotating X-Forwarded-For addresses from a
// trusted proxy and from a connection that is not one. Every call over a
// limit is refused, and no call is counted twice.
func TestReplayKeepsTheLimits(t *testing.T) {
	trusted, _ := clientip.ParsePrefixes("127.0.0.1")
	const perDay = 6
	h := legacyEdge(t, withLimits(limits.Policy{PerMinute: 1000, PerDay: perDay}, limits.DefaultConfig().Keyed),
		func(c *edge.Config) {
			c.TrustedProxies = trusted
			c.FairUseRate, c.FairUseBurst = 0.001, 3
		})
	statuses := func(cl *rawClient, req string, n int) []int {
		var out []int
		for range n {
			out = append(out, cl.send(req).status())
		}
		return out
	}
	want := func(ok, refused int) string {
		s := strings.Repeat("200 ", ok) + strings.Repeat("429 ", refused)
		return strings.TrimSpace(s)
	}
	join := func(s []int) string { return strings.Trim(fmt.Sprint(s), "[]") }

	// v1: each forwarded client its own day, replayed from its third call.
	replayed := metricOf(t, h.Base, "edge_replayed_total")
	for i := range 4 {
		cl := dialRaw(t, h)
		req := rawRequest("/api/v1/categories/chrome", "Accept-Encoding: gzip", fmt.Sprintf("X-Forwarded-For: 198.51.100.%d", i+1))
		if got := join(statuses(cl, req, perDay+2)); got != want(perDay, 2) {
			t.Errorf("client %d: %s, want %s", i+1, got, want(perDay, 2))
		}
	}
	if n := metricOf(t, h.Base, "edge_replayed_total") - replayed; n != 4*(perDay-2) {
		t.Errorf("%v calls replayed, want %d (all but the first two of each client's admitted calls)", n, 4*(perDay-2))
	}
	// The same bytes from eight connections at once, for a client with
	// a fresh day: exactly perDay admitted.
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	req := rawRequest("/api/v1/categories/chrome", "Accept-Encoding: gzip", "X-Forwarded-For: 198.51.100.99")
	for range 8 {
		cl := dialRaw(t, h)
		wg.Go(func() {
			for range 4 {
				switch s := cl.send(req).status(); s {
				case 200:
					ok.Add(1)
				case 429:
					refused.Add(1)
				default:
					t.Errorf("status %d", s)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != perDay || refused.Load() != 32-perDay {
		t.Errorf("racing connections: %d admitted, %d refused; want %d and %d", ok.Load(), refused.Load(), perDay, 32-perDay)
	}

	// Legacy fair use: a burst of 3 per forwarded client.
	for i := range 3 {
		cl := dialRaw(t, h)
		req := rawRequest("/api/summary", "Accept-Encoding: br", fmt.Sprintf("X-Forwarded-For: 203.0.113.%d", i+1))
		if got := join(statuses(cl, req, 5)); got != want(3, 2) {
			t.Errorf("fair use, client %d: %s, want %s", i+1, got, want(3, 2))
		}
	}
}

// TestReplayTrustsOnlyTrustedProxies checks that a connection from an
// address that is not a trusted proxy cannot name other clients to the
// replay path: rotating X-Forwarded-For values all count against the
// connection's own address.
func TestReplayTrustsOnlyTrustedProxies(t *testing.T) {
	elsewhere, _ := clientip.ParsePrefixes("192.0.2.1")
	h := legacyEdge(t, withLimits(limits.Policy{PerMinute: 1000, PerDay: 4}, limits.DefaultConfig().Keyed),
		func(c *edge.Config) { c.TrustedProxies = elsewhere })
	cl := dialRaw(t, h)
	var got []int
	for i := range 8 {
		req := rawRequest("/api/v1/categories/chrome", fmt.Sprintf("X-Forwarded-For: 198.51.100.%d", i%2))
		got = append(got, cl.send(req).status())
	}
	if fmt.Sprint(got) != "[200 200 200 200 429 429 429 429]" {
		t.Errorf("forged X-Forwarded-For: %v", got)
	}
}

// TestReplayFollowsPublish checks that a record does not outlive the
// state its answer came from: after a new state is published, the same
// request is answered by the slow path (and recorded anew), and a
// pipelined batch of it gets its answers in order.
func TestReplayFollowsPublish(t *testing.T) {
	h := legacyEdge(t)
	cl := dialRaw(t, h)
	req := rawRequest("/api/summary", "Accept-Encoding: gzip")
	first := cl.send(req)
	cl.send(req)
	cl.send(req)
	recorded := metricOf(t, h.Base, "edge_replay_records_total")
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	after := cl.send(req)
	if n := metricOf(t, h.Base, "edge_replay_records_total") - recorded; n != 1 {
		t.Errorf("after a publish: %v new records, want 1 (the old one must not answer)", n)
	}
	if after.status() != 200 || after.header("Etag") == "" || first.header("Etag") == "" {
		t.Errorf("after a publish: %s", after.head)
	}
	// Pipelined, and the last one cut between two writes.
	if _, err := io.WriteString(cl.conn, req+req+req+req[:20]); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if a := cl.read(); !sameButPerCall(a, after) {
			t.Fatalf("pipelined: %s", a.head)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if a := cl.send(req[20:]); !sameButPerCall(a, after) {
		t.Fatalf("cut: %s", a.head)
	}
}

// TestReplayStopsWhenDraining checks that a stopping server answers a
// request the replay path holds with Connection: close, as every answer
// while it drains.
func TestReplayStopsWhenDraining(t *testing.T) {
	h := legacyEdge(t, func(c *edge.Config) { c.DrainTimeout = 2 * time.Second })
	cl := dialRaw(t, h)
	req := rawRequest("/api/summary")
	cl.send(req)
	cl.send(req)
	cl.send(req)
	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	defer func() {
		if err := <-stopped; err != nil {
			t.Error(err)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := cl.send(req)
		if a.header("Connection") == "close" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no Connection: close while draining")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEveryRouteReplaysTheFullPathsBytes feeds every GET route of both
// APIs through the full path and then the replay path, over a seeded
// ClickHouse: the first two calls of each are answered by fasthttp and
// fiber (the second is recorded by the responder), the next two from the
// record, and all four must be the same bytes but for the date and the
// caller's count. A route added to either API without a request here, or
// a reason it is not replayed, fails the test.
func TestEveryRouteReplaysTheFullPathsBytes(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageBurst = 1000 }) // every page route asked a few times from one address
	for _, job := range []string{"views", "editions"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	st := h.State.Load()
	l, other := firstLive(t, h, views.Firefox), firstLive(t, h, views.Edge)
	listing := "/api/v1/listings/firefox/" + url.PathEscape(l.ID)
	tag := st.Figures.Topics()[0].Slug
	// (The list names each edition by "week": the test read a field
	// "id" before, and so asked for /api/v1/week/.)
	weekIDs := getOK[struct{ Weeks []struct{ Week string } }](t, h.Base+"/api/v1/weeks")
	if len(weekIDs.Weeks) == 0 || weekIDs.Weeks[0].Week == "" {
		t.Fatal("no weekly edition to ask for")
	}
	requests := map[string]string{
		"/api/v1/listings":                        "/api/v1/listings?store=firefox&sort=growth7d&limit=5",
		"/api/v1/listings/:store/:id":             listing,
		"/api/v1/listings/:store/:id/reviews":     listing + "/reviews",
		"/api/v1/listings/:store/:id/history":     listing + "/history?days=30",
		"/api/v1/listings/:store/:id/history.csv": listing + "/history.csv",
		"/api/v1/listings/:store/:id/growth":      listing + "/growth?from=2026-02-20",
		"/api/v1/compare":                         "/api/v1/compare?listings=firefox:" + url.QueryEscape(l.ID) + ",edge:" + url.QueryEscape(other.ID),
		"/api/v1/compare.csv":                     "/api/v1/compare.csv?listings=firefox:" + url.QueryEscape(l.ID) + ",edge:" + url.QueryEscape(other.ID),
		"/api/v1/changes":                         "/api/v1/changes?limit=5",
		"/api/v1/listings/:store/:id/changes":     listing + "/changes",
		"/api/v1/listings/:store/:id/changes.csv": listing + "/changes.csv",
		"/api/v1/events":                          "/api/v1/events?limit=5",
		"/api/v1/events.csv":                      "/api/v1/events.csv?limit=5",
		"/api/v1/reviews/search":                  "/api/v1/reviews/search?q=good",
		"/api/v1/categories/:store":               "/api/v1/categories/firefox",
		"/api/v1/categories/:store/:category":     "/api/v1/categories/firefox/" + url.PathEscape(l.Category),
		"/categories/:store/:category":            "/categories/firefox/" + url.PathEscape(l.Category),
		"/api/v1/permissions":                     "/api/v1/permissions",
		"/api/v1/developers/:store/:developer":    "/api/v1/developers/firefox/" + url.PathEscape(l.Developer),
		"/developers/:store/:developer":           "/developers/firefox/" + url.PathEscape(l.Developer),
		"/permissions":                            "/permissions",
		"/badges/:store/:id/:figure":              "/badges/firefox/" + url.PathEscape(l.ID) + "/users.svg",
		"/embed/:store/:id/size.svg":              "/embed/firefox/" + url.PathEscape(l.ID) + "/size.svg",
		"/api/v1/charts/:store":                   "/api/v1/charts/firefox?chart=top",
		"/api/v1/tags":                            "/api/v1/tags",
		"/api/v1/tags/:slug/:store":               "/api/v1/tags/" + tag + "/firefox",
		"/api/v1/stores/:store/stats":             "/api/v1/stores/firefox/stats",
		"/api/v1/week":                            "/api/v1/week",
		"/api/v1/weeks":                           "/api/v1/weeks",
		"/api/v1/week/:id":                        "/api/v1/week/" + weekIDs.Weeks[len(weekIDs.Weeks)-1].Week,
		"/api/extensions":                         "/api/extensions?platform=2&sort=rating",
		"/api/extensions.csv":                     "/api/extensions.csv?platform=2",
		"/api/summary":                            "/api/summary",
		"/api/categories":                         "/api/categories",
		"/api/permissions":                        "/api/permissions",
		"/listings/:store/:id":                    "/listings/firefox/" + url.PathEscape(l.ID),
		"/listings/:store/:id/changes.atom":       "/listings/firefox/" + url.PathEscape(l.ID) + "/changes.atom",
		"/listings/:store/:id/changes":            "/listings/firefox/" + url.PathEscape(l.ID) + "/changes",
		"/listings/:store/:id/reviews":            "/listings/firefox/" + url.PathEscape(l.ID) + "/reviews",
		"/listings/:store/:id/reviews.atom":       "/listings/firefox/" + url.PathEscape(l.ID) + "/reviews.atom",
		"/charts/:store":                          "/charts/firefox?chart=trending",
		"/stores/:store":                          "/stores/firefox",
		"/categories/:store":                      "/categories/firefox",
		"/tags":                                   "/tags",
		"/tags/:slug/:store":                      "/tags/" + tag + "/firefox",
		"/events":                                 "/events?store=firefox",
		"/events.atom":                            "/events.atom?kind=version",
		"/weeks":                                  "/weeks",
		"/weeks.atom":                             "/weeks.atom",
		"/week":                                   "/week",
		"/listings":                               "/listings?store=firefox&sort=growth7d&limit=5",
		"/compare":                                "/compare?listings=firefox:" + url.QueryEscape(l.ID) + ",edge:" + url.QueryEscape(other.ID),
		"/week/:id":                               "/week/" + weekIDs.Weeks[0].Week,
	}
	notReplayed := map[string]string{
		"/api/v1/openapi.json":   "no limit is applied to it (a CDN caches it)",
		"/api/v1/definitions":    "no limit is applied to it (a CDN caches it)",
		"/api/v1/exports":        "it needs a key, and keyed calls are never replayed",
		"/api/v1/exports/:day/*": "a file sent from disk, not an answer",
		"/api/v1/events/stream":  "a stream that needs a key, not an answer",
		"/robots.txt":            "made once at start, not kept in the answer cache the replay path records from",
		"/definitions":           "made once at start, as /api/v1/definitions is, not kept in the answer cache the replay path records from",
	}
	pages := []string{"/api/", "/listings", "/charts/", "/stores/", "/categories/", "/tags", "/events", "/week", "/definitions", "/compare", "/robots.txt",
		"/developers/", "/permissions", "/badges/", "/embed/"}
	for _, r := range h.Server.App().GetRoutes(true) {
		if r.Method != http.MethodGet || !slices.ContainsFunc(pages, func(p string) bool { return strings.HasPrefix(r.Path, p) }) {
			continue
		}
		if _, ok := requests[r.Path]; !ok && notReplayed[r.Path] == "" {
			t.Errorf("route %s: add a request of it to this test, or say why it is not replayed", r.Path)
		}
	}
	for route, path := range requests {
		t.Run(route, func(t *testing.T) {
			cl := dialRaw(t, h)
			req := rawRequest(path, "Accept-Encoding: gzip, br")
			get(t, "GET", h.Base+path) // a query's answer is kept on its second ask
			before := metricOf(t, h.Base, "edge_replayed_total")
			first := cl.send(req)
			if first.status() != http.StatusOK {
				t.Fatalf("%s: status %d: %s", path, first.status(), first.head)
			}
			for i := range 3 {
				if again := cl.send(req); !sameButPerCall(first, again) {
					t.Fatalf("%s: call %d differs from the first:\n%s\n%s", path, i+2, first.head, again.head)
				}
			}
			if got := metricOf(t, h.Base, "edge_replayed_total") - before; got != 2 {
				t.Errorf("%s: %v calls replayed, want 2", path, got)
			}
		})
	}
}

// TestStopEndsConnectionsWaitingOnTheReplayPath: a stopping server ends
// the connections that wait for a request on the replay path (the
// client reads the close, as from any idle connection) instead of
// waiting for their timeouts, past the graceful stop's own bound: one
// whose last request was replayed, and one opened and never used, as an
// HTTP client's dial that lost its race to an idle connection leaves.
// fasthttp, reading the first request of the second, does not see it
// idle.
func TestStopEndsConnectionsWaitingOnTheReplayPath(t *testing.T) {
	h := legacyEdge(t, func(c *edge.Config) { c.DrainTimeout, c.ShutdownTimeout = time.Second, 3*time.Second })
	used, unused := dialRaw(t, h), dialRaw(t, h)
	req := rawRequest("/api/summary")
	before := metricOf(t, h.Base, "edge_replayed_total")
	for range 3 {
		used.send(req)
	}
	if metricOf(t, h.Base, "edge_replayed_total") == before {
		t.Fatal("the third call was not replayed: the test tests nothing")
	}
	if err := h.Stop(); err != nil {
		t.Fatalf("stop: %v (a connection waiting on the replay path held it)", err)
	}
	for name, cl := range map[string]*rawClient{"used": used, "unused": unused} {
		cl.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := cl.br.ReadByte(); err != io.EOF {
			t.Errorf("%s connection after the stop: read %q, %v; want its close", name, n, err)
		}
	}
}
