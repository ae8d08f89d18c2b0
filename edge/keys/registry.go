package keys

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
)

// Key is an active key as the request path sees it.
type Key struct {
	ID         string // public id, such as edge_abcd2345
	Email      string // the account that owns it
	DailyLimit uint64 // calls a UTC day; 0: the default
}

// Verdict is the outcome of checking a key.
type Verdict int

// The outcomes of Registry.Verify.
const (
	Valid       Verdict = iota // the key is active
	Invalid                    // wrong, revoked, or its account is disabled
	Unavailable                // no key list has been loaded yet: nothing can be checked
)

// Registry holds every active key in memory. Load replaces the whole set
// at once; Verify never waits on the database. It is safe for concurrent
// use.
type Registry struct {
	db  *analytics.Lazy
	set atomic.Pointer[keySet]
}

type keySet struct {
	byID     map[string]entry
	loadedAt time.Time
}

type entry struct {
	hash Hash
	key  Key
}

// dummy is compared against when no key has the id asked for, so that an
// unknown key costs the same work as a wrong one.
var dummy = HashKey("edge_00000000_00000000000000000000000000000000")

// NewRegistry returns an empty registry that loads from db.
func NewRegistry(db *analytics.Lazy) *Registry { return &Registry{db: db} }

// Load reads every key and account and publishes the active keys: not
// revoked, and owned by an account that exists and is not disabled.
func (r *Registry) Load(ctx context.Context) error {
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	accounts, err := analytics.LoadAccounts(ctx, conn)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	keys, err := analytics.LoadKeys(ctx, conn, "")
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	r.set.Store(buildSet(accounts, keys, time.Now()))
	return nil
}

func buildSet(accounts []analytics.AccountRow, keys []analytics.KeyRow, at time.Time) *keySet {
	enabled := make(map[string]bool, len(accounts))
	for _, a := range accounts {
		enabled[a.Email] = !a.Disabled
	}
	s := &keySet{byID: make(map[string]entry, len(keys)), loadedAt: at}
	for _, k := range keys {
		h, ok := parseHash(k.Hash)
		if k.Revoked || !enabled[k.Email] || !ok {
			continue
		}
		s.byID[k.ID] = entry{hash: h, key: Key{ID: k.ID, Email: k.Email, DailyLimit: k.DailyLimit}}
	}
	return s
}

// LoadedAt returns when the key list was last loaded; zero before the
// first load.
func (r *Registry) LoadedAt() time.Time {
	if s := r.set.Load(); s != nil {
		return s.loadedAt
	}
	return time.Time{}
}

// Len returns the number of active keys.
func (r *Registry) Len() int {
	if s := r.set.Load(); s != nil {
		return len(s.byID)
	}
	return 0
}

// Verify checks key. The key's hash is compared in constant time against
// the stored hash of its id, or against a dummy hash when the id is
// unknown or the key malformed, so the work done and the answer given do
// not tell an unknown key from a wrong or revoked one.
func (r *Registry) Verify(key string) (Key, Verdict) {
	s := r.set.Load()
	if s == nil {
		return Key{}, Unavailable
	}
	// The id's characters need no check: a key whose hash matches the
	// stored one is the key that was made.
	var id string
	wellFormed := len(key) == KeyLen && key[:len(keyPrefix)] == keyPrefix && key[len(keyPrefix)+idLen] == '_'
	var h Hash
	if wellFormed {
		id = key[:len(keyPrefix)+idLen]
		var buf [KeyLen]byte
		copy(buf[:], key)
		h = sha256.Sum256(buf[:])
	} else {
		h = HashKey(key)
	}
	e, found := s.byID[id]
	want := e.hash
	if !found {
		want = dummy
	}
	match := subtle.ConstantTimeCompare(h[:], want[:]) == 1
	if !match || !found || !wellFormed {
		return Key{}, Invalid
	}
	return e.key, Valid
}

// Run reloads the key list every interval until ctx ends, each load
// within timeout; it logs the first failure of a run of them, and the
// recovery.
func (r *Registry) Run(ctx context.Context, every, timeout time.Duration, log *slog.Logger) {
	cron.Every(ctx, every, log, "keys", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return r.Load(ctx)
	})
}
