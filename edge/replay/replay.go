// Package replay answers a cached answer's repeated requests on the raw
// connection, before fasthttp and fiber read them: the replay path.
//
// When fasthttp and fiber answer a request (the slow path) that came
// alone, whole and plainly spelled (transport.Frame), and the answer is
// one the answer cache holds, sent whole or as a 304, the Table records
// the request's exact bytes with the answer's head as written (a
// template: its Date and RateLimit values are filled in per request), the
// limit the route applied and the route's metrics. A later request with
// the same bytes, on any connection, is answered from the record: the
// same bytes as the slow path would send, after the same limit has
// admitted the call and with the same metrics counted. Anything else, or
// a record that no longer holds, goes the slow path, which may record it
// again:
//
//   - a state was published since it was recorded (its answers change);
//   - the answer is gone from memory, or was given its best variants;
//   - the caller is not the one the record was made for in the sense of
//     the limits (a connection from a trusted proxy against one that is
//     not; another proxy where the caller was the proxy);
//   - the limit does not admit the call at once (the slow path refuses
//     it, with the problem that says why);
//   - the server is draining (its answers close their connections).
//
// A request is recorded the second time the slow path answers it: a
// flood of requests each asked once (rotating query parameters) costs the
// slow path no records. Records are kept in a fixed table of Slots,
// direct-mapped by a hash of the request: endless distinct requests
// overwrite one another and cost nothing more. A record holds its answer weakly: it keeps no answer
// alive that the cache let go.
package replay

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/edge/transport"
)

// DefaultSlots is the size of the table: about 5 MiB of records of
// typical requests (a kilobyte or so of head each) when all are taken.
const DefaultSlots = 1 << 12

// Config is what a Table needs from the server.
type Config struct {
	// Slots is the number of records held (rounded up to a power of two;
	// DefaultSlots when 0).
	Slots int
	// Seq returns a number that grows whenever a state answers derive
	// from is published (views.Published.Seq).
	Seq func() uint64
	// Draining is set when the server stops: answers then close their
	// connections, which is the slow path's to do.
	Draining *atomic.Bool
	// Proxies say which connections may name the client.
	Proxies clientip.Proxies
}

// Source is a recorded answer as the table resolves it per request.
type Source interface {
	// Payload returns the body and file to send, and whether the answer
	// is still the one recorded.
	Payload() (body []byte, f *transport.File, ok bool)
	// Hit counts a hit of the cache that holds the answer, for an answer
	// replayed.
	Hit()
}

// Table holds the records. It is safe for concurrent use.
type Table struct {
	cfg      Config
	mask     uint64
	slots    []atomic.Pointer[record]
	seen     []atomic.Uint64 // hashes of requests seen once, 4 a slot (see record)
	date     atomic.Pointer[stamp]
	replayed prometheus.Counter
	recorded prometheus.Counter
}

// stamp is the Date header's value of one second.
type stamp struct {
	sec int64
	b   []byte
}

// New returns an empty table.
func New(cfg Config) *Table {
	n := 1
	for n < max(cfg.Slots, 1) {
		n <<= 1
	}
	if cfg.Slots <= 0 {
		n = DefaultSlots
	}
	if cfg.Draining == nil {
		cfg.Draining = new(atomic.Bool)
	}
	return &Table{cfg: cfg, mask: uint64(n - 1), slots: make([]atomic.Pointer[record], n), seen: make([]atomic.Uint64, 4*n),
		replayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_replayed_total",
			Help: "Requests answered on the replay path, from a record of the same request's answer (docs/operations.md, The replay path)."}),
		recorded: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_replay_records_total",
			Help: "Answers of the slow path recorded for the replay path."}),
	}
}

// ReplayCounter returns the counter of the answers the table has
// replayed, for a sampler (the miss gate's).
func (t *Table) ReplayCounter() prometheus.Counter { return t.replayed }

// Collectors returns the table's metrics.
func (t *Table) Collectors() []prometheus.Collector {
	return []prometheus.Collector{t.replayed, t.recorded}
}

