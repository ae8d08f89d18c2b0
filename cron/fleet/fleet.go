// Package fleet hands the state one edge of a fleet loaded from
// ClickHouse to the fleet's other edges, so that ClickHouse loads each
// state once per fleet, not once per edge (issue 40).
//
// The edge elected to lead (package cron/leader) loads from ClickHouse as
// a lone edge does; after each state it publishes, a Publisher writes the
// state's replica as a snapshot file (replica.WriteSnapshot) and serves
// the newest on the edge's fleet address, GET /fleet/v1/state, with its
// SHA-256 as ETag. The other edges read the leader's fleet address from
// its election node, and a Follower fetches the snapshot whenever its
// ETag changes (a 304 otherwise), checks its SHA-256, and hands the
// replica to the views, which build the figures from it as from a load:
// the same replica gives the same figures, bytes and ETags on every edge.
//
// With the fleet's token (Config.Keys, package trust) the fleet address
// speaks TLS 1.3 with both edges' certificates checked against the
// authority derived from the token, so that neither side sends a byte to
// an edge that has not proved it holds the token; and each state's digest
// is signed by the leader, so that a follower reads only a state of its
// fleet. Without a token the address must be on loopback (a development
// fleet on one host), and a follower believes only a loopback leader.
//
// A follower falls back to loading from ClickHouse itself
// (cron.ErrNoSource) when there is no leader, when it leads, when the
// leader is out of reach, or when the leader has had no state to give for
// longer than Config.Patience; a leader still loading is otherwise waited
// for, so that edges starting together load ClickHouse once.
package fleet

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/cron/fleet/trust"
	"github.com/edge-stats/edge/views/replica"
)

// The paths the leader serves: its state, the days of its exports (a
// JSON array of their manifests, newest first), and each day's files
// under ExportsPath/<day>/<name>.
const (
	StatePath   = "/fleet/v1/state"
	ExportsPath = "/fleet/v1/exports"
)

// Config configures both sides.
type Config struct {
	// Dir is where the leader keeps its newest snapshot file, and where
	// a follower keeps the state it takes while it reads it.
	Dir string
	// Sends bounds the snapshots the leader sends at once; past it an
	// edge is told to come back (503, Retry-After), so that a fleet
	// starting together does not take the leader's bandwidth and CPU
	// from its answers.
	Sends int
	// Patience is how long a follower waits for a leader that has no
	// state yet (still loading) before it loads from ClickHouse itself.
	Patience time.Duration
	// MaxBytes bounds the uncompressed size of a snapshot a follower reads.
	MaxBytes int64
	// ElectionWait is how long a follower waits for its election to name
	// a leader (after its start, or after it lost one) before it loads
	// from ClickHouse itself.
	ElectionWait time.Duration
	// Idle is how long a follower waits for the next byte from the
	// leader before it gives the request up, and how long the leader's
	// write to an edge may wait before it is cut (an answer's whole write,
	// or each chunk of a state's).
	Idle time.Duration
	// Keys are what the edge derived from the fleet's token (package
	// trust): with them the fleet address takes only TLS connections of
	// the fleet's edges, the leader signs each state and a follower reads
	// only a signed state from an edge that proved it holds the token.
	// Without them (nil) the routes that need the token (Handle) are off,
	// and a follower believes only a leader on loopback.
	Keys *trust.Keys
	// LeaderEpoch, when set, returns the epoch of the elected leader
	// whose fleet address is addr (leader.Elector.LeaderEpoch), 0 when
	// addr is not the elected leader's or it is not known: a follower
	// refuses a state older than the one it took, in the order of
	// (epoch, generation).
	LeaderEpoch func(addr string) int64
	// LeaderPin, when set, returns the pin of the certificate of the
	// elected leader whose fleet address is at hostport
	// (leader.Elector.LeaderPin): a follower dials only that address and
	// holds the edge there to that key (BoundTransport).
	LeaderPin Pins
	// Recheck, when set, asks the election to be read again now
	// (leader.Elector.Recheck): a follower calls it when the edge the
	// election names answers that it does not lead, or is out of reach.
	Recheck func()
	// Deltas is how many deltas the leader keeps: a follower that holds
	// one of the states they start from takes what changed since, in
	// place of the whole state; one further behind takes the whole.
	Deltas int
	// WholeAfter is how long after a state's delta the leader writes the
	// state whole, when it has a whole state written already: its
	// followers take the delta and build their figures first, on cores
	// the whole state's compression does not take (4.5 s of both at 1M
	// listings). Meanwhile an edge that needs a whole state (one that
	// joins, or holds a state the deltas do not start from) takes the one
	// before and then the deltas since. The time counts from the first
	// state not written whole, so a leader refreshing faster still writes
	// one every WholeAfter. 0: at once.
	WholeAfter time.Duration
	// Metrics counts what the fleet refused and sent (nil: counted unseen).
	Metrics *Metrics
	// Log is where a follower says why it took a whole state in place of
	// a delta (nil: slog.Default()).
	Log *slog.Logger
	// Formats are the formats the leader writes each whole state in,
	// newest first (nil: replica.Formats); its deltas are of the first.
	// A follower is answered in the newest it reads (formats.go).
	Formats []uint64
}

