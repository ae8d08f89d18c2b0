package keys

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/apikey"
)

// MaxKeys is the number of active keys an account may hold.
const MaxKeys = 3

// Password length bounds, in characters.
const (
	MinPassword = 10
	MaxPassword = 256
)

// Errors of account management. Their messages say what to change.
var (
	ErrBadEmail    = errors.New("the e-mail address is not valid: send a plain address such as name@example.com")
	ErrBadPassword = fmt.Errorf("the password must be %d to %d characters long", MinPassword, MaxPassword)
	ErrExists      = errors.New("an account with this e-mail address exists already: sign in with its password")
	ErrNoAccount   = errors.New("there is no account with this e-mail address")
	ErrSignIn      = errors.New("the e-mail address or the password is wrong, or the account is disabled")
	ErrTooManyKeys = fmt.Errorf("the account holds %d active keys, the most allowed: revoke one first", MaxKeys)
	ErrNoKey       = errors.New("there is no such key")
	ErrBadLimit    = errors.New("the daily limit must be a whole number of calls from 1, or 0 for the default")
	ErrBusy        = errors.New("every password hashing slot is busy")
)

// HashWait is how long a request waits for a password hashing slot by
// default before it fails with ErrBusy.
const HashWait = 2 * time.Second

// dummyPassword is checked when no account has the address signed in
// with, so that an unknown address costs what a wrong password costs.
var dummyPassword = sync.OnceValue(func() string { return HashPassword("a password no account has") })

// Accounts manages accounts and their keys in ClickHouse. Changes made
// through one Accounts are serialized; edges of a fleet see them when their
// Registry next loads.
type Accounts struct {
	db  *analytics.Lazy
	mu  sync.Mutex    // one change at a time: the key count of an account is checked, then written
	sem chan struct{} // bounds concurrent password hashing, which costs 19 MiB and tens of milliseconds
	now func() time.Time
	// Wait is how long a request waits for a hashing slot before ErrBusy
	// (HashWait unless set before first use).
	Wait time.Duration
}

// NewAccounts returns the account manager of db; hashers bounds how many
// passwords are hashed at once. now is this machine's clock (nil:
// time.Now); rows it writes are ordered after the newest row of their
// account or key even when this clock is behind the writer of that row.
func NewAccounts(db *analytics.Lazy, hashers int, now func() time.Time) *Accounts {
	if now == nil {
		now = time.Now
	}
	return &Accounts{db: db, sem: make(chan struct{}, max(hashers, 1)), now: now, Wait: HashWait}
}

// NormalizeEmail returns the address in the form accounts are stored
// under (lower case, no display name), or ErrBadEmail.
func NormalizeEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) > 254 {
		return "", ErrBadEmail
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		return "", ErrBadEmail
	}
	return s, nil
}

// CheckPasswordRules returns ErrBadPassword for a password an account
// may not have (its length in characters out of bounds, or not UTF-8).
func CheckPasswordRules(p string) error { return checkPassword(p) }

func checkPassword(p string) error {
	if n := utf8.RuneCountInString(p); n < MinPassword || n > MaxPassword || !utf8.ValidString(p) {
		return ErrBadPassword
	}
	return nil
}

// hash runs f holding a hashing slot; it fails with ErrBusy when no slot
// frees within a.Wait, or when ctx ends first.
func (a *Accounts) hash(ctx context.Context, f func()) error {
	select {
	case a.sem <- struct{}{}:
	default:
		t := time.NewTimer(a.Wait)
		defer t.Stop()
		select {
		case a.sem <- struct{}{}:
		case <-t.C:
			return ErrBusy
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { <-a.sem }()
	f()
	return nil
}

// Create makes an account.
func (a *Accounts) Create(ctx context.Context, email, password string) (string, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", err
	}
	if err := checkPassword(password); err != nil {
		return "", err
	}
	var hash string
	if err := a.hash(ctx, func() { hash = HashPassword(password) }); err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("create account: %w", err)
	}
	if _, ok, err := analytics.LoadAccount(ctx, conn, email); err != nil {
		return "", fmt.Errorf("create account: %w", err)
	} else if ok {
		return "", ErrExists
	}
	if err := analytics.WriteAccount(ctx, conn, analytics.AccountRow{Email: email, PasswordHash: hash, CreatedAt: a.now()}, a.now()); err != nil {
		return "", fmt.Errorf("create account: %w", err)
	}
	return email, nil
}

// SetDisabled disables or enables an account; a disabled account's keys
// stop working and it cannot sign in.
func (a *Accounts) SetDisabled(ctx context.Context, email string, disabled bool) error {
	email, err := NormalizeEmail(email)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("disable account: %w", err)
	}
	acc, ok, err := analytics.LoadAccount(ctx, conn, email)
	if err != nil {
		return fmt.Errorf("disable account: %w", err)
	}
	if !ok {
		return ErrNoAccount
	}
	acc.Disabled = disabled
	if err := analytics.WriteAccount(ctx, conn, acc, a.now()); err != nil {
		return fmt.Errorf("disable account: %w", err)
	}
	return nil
}

