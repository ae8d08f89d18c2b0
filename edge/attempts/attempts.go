// Package attempts shares the attempts that count against the account
// routes' limits (sign-ups, failed sign-ins) across a fleet through a
// log every edge writes and reads (ClickHouse's attempts_log), so that
// the limits hold for the fleet rather than per edge, and a restart
// forgets none.
//
// Each edge counts its own attempts in its windows at once, as an edge
// alone does, and records them here; Sync writes what was recorded as one
// batch and reads what the fleet wrote since its last read, handing every
// other edge's attempt to the windows, counted from when it happened. An
// edge so counts another's attempts within one sync (2 s by default). A
// log that has not synced for a while is stale: the sign-ins then keep
// the edge's own ceilings. Sign-ups, which only the fleet's count bounds,
// are decided in the log itself (Admit): written before they are
// admitted and counted by a read of the store, so that no edge's death
// forgets one and no number of edges deciding at once admits past the
// limit; a store that cannot be read refuses them.
//
// Subjects are hashed (Subject): the log holds no address and no e-mail
// address in the clear, only what tells two attempts of one subject
// apart from others. The hash is not keyed (the edges of a fleet without
// a token share no secret), so it keeps them out of casual sight only:
// whoever reads the log can hash every IPv4 address, or the accounts'
// addresses, and compare.
package attempts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron/every"
)

// Kind is the limit an attempt counts against.
type Kind uint8

// The kinds of attempts.
const (
	SignUp      Kind = iota + 1 // an account made from an address
	SignInPair                  // a failed sign-in at an e-mail address from an address
	SignInEmail                 // a failed sign-in at an e-mail address, from anywhere
	SignInAddr                  // a failed sign-in from an address, at any account
	numKinds
)

// Revoked takes back an attempt of another kind that was written and
// then refused (Admit): a row of the same subject and time, which a
// limit's count subtracts. The log's readers (Sync, and the release
// before) pass it over as a kind they do not count.
const Revoked Kind = 64

// Key is the hash of what a limit counts by.
type Key [16]byte

// Subject returns the key of the subject made of parts (an address, an
// e-mail address): the first 16 bytes of the SHA-256 of the parts, each
// length-prefixed, so that no two lists of parts share a key.
func Subject(parts ...string) Key {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k Key
	copy(k[:], h.Sum(nil))
	return k
}

// Attempt is one attempt of another edge, as Sync hands it over.
type Attempt struct {
	Kind     Kind
	Key      Key
	Happened time.Time
}

// Store is where the fleet's attempts are logged (ClickHouse's
// attempts_log; a memory store in tests).
type Store interface {
	// Write writes attempts as one batch: all of them or none.
	Write(ctx context.Context, attempts []analytics.Attempt) error
	// Since returns the attempts written at or after pos, and the
	// position to ask from next. An attempt may come again in a later
	// call (readers take each batch once).
	Since(ctx context.Context, pos time.Time) ([]analytics.Attempt, time.Time, error)
	// Of returns the attempts of subject of the given kinds that happened
	// at or after since, every write that returned before it included.
	Of(ctx context.Context, subject string, kinds []uint8, since time.Time) ([]analytics.Attempt, error)
}

// ClickHouse returns the store of a fleet: the attempts log of db.
func ClickHouse(db *analytics.Lazy) Store { return chStore{db} }

type chStore struct{ db *analytics.Lazy }

func (s chStore) Write(ctx context.Context, attempts []analytics.Attempt) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	return analytics.WriteAttempts(ctx, conn, attempts)
}

func (s chStore) Since(ctx context.Context, pos time.Time) ([]analytics.Attempt, time.Time, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, pos, err
	}
	return analytics.LoadAttemptsSince(ctx, conn, pos)
}

func (s chStore) Of(ctx context.Context, subject string, kinds []uint8, since time.Time) ([]analytics.Attempt, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return analytics.LoadAttemptsOf(ctx, conn, subject, kinds, since)
}

// overlap is how far back a read starts before the previous read's
// newest time: an insert takes its time before its rows can be read, and
// the log's clock has whole seconds.
const overlap = 4 * time.Second

