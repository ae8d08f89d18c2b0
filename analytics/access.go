package analytics

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// AccountRow is an account's newest row: its e-mail address (the account's
// name), the argon2id hash of its password, and whether it is disabled.
type AccountRow struct {
	Email        string
	PasswordHash string
	Disabled     bool
	CreatedAt    time.Time
}

// KeyRow is an API key's newest row. ID is the key's public prefix; Hash is
// the hex SHA-256 of the whole key; DailyLimit 0 means the default.
type KeyRow struct {
	ID         string
	Email      string
	Hash       string
	DailyLimit uint64
	Revoked    bool
	CreatedAt  time.Time
}

// nextVersion is the version of a new row of an account or key whose
// newest row has version newest, written at now: the writer's clock in
// nanoseconds, or newest+1 when that clock is behind. Versions of one
// account or key thus strictly increase whatever the writers' clocks, and
// the newest row wins.
func nextVersion(now time.Time, newest uint64) uint64 {
	return max(uint64(now.UnixNano()), newest+1)
}

// newestVersion returns the version of the newest row of table whose
// column col is id; 0 when there is none.
func newestVersion(ctx context.Context, conn driver.Conn, table, col, id string) (uint64, error) {
	var v uint64
	if err := conn.QueryRow(ctx, "SELECT max(version) FROM "+table+" WHERE "+col+" = ?", id).Scan(&v); err != nil {
		return 0, fmt.Errorf("read %s version: %w", table, err)
	}
	return v, nil
}

// logChange records in access_log that the account or key id is about to
// get a new row (written first: an edge that reads the log after the row
// lands sees the change).
func logChange(ctx context.Context, conn driver.Conn, kind, id string) error {
	return sendBatch(ctx, conn, "INSERT INTO access_log (kind, id)", "access_log", func(b driver.Batch) error {
		return b.Append(kind, id)
	})
}

// The kinds of access_log rows.
const (
	changeAccount = "account"
	changeKey     = "key"
)

// WriteAccount stores a new version of an account, written at now (the
// writer's clock; see nextVersion).
func WriteAccount(ctx context.Context, conn driver.Conn, a AccountRow, now time.Time) error {
	newest, err := newestVersion(ctx, conn, "accounts", "email", a.Email)
	if err != nil {
		return err
	}
	if err := logChange(ctx, conn, changeAccount, a.Email); err != nil {
		return err
	}
	return sendBatch(ctx, conn, "INSERT INTO accounts (email, password_hash, disabled, created_at, version)", "accounts",
		func(b driver.Batch) error {
			return b.Append(a.Email, a.PasswordHash, boolByte(a.Disabled), a.CreatedAt.UTC(), nextVersion(now, newest))
		})
}

// WriteKey stores a new version of a key, written at now (the writer's
// clock; see nextVersion).
func WriteKey(ctx context.Context, conn driver.Conn, k KeyRow, now time.Time) error {
	newest, err := newestVersion(ctx, conn, "api_keys", "key_id", k.ID)
	if err != nil {
		return err
	}
	if err := logChange(ctx, conn, changeKey, k.ID); err != nil {
		return err
	}
	return sendBatch(ctx, conn, "INSERT INTO api_keys (key_id, email, key_hash, daily_limit, revoked, created_at, version)", "api_keys",
		func(b driver.Batch) error {
			return b.Append(k.ID, k.Email, k.Hash, k.DailyLimit, boolByte(k.Revoked), k.CreatedAt.UTC(), nextVersion(now, newest))
		})
}

// AccountState is an account as the key check needs it: whether it is
// disabled. It carries no password hash.
type AccountState struct {
	Email    string
	Disabled bool
}

// LoadAccountStates returns the newest state of the accounts with these
// addresses, or of every account when emails is nil. It reads no password
// hash.
func LoadAccountStates(ctx context.Context, conn driver.Conn, emails []string) ([]AccountState, error) {
	q := "SELECT email, argMax(disabled, version) FROM accounts"
	var args []any
	if emails != nil {
		if len(emails) == 0 {
			return nil, nil
		}
		var in string
		in, args = inList(emails)
		q += " WHERE email IN " + in
	}
	rows, err := conn.Query(ctx, q+" GROUP BY email", args...)
	if err != nil {
		return nil, fmt.Errorf("read account states: %w", err)
	}
	defer rows.Close()
	var out []AccountState
	for rows.Next() {
		var a AccountState
		var disabled uint8
		if err := rows.Scan(&a.Email, &disabled); err != nil {
			return nil, fmt.Errorf("read account states: %w", err)
		}
		a.Disabled = disabled != 0
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read account states: %w", err)
	}
	return out, nil
}

