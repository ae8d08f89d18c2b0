// Package stream sends the change events of the published state to
// server-sent-events clients (GET /api/v1/events/stream): each event as
// the edge publishes the state that holds it, filtered as the event feed
// filters, resumed after Last-Event-ID from the state's change log without
// loss or repeat within its window, with heartbeats through proxies.
//
// A Hub broadcasts each new state's events once, encoding each event once,
// into the queue of every client whose filter keeps it; it never waits
// for a client. A client whose queue passes its byte bound is cut (its
// connection closed) and resumes by reconnecting with Last-Event-ID.
// Connections are bounded per key and per edge.
package stream

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// StreamPath is the route of the streams: a server gives its answers a
// write deadline of MaxAge and a minute (fasthttp's per-request
// RequestConfig), instead of its answers' WriteTimeout.
const StreamPath = "/api/v1/events/stream"

// Config bounds the streams.
type Config struct {
	PerKey    int           // open streams per key (default 4)
	Total     int           // open streams per edge (default 20,000)
	Buffer    int           // bytes queued for a client before it is cut (default 1 MiB)
	Heartbeat time.Duration // a comment line this often when nothing else is sent (default 15 s)
	MaxAge    time.Duration // a stream ends after it; the client reconnects (default 1 h)
	// WriteTimeout is how long one write to a client may take before its
	// connection is closed (default 30 s).
	WriteTimeout time.Duration
	// BacklogTime bounds the sending of a stream's backlog (the events
	// after Last-Event-ID): a client that reads it more slowly is cut and
	// resumes from the last event it got (default 2 min).
	BacklogTime time.Duration
	// Probe is how often a stream looks whether its client hung up, so
	// that a closed stream's place is free within it (default 1 s).
	Probe time.Duration
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	if c.PerKey <= 0 {
		c.PerKey = 4
	}
	if c.Total <= 0 {
		c.Total = 20_000
	}
	if c.Buffer <= 0 {
		c.Buffer = 1 << 20
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.MaxAge <= 0 {
		c.MaxAge = time.Hour
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	if c.BacklogTime <= 0 {
		c.BacklogTime = 2 * time.Minute
	}
	if c.Probe <= 0 {
		c.Probe = time.Second
	}
	return c
}

// Encoder renders one change of r's log as an event: its id (a cursor of
// the feed) and its data (one line of JSON).
type Encoder func(c *changes.Change, r *replica.Replica) (id string, data []byte)

// Hub is the streams of one edge.
type Hub struct {
	cfg    Config
	state  *views.Published[served.State]
	encode Encoder

	mu      sync.Mutex
	clients map[*client]struct{}
	perKey  map[string]int
	pos     changes.Pos // events up to it are broadcast
	started bool        // pos is set
	closed  bool        // Close was called

	sent, cut atomic.Int64
}

// NewHub returns a hub over the published state; Run broadcasts.
func NewHub(cfg Config, state *views.Published[served.State], encode Encoder) *Hub {
	return &Hub{cfg: cfg.Defaults(), state: state, encode: encode, clients: map[*client]struct{}{}, perKey: map[string]int{}}
}

// Config returns the hub's bounds.
func (h *Hub) Config() Config { return h.cfg }

// Collectors returns the hub's metrics: streams open, events sent, and
// clients cut for reading too slowly.
func (h *Hub) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_event_streams_open", Help: "Event streams (GET /api/v1/events/stream) open."},
			func() float64 { return float64(h.Stats().Open) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edge_event_stream_events_total", Help: "Events sent to event streams."},
			func() float64 { return float64(h.sent.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "edge_event_stream_cut_total", Help: "Event streams cut for reading too slowly (their queue passed its bound)."},
			func() float64 { return float64(h.cut.Load()) }),
	}
}

// Stats are a hub's counters, for metrics.
type Stats struct {
	Open      int   // streams open
	Sent, Cut int64 // events sent; clients cut for reading too slowly
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	n := len(h.clients)
	h.mu.Unlock()
	return Stats{Open: n, Sent: h.sent.Load(), Cut: h.cut.Load()}
}

// frame is one event, as sent.
type frame struct {
	pos   changes.Pos
	bytes []byte // "id: …\ndata: …\n\n"
}

func newFrame(c *changes.Change, r *replica.Replica, encode Encoder) frame {
	id, data := encode(c, r)
	b := make([]byte, 0, len(id)+len(data)+12)
	b = append(append(append(b, "id: "...), id...), '\n')
	b = append(append(append(b, "data: "...), data...), "\n\n"...)
	return frame{pos: changes.PosOf(c), bytes: b}
}

// client is one open stream.
type client struct {
	key    string
	filter changes.Filter
	conn   net.Conn

	mu    sync.Mutex
	queue []frame
	bytes int
	cut   bool
	wake  chan struct{} // a token when the queue grew or the client was cut
}

// push queues f, or cuts the client when its queue would pass max bytes.
// It never blocks.
func (c *client) push(f frame, max int) (cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return false
	}
	if c.bytes+len(f.bytes) > max {
		c.cut, c.queue, c.bytes = true, nil, 0
		c.conn.Close() // unblocks a write in progress
		c.signal()
		return true
	}
	c.queue = append(c.queue, f)
	c.bytes += len(f.bytes)
	c.signal()
	return false
}

