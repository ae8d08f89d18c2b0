package exchange

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/views/replica"
)

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
	latest     func() []exports.Manifest
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

// ServeLatest makes the publisher serve, beside the days, the latest sets
// latest lists (exports.LatestDir of the exports' dir), at
// ExportsPath/latest. Call it after ServeExports, before serving.
func (p *Publisher) ServeLatest(latest func() []exports.Manifest) { p.latest = latest }

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
	// At the process's priority, not the lowest (package lowprio): on a
	// busy host a write at the lowest can be starved, and an edge that
	// joins waits for it.
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