// AccessChanges are the accounts and keys that got new rows since a time,
// as access_log holds them.
type AccessChanges struct {
	Accounts, Keys []string
	// Now is the ClickHouse server's clock just before the changes were
	// read: the next read asks from shortly before it.
	Now time.Time
}

// ServerNow returns the ClickHouse server's clock, the clock of
// access_log.
func ServerNow(ctx context.Context, conn driver.Conn) (time.Time, error) {
	var now time.Time
	if err := conn.QueryRow(ctx, "SELECT now()").Scan(&now); err != nil {
		return now, fmt.Errorf("read the server's clock: %w", err)
	}
	return now, nil
}

// LoadAccessChanges returns the accounts and keys changed at or after
// since, by the ClickHouse server's clock; at most limit of them (more
// gives ok false: read everything instead).
func LoadAccessChanges(ctx context.Context, conn driver.Conn, since time.Time, limit int) (c AccessChanges, ok bool, err error) {
	if c.Now, err = ServerNow(ctx, conn); err != nil {
		return c, false, fmt.Errorf("read access changes: %w", err)
	}
	rows, err := conn.Query(ctx, "SELECT DISTINCT kind, id FROM access_log WHERE at >= ? LIMIT ?", since, limit+1)
	if err != nil {
		return c, false, fmt.Errorf("read access changes: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var kind, id string
		if err := rows.Scan(&kind, &id); err != nil {
			return c, false, fmt.Errorf("read access changes: %w", err)
		}
		switch kind {
		case changeAccount:
			c.Accounts = append(c.Accounts, id)
		case changeKey:
			c.Keys = append(c.Keys, id)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return c, false, fmt.Errorf("read access changes: %w", err)
	}
	return c, n <= limit, nil
}

// LoadAccount returns the newest row of the account with this e-mail
// address, and false when there is none.
func LoadAccount(ctx context.Context, conn driver.Conn, email string) (AccountRow, bool, error) {
	rows, err := loadAccounts(ctx, conn, "WHERE email = ?", email)
	if err != nil || len(rows) == 0 {
		return AccountRow{}, false, err
	}
	return rows[0], true, nil
}

func loadAccounts(ctx context.Context, conn driver.Conn, where string, args ...any) ([]AccountRow, error) {
	rows, err := conn.Query(ctx, `SELECT email, argMax(password_hash, version), argMax(disabled, version),
		argMax(created_at, version) FROM accounts `+where+` GROUP BY email`, args...)
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	defer rows.Close()
	var out []AccountRow
	for rows.Next() {
		var a AccountRow
		var disabled uint8
		if err := rows.Scan(&a.Email, &a.PasswordHash, &disabled, &a.CreatedAt); err != nil {
			return nil, fmt.Errorf("read accounts: %w", err)
		}
		a.Disabled = disabled != 0
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	return out, nil
}

// LoadKeys returns the newest row of each key of the account with this
// e-mail address, oldest first.
func LoadKeys(ctx context.Context, conn driver.Conn, email string) ([]KeyRow, error) {
	return loadKeys(ctx, conn, "", " HAVING owner = ?", email)
}

// LoadKeysByID returns the newest row of each key with one of these ids,
// or of every key when ids is nil, oldest first.
func LoadKeysByID(ctx context.Context, conn driver.Conn, ids []string) ([]KeyRow, error) {
	if ids == nil {
		return loadKeys(ctx, conn, "", "")
	}
	if len(ids) == 0 {
		return nil, nil
	}
	in, args := inList(ids)
	return loadKeys(ctx, conn, " WHERE key_id IN "+in, "", args...)
}

// inList returns "(?, ?, …)" with a placeholder for each value, and the
// values as arguments: a list for IN that the table's primary key serves
// (ClickHouse 18.16 takes no array there).
func inList(values []string) (string, []any) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ") + ")", args
}

func loadKeys(ctx context.Context, conn driver.Conn, where, having string, args ...any) ([]KeyRow, error) {
	q := `SELECT key_id, argMax(email, version) AS owner, argMax(key_hash, version), argMax(daily_limit, version),
		argMax(revoked, version), argMax(created_at, version) AS created FROM api_keys` + where + ` GROUP BY key_id` + having
	rows, err := conn.Query(ctx, q+" ORDER BY created, key_id", args...)
	if err != nil {
		return nil, fmt.Errorf("read api_keys: %w", err)
	}
	defer rows.Close()
	var out []KeyRow
	for rows.Next() {
		var k KeyRow
		var revoked uint8
		if err := rows.Scan(&k.ID, &k.Email, &k.Hash, &k.DailyLimit, &revoked, &k.CreatedAt); err != nil {
			return nil, fmt.Errorf("read api_keys: %w", err)
		}
		k.Revoked = revoked != 0
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read api_keys: %w", err)
	}
	return out, nil
}

// UsageDelta is a number of calls a caller made on one UTC day, counted by
// one edge since its last flush.
type UsageDelta struct {
	Day     time.Time // midnight UTC
	Subject string    // "key:<key id>" or "addr:<address>"
	Calls   uint64
}

// UsageBatch names one flush of an edge's counted calls: the edge (a name
// it draws when it starts) and the flush's sequence number.
type UsageBatch struct {
	Edge string
	Seq  uint64
}

// WriteUsage adds the deltas to the callers' days as batch: one insert into
// usage_log, which the usage_log_totals view also sums into usage.
//
// again says the batch is written again after a write whose outcome was
// unknown (it failed at the client, and the store did not hold it when
// asked): that write may still arrive late, and the rows written again
// are marked so that LoadUsage counts the batch once all the same.
func WriteUsage(ctx context.Context, conn driver.Conn, batch UsageBatch, deltas []UsageDelta, again bool) error {
	if len(deltas) == 0 {
		return nil
	}
	var retry uint8
	if again {
		retry = 1
	}
	return sendBatch(ctx, conn, "INSERT INTO usage_log (day, edge, seq, subject, calls, retry)", "usage_log", func(b driver.Batch) error {
		for _, d := range deltas {
			if err := b.Append(d.Day.UTC(), batch.Edge, batch.Seq, d.Subject, d.Calls, retry); err != nil {
				return err
			}
		}
		return nil
	})
}

// UsageChange is one row of the usage log: calls of a subject written by a
// batch.
type UsageChange struct {
	Batch   UsageBatch
	Subject string
	Calls   uint64
}

// LoadUsageSince returns the usage log's rows of the UTC day of day
// written at or after since (ClickHouse's clock, whole seconds).
func LoadUsageSince(ctx context.Context, conn driver.Conn, day, since time.Time) ([]UsageChange, error) {
	rows, err := conn.Query(ctx, "SELECT edge, seq, subject, calls FROM usage_log WHERE day = toDate(?) AND at >= ?",
		day.UTC().Format(time.DateOnly), since.UTC())
	if err != nil {
		return nil, fmt.Errorf("read usage log: %w", err)
	}
	defer rows.Close()
	var out []UsageChange
	for rows.Next() {
		var c UsageChange
		if err := rows.Scan(&c.Batch.Edge, &c.Batch.Seq, &c.Subject, &c.Calls); err != nil {
			return nil, fmt.Errorf("read usage log: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage log: %w", err)
	}
	return out, nil
}

// LoadUsageEdges returns the edges that wrote to the usage log at or
// after since (ClickHouse's clock).
func LoadUsageEdges(ctx context.Context, conn driver.Conn, since time.Time) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT DISTINCT edge FROM usage_log WHERE day >= toDate(?) AND at >= ?",
		since.UTC().Format(time.DateOnly), since.UTC())
	if err != nil {
		return nil, fmt.Errorf("read usage edges: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return nil, fmt.Errorf("read usage edges: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage edges: %w", err)
	}
	return out, nil
}

// HasUsageBatch reports whether the usage log holds batch, whose rows
// are of days (a batch is one insert: all its rows or none).
func HasUsageBatch(ctx context.Context, conn driver.Conn, batch UsageBatch, days []time.Time) (bool, error) {
	if len(days) == 0 {
		return false, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("toDate(?), ", len(days)), ", ")
	args := make([]any, 0, len(days)+2)
	for _, d := range days {
		args = append(args, d.UTC().Format(time.DateOnly))
	}
	args = append(args, batch.Edge, batch.Seq)
	var n uint64
	err := conn.QueryRow(ctx, "SELECT count() FROM usage_log WHERE day IN ("+marks+") AND edge = ? AND seq = ?",
		args...).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check usage batch: %w", err)
	}
	return n > 0, nil
}

