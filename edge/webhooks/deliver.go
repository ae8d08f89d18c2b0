package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
)

// Message is the body of a delivery: the convention's type, timestamp
// and data (an event of the feed; for a test delivery, the endpoint).
type Message struct {
	Type      string    `json:"type"` // listing.<kind>, or webhook.test
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// attempt is one delivery's outcome.
type attempt struct {
	status  int
	latency time.Duration
	err     error
}

func (a attempt) ok() bool { return a.err == nil && a.status >= 200 && a.status < 300 }

// post sends body to url, signed with secret as message id, and reads at
// most egress.MaxAnswer bytes of the answer.
func post(ctx context.Context, client *http.Client, url, secret, id string, body []byte) attempt {
	now := time.Now()
	sig, err := Sign(secret, id, now, body)
	if err != nil {
		return attempt{err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return attempt{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "edge-webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
	req.Header.Set("webhook-signature", sig)
	resp, err := client.Do(req)
	if err != nil {
		return attempt{latency: time.Since(now), err: err}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, egress.MaxAnswer))
	resp.Body.Close()
	return attempt{status: resp.StatusCode, latency: time.Since(now)}
}

// endpoint is a registered endpoint as the deliverer keeps it.
type endpoint struct {
	row          analytics.WebhookRow
	secret       string
	filter       changes.Filter
	cursor       changes.Pos // the last event delivered
	failingSince time.Time
	attempts     uint32
	nextAt       time.Time
	busy         bool // a delivery runs
}

// job is one delivery to run.
type job struct {
	ep    *endpoint
	event *changes.Change
	r     *served.State
}

// Deliverer delivers the events to the endpoints, on the edge that leads.
//
// Two edges never deliver at once, so that no endpoint gets an event
// before an earlier one: a delivery starts only while this edge's lease
// on the lead holds (Lead.Leading, checked again by the worker just before
// it sends), and an edge that comes to lead waits for the longest
// delivery attempt (Config.Timeout, or FirstTimeout if longer) before its
// first, so that any attempt its predecessor started has ended; the
// predecessor's lease ran out before the election could name another
// (package fleet/leader). The cursors it writes carry its leadership's
// epoch, which a late write of a predecessor cannot beat
// (analytics.WebhookCursor).
type Deliverer struct {
	cfg    Config
	db     *analytics.Lazy
	state  *views.Published[served.State]
	lead   Lead
	sealer *sealer
	client *http.Client
	log    *slog.Logger

	// Of the Run goroutine: since when, and under which epoch, this edge
	// leads (zero when it does not).
	since time.Time
	epoch uint64

	mu     sync.Mutex
	eps    map[string]*endpoint
	dirty  map[string]bool // endpoints whose cursor is to be written
	logs   []analytics.WebhookDelivery
	loaded time.Time // when the endpoints were last read; zero: not since leading
	// Of the Run goroutine: after a failed read of the endpoints, the
	// next is not before reloadAfter, and only the first failure of a
	// run of them is logged (and the recovery).
	reloadAfter   time.Time
	reloadFailing bool
	// disabling are the endpoints this edge disabled whose row is being
	// written: a reload that reads the row before the write lands keeps
	// them as they are (disabled), rather than take them back enabled,
	// with the attempts last written, and try the last attempt again.
	disabling map[string]bool
	// unsealable are the endpoints whose secret this edge's key does not
	// open, warned about once.
	unsealable map[string]bool
	main       chan job
	retry      chan job
}

// Lead says whether, and under which epoch, this edge leads its fleet.
type Lead struct {
	// Leading reports whether this edge leads now (nil: an edge alone,
	// which always does and never waits for a predecessor).
	Leading func() bool
	// Epoch returns the epoch of the lead (nil: 0).
	Epoch func() int64
}

// NewDeliverer returns the deliverer of cfg (whose Key must be set) on an
// edge that leads as lead says.
func NewDeliverer(cfg Config, db *analytics.Lazy, state *views.Published[served.State], lead Lead, log *slog.Logger) (*Deliverer, error) {
	cfg = cfg.Defaults()
	s, err := newSealer(cfg.Key)
	if err != nil {
		return nil, err
	}
	return &Deliverer{cfg: cfg, db: db, state: state, lead: lead, sealer: s, client: cfg.Policy.Client(cfg.Timeout), log: log,
		eps: map[string]*endpoint{}, dirty: map[string]bool{}, unsealable: map[string]bool{}, disabling: map[string]bool{},
		// Up to 16 deliveries a worker start each tick (10 a second): a
		// dispatch walks every endpoint, so it runs on the tick alone.
		main: make(chan job, 16*cfg.Workers), retry: make(chan job, cfg.RetryWorkers)}, nil
}

// Run delivers until ctx ends: every tick it reads the endpoints again
// when due, starts a delivery for each endpoint that has an event after
// its cursor and no delivery running or waiting out a backoff, and writes
// the cursors and attempts of the deliveries done.
func (d *Deliverer) Run(ctx context.Context) {
	var workers sync.WaitGroup
	for range d.cfg.Workers {
		workers.Go(func() { d.work(ctx, d.main) })
	}
	for range d.cfg.RetryWorkers {
		workers.Go(func() { d.work(ctx, d.retry) })
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastFlush := time.Now()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			d.flush(fctx)
			cancel()
			workers.Wait()
			return
		case <-tick.C:
		}
		if !d.leading() {
			d.forget(ctx)
			continue
		}
		if d.since.IsZero() {
			if d.lead.Epoch != nil {
				e := d.lead.Epoch()
				if e <= 0 {
					continue // the lease ran out meanwhile
				}
				d.epoch = uint64(e)
			}
			d.since = time.Now()
		}
		if d.lead.Leading != nil && time.Since(d.since) < d.longest() {
			continue // a predecessor's last attempts may still run
		}
		if time.Since(d.loaded) >= d.cfg.Reload && !time.Now().Before(d.reloadAfter) {
			d.reloadEndpoints(ctx)
		}
		d.dispatch(ctx)
		if time.Since(lastFlush) >= time.Second {
			d.flush(ctx)
			lastFlush = time.Now()
		}
	}
}

// longest is how long an attempt may take.
func (d *Deliverer) longest() time.Duration { return max(d.cfg.Timeout, d.cfg.FirstTimeout) }

// busy reports whether a delivery is queued or under way.
func (d *Deliverer) busy() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ep := range d.eps {
		if ep.busy {
			return true
		}
	}
	return false
}

// leading reports whether this edge leads now.
func (d *Deliverer) leading() bool { return d.lead.Leading == nil || d.lead.Leading() }

// dispatch starts the deliveries due.
func (d *Deliverer) dispatch(ctx context.Context) {
	st := d.state.Load()
	if st == nil || st.Replica.Changes() == nil {
		return
	}
	log := st.Replica.Changes()
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ep := range d.eps {
		if ep.busy || !ep.row.Enabled || now.Before(ep.nextAt) {
			continue
		}
		next, _ := log.After(&ep.filter, ep.cursor, 1)
		if len(next) == 0 {
			continue
		}
		pool := d.main
		if ep.attempts > 0 {
			pool = d.retry // a failing endpoint waits for the retry lane
		}
		select {
		case pool <- job{ep: ep, event: next[0], r: st}:
			ep.busy = true
		default: // every worker busy: next tick
		}
	}
}

// work runs the deliveries of one lane.
func (d *Deliverer) work(ctx context.Context, jobs <-chan job) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-jobs:
			d.deliver(ctx, j)
		}
	}
}

