// Package exchange hands the state one edge of a fleet loaded from
// ClickHouse to the fleet's other edges, so that ClickHouse loads each
// state once per fleet, not once per edge.
//
// The edge elected to lead (package fleet/leader) loads from ClickHouse as
// a lone edge does; after each state it publishes, a Publisher writes the
// state's replica as a snapshot file (replica.WriteSnapshot) and serves
// the newest on the edge's fleet address, GET /fleet/v1/state, with its
// SHA-256 as ETag. The other edges read the leader's fleet address from
// its election node, and a Follower fetches the snapshot whenever its
// ETag changes (a 304 otherwise), checks its SHA-256, and hands the
// replica to the state builder (package builder), which builds the
// figures from it as from a load: the same replica gives the same
// figures, bytes and ETags on every edge.
//
// With the fleet's token (Config.Keys, package trust) the fleet address
// speaks TLS 1.3 with both edges' certificates checked against the
// authority derived from the token, so that neither side sends a byte to
// an edge that has not proved it holds the token; and each state's digest
// is signed by the leader, so that a follower reads only a state of its
// fleet. Without a token the address must be on loopback (a development
// fleet on one host), and a follower believes only a loopback leader.
//
// A follower falls back to loading from ClickHouse itself
// (follow.ErrNoSource) when there is no leader, when it leads, when the
// leader is out of reach, or when the leader has had no state to give for
// longer than Config.Patience; a leader still loading is otherwise waited
// for, so that edges starting together load ClickHouse once.
package exchange

import (
	"log/slog"
	"time"

	"github.com/edge-stats/edge/fleet/trust"
)

// The paths the leader serves: its state, the days of its exports (a
// JSON array of their manifests, newest first), each day's files under
// ExportsPath/<day>/<name>, and whether it leads.
const (
	StatePath   = "/fleet/v1/state"
	ExportsPath = "/fleet/v1/exports"
	// LeaderPath answers 204 while the edge leads, 503 "Not the leader"
	// otherwise: what a follower probes each second (Follower.Watch).
	LeaderPath = "/fleet/v1/leader"
)

// Config configures both sides.
type Config struct {
	// Dir is where the leader keeps its newest snapshot file, and where
	// a follower keeps the state it takes while it reads it.
	Dir string
	// Sends bounds the snapshots the leader sends at once; past it an
	// edge is told to come back (503, Retry-After), so that a fleet
	// starting together does not take the leader's bandwidth and CPU
	// from its answers.
	Sends int
	// Patience is how long a follower waits for a leader that has no
	// state yet (still loading) before it loads from ClickHouse itself.
	Patience time.Duration
	// MaxBytes bounds the uncompressed size of a snapshot a follower reads.
	MaxBytes int64
	// ElectionWait is how long a follower waits for its election to name
	// a leader (after its start, or after it lost one) before it loads
	// from ClickHouse itself.
	ElectionWait time.Duration
	// Idle is how long a follower waits for the next byte from the
	// leader before it gives the request up, and how long the leader's
	// write to an edge may wait before it is cut (an answer's whole write,
	// or each chunk of a state's).
	Idle time.Duration
	// Keys are what the edge derived from the fleet's token (package
	// trust): with them the fleet address takes only TLS connections of
	// the fleet's edges, the leader signs each state and a follower reads
	// only a signed state from an edge that proved it holds the token.
	// Without them (nil) the routes that need the token (Handle) are off,
	// and a follower believes only a leader on loopback.
	Keys *trust.Keys
	// LeaderEpoch, when set, returns the epoch of the elected leader
	// whose fleet address is addr (leader.Elector.LeaderEpoch), 0 when
	// addr is not the elected leader's or it is not known: a follower
	// refuses a state older than the one it took, in the order of
	// (epoch, generation).
	LeaderEpoch func(addr string) int64
	// LeaderPin, when set, returns the pin of the certificate of the
	// elected leader whose fleet address is at hostport
	// (leader.Elector.LeaderPin): a follower dials only that address and
	// holds the edge there to that key (BoundTransport).
	LeaderPin Pins
	// Recheck, when set, asks the election to be read again now
	// (leader.Elector.Recheck): a follower calls it when the edge the
	// election names answers that it does not lead, or is out of reach.
	Recheck func()
	// Deltas is how many deltas the leader keeps: a follower that holds
	// one of the states they start from takes what changed since, in
	// place of the whole state; one further behind takes the whole.
	Deltas int
	// WholeAfter is how long after a state's delta the leader writes the
	// state whole, when it has a whole state written already: its
	// followers take the delta and build their figures first, on cores
	// the whole state's compression does not take (it holds both for
	// seconds at a million listings). Meanwhile an edge that needs a whole state (one that
	// joins, or holds a state the deltas do not start from) takes the one
	// before and then the deltas since. The time counts from the first
	// state not written whole, so a leader refreshing faster still writes
	// one every WholeAfter. 0: at once.
	WholeAfter time.Duration
	// Metrics counts what the fleet refused and sent (nil: counted unseen).
	Metrics *Metrics
	// Log is where a follower says why it took a whole state in place of
	// a delta (nil: slog.Default()).
	Log *slog.Logger
	// Formats are the formats the leader writes each whole state in,
	// newest first (nil: replica.Formats); its deltas are of the first.
	// A follower is answered in the newest it reads (formats.go).
	Formats []uint64
}

// DefaultConfig returns the defaults: 4 sends at once, 10 minutes of
// patience, snapshots of at most 8 GiB uncompressed (about 18M listings),
// 30 seconds for an election and for the next byte of an answer, 12
// deltas kept (an hour of five-minute refreshes), and each state written
// whole 30 seconds after its delta.
func DefaultConfig() Config {
	return Config{Dir: "data/fleet", Sends: 4, Patience: 10 * time.Minute, MaxBytes: 8 << 30, ElectionWait: 30 * time.Second, Idle: 30 * time.Second,
		Deltas: 12, WholeAfter: 30 * time.Second}
}
