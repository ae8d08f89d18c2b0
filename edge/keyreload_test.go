package edge_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/keys"
)

// TestKeyReloadReadsOnlyChanges: the key reload reads no password hash
// (the accounts table's password_hash is made a column that fails every
// query touching it), and once loaded it reads rows of the changed
// accounts and keys only, however many did not change. A revocation
// written with a clock an hour behind wins.
func TestKeyReloadReadsOnlyChanges(t *testing.T) {
	// A granule per table and id read (at most: the changed account, its
	// two keys, and the key revoked a moment before, which the reload's
	// minute of overlap reads again; an id may straddle two granules), and
	// the log: under half of a full read at 50,000 accounts, and the same
	// at any number.
	const reloadRows = 6 * 8192
	cfg, conn := srvNeed(t).Migrated(t)
	ctx := context.Background()
	const n = 50000
	for _, q := range []string{
		"DROP TABLE accounts",
		`CREATE TABLE accounts (email String, password_hash String ALIAS toString(throwIf(version >= 0)),
			disabled UInt8, created_at DateTime, version UInt64) ENGINE = ReplacingMergeTree(version) ORDER BY email`,
		fmt.Sprintf("INSERT INTO accounts (email, disabled, created_at, version) SELECT concat('u', toString(number), '@example.com'), 0, now(), 1 FROM numbers(%d)", n),
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Every account has a key; two of them are real.
	live, liveID := apikey.New()
	doomed, doomedID := apikey.New()
	if err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO api_keys (key_id, email, key_hash, daily_limit, revoked, created_at, version)
		SELECT concat('edge_', toString(number)), concat('u', toString(number), '@example.com'), '0000000000000000000000000000000000000000000000000000000000000000', 0, 0, now(), 1 FROM numbers(%d)`, n)); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, k := range []struct{ id, key string }{{liveID, live}, {doomedID, doomed}} {
		row := analytics.KeyRow{ID: k.id, Email: fmt.Sprintf("u%d@example.com", i), Hash: apikey.Sum(k.key).String(), CreatedAt: now}
		if err := analytics.WriteKey(ctx, conn, row, now); err != nil {
			t.Fatal(err)
		}
	}
	reg := keys.NewRegistry(analytics.NewLazy(cfg))
	var rows atomic.Uint64
	counted := clickhouse.Context(ctx, clickhouse.WithProgress(func(p *clickhouse.Progress) { rows.Add(p.Rows) }))
	if err := reg.Load(counted); err != nil {
		t.Fatalf("full load: %v", err)
	}
	full := rows.Swap(0)
	if reg.Len() != n+2 {
		t.Fatalf("%d active keys, want %d", reg.Len(), n+2)
	}
	if full < 2*n {
		t.Fatalf("the full load read %d rows, want at least %d: the count is not measuring", full, 2*n)
	}

	// Revoke with a clock an hour behind, through the same writer as the
	// command line.
	behind := keys.NewAccounts(analytics.NewLazy(cfg), 1, func() time.Time { return now.Add(-time.Hour) })
	if err := behind.Revoke(ctx, "", doomedID); err != nil {
		t.Fatal(err)
	}
	rows.Store(0)
	if err := reg.Load(counted); err != nil {
		t.Fatalf("reload: %v", err)
	}
	// A point read costs a granule (8,192 rows) of each table it reads for
	// each id, whatever the table's size.
	if read := rows.Load(); read > reloadRows || read > full/4 {
		t.Errorf("a reload after one change read %d rows (a full load reads %d): its cost follows the unchanged accounts", read, full)
	}
	if _, v := reg.Verify(doomed); v != keys.Invalid {
		t.Errorf("the revoked key: %v, want Invalid", v)
	}
	if _, v := reg.Verify(live); v != keys.Valid {
		t.Errorf("the untouched key: %v, want Valid", v)
	}
	// Disabling the live key's account (a row and its log entry, as
	// WriteAccount writes them) stops it at the next reload.
	for _, q := range []string{
		"INSERT INTO access_log (kind, id) SELECT 'account', 'u0@example.com'",
		"INSERT INTO accounts (email, disabled, created_at, version) SELECT 'u0@example.com', 1, now(), 2",
	} {
		if err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows.Store(0)
	if err := reg.Load(counted); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if read := rows.Load(); read > reloadRows {
		t.Errorf("a reload after one account change read %d rows", read)
	}
	if _, v := reg.Verify(live); v != keys.Invalid {
		t.Errorf("the disabled account's key: %v, want Invalid", v)
	}
}