func (c *client) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// take returns the queued frames and whether the client was cut.
func (c *client) take() ([]frame, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue, c.bytes = nil, 0
	return q, c.cut
}

// Run broadcasts the events of each state published, until done is
// closed; then it ends every stream (Close).
func (h *Hub) Run(done <-chan struct{}) {
	if h.state == nil {
		<-done
		return
	}
	for {
		changed := h.state.Changed()
		if st := h.state.Load(); st != nil {
			h.broadcast(st.Replica)
		}
		select {
		case <-changed:
		case <-done:
			h.Close()
			return
		}
	}
}

// Close ends every open stream and refuses new ones (EdgeFull): a server
// that stops calls it, so that its drain does not wait for streams that
// never end by themselves. Their clients reconnect to another edge with
// Last-Event-ID.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for cl := range h.clients {
		cl.mu.Lock()
		if !cl.cut {
			cl.cut, cl.queue, cl.bytes = true, nil, 0
			cl.conn.Close()
			cl.signal()
		}
		cl.mu.Unlock()
	}
}

// broadcast queues r's events after the hub's position for every client
// whose filter keeps them. It holds the hub's lock throughout, so that a
// client that registers sees each event once: in its backlog or its queue.
func (h *Hub) broadcast(r *replica.Replica) {
	log := r.Changes()
	if log == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		h.pos, h.started = log.Newest(), true
		return
	}
	all := changes.Filter{}
	for {
		page, more := log.After(&all, h.pos, 4096)
		for _, c := range page {
			var f frame
			for cl := range h.clients {
				if !cl.filter.Keeps(c) {
					continue
				}
				if f.bytes == nil {
					f = newFrame(c, r, h.encode)
				}
				if cl.push(f, h.cfg.Buffer) {
					h.cut.Add(1)
				}
			}
			h.pos = changes.PosOf(c)
		}
		if !more {
			return
		}
	}
}

// Refusal says why a stream was not opened.
type Refusal int

// The refusals of Open.
const (
	Opened   Refusal = iota
	NotReady         // no change log published yet
	KeyFull          // the key has PerKey streams open
	EdgeFull         // the edge has Total streams open, or is stopping
)

// Open registers a stream for key with filter f, resuming after since
// (hasSince false: from the newest event), and returns the function
// that writes it to w (for fasthttp's SetBodyStreamWriter), or why not.
// conn is the client's connection: the writer extends its write deadline
// before each write, and a client cut for reading too slowly has it
// closed.
func (h *Hub) Open(key string, f changes.Filter, since changes.Pos, hasSince bool, conn net.Conn) (func(w *bufio.Writer), Refusal) {
	h.mu.Lock()
	var st *served.State
	if h.state != nil {
		st = h.state.Load()
	}
	if st == nil || st.Replica.Changes() == nil {
		h.mu.Unlock()
		return nil, NotReady
	}
	switch {
	case len(h.clients) >= h.cfg.Total || h.closed:
		h.mu.Unlock()
		return nil, EdgeFull
	case h.perKey[key] >= h.cfg.PerKey:
		h.mu.Unlock()
		return nil, KeyFull
	}
	log := st.Replica.Changes()
	if !h.started {
		h.pos, h.started = log.Newest(), true
	}
	// The state loaded now holds every event up to the hub's position:
	// the backlog is read from it, what comes after from the queue.
	liveFrom := h.pos
	cl := &client{key: key, filter: f, conn: conn, wake: make(chan struct{}, 1)}
	h.clients[cl] = struct{}{}
	h.perKey[key]++
	h.mu.Unlock()
	if !hasSince {
		since = liveFrom
	}
	// The writer holds no state: the backlog is read a page at a time
	// from the state published then (backlog), so that a stream open for
	// an hour does not keep the state it opened with, and every state
	// since, from being collected.
	return func(w *bufio.Writer) {
		defer h.close(cl)
		h.write(w, cl, liveFrom, since)
	}, Opened
}

