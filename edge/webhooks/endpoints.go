package webhooks

import (
	"context"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/eventfilter"
	"github.com/edge-stats/edge/views/document"
)

// reload reads the endpoints and, for those new to the deliverer or
// enabled again, their cursors.
func (d *Deliverer) reload(ctx context.Context) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	rows, err := analytics.LoadWebhooks(ctx, conn, "")
	if err != nil {
		return err
	}
	cursors, err := analytics.LoadWebhookCursors(ctx, conn)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]bool{}
	for _, row := range rows {
		seen[row.ID] = true
		ep, known := d.eps[row.ID]
		if known && (ep.row.Enabled || !row.Enabled || d.disabling[row.ID]) {
			if d.disabling[row.ID] {
				continue // disabled here, its row on its way
			}
			ep.row = row // a disabled endpoint stays as it was; a deletion drops it below
			continue
		}
		secret, err := d.sealer.open(row.ID, row.Secret)
		if err != nil {
			if !d.unsealable[row.ID] { // said once, not at every reload
				d.unsealable[row.ID] = true
				d.log.Warn("webhooks: an endpoint's secret does not open with this edge's key (EDGE_WEBHOOK_KEY changed?); it is skipped", "endpoint", row.ID, "err", err)
			}
			continue
		}
		f, err := eventfilter.Parse(row.Stores, row.Kinds, row.Permission)
		if err != nil {
			continue
		}
		ep = &endpoint{row: row, secret: secret, filter: f}
		if c, ok := cursors[row.ID]; ok {
			ep.cursor, _ = document.ParseEventCursor(c.Cursor)
			ep.failingSince, ep.attempts = c.FailingSince, c.Attempts
		} else if st := d.state.Load(); st != nil && st.Replica.Changes() != nil {
			ep.cursor = st.Replica.Changes().Newest()
			d.dirty[row.ID] = true
		}
		if known {
			ep.busy = d.eps[row.ID].busy
		}
		d.eps[row.ID] = ep
	}
	for id := range d.eps {
		if !seen[id] {
			delete(d.eps, id)
		}
	}
	d.loaded = time.Now()
	return nil
}

// reloadRetry is how long after a failed read of the endpoints the next
// one is made: ClickHouse out of reach is asked once a second, not at
// every tick.
const reloadRetry = time.Second

// reloadEndpoints reads the endpoints, logging the first failure of a
// run of them and the recovery that ends it.
func (d *Deliverer) reloadEndpoints(ctx context.Context) {
	err := d.reload(ctx)
	switch {
	case err != nil:
		d.reloadAfter = time.Now().Add(reloadRetry)
		if !d.reloadFailing {
			d.log.Warn("webhooks: reading the endpoints failed; will retry every second, logging only the recovery", "err", err)
		}
	case d.reloadFailing:
		d.log.Info("webhooks: reading the endpoints recovered")
	}
	d.reloadFailing = err != nil
}

// forget drops what the deliverer knew once it no longer leads (after
// writing it, under the epoch it was delivered in): the next leader reads
// it from ClickHouse.
func (d *Deliverer) forget(ctx context.Context) {
	d.since = time.Time{}
	if d.loaded.IsZero() {
		return
	}
	// The attempts under way end first (each within Config.Timeout; the
	// queued ones are dropped), so that what they delivered is written
	// before the next leader, who waits that long, reads the cursors.
	for end := time.Now().Add(d.longest() + time.Second); d.busy() && time.Now().Before(end) && ctx.Err() == nil; {
		time.Sleep(10 * time.Millisecond)
	}
	d.flush(ctx)
	d.mu.Lock()
	d.eps, d.loaded = map[string]*endpoint{}, time.Time{}
	d.mu.Unlock()
}