// SignIn checks an account's credentials and returns its stored address.
// Every refusal is ErrSignIn, and an unknown address costs the same
// password hashing as a wrong password.
func (a *Accounts) SignIn(ctx context.Context, email, password string) (string, error) {
	norm, err := NormalizeEmail(email)
	if err != nil {
		return "", ErrSignIn
	}
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("sign in: %w", err)
	}
	acc, found, err := analytics.LoadAccount(ctx, conn, norm)
	if err != nil {
		return "", fmt.Errorf("sign in: %w", err)
	}
	stored := acc.PasswordHash
	if !found {
		stored = dummyPassword()
	}
	var ok bool
	if err := a.hash(ctx, func() { ok = CheckPassword(password, stored) }); err != nil {
		return "", err
	}
	if !ok || !found || acc.Disabled {
		return "", ErrSignIn
	}
	return norm, nil
}

// CreateKey makes a key for the account and returns it; the key itself is
// shown this once and never stored.
func (a *Accounts) CreateKey(ctx context.Context, email string) (string, analytics.KeyRow, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", analytics.KeyRow{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return "", analytics.KeyRow{}, fmt.Errorf("create key: %w", err)
	}
	if _, ok, err := analytics.LoadAccount(ctx, conn, email); err != nil {
		return "", analytics.KeyRow{}, fmt.Errorf("create key: %w", err)
	} else if !ok {
		return "", analytics.KeyRow{}, ErrNoAccount
	}
	keys, err := analytics.LoadKeys(ctx, conn, email)
	if err != nil {
		return "", analytics.KeyRow{}, fmt.Errorf("create key: %w", err)
	}
	active := 0
	for _, k := range keys {
		if !k.Revoked {
			active++
		}
	}
	if active >= MaxKeys {
		return "", analytics.KeyRow{}, ErrTooManyKeys
	}
	key, id := apikey.New()
	row := analytics.KeyRow{ID: id, Email: email, Hash: apikey.Sum(key).String(), CreatedAt: a.now().UTC().Truncate(time.Second)}
	if err := analytics.WriteKey(ctx, conn, row, a.now()); err != nil {
		return "", analytics.KeyRow{}, fmt.Errorf("create key: %w", err)
	}
	// The lock holds on this edge only: another edge of the fleet may
	// have made one at the same moment. Read again, and give the new key
	// up when the account is past its most (the last of racing creates
	// to read sees every key written, so no account ends past it).
	keys, err = analytics.LoadKeys(ctx, conn, email)
	if err != nil {
		return "", analytics.KeyRow{}, fmt.Errorf("create key: %w", err)
	}
	active = 0
	for _, k := range keys {
		if !k.Revoked {
			active++
		}
	}
	if active > MaxKeys {
		row.Revoked = true
		if err := analytics.WriteKey(ctx, conn, row, a.now().Add(time.Millisecond)); err != nil {
			return "", analytics.KeyRow{}, fmt.Errorf("create key: %w", err)
		}
		return "", analytics.KeyRow{}, ErrTooManyKeys
	}
	return key, row, nil
}

// Keys returns the account's keys, revoked ones included, oldest first.
func (a *Accounts) Keys(ctx context.Context, email string) ([]analytics.KeyRow, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	keys, err := analytics.LoadKeys(ctx, conn, email)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

// Revoke revokes the key with this id. When email is not empty the key
// must belong to that account (a caller revoking its own key); the
// command line passes "".
func (a *Accounts) Revoke(ctx context.Context, email, id string) error {
	return a.change(ctx, email, id, func(k *analytics.KeyRow) { k.Revoked = true })
}

// SetLimit sets the key's daily limit; 0 restores the default.
func (a *Accounts) SetLimit(ctx context.Context, id string, daily uint64) error {
	return a.change(ctx, "", id, func(k *analytics.KeyRow) { k.DailyLimit = daily })
}

func (a *Accounts) change(ctx context.Context, email, id string, f func(*analytics.KeyRow)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	conn, err := a.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("change key: %w", err)
	}
	keys, err := analytics.LoadKeysByID(ctx, conn, []string{id})
	if err != nil {
		return fmt.Errorf("change key: %w", err)
	}
	for _, k := range keys {
		if k.ID != id || email != "" && k.Email != email {
			continue
		}
		f(&k)
		if err := analytics.WriteKey(ctx, conn, k, a.now()); err != nil {
			return fmt.Errorf("change key: %w", err)
		}
		return nil
	}
	return ErrNoKey
}
