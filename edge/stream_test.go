package edge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/stream"
	"github.com/edge-stats/edge/views"
)

// sseEvent is one event of a stream: its id and its data, or a comment.
type sseEvent struct {
	ID, Data, Comment string
}

// sseStream is an open event stream, read in the background.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
}

// openStream opens GET /api/v1/events/stream with headers, and returns
// the stream on a 200, or the answer otherwise.
func openStream(t *testing.T, h *harness, query string, hdr map[string]string) (*sseStream, answer) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.Base+"/api/v1/events/stream"+query, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		defer resp.Body.Close()
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		return nil, answer{status: resp.StatusCode, header: resp.Header, body: []byte(b.String())}
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 1000)}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.events)
		r := bufio.NewReader(resp.Body)
		var e sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				if e != (sseEvent{}) {
					s.events <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, ":"):
				e.Comment = strings.TrimSpace(line[1:])
			case strings.HasPrefix(line, "id: "):
				e.ID = line[4:]
			case strings.HasPrefix(line, "data: "):
				e.Data = line[6:]
			}
		}
	}()
	return s, answer{status: 200, header: resp.Header}
}

// next returns the stream's next event (comments and the retry line
// skipped), or fails after wait; closed is true when the stream ended.
func (s *sseStream) next(t *testing.T, wait time.Duration) (e eventJSON, id string, closed bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return e, "", true
			}
			if ev.Data == "" {
				continue
			}
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil || e.EventID != ev.ID {
				t.Fatalf("event %+v: %v", ev, err)
			}
			return e, ev.ID, false
		case <-deadline:
			t.Fatalf("no event within %s", wait)
		}
	}
}