// LoadUsage returns every caller's calls on the UTC day of day, summed over
// every edge of the fleet, each batch counted once: the usage table sums
// every row of the log, so the rows of a batch that was written again
// (WriteUsage's again) and also arrived the first time are taken off.
// Only the batches written again are grouped, so the correction reads
// the log's small columns, not the day's rows.
func LoadUsage(ctx context.Context, conn driver.Conn, day time.Time) (map[string]uint64, error) {
	d := day.UTC().Format(time.DateOnly)
	out := map[string]uint64{}
	if err := sumUsage(ctx, conn, out, "SELECT subject, sum(calls) FROM usage WHERE day = toDate(?) GROUP BY subject", d); err != nil {
		return nil, err
	}
	extra := map[string]uint64{}
	// GLOBAL IN: on a cluster usage_log is a Distributed table, and the
	// subquery is read once, not once per shard.
	const twice = `SELECT subject, toUInt64(sum(extra)) FROM (
		SELECT subject, sum(calls) - max(calls) AS extra FROM usage_log
		WHERE day = toDate(?) AND (edge, seq) GLOBAL IN (SELECT edge, seq FROM usage_log WHERE day = toDate(?) AND retry = 1)
		GROUP BY edge, seq, subject HAVING count() > 1
	) GROUP BY subject`
	if err := sumUsage(ctx, conn, extra, twice, d, d); err != nil {
		return nil, err
	}
	for s, n := range extra {
		out[s] -= min(n, out[s])
	}
	return out, nil
}