// deliver sends one event to one endpoint and records the outcome; not
// at all when the lease on the lead ran out since the job was queued.
func (d *Deliverer) deliver(ctx context.Context, j job) {
	if !d.leading() {
		d.mu.Lock()
		j.ep.busy = false
		d.mu.Unlock()
		return
	}
	doc := document.NewEvent(j.event, j.r.Replica)
	body, _ := json.Marshal(Message{Type: "listing." + doc.Kind, Timestamp: doc.At, Data: doc})
	d.mu.Lock()
	url, secret, n, id := j.ep.row.URL, j.ep.secret, j.ep.attempts+1, j.ep.row.ID
	d.mu.Unlock()
	actx := ctx
	if n == 1 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, d.cfg.FirstTimeout)
		defer cancel()
	}
	a := post(actx, d.client, url, secret, doc.EventID, body)
	logRefusal(d.log, id, a)
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	ep := j.ep
	ep.busy = false
	d.logs = append(d.logs, deliveryRow(ep.row.ID, now, doc.EventID, "listing."+doc.Kind, n, a))
	d.dirty[ep.row.ID] = true
	if a.ok() {
		ep.cursor, ep.failingSince, ep.attempts, ep.nextAt = changes.PosOf(j.event), time.Time{}, 0, time.Time{}
		return
	}
	if ctx.Err() != nil {
		return // stopping: the attempt does not count
	}
	if ep.failingSince.IsZero() {
		ep.failingSince = now
	}
	ep.attempts = n
	ep.nextAt = now.Add(backoff(n))
	if now.Sub(ep.failingSince) >= d.cfg.GiveUp {
		ep.row.Enabled = false
		ep.row.DisabledWhy = fmt.Sprintf("every delivery failed for %s (since %s); the last: %s", d.cfg.GiveUp, ep.failingSince.UTC().Format(time.RFC3339), describe(a))
		row := ep.row
		d.disabling[row.ID] = true
		go func() {
			conn, err := d.db.Conn(ctx)
			if err == nil {
				err = analytics.WriteWebhook(ctx, conn, row, time.Now())
			}
			d.mu.Lock()
			delete(d.disabling, row.ID)
			d.mu.Unlock()
			if err != nil {
				d.log.Warn("webhooks: disabling a failing endpoint failed; will retry", "endpoint", row.ID, "err", err)
				d.mu.Lock()
				d.loaded = time.Time{} // read again, and disable again at its next failure
				d.mu.Unlock()
			}
		}()
	}
}

