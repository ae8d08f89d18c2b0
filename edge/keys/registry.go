package keys

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron/every"
	"github.com/edge-stats/edge/edge/apikey"
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

// Registry holds every active key in memory. Load publishes the whole set
// at once; Verify never waits on the database. It is safe for concurrent
// use.
//
// A load reads only what changed: after the first, full, read it asks
// access_log for the accounts and keys written since the last read (by
// ClickHouse's clock, with a minute's overlap for inserts still landing)
// and reads those rows alone, by key. Unchanged accounts cost nothing, and
// no load reads a password hash. A full read runs again every fullEvery,
// and whenever more than maxChanges changed at once.
type Registry struct {
	db  *analytics.Lazy
	set atomic.Pointer[keySet]

	mu       sync.Mutex                             // one Load at a time; guards the fields below
	keys     [keyShards]map[string]analytics.KeyRow // by shardOf(id)
	disabled map[string]bool                        // account → disabled; no entry: no account
	byOwner  map[string][]string                    // account → its keys' ids
	since    time.Time                              // ask access_log from here (ClickHouse's clock)
	fullAt   time.Time                              // the last full read (this machine's clock)

	gate    Gate          // nil: every tick of Run reloads
	epoch   int64         // when the registry was made (Version)
	changes atomic.Uint64 // loads that changed the list (Version)
}

// keySet is a published set of active keys, in shards so that a load
// copies only the shards its changes touch.
type keySet struct {
	shards   [keyShards]map[string]entry
	n        int
	loadedAt time.Time
}

const keyShards = 64

func shardOf(id string) int {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int(h % keyShards)
}

// Tuning of Load.
const (
	fullEvery  = time.Hour
	overlap    = time.Minute // re-read changes this far back: inserts land after their time is taken
	maxChanges = 10000
)

type entry struct {
	hash apikey.Hash
	key  Key
}

// dummy is compared against when no key has the id asked for, so that an
// unknown key costs the same work as a wrong one.
var dummy = apikey.Sum("edge_00000000_00000000000000000000000000000000")

// NewStaticRegistry returns a registry holding these accounts and keys,
// which never loads (for tests of the key check).
func NewStaticRegistry(accounts []analytics.AccountState, keys []analytics.KeyRow) *Registry {
	r := &Registry{}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reset(accounts, keys, time.Now())
	return r
}

// NewRegistry returns an empty registry that loads from db.
func NewRegistry(db *analytics.Lazy) *Registry {
	return &Registry{db: db, epoch: time.Now().UnixNano()}
}