// close unregisters cl.
func (h *Hub) close(cl *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, cl)
	if h.perKey[cl.key]--; h.perKey[cl.key] <= 0 {
		delete(h.perKey, cl.key)
	}
}

// write sends cl's stream: its backlog (the events after since up to
// liveFrom), then the events queued.
func (h *Hub) write(w *bufio.Writer, cl *client, liveFrom, since changes.Pos) {
	if h.backlog(w, cl, liveFrom, &since) {
		h.live(w, cl, since)
	}
}

// flush sends what w holds; a write that waits longer than WriteTimeout
// (a client that stopped reading) closes the connection. The connection's
// own deadline is the server's (fasthttp sets it once an answer, from its
// goroutine): the server gives a stream's answer MaxAge and a minute
// (StreamPath).
func (h *Hub) flush(w *bufio.Writer, cl *client) bool {
	watchdog := time.AfterFunc(h.cfg.WriteTimeout, func() { cl.conn.Close() })
	defer watchdog.Stop()
	return w.Flush() == nil
}

// backlog sends the events after *since up to liveFrom, moving *since
// on, each page read from the state published then (every state holds
// the events of those before it, within the change window); false when
// the client is gone, or did not take the backlog within BacklogTime
// (it resumes from the last event it got).
func (h *Hub) backlog(w *bufio.Writer, cl *client, liveFrom changes.Pos, since *changes.Pos) bool {
	deadline := time.Now().Add(h.cfg.BacklogTime)
	w.WriteString("retry: 3000\n\n")
	if log := h.state.Load().Replica.Changes(); since.Compare(changes.Pos{At: log.From()}) < 0 && *since != (changes.Pos{}) {
		w.WriteString(": events before " + time.Unix(log.From(), 0).UTC().Format(time.RFC3339) + " are no longer kept\n\n")
	}
	if !h.flush(w, cl) {
		return false
	}
	for since.Compare(liveFrom) < 0 {
		if hungUp(cl.conn) {
			return false
		}
		if time.Now().After(deadline) {
			h.cut.Add(1) // reading too slowly
			return false
		}
		r := h.state.Load().Replica
		page, more := r.Changes().After(&cl.filter, *since, 256)
		for _, c := range page {
			if changes.PosOf(c).Compare(liveFrom) > 0 {
				more = false
				break
			}
			w.Write(newFrame(c, r, h.encode).bytes)
			h.sent.Add(1)
			*since = changes.PosOf(c)
		}
		if !h.flush(w, cl) {
			return false
		}
		if !more {
			break
		}
	}
	return true
}

// live sends cl's queued events after sent, with heartbeats, until the
// client goes, is cut, or the stream's age passes MaxAge.
func (h *Hub) live(w *bufio.Writer, cl *client, sent changes.Pos) {
	heartbeat := time.NewTicker(h.cfg.Heartbeat)
	defer heartbeat.Stop()
	end := time.NewTimer(h.cfg.MaxAge)
	defer end.Stop()
	probe := time.NewTicker(h.cfg.Probe)
	defer probe.Stop()
	for {
		select {
		case <-probe.C:
			if hungUp(cl.conn) {
				return
			}
		case <-cl.wake:
			frames, cut := cl.take()
			if cut {
				return
			}
			for _, f := range frames {
				if f.pos.Compare(sent) <= 0 {
					continue // sent from the backlog, or before since
				}
				w.Write(f.bytes)
				h.sent.Add(1)
				sent = f.pos
			}
			if !h.flush(w, cl) {
				return
			}
		case <-heartbeat.C:
			w.WriteString(": heartbeat\n\n")
			if !h.flush(w, cl) {
				return
			}
		case <-end.C:
			return
		}
	}
}