// record is one request's answer, immutable once stored.
type record struct {
	hash uint64
	req  []byte
	seq  uint64
	// head is the answer's head in parts, with a dynamic value after
	// each but the last.
	head   [][]byte
	fields []field
	noBody bool // a 304
	size   int  // the body's length otherwise, as its head says
	src    Source
	// The caller the record was made for: the connection's address
	// (remote) and the client's (caller), which came from a trusted
	// proxy's header when viaProxy.
	remote, caller netip.Addr
	viaProxy       bool
	admit          ratelimit.Admit
	count          prometheus.Counter
	latency        prometheus.Observer
}

// field is a dynamic value of an answer's head: the date, or one of the
// RateLimit headers (1 + its limits.Field).
type field uint8

const (
	fieldDate      field = 0
	fieldLimit           = field(1 + ratelimit.FieldLimit)
	fieldRemaining       = field(1 + ratelimit.FieldRemaining)
	fieldReset           = field(1 + ratelimit.FieldReset)
	fieldPolicy          = field(1 + ratelimit.FieldPolicy)
)

// dynamic are the header lines whose values a replay fills in, as
// fasthttp writes their names.
var dynamic = [...]struct {
	prefix string
	f      field
}{
	{"\r\nDate: ", fieldDate},
	{"\r\nRatelimit-Limit: ", fieldLimit},
	{"\r\nRatelimit-Remaining: ", fieldRemaining},
	{"\r\nRatelimit-Reset: ", fieldReset},
	{"\r\nRatelimit-Policy: ", fieldPolicy},
}

// Replay answers req from its record, if it has one that holds; see the
// package's doc. It is the transport.Replayer of the server's listener.
func (t *Table) Replay(c transport.Conn, req []byte) (bool, error) {
	h := hashOf(req)
	r := t.slots[h&t.mask].Load()
	if r == nil || r.hash != h || string(r.req) != string(req) {
		return false, nil
	}
	if t.cfg.Draining.Load() || r.seq != t.cfg.Seq() {
		return false, nil
	}
	caller, ok := r.callerOf(c.Peer(), t.cfg.Proxies.Trusted)
	if !ok {
		return false, nil
	}
	body, f, ok := r.src.Payload()
	if !ok || !r.noBody && len(body) != r.size {
		return false, nil
	}
	now := time.Now()
	d, ok := r.admit(caller, now)
	if !ok {
		return false, nil
	}
	head := c.Scratch()
	for i, part := range r.head {
		head = append(head, part...)
		if i < len(r.fields) {
			head = t.appendField(head, r.fields[i], &d, now)
		}
	}
	if r.noBody {
		body, f = nil, nil
	}
	// Counted before the answer is sent, as the full path counts (its
	// metrics middleware runs before fasthttp writes): a client that
	// reads /metrics once answered finds its call counted.
	r.src.Hit()
	t.replayed.Inc()
	r.count.Inc()
	r.latency.Observe(time.Since(now).Seconds())
	return true, c.Respond(head, body, f)
}

// hashOf is the hash a request's record is found by.
func hashOf(req []byte) uint64 { return xxhash.Sum64(req) }

// callerOf returns the client's address for a request of the record's
// bytes on a connection from peer, when the limits would see the caller
// the record was made for; ok is false otherwise.
func (r *record) callerOf(peer netip.Addr, trusted clientip.Prefixes) (netip.Addr, bool) {
	if !trusted.Contains(peer) {
		return peer, !r.viaProxy
	}
	if !r.viaProxy {
		return netip.Addr{}, false
	}
	// From a trusted proxy, the client is named by the request's bytes
	// (the same as the record's), unless every hop was trusted and the
	// walk ended at the connection's own address.
	if !trusted.Contains(r.caller) || peer == r.remote {
		return r.caller, true
	}
	return netip.Addr{}, false
}

// appendField appends a dynamic value of a head, as the slow path writes
// it (fasthttp's Date, limits.Decision.AppendField).
func (t *Table) appendField(b []byte, f field, d *ratelimit.Decision, now time.Time) []byte {
	if f != fieldDate {
		return d.AppendField(b, ratelimit.Field(f-1))
	}
	s := t.date.Load()
	if sec := now.Unix(); s == nil || s.sec != sec {
		s = &stamp{sec: sec, b: fasthttp.AppendHTTPDate(nil, now)}
		t.date.Store(s)
	}
	return append(b, s.b...)
}
