package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// WebhookRow is a version of a webhook endpoint (table webhooks).
type WebhookRow struct {
	ID          string
	Email       string // the account's
	URL         string
	Stores      string // comma-separated store names; "" for all
	Kinds       string // comma-separated kinds of change; "" for all
	Permission  string // "" for any
	Secret      string // sealed
	CreatedAt   time.Time
	Enabled     bool
	DisabledWhy string
	Deleted     bool
}

// WriteWebhook stores a new version of an endpoint, written at now.
func WriteWebhook(ctx context.Context, conn driver.Conn, w WebhookRow, now time.Time) error {
	newest, err := newestVersion(ctx, conn, "webhooks", "id", w.ID)
	if err != nil {
		return err
	}
	return sendBatch(ctx, conn, "INSERT INTO webhooks (id, email, url, stores, kinds, permission, secret, created_at, enabled, disabled_why, deleted, version)",
		"webhooks", func(b driver.Batch) error {
			return b.Append(w.ID, w.Email, w.URL, w.Stores, w.Kinds, w.Permission, w.Secret, w.CreatedAt.UTC(),
				boolByte(w.Enabled), w.DisabledWhy, boolByte(w.Deleted), nextVersion(now, newest))
		})
}

// WriteWebhookRows stores new endpoints in one batch, written at now
// (each its first version): for bulk registrations, such as benchmarks'.
func WriteWebhookRows(ctx context.Context, conn driver.Conn, ws []WebhookRow, now time.Time) error {
	return sendBatch(ctx, conn, "INSERT INTO webhooks (id, email, url, stores, kinds, permission, secret, created_at, enabled, disabled_why, deleted, version)",
		"webhooks", func(b driver.Batch) error {
			for _, w := range ws {
				if err := b.Append(w.ID, w.Email, w.URL, w.Stores, w.Kinds, w.Permission, w.Secret, w.CreatedAt.UTC(),
					boolByte(w.Enabled), w.DisabledWhy, boolByte(w.Deleted), uint64(now.UnixNano())); err != nil {
					return err
				}
			}
			return nil
		})
}