// DefaultConfig returns the defaults: 4 sends at once, 10 minutes of
// patience, snapshots of at most 8 GiB uncompressed (about 18M listings),
// 30 seconds for an election and for the next byte of an answer, 12
// deltas kept (an hour of five-minute refreshes), and each state written
// whole 30 seconds after its delta.
func DefaultConfig() Config {
	return Config{Dir: "data/fleet", Sends: 4, Patience: 10 * time.Minute, MaxBytes: 8 << 30, ElectionWait: 30 * time.Second, Idle: 30 * time.Second,
		Deltas: 12, WholeAfter: 30 * time.Second}
}

// file is a snapshot file the leader serves.
type file struct {
	format uint64  // its format (replica.Formats)
	older  []*file // the same state in the older formats written
	path   string
	etag   string // "sha256 in hex", quoted
	size   int64
	raw    int64 // uncompressed bytes
	gen    uint64
	sig    string // the state's signature (trust.StateHeader), "" without keys
	tag    string // the state's tag (stateTag of its digest)
}

type offer struct {
	r         *replica.Replica
	snapshots int64
}

// Publisher writes the leader's states as snapshot files and serves the
// newest. Offer it every state published; it writes only while leading.
type Publisher struct {
	cfg     Config
	leading func() bool
	log     *slog.Logger
	cur     atomic.Pointer[file]
	pending chan offer
	sends   chan struct{}
	written atomic.Int64 // snapshots written, for tests and logs
	// last is the newest state written, the base of the next delta, and
	// deltas are the deltas kept, with the newest state's tag. Run
	// writes them; an offer while this edge does not lead drops them
	// (forget), so that an edge that stopped leading does not keep an
	// old state alive.
	last   atomic.Pointer[held]
	deltas atomic.Pointer[deltaSet]
	// changed is closed, and replaced, whenever a newer state is served:
	// the asks held until then (Prefer: wait) answer.
	changed atomic.Pointer[chan struct{}]
	// The exports served (ServeExports): nil days serves none.
	exportsDir string
	days       func() []exports.Manifest
	routes     sync.Map // path → route (Handle)
}

type route struct {
	method     string
	h          http.Handler
	needsToken bool
}

// Handle adds a route the publisher serves to GET while it leads. With
// the fleet's keys (Config.Keys) every route answers only an edge that
// proved it holds the token; without them, a route that needsToken is
// off. It is safe to call while serving.
func (p *Publisher) Handle(path string, h http.Handler, needsToken bool) {
	p.HandleMethod(http.MethodGet, path, h, needsToken)
}

// HandleMethod is Handle for a route that takes method.
func (p *Publisher) HandleMethod(method, path string, h http.Handler, needsToken bool) {
	p.routes.Store(path, route{method, h, needsToken})
}

// authorized reports whether r came over a connection whose client
// showed a certificate of the fleet (Serve's TLS checks it: this is the
// same check, should a request reach the handler another way).
func (p *Publisher) authorized(r *http.Request) bool {
	return r.TLS != nil && len(r.TLS.VerifiedChains) > 0
}

// ServeExports makes the publisher serve, while it leads, the days of
// exports days lists, from dir, for the other edges to copy instead of
// building them from ClickHouse. Call it before serving.
func (p *Publisher) ServeExports(dir string, days func() []exports.Manifest) {
	p.exportsDir, p.days = dir, days
}

// NewPublisher returns a publisher that writes while leading() is true.
// Run must be running for offers to be written.
func NewPublisher(cfg Config, leading func() bool, log *slog.Logger) (*Publisher, error) {
	if cfg.Sends <= 0 {
		cfg.Sends = DefaultConfig().Sends
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultConfig().Idle
	}
	if cfg.Deltas < 0 {
		cfg.Deltas = 0
	}
	if len(cfg.Formats) == 0 {
		cfg.Formats = replica.Formats
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("fleet: state directory: %w", err)
	}
	// What a leader stopped in the middle left: deltas from states no
	// follower can hold now.
	if left, err := filepath.Glob(filepath.Join(cfg.Dir, "delta-*.snap")); err == nil {
		for _, f := range left {
			os.Remove(f)
		}
	}
	p := &Publisher{cfg: cfg, leading: leading, log: log, pending: make(chan offer, 1), sends: make(chan struct{}, cfg.Sends)}
	ch := make(chan struct{})
	p.changed.Store(&ch)
	return p, nil
}

// Offer hands the publisher a state just published (r and the count of
// readings its figures report); it returns at once. Only the newest
// state offered while one is written is written next.
func (p *Publisher) Offer(r *replica.Replica, snapshots int64) {
	if !p.leading() {
		p.forget()
		return
	}
	if r == nil || !r.Info().HasHistory {
		return // a bare replica (figures still loading) is not a state to hand out
	}
	for {
		select {
		case p.pending <- offer{r, snapshots}:
			return
		default:
		}
		select {
		case <-p.pending: // drop the older offer
		default:
		}
	}
}