// sumUsage adds the (subject, calls) rows of query to into.
func sumUsage(ctx context.Context, conn driver.Conn, into map[string]uint64, query string, args ...any) error {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var n uint64
		if err := rows.Scan(&s, &n); err != nil {
			return fmt.Errorf("read usage: %w", err)
		}
		into[s] += n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	return nil
}

// DropUsageBefore drops the usage of every UTC day before before: the
// table keeps one partition a day, dropped whole. It returns the days
// dropped.
func DropUsageBefore(ctx context.Context, conn driver.Conn, before time.Time) ([]string, error) {
	return dropDaysBefore(ctx, conn, "usage", before)
}

// DropUsageLogBefore drops the usage log's days before before.
func DropUsageLogBefore(ctx context.Context, conn driver.Conn, before time.Time) ([]string, error) {
	return dropDaysBefore(ctx, conn, "usage_log", before)
}

// dropDaysBefore drops the partitions of table (one a day) before before.
// table is one of this package's constants, never a caller's text.
func dropDaysBefore(ctx context.Context, conn driver.Conn, table string, before time.Time) ([]string, error) {
	target, err := onTable(ctx, conn, table)
	if err != nil {
		return nil, fmt.Errorf("list the days of %s: %w", table, err)
	}
	// One server's parts name its days; a cluster's servers each hold
	// some, so there the days are read from the table.
	q := `SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND table = ? AND active`
	args := []any{table}
	if target != table {
		q, args = `SELECT DISTINCT toString(day) FROM `+table, nil
	}
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list the days of %s: %w", table, err)
	}
	var days []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list the days of %s: %w", table, err)
		}
		days = append(days, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the days of %s: %w", table, err)
	}
	cut := before.UTC().Format(time.DateOnly)
	var dropped []string
	for _, p := range days {
		day := strings.Trim(p, "'")
		if _, err := time.Parse(time.DateOnly, day); err != nil || day >= cut {
			continue // not a day's partition, or one to keep
		}
		// day is a date read back from ClickHouse, checked above: not text of a caller's.
		if err := conn.Exec(ctx, "ALTER TABLE "+target+" DROP PARTITION '"+day+"'"); err != nil {
			return dropped, fmt.Errorf("drop %s of %s: %w", table, day, err)
		}
		dropped = append(dropped, day)
	}
	return dropped, nil
}