// Log records this edge's attempts and brings the fleet's.
type Log struct {
	store  Store
	name   string           // this process's name in the log's batches
	apply  func(a Attempt)  // takes another edge's attempt (the windows)
	now    func() time.Time // the clock (tests replace it)
	window time.Duration    // the longest span a limit counts over: how far back Start reads
	log    *slog.Logger

	pmu     sync.Mutex          // guards pending: a Record never waits for a Sync's I/O
	pending []analytics.Attempt // recorded since the last Sync took them

	mu      sync.Mutex             // one Sync at a time; guards what follows
	unsent  []analytics.Attempt    // taken by a Sync whose write failed: written with the next
	pos     time.Time              // where the next read goes on from; zero before Start
	seen    map[batch]time.Time    // batches taken or read, by their time in the log
	every   atomic.Int64           // Run's interval
	counted *prometheus.CounterVec // attempts by kind and by whose (this edge's, the fleet's)
	synced  atomic.Int64           // unix nanoseconds of the last Sync that wrote and read
	started atomic.Bool
	seq     atomic.Uint64 // the number of this edge's last batch (Sync's and Admit's)

	// admits serializes Admit per subject (by a stripe of its key): one
	// edge's decisions of one subject come one after the other, so that a
	// burst at this edge admits up to the limit, not fewer.
	admits [64]sync.Mutex
}

type batch struct {
	edge string
	seq  uint64
}

// New returns the log of this edge's attempts over store; apply takes
// every attempt of another edge (and, at Start, of this edge's earlier
// runs), counted over at most window.
func New(store Store, window time.Duration, apply func(Attempt), log *slog.Logger) *Log {
	var name [8]byte
	rand.Read(name[:])
	return &Log{store: store, name: hex.EncodeToString(name[:]), apply: apply, now: time.Now, window: window, log: log,
		seen: map[batch]time.Time{},
		counted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_account_attempts_total",
			Help: "Attempts at the account routes that count against their limits, by kind (signUp, signInPair, signInEmail, signInAddr) and by whose: this edge's own (edge, written to the fleet's attempts log) or the fleet's (fleet: another edge's, or an earlier run's, read from it)."},
			[]string{"kind", "from"})}
}

// Collectors returns the log's counters, and whether it is current
// (Current), for /metrics.
func (l *Log) Collectors() []prometheus.Collector {
	current := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "edge_account_attempts_current",
		Help: "1 while this edge counts the fleet's attempts at the account routes (its attempts log synced within three intervals), 0 while it cannot: sign-ups are then refused with 503."},
		func() float64 {
			if ok, _ := l.Current(); ok {
				return 1
			}
			return 0
		})
	return []prometheus.Collector{l.counted, current}
}

// kindNames names the kinds in the metrics.
var kindNames = [numKinds]string{"", "signUp", "signInPair", "signInEmail", "signInAddr"}

// Record records an attempt of this edge, counted in its own windows
// already, for the next Sync to write.
func (l *Log) Record(kind Kind, key Key, happened time.Time) {
	l.pmu.Lock()
	l.pending = append(l.pending, analytics.Attempt{Kind: uint8(kind), Subject: hex.EncodeToString(key[:]), Happened: happened})
	l.pmu.Unlock()
	l.counted.WithLabelValues(kindNames[kind], "edge").Inc()
}

// Start reads the attempts of the last window, every edge's (a restart
// forgets nothing the log holds), then syncs as Sync does.
func (l *Log) Start(ctx context.Context) error {
	l.mu.Lock()
	if l.pos.IsZero() {
		l.pos = l.now().Add(-l.window)
	}
	l.mu.Unlock()
	return l.Sync(ctx)
}