// Run writes the states offered until ctx ends: each one's delta at
// once, and the newest whole once Config.WholeAfter has passed since the
// first not written whole (at once while there is no whole state, or no
// delta to take).
func (p *Publisher) Run(ctx context.Context) {
	var (
		owed  *offer // the newest state whose delta is written and whole is not
		owedD replica.Digest
		due   <-chan time.Time // when the owed whole is written
		timer *time.Timer
	)
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
		owed, due, timer = nil, nil, nil
	}
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-due:
			o, d := *owed, owedD
			stop()
			if !p.leading() {
				p.forget()
				continue
			}
			if err := p.writeWhole(o, d); err != nil {
				p.log.Warn("fleet state not written", "generation", o.r.Info().Generation, "err", err)
			}
		case o := <-p.pending:
			if !p.leading() {
				stop()
				p.forget()
				continue
			}
			gen := o.r.Info().Generation
			if f := p.cur.Load(); (f != nil && f.gen == gen) || (owed != nil && owed.r.Info().Generation == gen) {
				continue // this state is written already
			}
			// What changed first: the followers that hold the state
			// before take it while the whole state waits.
			digest := replica.DigestOf(o.r, o.snapshots)
			delta := p.writeDelta(o, digest)
			if !delta || p.cur.Load() == nil || p.cfg.WholeAfter <= 0 {
				stop()
				if err := p.writeWhole(o, digest); err != nil {
					p.log.Warn("fleet state not written", "generation", gen, "err", err)
				}
				continue
			}
			owed, owedD = &o, digest
			if timer == nil {
				timer = time.NewTimer(p.cfg.WholeAfter)
				due = timer.C
			}
		}
	}
}

// Written returns how many snapshots the publisher has written.
func (p *Publisher) Written() int64 { return p.written.Load() }

// writeWhole writes o (of digest) as the newest snapshot, in each format
// the publisher writes, and removes the older files. Only Run calls it,
// one at a time.
func (p *Publisher) writeWhole(o offer, digest replica.Digest) error {
	var f *file
	for i, format := range p.cfg.Formats {
		w, err := p.writeFile(o, digest, format)
		if err != nil {
			if f != nil {
				f.remove()
			}
			return err
		}
		if i == 0 {
			f = w
		} else {
			w.tag = "" // the tag names a state by its digest in the newest format
			f.older = append(f.older, w)
		}
	}
	old := p.cur.Swap(f)
	p.written.Add(1)
	p.notify()
	if old != nil && old.path != f.path {
		// A send in progress keeps its open file: removing the name does
		// not cut it.
		old.remove()
	}
	return nil
}

// remove removes f's files.
func (f *file) remove() {
	os.Remove(f.path)
	for _, o := range f.older {
		os.Remove(o.path)
	}
}

// in returns f's state in format, or nil when it was not written in it.
func (f *file) in(format uint64) *file {
	if f.format == format {
		return f
	}
	for _, o := range f.older {
		if o.format == format {
			return o
		}
	}
	return nil
}

// names reports whether etag names f's state in one of its formats.
func (f *file) names(etag string) bool {
	if etag == f.etag || etag == f.tag {
		return true
	}
	for _, o := range f.older {
		if etag == o.etag {
			return true
		}
	}
	return false
}

