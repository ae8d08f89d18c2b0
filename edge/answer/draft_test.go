package answer

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/missgate"
)

// page is an Appender: the answer of a query of the long tail.
type page []byte

func (p page) AppendJSON(b []byte) []byte { return append(b, p...) }

// asker asks GetQuery for one key and counts the builds.
type asker struct {
	c      *Cache
	builds atomic.Int32
}

func (k *asker) ask(t *testing.T, path string, first, partial bool, body []byte) *Answer {
	t.Helper()
	var buf [64]byte
	a, err := k.c.GetQuery(NewKey(buf[:0], path, 1), missgate.Caller{}, first, func() (*Answer, error) {
		k.builds.Add(1)
		return SearchDraft(page(body), partial), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	k.c.Wait()
	return a
}

// TestQueriesAreKeptOnTheirSecondAsk: a query of the long tail asked for
// the first time is answered from a pooled buffer and not kept; asked
// again, it is kept (a copy of its own) and then hit, as nginx's
// proxy_cache_min_uses 2. The server's own requests (first) and
// SetMinUses(1) keep at once; a partial answer is never kept; an answer
// that is not a draft is kept at once, as before.
func TestQueriesAreKeptOnTheirSecondAsk(t *testing.T) {
	body := jsonBody(50)
	newAsker := func(minUses int) *asker {
		c, err := NewCache(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		if minUses > 0 {
			c.SetMinUses(minUses)
		}
		return &asker{c: c}
	}

	k := newAsker(0)
	a1 := k.ask(t, "/q", false, false, body)
	if !a1.once || a1.home != nil || a1.scratch == nil || !bytes.Equal(a1.Body, body) {
		t.Fatalf("first ask: once %v, kept %v, pooled %v, body intact %v; want an unkept draft sent once", a1.once, a1.home != nil, a1.scratch != nil, bytes.Equal(a1.Body, body))
	}
	a2 := k.ask(t, "/q", false, false, body)
	if a2.once || a2.home == nil || a2.scratch != nil || !bytes.Equal(a2.Body, body) || a2.ETag != a1.ETag {
		t.Fatalf("second ask: once %v, kept %v, pooled %v; want a kept answer with the first one's ETag", a2.once, a2.home != nil, a2.scratch != nil)
	}
	if a3 := k.ask(t, "/q", false, false, body); a3 != a2 || k.builds.Load() != 2 {
		t.Fatalf("third ask: the kept answer %v, %d builds; want a hit after 2 builds", a3 == a2, k.builds.Load())
	}

	for name, tc := range map[string]struct {
		minUses int
		first   bool
	}{"the server's own request": {0, true}, "SetMinUses(1)": {1, false}} {
		k := newAsker(tc.minUses)
		if a := k.ask(t, "/q", tc.first, false, body); a.once || a.home == nil || a.scratch != nil {
			t.Errorf("%s: once %v, kept %v; want kept on the first ask", name, a.once, a.home != nil)
		}
	}

	k = newAsker(0)
	for i := range 3 {
		if a := k.ask(t, "/partial", false, true, body); !a.NoStore || a.home != nil || !a.once {
			t.Fatalf("partial answer, ask %d: kept %v; want never kept", i+1, a.home != nil)
		}
	}

	k = newAsker(0)
	var buf [64]byte
	a, err := k.c.GetQuery(NewKey(buf[:0], "/plain", 1), missgate.Caller{}, false, func() (*Answer, error) { return New(body, "application/json"), nil })
	if err != nil || a.home == nil || a.once {
		t.Fatalf("an answer that is not a draft: %v, kept %v; want kept at once", err, a.home != nil)
	}
}

// TestDraftSentOnceIsRecycled: a draft sent to one request goes out
// whole, in identity and in a content coding, with its ETag; its pooled
// buffer is given back once the handler returns (the response kept a
// copy), and a compressed variant of it gets no memfd.
func TestDraftSentOnceIsRecycled(t *testing.T) {
	body := jsonBody(300)
	c, err := NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	c.SetGate(missgate.New(missgate.Config{}))
	var last *Answer
	n := 0
	app := fiber.New()
	app.Get("/q", Responder{}.Handle(func(*fiber.Ctx) (Reply, error) {
		n++ // each request asks a query of its own: every answer is a first ask
		var buf [64]byte
		a, err := c.GetQuery(NewKey(buf[:0], "/q", 1).Int("n", int64(n)), missgate.Caller{}, false, func() (*Answer, error) {
			return Draft(page(body)), nil
		})
		last = a
		return Reply{Answer: a, CacheControl: Private}, err
	}))
	for _, enc := range []string{"", "gzip"} {
		req := httptest.NewRequest("GET", "/q", nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = resp.Body
		if enc == "gzip" {
			if r, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatalf("gzip: %v", err)
			}
		}
		got, _ := io.ReadAll(r)
		if resp.StatusCode != 200 || !bytes.Equal(got, body) || resp.Header.Get("ETag") != New(body, "").ETag {
			t.Fatalf("%q: %d, body intact %v, ETag %q", enc, resp.StatusCode, bytes.Equal(got, body), resp.Header.Get("ETag"))
		}
		if last.scratch != nil || last.Body != nil {
			t.Fatalf("%q: the draft's buffer was not given back", enc)
		}
		if enc == "gzip" {
			if v := last.vars[coding.Gzip].Load(); v == nil || v.file != nil {
				t.Fatalf("gzip variant %v: want one without a memfd", v)
			}
		}
	}
}

// TestSharedDraftIsNotRecycled: requests that wait for the same draft
// being built (singleflight) share it, and none gives its buffer back,
// as the others still send it.
func TestSharedDraftIsNotRecycled(t *testing.T) {
	body := jsonBody(100)
	c, err := NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	c.SetGate(missgate.New(missgate.Config{Burst: time.Minute}))
	started := make(chan struct{})
	var builds atomic.Int32
	build := func() (*Answer, error) {
		if builds.Add(1) == 1 {
			close(started)
		}
		time.Sleep(50 * time.Millisecond)
		return Draft(page(body)), nil
	}
	answers := make([]*Answer, 8)
	var wg sync.WaitGroup
	ask := func(i int) {
		var buf [64]byte
		a, err := c.GetQuery(NewKey(buf[:0], "/q", 1), missgate.Caller{}, false, build)
		if err != nil {
			t.Error(err)
		}
		answers[i] = a
	}
	wg.Go(func() { ask(0) })
	<-started
	for i := 1; i < len(answers); i++ {
		wg.Go(func() { ask(i) })
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Fatalf("%d builds, want 1", builds.Load())
	}
	for i, a := range answers {
		if a != answers[0] || a.once {
			t.Fatalf("request %d: the shared answer %v, sent once %v; want shared and never recycled", i, a == answers[0], a.once)
		}
		a.recycle() // what the Responder does: nothing for a shared draft
		if !bytes.Equal(a.Body, body) {
			t.Fatalf("request %d: the shared draft's body changed", i)
		}
	}
}

// TestManyQueriesAreKeptOnTheirSecondAsk: every one of 20,000 distinct
// queries asked once is kept on its second ask (a table of one query a
// slot lost a quarter of them to collisions, and two colliding queries
// pushed each other out forever); and the doorkeeper remembers a query
// for at least doorkeeperFill more first asks.
func TestManyQueriesAreKeptOnTheirSecondAsk(t *testing.T) {
	c, err := NewCache(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"rows":[]}`)
	ask := func(i int) *Answer {
		var buf [64]byte
		a, err := c.GetQuery(NewKey(buf[:0], "/q", 1).Int("i", int64(i)), missgate.Caller{}, false, func() (*Answer, error) {
			return Draft(page(body)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	const n = 20000
	firstKept := 0
	for i := range n {
		if ask(i).home != nil {
			firstKept++ // a false positive of the filter
		}
	}
	for i := range n {
		if a := ask(i); a.home == nil {
			t.Fatalf("query %d, asked a second time, was not kept", i)
		}
	}
	if firstKept > n/50 {
		t.Errorf("%d of %d queries kept on their first ask, want about 1%% at most", firstKept, n)
	}

	d := newDoorkeeper()
	d.askedBefore(1, 2)
	for i := range doorkeeperFill {
		d.askedBefore(uint64(i)*0x9e3779b97f4a7c15+3, uint64(i)*0xbf58476d1ce4e5b9+5)
	}
	if !d.askedBefore(1, 2) {
		t.Error("a query asked doorkeeperFill first asks ago was forgotten")
	}
}