// backoff is the wait after the n-th failed attempt of a delivery: 5 s,
// doubling up to an hour, within a fifth either way.
func backoff(n uint32) time.Duration {
	d := 5 * time.Second << min(n-1, 10)
	d = min(d, time.Hour)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// logRefusal logs why the attempt a to endpoint's URL was refused, when
// it was: the caller sees only egress.PublicRefusal (describe).
func logRefusal(log *slog.Logger, endpoint string, a attempt) {
	if why := egress.Reason(a.err); why != "" {
		log.Info("webhooks: a delivery was refused", "endpoint", endpoint, "reason", why)
	}
}

// describe says what an attempt got; of a refused address, only what a
// caller may be told (egress.Public).
func describe(a attempt) string {
	switch {
	case a.err != nil && errors.Is(a.err, egress.ErrRefused):
		return "refused: " + egress.Public(a.err)
	case a.err != nil:
		return a.err.Error()
	}
	return fmt.Sprintf("HTTP %d", a.status)
}

func deliveryRow(id string, at time.Time, event, typ string, n uint32, a attempt) analytics.WebhookDelivery {
	r := analytics.WebhookDelivery{ID: id, At: at, EventID: event, Type: typ, Attempt: n, Status: uint16(a.status),
		LatencyMS: uint32(a.latency.Milliseconds())}
	if !a.ok() {
		r.Error = describe(a)
		if len(r.Error) > 500 {
			r.Error = r.Error[:500]
		}
	}
	return r
}

// maxPendingLogs bounds the delivery attempts kept for the log while
// they cannot be written.
const maxPendingLogs = 100_000

// flush writes the cursors and attempts recorded since the last flush;
// what fails to be written is kept for the next.
func (d *Deliverer) flush(ctx context.Context) {
	d.mu.Lock()
	var cs []analytics.WebhookCursor
	for id := range d.dirty {
		if ep, ok := d.eps[id]; ok {
			cs = append(cs, analytics.WebhookCursor{ID: id, Cursor: document.EventCursor(ep.cursor), FailingSince: ep.failingSince, Attempts: ep.attempts,
				Epoch: d.epoch})
		}
	}
	logs := d.logs
	d.dirty, d.logs = map[string]bool{}, nil
	d.mu.Unlock()
	if len(cs) == 0 && len(logs) == 0 {
		return
	}
	conn, err := d.db.Conn(ctx)
	if err == nil {
		if err = analytics.WriteWebhookCursors(ctx, conn, cs, time.Now()); err == nil {
			err = analytics.WriteWebhookDeliveries(ctx, conn, logs)
		}
	}
	if err != nil {
		d.log.Warn("webhooks: writing where deliveries stand failed; will retry", "err", err)
		d.mu.Lock()
		for _, c := range cs {
			d.dirty[c.ID] = true
		}
		d.logs = append(logs, d.logs...)
		if n := len(d.logs) - maxPendingLogs; n > 0 {
			d.logs = d.logs[n:] // ClickHouse out of reach for long: the oldest attempts go unlogged, the cursors are kept
		}
		d.mu.Unlock()
	}
}