// writeFile writes o (of digest) in format as a snapshot file.
func (p *Publisher) writeFile(o offer, digest replica.Digest, format uint64) (*file, error) {
	start := time.Now()
	tmp, err := os.CreateTemp(p.cfg.Dir, ".state-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(tmp, h)}
	// At the process's priority: at the lowest (package lowprio) a busy
	// host starved it, and an edge that joined waited for it past 90 s
	// (make test, 2026-11-27).
	raw, err := replica.WriteSnapshotAs(cw, o.r, o.snapshots, format)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("fleet: write state: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	path := filepath.Join(p.cfg.Dir, "state-"+sum+".snap")
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	f := &file{format: format, path: path, etag: `"` + sum + `"`, size: cw.n, raw: raw, gen: o.r.Info().Generation, tag: stateTag(digest)}
	if p.cfg.Keys != nil {
		f.sig = p.cfg.Keys.SignState(sum, f.gen)
	}
	p.log.Info("fleet state written", "generation", o.r.Info().Generation, "format", format, "listings", o.r.Len(),
		"mib", cw.n>>20, "raw_mib", raw>>20, "took", time.Since(start).Round(time.Millisecond))
	return f, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// ServeHTTP answers GET StatePath: the newest snapshot (200, or 304 to
// an If-None-Match of its ETag or its tag), or to an edge that holds an
// earlier state and asks for a delta (RFC 3229: If-None-Match of that
// state's tag and A-IM: edge-delta) what changed since (226 IM Used,
// serveDelta); 503 with Retry-After while this edge does not lead or has
// no state yet, or sends as many as it may.
func (p *Publisher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// With a token, every route wants it; without, the routes that must
	// have one are off.
	v, extra := p.routes.Load(r.URL.Path)
	switch {
	case extra && v.(route).needsToken && p.cfg.Keys == nil:
		problem(w, http.StatusNotFound, "Not served", "this edge has no fleet token (EDGE_FLEET_TOKEN): the route is off", 0)
		return
	case p.cfg.Keys != nil && !p.authorized(r):
		problem(w, http.StatusUnauthorized, "Unauthorized", "connect with TLS and a certificate of the fleet (an edge with the same EDGE_FLEET_TOKEN)", 0)
		return
	case extra:
		switch {
		case r.Method != v.(route).method:
			w.Header().Set("Allow", v.(route).method)
			problem(w, http.StatusMethodNotAllowed, "Method not allowed", "use "+v.(route).method, 0)
		case !p.leading():
			problem(w, http.StatusServiceUnavailable, notLeaderTitle, "this edge does not lead its fleet: ask the edge its election names", 5)
		default:
			v.(route).h.ServeHTTP(w, r)
		}
		return
	}
	exportsFile := strings.HasPrefix(r.URL.Path, ExportsPath+"/")
	switch {
	case r.URL.Path != StatePath && r.URL.Path != ExportsPath && !exportsFile:
		problem(w, http.StatusNotFound, "Not found", "this address serves the fleet's state at "+StatePath+" and its exports at "+ExportsPath+" only", 0)
		return
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		problem(w, http.StatusMethodNotAllowed, "Method not allowed", "use GET", 0)
		return
	case !p.leading():
		problem(w, http.StatusServiceUnavailable, notLeaderTitle, "this edge does not lead its fleet: ask the edge its election names", 5)
		return
	case r.URL.Path == ExportsPath:
		p.serveDays(w)
		return
	case exportsFile:
		p.serveExport(w, r)
		return
	}
	format, ok := negotiate(w, r, p.cfg.Formats)
	if !ok {
		return
	}
	w.Header().Set(FormatHeader, strconv.FormatUint(format, 10))
	inm := r.Header.Get("If-None-Match")
	if wait := preferWait(r.Header); wait > 0 && inm != "" {
		// A long poll: held while the state asked from is the newest.
		p.waitWhileCurrent(r.Context(), inm, min(wait, p.cfg.Idle-time.Second))
	}
	if set := p.deltas.Load(); set != nil && inm != "" {
		if inm == set.tag { // the newest state, whose whole file may still be being written
			w.Header().Set("ETag", set.tag)
			w.Header().Set("Edge-Generation", strconv.FormatUint(set.gen, 10))
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if d := set.from[inm]; d != nil && acceptsDelta(r.Header) && format == p.cfg.Formats[0] {
			if r.Method == http.MethodHead {
				// A watch told of the newer state as soon as its delta is
				// written, not once its whole file is (14 s at 5M).
				w.Header().Set("ETag", set.tag)
				w.Header().Set("Edge-Generation", strconv.FormatUint(set.gen, 10))
				w.WriteHeader(http.StatusOK)
				return
			}
			p.serveDelta(w, d)
			return
		}
	}
	newest := p.cur.Load()
	if newest == nil {
		problem(w, http.StatusServiceUnavailable, "No state yet", "the leading edge is still loading its first state: ask again", 1)
		return
	}
	f := newest.in(format)
	w.Header().Set("ETag", f.etag)
	if f.tag != "" {
		w.Header().Set(TagHeader, f.tag)
	}
	w.Header().Set("Edge-Generation", strconv.FormatUint(f.gen, 10))
	if f.sig != "" {
		w.Header().Set(trust.StateHeader, f.sig)
	}
	if inm != "" && newest.names(inm) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	fh, done := p.openToSend(w, f.path)
	if fh == nil {
		return
	}
	defer done()
	w.Header().Set("Content-Type", "application/vnd.edge.snapshot+zstd")
	w.Header().Set("Content-Length", strconv.FormatInt(f.size, 10))
	w.Header().Set("Edge-Raw-Bytes", strconv.FormatInt(f.raw, 10))
	if r.Method == http.MethodHead {
		return
	}
	p.cfg.Metrics.moved("sent", "whole", sendSlowly(w, fh, p.cfg.Idle))
}

// openToSend takes one of the sends the leader makes at once and opens
// the file at path to send; it returns the file and what ends the send,
// or nil after answering 503 with Retry-After (every send taken, or the
// file replaced meanwhile: the edge asks again and gets the newer one).
func (p *Publisher) openToSend(w http.ResponseWriter, path string) (*os.File, func()) {
	select {
	case p.sends <- struct{}{}:
	default:
		problem(w, http.StatusServiceUnavailable, "Busy", fmt.Sprintf("the leading edge sends %d states at once: ask again", cap(p.sends)), 2)
		return nil, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		<-p.sends
		problem(w, http.StatusServiceUnavailable, "State replaced", "a newer state replaced this one: ask again", 1)
		return nil, nil
	}
	return fh, func() {
		fh.Close()
		<-p.sends
	}
}

// sendSlowly copies r to w, moving w's write deadline idle past each
// chunk written, so that a large state takes as long as the network
// needs, and an edge that stops reading is cut after idle. It returns
// the bytes written.
func sendSlowly(w http.ResponseWriter, r io.Reader, idle time.Duration) (sent int64) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 1<<20)
	for {
		rc.SetWriteDeadline(time.Now().Add(idle))
		n, err := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			sent += int64(m)
			if werr != nil {
				return sent
			}
		}
		if err != nil {
			return sent
		}
	}
}

// serveDays answers the list of days exported.
func (p *Publisher) serveDays(w http.ResponseWriter) {
	if p.days == nil {
		problem(w, http.StatusNotFound, "No exports", "the leading edge builds no exports: each edge builds its own", 0)
		return
	}
	days := p.days()
	if days == nil {
		days = []exports.Manifest{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(days)
}

// serveExport answers one file of a day, when the day's manifest lists
// it (exports.Path: no path is made of the request's text).
func (p *Publisher) serveExport(w http.ResponseWriter, r *http.Request) {
	day, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, ExportsPath+"/"), "/")
	if p.days != nil {
		for _, m := range p.days() {
			if m.Day != day {
				continue
			}
			if path, f, ok := exports.Path(p.exportsDir, m, name); ok {
				fh, err := os.Open(path)
				if err != nil {
					break
				}
				defer fh.Close()
				w.Header().Set("Content-Type", "application/gzip")
				w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
				if r.Method == http.MethodGet {
					sendSlowly(w, io.LimitReader(fh, f.Size), p.cfg.Idle)
				}
				return
			}
		}
	}
	problem(w, http.StatusNotFound, "No such export", "ask "+ExportsPath+" for the days and files the leader has", 0)
}

func problem(w http.ResponseWriter, status int, title, detail string, retry int) {
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"detail":%q}`, title, status, detail)
}

// Serve answers the fleet's requests on ln until ctx ends: over TLS with
// the fleet's certificates required when it has keys.
func (p *Publisher) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: p.cfg.Idle, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelDebug)}
	if p.cfg.Keys != nil {
		// A failed handshake (an address that is not of the fleet) is
		// logged by the server's ErrorLog, at debug level: anyone may
		// knock.
		ln = tls.NewListener(ln, p.cfg.Keys.ServerTLS())
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("fleet: serve: %w", err)
	}
	return nil
}

// Follower fetches the leader's state for the views (cron.StateSource).
type Follower struct {
	cfg     Config
	leader  func() string // the leader's fleet address, "" when none is known
	leading func() bool
	client  *http.Client
	mu      sync.Mutex
	waiting time.Time   // since when the leader has had no state; zero when it has
	alone   time.Time   // since when no leader is known; zero while one is
	lost    time.Time   // since when the leader named has not worked (Status); zero while it does
	noDelta string      // the tag of a state whose delta was refused: the whole state next
	unread  *unreadable // the leader's state of a format this edge does not read, nil when none
	held    place       // where the state taken last stands in the fleet's order (order.go)
}

// NewFollower returns a follower of the leader whose fleet address
// leader returns ("" when none is known); leading reports whether this
// edge leads (then it loads from ClickHouse).
func NewFollower(cfg Config, leader func() string, leading func() bool) *Follower {
	if cfg.Patience <= 0 {
		cfg.Patience = DefaultConfig().Patience
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultConfig().MaxBytes
	}
	if cfg.ElectionWait <= 0 {
		cfg.ElectionWait = DefaultConfig().ElectionWait
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultConfig().Idle
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	// What a follower stopped in the middle of a fetch left.
	if left, err := filepath.Glob(filepath.Join(cfg.Dir, fetchPattern)); err == nil {
		for _, p := range left {
			os.Remove(p)
		}
	}
	// No overall timeout: a large state takes as long as it takes. A
	// leader that stops sending for Config.Idle is cut (get).
	return &Follower{cfg: cfg, leader: leader, leading: leading, client: &http.Client{Transport: BoundTransport(cfg.Keys, cfg.LeaderPin),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// CheckAddress reports whether an edge with keys (or without: nil) may
// believe addr as its leader's fleet address: with keys, an https://
// address (the leader then proves itself in the handshake); without,
// only http:// on loopback, since nothing else could prove itself. The
// address comes from ZooKeeper, which others may write to.
func CheckAddress(addr string, keys *trust.Keys) error {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("fleet: leader address %q is not a URL of a host", addr)
	}
	if keys != nil {
		if u.Scheme != "https" {
			return fmt.Errorf("fleet: leader address %q: this edge has the fleet's token and takes the state only over TLS (https://)", addr)
		}
		return nil
	}
	if u.Scheme != "http" {
		return fmt.Errorf("fleet: leader address %q: this edge has no fleet token (EDGE_FLEET_TOKEN), so it reads only an http:// address on loopback", addr)
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err != nil || !ip.IsLoopback()) && host != "localhost" {
		return fmt.Errorf("fleet: leader address %q is not on loopback, and this edge has no fleet token (EDGE_FLEET_TOKEN) to check who answers there", addr)
	}
	return nil
}

// leaderAddr returns the leader's fleet address, or an error: one
// wrapping cron.ErrNoSource when the edge should do the work itself.
func (f *Follower) leaderAddr() (string, error) {
	if f.leading() {
		return "", fmt.Errorf("this edge leads: %w", cron.ErrNoSource)
	}
	addr := f.leader()
	if addr == "" {
		// An election just started (or a leader just lost) names one
		// within seconds: wait for it, so that edges starting together
		// do not all load from ClickHouse.
		if f.noLeader() < f.cfg.ElectionWait {
			return "", errors.New("fleet: waiting for the election to name a leader")
		}
		return "", fmt.Errorf("no leader with a fleet address for %v: %w", f.cfg.ElectionWait, cron.ErrNoSource)
	}
	f.mu.Lock()
	f.alone = time.Time{}
	f.mu.Unlock()
	if err := CheckAddress(addr, f.cfg.Keys); err != nil {
		f.cfg.Metrics.refuse("address")
		return "", fmt.Errorf("%w: %w", err, cron.ErrNoSource)
	}
	return strings.TrimSuffix(addr, "/"), nil
}

// get asks the leader for path; an error wraps cron.ErrNoSource when the
// leader is out of reach.
func (f *Follower) get(parent context.Context, addr, path string, header http.Header) (*http.Response, error) {
	return f.ask(parent, http.MethodGet, addr, path, header)
}

// ask is get with another method (HEAD).
func (f *Follower) ask(parent context.Context, method, addr, path string, header http.Header) (*http.Response, error) {
	ctx, cancel := context.WithCancel(parent)
	timer := time.AfterFunc(f.cfg.Idle, cancel)
	req, err := http.NewRequestWithContext(ctx, method, addr+path, nil)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, fmt.Errorf("fleet: leader address %q: %w", addr, cron.ErrNoSource)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := f.client.Do(req)
	if err != nil {
		cancel()
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		// Said as what it is: a refusal is not a network fault.
		switch {
		case errors.Is(err, trust.ErrNotElected):
			f.cfg.Metrics.refuse("pin")
			f.leaderFailed(addr, "refused: "+trust.ErrNotElected.Error())
			return nil, fmt.Errorf("fleet: leader at %s: %w: %w", addr, err, cron.ErrNoSource)
		case isHandshake(err):
			f.cfg.Metrics.refuse("handshake")
			f.leaderFailed(addr, fmt.Sprintf("refused: it did not prove it holds the fleet's token (%v)", err))
			return nil, fmt.Errorf("fleet: leader at %s did not prove it holds the fleet's token (%v): %w", addr, err, cron.ErrNoSource)
		}
		f.leaderFailed(addr, fmt.Sprintf("out of reach (%v)", err))
		return nil, fmt.Errorf("fleet: leader at %s out of reach (%w): %w", addr, err, cron.ErrNoSource)
	}
	resp.Body = &idleBody{ReadCloser: resp.Body, timer: timer, idle: f.cfg.Idle, cancel: cancel}
	return resp, nil
}

// idleBody is a response body whose request is cut when no byte comes
// for idle: a leader that stops sending does not hold a follower's job.
type idleBody struct {
	io.ReadCloser
	timer  *time.Timer
	idle   time.Duration
	cancel context.CancelFunc
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel()
	return b.ReadCloser.Close()
}

// Days returns the days of exports the leader has (cron.ExportsSource).
func (f *Follower) Days(ctx context.Context) ([]exports.Manifest, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, err
	}
	resp, err := f.get(ctx, addr, ExportsPath, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound: // the leader builds none
		return nil, fmt.Errorf("fleet: leader at %s builds no exports: %w", addr, cron.ErrNoSource)
	default:
		return nil, fmt.Errorf("fleet: leader at %s: exports: %s", addr, resp.Status)
	}
	var days []exports.Manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&days); err != nil {
		return nil, fmt.Errorf("fleet: leader at %s: exports: %w", addr, err)
	}
	return days, nil
}

// Open returns one file of a day of the leader's exports
// (cron.ExportsSource).
func (f *Follower) Open(ctx context.Context, day, name string) (io.ReadCloser, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, err
	}
	resp, err := f.get(ctx, addr, ExportsPath+"/"+url.PathEscape(day)+"/"+url.PathEscape(name), nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("fleet: leader at %s: export %s/%s: %s", addr, day, name, resp.Status)
	}
	return resp.Body, nil
}

// Fetch implements cron.StateSource; the state read is bounded by
// Config.MaxBytes. An edge with no state at all (o.Prev nil) waits for a
// leader still loading its first state, asking each second, so that it
// publishes within a second of the leader's state.
func (f *Follower) Fetch(ctx context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	o.MaxBytes = f.cfg.MaxBytes
	for {
		r, snapshots, tag, err := f.fetch(ctx, have, o)
		if !errors.Is(err, errNoState) {
			return r, snapshots, tag, err
		}
		if o.Prev != nil {
			return nil, 0, "", err
		}
		select {
		case <-ctx.Done():
			return nil, 0, "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// errNoState says the leader has no state yet.
var errNoState = errors.New("the leader has no state yet")

// fetch asks the leader for a state newer than have: what changed since
// (one delta after another, up to maxChain, when the leader keeps them
// from the state this edge holds), or the whole state.
func (f *Follower) fetch(ctx context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, 0, "", err
	}
	if err := f.stillUnreadable(ctx, addr); err != nil {
		return nil, 0, "", err
	}
	var (
		got   *replica.Replica // the newest state taken by deltas, nil while none
		snaps int64
		tag   = have
	)
	for step := 0; ; step++ {
		delta := o.Prev != nil && step < maxChain && f.deltaFrom(tag)
		if !delta && o.NoWhole {
			// Only a whole state would do, and it has no room.
			if got != nil {
				return got, snaps, tag, nil
			}
			return nil, 0, "", fmt.Errorf("fleet: a whole state from %s: %w", addr, cron.ErrNoRoom)
		}
		res, err := f.fetchOnce(ctx, addr, tag, o, delta)
		if err != nil {
			if got != nil { // the deltas taken stand: the rest comes at the next ask
				f.log().Warn("fleet: the leader's state after deltas", "leader", addr, "deltas", step, "err", err)
				return got, snaps, tag, nil
			}
			return nil, 0, "", err
		}
		switch res.kind {
		case tookWhole:
			return res.r, res.snapshots, res.tag, nil
		case tookDelta:
			got, snaps, tag = res.r, res.snapshots, res.tag
			o.Prev = res.r
		case refusedDelta: // the whole state next (noDeltaFrom)
		default: // nothing newer
			if got != nil {
				return got, snaps, tag, nil
			}
			return nil, 0, have, nil
		}
	}
}

// What one ask of the leader gave.
type took int

const (
	tookNothing  took = iota // the state held is the newest (304)
	tookWhole                // the whole state
	tookDelta                // a delta, applied
	refusedDelta             // a delta that did not give the state it named
)

type fetched struct {
	kind      took
	r         *replica.Replica
	snapshots int64
	tag       string
}

// fetchOnce makes one ask of the leader, with delta when this edge may
// take a delta from the state have names.
func (f *Follower) fetchOnce(ctx context.Context, addr, have string, o replica.ReadOptions, delta bool) (fetched, error) {
	header := http.Header{"Accept": {acceptHeader(replica.Formats)}}
	if have != "" {
		header.Set("If-None-Match", have)
		if delta {
			header.Set("A-IM", deltaIM)
		}
	}
	resp, err := f.get(ctx, addr, StatePath, header)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		f.leaderWorked()
		f.settled()
		return fetched{kind: tookNothing}, nil
	case http.StatusIMUsed:
		if !delta {
			return fetched{}, fmt.Errorf("fleet: leader at %s sent a delta unasked: %w", addr, cron.ErrNoSource)
		}
		r, snapshots, tag, err := f.takeDelta(resp, addr, have, o)
		if err != nil {
			f.cfg.Metrics.refuse("delta")
			f.noDeltaFrom(have)
			f.log().Warn("fleet: a delta refused: this edge asks for the whole state", "leader", addr, "err", err)
			return fetched{kind: refusedDelta}, nil
		}
		f.leaderWorked()
		f.settled()
		return fetched{tookDelta, r, snapshots, tag}, nil
	case http.StatusOK:
		f.leaderWorked()
		if o.NoWhole {
			// The leader keeps no delta from here: none of the whole
			// state is taken (the body is closed unread).
			return fetched{}, fmt.Errorf("fleet: leader at %s has only the whole state for this edge: %w", addr, cron.ErrNoRoom)
		}
	case http.StatusNotAcceptable:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		f.remember(unreadable{addr: addr, why: "406: " + string(body)})
		return fetched{}, fmt.Errorf("fleet: leader at %s writes no state of a format this edge reads (%v): %w", addr, replica.Formats, cron.ErrNoSource)
	case http.StatusServiceUnavailable:
		if notLeader(resp) {
			f.leaderFailed(addr, "it answers that it does not lead")
		} else {
			f.leaderWorked()
		}
		if f.waitedTooLong(have) {
			return fetched{}, fmt.Errorf("fleet: leader at %s has had no state for %v: %w", addr, f.cfg.Patience, cron.ErrNoSource)
		}
		return fetched{}, fmt.Errorf("fleet: leader at %s: %s (Retry-After %s): %w", addr, resp.Status, resp.Header.Get("Retry-After"), errNoState)
	default:
		return fetched{}, fmt.Errorf("fleet: leader at %s answered %s: %w", addr, resp.Status, cron.ErrNoSource)
	}
	etag := resp.Header.Get("ETag")
	sum, ok := strings.CutPrefix(strings.TrimSuffix(etag, `"`), `"`)
	if !ok || len(sum) != 2*sha256.Size {
		return fetched{}, fmt.Errorf("fleet: leader at %s sent ETag %q, not a SHA-256: %w", addr, etag, cron.ErrNoSource)
	}
	gen, err := strconv.ParseUint(resp.Header.Get("Edge-Generation"), 10, 64)
	if err != nil {
		return fetched{}, fmt.Errorf("fleet: leader at %s sent no generation: %w", addr, cron.ErrNoSource)
	}
	if v := resp.Header.Get(FormatHeader); v != "" {
		if format, err := strconv.ParseUint(v, 10, 64); err != nil || !replica.Reads(format) {
			f.remember(unreadable{addr: addr, etag: etag, gen: gen, why: "the leader sent format " + v})
			return fetched{}, fmt.Errorf("fleet: state from %s (generation %d) of format %q, this edge reads %v: %w", addr, gen, v, replica.Formats, cron.ErrNoSource)
		}
	}
	if k := f.cfg.Keys; k != nil {
		// Its origin, before a byte of it is taken: the leader proved it
		// holds the token in the handshake, and its state must say so too.
		if err := k.VerifyState(resp.Header.Get(trust.StateHeader), sum, gen); err != nil {
			f.cfg.Metrics.refuse("signature")
			return fetched{}, fmt.Errorf("fleet: state from %s (generation %d) refused, %w: the state served is kept, and this edge loads from ClickHouse: %w", addr, gen, err, cron.ErrNoSource)
		}
	}
	epoch, err := f.inOrder(addr, gen)
	if err != nil {
		return fetched{}, fmt.Errorf("%w: the state served is kept, and this edge loads from ClickHouse: %w", err, cron.ErrNoSource)
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		f.cfg.Metrics.refuse("size")
		return fetched{}, fmt.Errorf("fleet: state from %s has %d bytes, past the bound of %d (EDGE_FLEET_MAX_BYTES)", addr, resp.ContentLength, f.cfg.MaxBytes)
	}
	// The state is taken whole first, then read: the leader's send ends
	// at the speed of the network, not of this edge's decoding, so that
	// its few sends at once (Config.Sends) serve many edges joining
	// together in turn; and a damaged state is refused before it is read.
	tmp, err := f.download(resp.Body, sum, "whole")
	if err != nil {
		return fetched{}, fmt.Errorf("fleet: state from %s: %w", addr, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	r, snapshots, err := replica.ReadSnapshot(bufio.NewReaderSize(tmp, 1<<20), o)
	if errors.Is(err, replica.ErrSnapshotFormat) {
		// A leader of another release: this edge loads from ClickHouse,
		// and does not take this state again (fetch).
		f.remember(unreadable{addr: addr, etag: etag, gen: gen, why: err.Error()})
		return fetched{}, fmt.Errorf("fleet: state from %s (generation %d): %w: %w", addr, gen, err, cron.ErrNoSource)
	}
	if err != nil {
		f.cfg.Metrics.refuse("format")
		return fetched{}, fmt.Errorf("fleet: state from %s: %w", addr, err)
	}
	f.readable()
	f.settled()
	f.took(epoch, gen)
	f.cfg.Metrics.holds(gen)
	return fetched{tookWhole, r, snapshots, f.wholeTag(resp.Header, etag, r, snapshots)}, nil
}

// download copies a state's body to a file of the fleet directory and
// checks its SHA-256 against sum (hex); it returns the file, at its
// start. A body past Config.MaxBytes is refused.
func (f *Follower) download(body io.Reader, sum, kind string) (*os.File, error) {
	if err := os.MkdirAll(f.cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	tmp, err := os.CreateTemp(f.cfg.Dir, fetchPattern)
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(body, f.cfg.MaxBytes+1))
	f.cfg.Metrics.moved("received", kind, n)
	if err != nil {
		return fail(fmt.Errorf("after %d bytes: %w", n, err))
	}
	if n > f.cfg.MaxBytes {
		f.cfg.Metrics.refuse("size")
		return fail(fmt.Errorf("larger than %d bytes", f.cfg.MaxBytes))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		f.cfg.Metrics.refuse("digest")
		return fail(fmt.Errorf("SHA-256 %s, its ETag says %s", got, sum))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fail(fmt.Errorf("state file: %w", err))
	}
	return tmp, nil
}

// isHandshake reports whether err is a TLS handshake's failure: the other
// end is not of the fleet.
func isHandshake(err error) bool {
	var cv *tls.CertificateVerificationError
	var alert tls.AlertError
	var rh tls.RecordHeaderError
	return errors.As(err, &cv) || errors.As(err, &alert) || errors.As(err, &rh) ||
		strings.Contains(err.Error(), "tls: ")
}

// fetchPattern names a state being taken from the leader (os.CreateTemp).
const fetchPattern = ".fetch-*.tmp"

// noLeader records that no leader is known and returns for how long.
func (f *Follower) noLeader() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.alone.IsZero() {
		f.alone = time.Now()
	}
	return time.Since(f.alone)
}

// settled records that the leader has a state.
func (f *Follower) settled() {
	f.mu.Lock()
	f.waiting = time.Time{}
	f.mu.Unlock()
}

// waitedTooLong records that the leader has no state, and reports whether
// an edge without a state of its own (have "") has waited for one past
// Patience. An edge with a state keeps it and waits.
func (f *Follower) waitedTooLong(have string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiting.IsZero() {
		f.waiting = time.Now()
	}
	return have == "" && time.Since(f.waiting) > f.cfg.Patience
}