// TestEventStream checks the server-sent events over HTTP: a key needed;
// the events of a refresh sent as the edge publishes them, filtered;
// Last-Event-ID resuming after an event with no loss and no repeat;
// heartbeats; the per-key bound; and a client whose queue passes its
// bound cut, then resuming where it was.
func TestEventStream(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg, func(c *edge.Config) {
		c.Stream = stream.Config{PerKey: 3, Heartbeat: 200 * time.Millisecond}
		// Each write of a stream extends its deadline: a stream outlives
		// the server's write timeout of an answer.
		c.WriteTimeout = time.Second
		c.RawIO = false // the standard library's connections apply deadlines on every write
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	key, _ := signUpWithKey(t, h, "streams@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}

	problem(t, get(t, "GET", h.Base+"/api/v1/events/stream"), 401)
	if _, a := openStream(t, h, "?kind=nope", auth); a.status != 400 {
		t.Fatalf("a bad filter: %d", a.status)
	}
	opened := time.Now()
	all, a := openStream(t, h, "", auth)
	if all == nil || a.header.Get("Content-Type") != "text/event-stream; charset=utf-8" || a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("stream: %d %v %s", a.status, a.header, a.body)
	}
	owners, _ := openStream(t, h, "?kind=developer", auth)
	// A heartbeat comes while nothing happens.
	select {
	case e := <-all.events:
		if e.Comment != "heartbeat" {
			t.Fatalf("before any event: %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no heartbeat")
	}
	third, _ := openStream(t, h, "?store=apple", auth)
	if third == nil {
		t.Fatal("no third stream")
	}
	if _, a := openStream(t, h, "", auth); a.status != 429 {
		t.Fatalf("a fourth stream of one key: %d, want 429", a.status)
	}

	// A new owner and a new version, published by the refresh.
	st := h.State.Load()
	l := firstLive(t, h, views.Chrome)
	now := st.Replica.Info().ReadingsMark.Add(time.Hour).Truncate(time.Second)
	row := analytics.ListingRow{Store: l.Store, ID: l.ID, CrawledAt: now, Name: l.Name, Developer: "Someone Else Ltd", Category: l.Category,
		Kind: l.Kind, Description: l.Description, Icon: l.Icon, Version: l.Version + ".1", FirstSeen: time.Unix(l.FirstSeen, 0),
		Featured: l.Featured, ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel, Permissions: l.Permissions, HostAccess: l.HostAccess, Topics: l.Topics}
	cfg.Add(t, []analytics.ListingRow{row}, nil)
	if err := h.Jobs.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	first, firstID, _ := all.next(t, 5*time.Second)
	second, secondID, _ := all.next(t, 5*time.Second)
	if first.ID != l.ID || first.Kind != "version" || second.Kind != "developer" || *second.After != "Someone Else Ltd" || !first.At.Equal(now) {
		t.Fatalf("events %+v, %+v; want the version then the developer of %s", first, second, l.ID)
	}
	if e, _, _ := owners.next(t, 5*time.Second); e.Kind != "developer" || e.ID != l.ID {
		t.Fatalf("the developer stream got %+v", e)
	}
	// Resuming after the first: the second alone, never the first again.
	third.close()
	var resumed *sseStream
	for try := 0; resumed == nil; try++ {
		if try == 50 {
			t.Fatal("a closed stream still counts against its key")
		}
		time.Sleep(100 * time.Millisecond) // the edge sees the close within its probe (a second)
		resumed, _ = openStream(t, h, "", map[string]string{"Authorization": "Bearer " + key, "Last-Event-ID": firstID})
	}
	if e, id, _ := resumed.next(t, 5*time.Second); id != secondID || e.Kind != "developer" {
		t.Fatalf("resumed after %s: %+v, want %s", firstID, e, secondID)
	}
	resumed.quiet(t, time.Second)
	all.quiet(t, 500*time.Millisecond)
	if time.Since(opened) < 2*time.Second {
		t.Fatal("the test ran too fast to outlive the write timeout")
	}
	all.alive(t)
}

// alive checks that the stream is still open: a heartbeat comes.
func (s *sseStream) alive(t *testing.T) {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			t.Fatal("the stream was closed")
		}
		if e.Data != "" {
			t.Fatalf("an event more: %+v", e)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no heartbeat")
	}
}

// TestEventStreamCutsASlowReader: a client whose queue passes its bound
// (here smaller than one event) is cut, counted, and resumes with
// Last-Event-ID from the change log.
func TestEventStreamCutsASlowReader(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg, func(c *edge.Config) { c.Stream = stream.Config{Buffer: 64} })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	key, _ := signUpWithKey(t, h, "slow@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}
	latest := getOK[eventPageJSON](t, h.Base+"/api/v1/events?limit=1").LatestCursor
	s, a := openStream(t, h, "", auth)
	if s == nil {
		t.Fatalf("stream: %d %s", a.status, a.body)
	}
	st := h.State.Load()
	l := firstLive(t, h, views.Edge)
	row := analytics.ListingRow{Store: l.Store, ID: l.ID, CrawledAt: st.Replica.Info().ReadingsMark.Add(time.Hour).Truncate(time.Second),
		Name: l.Name + " 2", Developer: l.Developer, Category: l.Category, Kind: l.Kind, Version: l.Version, FirstSeen: time.Unix(l.FirstSeen, 0),
		ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel, Permissions: l.Permissions, HostAccess: l.HostAccess, Topics: l.Topics}
	cfg.Add(t, []analytics.ListingRow{row}, nil)
	if err := h.Jobs.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	if _, _, closed := s.next(t, 5*time.Second); !closed {
		t.Fatal("a client over its bound got the event instead of being cut")
	}
	if m := get(t, "GET", h.Base+"/metrics"); !strings.Contains(string(m.body), "edge_event_stream_cut_total 1\n") {
		t.Error("the cut is not counted")
	}
	again, _ := openStream(t, h, "", map[string]string{"Authorization": "Bearer " + key, "Last-Event-ID": *latest})
	if again == nil {
		t.Fatal("no stream to resume on")
	}
	if e, _, _ := again.next(t, 5*time.Second); e.ID != l.ID || e.Kind != "name" {
		t.Fatalf("resumed: %+v, want the rename of %s", e, l.ID)
	}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// quiet checks that no event comes within wait (comments may).
func (s *sseStream) quiet(t *testing.T, wait time.Duration) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case e, ok := <-s.events:
			if ok && e.Data != "" {
				t.Fatalf("an event more: %+v", e)
			}
			if !ok {
				return
			}
		case <-deadline:
			return
		}
	}
}

// TestAClosedStreamFreesItsPlace: a client that hangs up frees its
// stream's place within the probe's interval, not at the next heartbeat
// (an hour here), so that it can open another at once.
func TestAClosedStreamFreesItsPlace(t *testing.T) {
	cfg := seeded(t)
	for _, rawIO := range []bool{true, false} {
		h := start(t, cfg, func(c *edge.Config) {
			c.Stream = stream.Config{PerKey: 1, Heartbeat: time.Hour, Probe: 100 * time.Millisecond}
			c.RawIO = rawIO
		})
		if err := h.Jobs.RunNow("views"); err != nil {
			t.Fatal(err)
		}
		key, _ := signUpWithKey(t, h, fmt.Sprintf("hangup-%v@example.com", rawIO))
		auth := map[string]string{"Authorization": "Bearer " + key}
		s, a := openStream(t, h, "", auth)
		if s == nil {
			t.Fatalf("stream: %d %s", a.status, a.body)
		}
		if _, a := openStream(t, h, "", auth); a.status != 429 {
			t.Fatalf("a second stream of a key with room for one: %d", a.status)
		}
		s.close()
		start := time.Now()
		for {
			again, _ := openStream(t, h, "", auth)
			if again != nil {
				again.close()
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("raw I/O %v: the closed stream still holds its key's place", rawIO)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