// Sync writes the attempts recorded since the last Sync as one batch,
// then reads what the fleet wrote since the last read and hands each
// attempt of another edge to apply. A batch whose write failed is
// written again at the next Sync.
func (l *Log) Sync(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pos.IsZero() {
		l.pos = l.now().Add(-l.window)
	}
	l.pmu.Lock()
	out := append(l.unsent, l.pending...)
	l.pending, l.unsent = nil, nil
	l.pmu.Unlock()
	if len(out) > 0 {
		seq := l.seq.Add(1)
		for i := range out {
			out[i].Edge, out[i].Seq = l.name, seq
		}
		if err := l.store.Write(ctx, out); err != nil {
			// Written again at the next Sync, under a new number: should
			// this write have landed after all, its attempts count twice,
			// which refuses early, never admits past a limit.
			l.unsent = out
			return err
		}
	}
	rows, next, err := l.store.Since(ctx, l.pos.Add(-overlap))
	if err != nil {
		return err
	}
	now := l.now()
	// A batch is taken whole or not at all: those seen before this read
	// are skipped, every row of the others taken.
	var fresh map[batch]bool
	for _, r := range rows {
		b := batch{r.Edge, r.Seq}
		if _, ok := l.seen[b]; !ok {
			if fresh == nil {
				fresh = map[batch]bool{}
			}
			fresh[b] = true
		}
	}
	for _, r := range rows {
		b := batch{r.Edge, r.Seq}
		l.seen[b] = r.At
		if !fresh[b] || r.Edge == l.name || r.Kind == 0 || r.Kind >= uint8(numKinds) {
			continue
		}
		var k Key
		if n, err := hex.Decode(k[:], []byte(r.Subject)); err != nil || n != len(k) {
			continue
		}
		l.apply(Attempt{Kind: Kind(r.Kind), Key: k, Happened: r.Happened})
		l.counted.WithLabelValues(kindNames[r.Kind], "fleet").Inc()
	}
	if next.After(l.pos) {
		l.pos = next
	}
	// A batch is read again while its time in the log is within the
	// overlap of the position: forget only those before that.
	for b, at := range l.seen {
		if at.Before(l.pos.Add(-overlap)) {
			delete(l.seen, b)
		}
	}
	l.synced.Store(now.UnixNano())
	l.started.Store(true)
	return nil
}

// Run syncs every interval until ctx ends, each Sync within timeout.
func (l *Log) Run(ctx context.Context, interval, timeout time.Duration) {
	l.every.Store(int64(interval))
	every.Run(ctx, interval, l.log, "attempts", func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return l.Sync(ctx)
	})
}

// Current reports whether the log synced within the last three intervals
// of Run (10 s before Run): whether this edge counts the fleet's
// attempts; and, when it does not, how long to wait before asking again.
func (l *Log) Current() (bool, time.Duration) {
	interval := time.Duration(l.every.Load())
	if interval <= 0 {
		interval = 10 * time.Second / 3
	}
	if !l.started.Load() || l.now().Sub(time.Unix(0, l.synced.Load())) > 3*interval {
		return false, max(interval, time.Second)
	}
	return true, 0
}

// Memory returns a store in memory, for tests: the log of one process's
// edges. Fail makes its calls fail while set.
func Memory() *MemoryStore { return &MemoryStore{} }

// MemoryStore is a Store in memory (Memory).
type MemoryStore struct {
	mu   sync.Mutex
	rows []memRow
	// Fail, while set, makes every call fail, as a store out of reach.
	Fail atomic.Bool
}

type memRow struct {
	a  analytics.Attempt
	at time.Time
}

// errAway is what a failing memory store answers.
var errAway = errors.New("attempts store out of reach")

// Write implements Store.
func (m *MemoryStore) Write(_ context.Context, attempts []analytics.Attempt) error {
	if m.Fail.Load() {
		return errAway
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for _, a := range attempts {
		a.Happened = time.UnixMilli(a.Happened.UnixMilli()).UTC() // as ClickHouse keeps it
		m.rows = append(m.rows, memRow{a, now})
	}
	return nil
}

// Since implements Store.
func (m *MemoryStore) Since(_ context.Context, pos time.Time) ([]analytics.Attempt, time.Time, error) {
	if m.Fail.Load() {
		return nil, pos, errAway
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []analytics.Attempt
	next := pos
	for _, r := range m.rows {
		if !r.at.Before(pos) {
			a := r.a
			a.At = r.at
			out = append(out, a)
			if r.at.After(next) {
				next = r.at
			}
		}
	}
	return out, next, nil
}

// Of implements Store.
func (m *MemoryStore) Of(_ context.Context, subject string, kinds []uint8, since time.Time) ([]analytics.Attempt, error) {
	if m.Fail.Load() {
		return nil, errAway
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []analytics.Attempt
	for _, r := range m.rows {
		if r.a.Subject == subject && slices.Contains(kinds, r.a.Kind) && !r.a.Happened.Before(since.Truncate(time.Millisecond)) {
			a := r.a
			a.At = r.at
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b analytics.Attempt) int { return a.Happened.Compare(b.Happened) })
	return out, nil
}