// Load reads the keys and accounts that changed since the last load (all
// of them the first time, and every hour) and publishes the active keys:
// not revoked, and owned by an account that exists and is not disabled.
func (r *Registry) Load(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	now := time.Now()
	if r.disabled == nil || now.Sub(r.fullAt) >= fullEvery {
		return r.loadAll(ctx, conn, now)
	}
	changes, ok, err := analytics.LoadAccessChanges(ctx, conn, r.since, maxChanges)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	if !ok {
		return r.loadAll(ctx, conn, now)
	}
	accounts, err := analytics.LoadAccountStates(ctx, conn, nonNil(changes.Accounts))
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	// A changed account's keys change with it.
	ids := changes.Keys
	for _, a := range changes.Accounts {
		ids = append(ids, r.byOwner[a]...)
	}
	keys, err := analytics.LoadKeysByID(ctx, conn, nonNil(ids))
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	for _, a := range accounts {
		r.disabled[a.Email] = a.Disabled
	}
	for _, k := range keys {
		r.putKey(k)
	}
	touched := make(map[string]bool, len(ids))
	for _, id := range ids {
		touched[id] = true
	}
	r.since = changes.Now.Add(-overlap)
	r.publish(touched, now) // with nothing touched, the set published before, at a new time
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// loadAll reads every key and account state.
func (r *Registry) loadAll(ctx context.Context, conn driver.Conn, now time.Time) error {
	// The log's clock first: what is written during the read is read
	// again next time.
	at, err := analytics.ServerNow(ctx, conn)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	accounts, err := analytics.LoadAccountStates(ctx, conn, nil)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	keys, err := analytics.LoadKeysByID(ctx, conn, nil)
	if err != nil {
		return fmt.Errorf("load keys: %w", err)
	}
	r.reset(accounts, keys, now)
	r.since = at.Add(-overlap)
	return nil
}

// reset replaces what r holds with accounts and keys, all of them, and
// publishes the active keys. r.mu must be held.
func (r *Registry) reset(accounts []analytics.AccountState, keys []analytics.KeyRow, now time.Time) {
	for i := range r.keys {
		r.keys[i] = map[string]analytics.KeyRow{}
	}
	r.byOwner = make(map[string][]string, len(accounts))
	r.disabled = make(map[string]bool, len(accounts))
	for _, a := range accounts {
		r.disabled[a.Email] = a.Disabled
	}
	for _, k := range keys {
		r.putKey(k)
	}
	r.fullAt = now
	r.publish(nil, now)
}

// putKey records k's newest row. r.mu must be held.
func (r *Registry) putKey(k analytics.KeyRow) {
	shard := r.keys[shardOf(k.ID)]
	old, ok := shard[k.ID]
	if ok && old.Email != k.Email {
		r.byOwner[old.Email] = slices.DeleteFunc(r.byOwner[old.Email], func(id string) bool { return id == k.ID })
	}
	if !ok || old.Email != k.Email {
		r.byOwner[k.Email] = append(r.byOwner[k.Email], k.ID)
	}
	shard[k.ID] = k
}

// publish publishes the active keys: the shards of the keys in touched
// rebuilt, the others shared with the set published before; every shard
// when touched is nil. r.mu must be held.
func (r *Registry) publish(touched map[string]bool, now time.Time) {
	if touched == nil || len(touched) > 0 {
		r.changes.Add(1)
	}
	old := r.set.Load()
	next := &keySet{loadedAt: now}
	var dirty [keyShards]bool
	if old == nil || touched == nil {
		for i := range dirty {
			dirty[i] = true
		}
	} else {
		next.shards = old.shards
		for id := range touched {
			dirty[shardOf(id)] = true
		}
	}
	for i := range next.shards {
		if !dirty[i] {
			continue
		}
		m := make(map[string]entry, len(r.keys[i]))
		for id, k := range r.keys[i] {
			if e, ok := r.active(k); ok {
				m[id] = e
			}
		}
		next.shards[i] = m
	}
	for i := range next.shards {
		next.n += len(next.shards[i])
	}
	r.set.Store(next)
}

// active returns k's entry when k is active.
func (r *Registry) active(k analytics.KeyRow) (entry, bool) {
	disabled, exists := r.disabled[k.Email]
	h, ok := apikey.ParseHash(k.Hash)
	if k.Revoked || !exists || disabled || !ok {
		return entry{}, false
	}
	return entry{hash: h, key: Key{ID: k.ID, Email: k.Email, DailyLimit: k.DailyLimit}}, true
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
		return s.n
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
	wellFormed := len(key) == apikey.KeyLen && key[:len(apikey.Prefix)] == apikey.Prefix && key[apikey.IDLen] == '_'
	var h apikey.Hash
	if wellFormed {
		id = key[:apikey.IDLen]
		var buf [apikey.KeyLen]byte
		copy(buf[:], key)
		h = sha256.Sum256(buf[:])
	} else {
		h = apikey.Sum(key)
	}
	e, found := s.shards[shardOf(id)][id]
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

// Gate decides whether a tick of Run reloads the keys: a following edge
// of a fleet reloads only when its leader's key list changed (package
// relay).
type Gate interface {
	// Load reports whether to reload now.
	Load(ctx context.Context) bool
	// Loaded records that the reload Load asked for succeeded.
	Loaded()
}

// SetGate makes Run ask g before each reload. Set it before Run.
func (r *Registry) SetGate(g Gate) { r.gate = g }

// Version names the key list this registry holds: it changes whenever a
// load changes the list (every key, account and state), and differs
// between processes.
func (r *Registry) Version() string {
	return strconv.FormatInt(r.epoch, 36) + "." + strconv.FormatUint(r.changes.Load(), 10)
}

// Run reloads the key list every interval until ctx ends, each load
// within timeout; it logs the first failure of a run of them, and the
// recovery.
func (r *Registry) Run(ctx context.Context, interval, timeout time.Duration, log *slog.Logger) {
	every.Run(ctx, interval, log, "keys", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if r.gate != nil && !r.gate.Load(ctx) {
			return nil
		}
		if err := r.Load(ctx); err != nil {
			return err
		}
		if r.gate != nil {
			r.gate.Loaded()
		}
		return nil
	})
}