// LoadWebhooks returns the newest version of every endpoint not deleted,
// of the account email ("" for every account's).
func LoadWebhooks(ctx context.Context, conn driver.Conn, email string) ([]WebhookRow, error) {
	where, args := "", []any{}
	if email != "" {
		where, args = "WHERE email = ?", []any{email}
	}
	rows, err := conn.Query(ctx, `SELECT id, argMax(email, version), argMax(url, version), argMax(stores, version), argMax(kinds, version),
		argMax(permission, version), argMax(secret, version), argMax(created_at, version), argMax(enabled, version),
		argMax(disabled_why, version), argMax(deleted, version) AS gone
		FROM webhooks `+where+` GROUP BY id HAVING gone = 0 ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("load webhooks: %w", err)
	}
	defer rows.Close()
	var out []WebhookRow
	for rows.Next() {
		var w WebhookRow
		var enabled, deleted uint8
		if err := rows.Scan(&w.ID, &w.Email, &w.URL, &w.Stores, &w.Kinds, &w.Permission, &w.Secret, &w.CreatedAt, &enabled, &w.DisabledWhy, &deleted); err != nil {
			return nil, fmt.Errorf("scan webhook: %w", err)
		}
		w.Enabled, w.Deleted = enabled == 1, deleted == 1
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load webhooks: %w", err)
	}
	return out, nil
}

// WebhookCursor is where an endpoint's deliveries stand.
type WebhookCursor struct {
	ID           string
	Cursor       string    // the last event delivered
	FailingSince time.Time // zero when the next delivery has not failed
	Attempts     uint32    // failed attempts of the next delivery
	// Epoch is the fleet leadership's under which the deliveries it
	// records were made (package fleet/leader; 0 for an edge alone, and
	// for an endpoint no leader has written yet): a cursor of a larger
	// epoch wins over any of a smaller one, whenever it was written, so
	// that a leader that lost its lease and writes late cannot move back
	// where its successor stands.
	Epoch uint64
}

// WriteWebhookCursors stores the cursors of several endpoints at once,
// written at now (newer than any earlier write of the same edge), each
// with its epoch.
func WriteWebhookCursors(ctx context.Context, conn driver.Conn, cs []WebhookCursor, now time.Time) error {
	if len(cs) == 0 {
		return nil
	}
	v := uint64(now.UnixNano())
	return sendBatch(ctx, conn, "INSERT INTO webhook_cursors (id, cursor, failing_since, attempts, version, epoch)", "webhook_cursors",
		func(b driver.Batch) error {
			for _, c := range cs {
				var since uint32
				if !c.FailingSince.IsZero() {
					since = uint32(c.FailingSince.Unix())
				}
				if err := b.Append(c.ID, c.Cursor, since, c.Attempts, v, c.Epoch); err != nil {
					return err
				}
			}
			return nil
		})
}

// LoadWebhookCursors returns the cursor of every endpoint that has one:
// the newest of its largest epoch.
func LoadWebhookCursors(ctx context.Context, conn driver.Conn) (map[string]WebhookCursor, error) {
	rows, err := conn.Query(ctx, `SELECT id, argMax(cursor, (epoch, version)), argMax(failing_since, (epoch, version)),
		argMax(attempts, (epoch, version)), max(epoch)
		FROM webhook_cursors GROUP BY id ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("load webhook cursors: %w", err)
	}
	defer rows.Close()
	out := map[string]WebhookCursor{}
	for rows.Next() {
		var c WebhookCursor
		var since uint32
		if err := rows.Scan(&c.ID, &c.Cursor, &since, &c.Attempts, &c.Epoch); err != nil {
			return nil, fmt.Errorf("scan webhook cursor: %w", err)
		}
		if since > 0 {
			c.FailingSince = time.Unix(int64(since), 0).UTC()
		}
		out[c.ID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load webhook cursors: %w", err)
	}
	return out, nil
}

// WebhookDelivery is one delivery attempt.
type WebhookDelivery struct {
	ID        string // the endpoint's
	At        time.Time
	EventID   string
	Type      string
	Attempt   uint32
	Status    uint16 // 0: no answer
	LatencyMS uint32
	Error     string
}

// WriteWebhookDeliveries stores delivery attempts.
func WriteWebhookDeliveries(ctx context.Context, conn driver.Conn, ds []WebhookDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	return sendBatch(ctx, conn, "INSERT INTO webhook_deliveries (day, id, at, event_id, type, attempt, status, latency_ms, error)", "webhook_deliveries",
		func(b driver.Batch) error {
			for _, d := range ds {
				at := d.At.UTC()
				if err := b.Append(at.Truncate(24*time.Hour), d.ID, at, d.EventID, d.Type, d.Attempt, d.Status, d.LatencyMS, d.Error); err != nil {
					return err
				}
			}
			return nil
		})
}

// LoadWebhookDeliveries returns the newest limit attempts of endpoint id,
// newest first.
func LoadWebhookDeliveries(ctx context.Context, conn driver.Conn, id string, limit int) ([]WebhookDelivery, error) {
	rows, err := conn.Query(ctx, `SELECT id, at, event_id, type, attempt, status, latency_ms, error FROM webhook_deliveries
		WHERE id = ? ORDER BY at DESC, attempt DESC LIMIT ?`, id, uint64(limit))
	if err != nil {
		return nil, fmt.Errorf("load webhook deliveries: %w", err)
	}
	defer rows.Close()
	var out []WebhookDelivery
	for rows.Next() {
		var d WebhookDelivery
		if err := rows.Scan(&d.ID, &d.At, &d.EventID, &d.Type, &d.Attempt, &d.Status, &d.LatencyMS, &d.Error); err != nil {
			return nil, fmt.Errorf("scan webhook delivery: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load webhook deliveries: %w", err)
	}
	return out, nil
}

// DropWebhookDeliveriesBefore drops the delivery log's days before
// before.
func DropWebhookDeliveriesBefore(ctx context.Context, conn driver.Conn, before time.Time) ([]string, error) {
	return dropDaysBefore(ctx, conn, "webhook_deliveries", before)
}
