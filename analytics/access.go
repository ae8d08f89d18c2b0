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

// version orders the rows of one account or key: the newest row wins.
func version() uint64 { return uint64(time.Now().UnixNano()) }

// WriteAccount stores a new version of an account.
func WriteAccount(ctx context.Context, conn driver.Conn, a AccountRow) error {
	return sendBatch(ctx, conn, "INSERT INTO accounts (email, password_hash, disabled, created_at, version)", "accounts",
		func(b driver.Batch) error {
			return b.Append(a.Email, a.PasswordHash, boolByte(a.Disabled), a.CreatedAt.UTC(), version())
		})
}

// WriteKey stores a new version of a key.
func WriteKey(ctx context.Context, conn driver.Conn, k KeyRow) error {
	return sendBatch(ctx, conn, "INSERT INTO api_keys (key_id, email, key_hash, daily_limit, revoked, created_at, version)", "api_keys",
		func(b driver.Batch) error {
			return b.Append(k.ID, k.Email, k.Hash, k.DailyLimit, boolByte(k.Revoked), k.CreatedAt.UTC(), version())
		})
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

// LoadAccounts returns the newest row of every account.
func LoadAccounts(ctx context.Context, conn driver.Conn) ([]AccountRow, error) {
	return loadAccounts(ctx, conn, "")
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

// LoadKeys returns the newest row of every key, or of the keys of one
// account when email is not empty, oldest first.
func LoadKeys(ctx context.Context, conn driver.Conn, email string) ([]KeyRow, error) {
	q := `SELECT key_id, argMax(email, version) AS owner, argMax(key_hash, version), argMax(daily_limit, version),
		argMax(revoked, version), argMax(created_at, version) AS created FROM api_keys GROUP BY key_id`
	var args []any
	if email != "" {
		q += " HAVING owner = ?"
		args = append(args, email)
	}
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

// WriteUsage adds the deltas to the callers' days.
func WriteUsage(ctx context.Context, conn driver.Conn, deltas []UsageDelta) error {
	if len(deltas) == 0 {
		return nil
	}
	return sendBatch(ctx, conn, "INSERT INTO usage (day, subject, calls)", "usage", func(b driver.Batch) error {
		for _, d := range deltas {
			if err := b.Append(d.Day.UTC(), d.Subject, d.Calls); err != nil {
				return err
			}
		}
		return nil
	})
}

// LoadUsage returns every caller's calls on the UTC day of day, summed over
// every edge of the fleet.
func LoadUsage(ctx context.Context, conn driver.Conn, day time.Time) (map[string]uint64, error) {
	rows, err := conn.Query(ctx, "SELECT subject, sum(calls) FROM usage WHERE day = toDate(?) GROUP BY subject",
		day.UTC().Format(time.DateOnly))
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var s string
		var n uint64
		if err := rows.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("read usage: %w", err)
		}
		out[s] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	return out, nil
}

// DropUsageBefore drops the usage of every UTC day before before: the
// table keeps one partition a day, dropped whole. It returns the days
// dropped.
func DropUsageBefore(ctx context.Context, conn driver.Conn, before time.Time) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT DISTINCT partition FROM system.parts
		WHERE database = currentDatabase() AND table = 'usage' AND active`)
	if err != nil {
		return nil, fmt.Errorf("list usage days: %w", err)
	}
	var days []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list usage days: %w", err)
		}
		days = append(days, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list usage days: %w", err)
	}
	cut := before.UTC().Format(time.DateOnly)
	var dropped []string
	for _, p := range days {
		day := strings.Trim(p, "'")
		if _, err := time.Parse(time.DateOnly, day); err != nil || day >= cut {
			continue // not a day's partition, or one to keep
		}
		// day is a date read back from ClickHouse, checked above: not text of a caller's.
		if err := conn.Exec(ctx, "ALTER TABLE usage DROP PARTITION '"+day+"'"); err != nil {
			return dropped, fmt.Errorf("drop usage of %s: %w", day, err)
		}
		dropped = append(dropped, day)
	}
	return dropped, nil
}
