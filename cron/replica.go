package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron/lowprio"
	"github.com/edge-stats/edge/cron/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// Views builds and publishes the edge's state. Its full and incremental
// jobs share one lock, so that a publish never replaces a newer state with
// one derived from an older one.
type Views struct {
	db  *analytics.Lazy
	pub *views.Published[served.State]
	log *slog.Logger
	mu  sync.Mutex
	// heavy is held by a full load, and by other jobs for their large
	// reads (week states), so that their memory never adds up.
	heavy sync.Mutex

	// memory returns the live heap after the last collection and the
	// process's memory limit (math.MaxInt64: none); tests replace it.
	memory func() (live, limit int64)
	// keepRoom collects what a build left and keeps the pages for the
	// next (memory.CollectKeeping); tests replace it.
	keepRoom  func(n int, listingsBytes int64, spareAhead bool)
	waits     atomic.Int64  // full reloads put off for memory
	afterPart func()        // test hook: runs after the first part of a full load
	onBuild   func()        // runs before a reload builds its figures (see OnReloadBuild)
	figures   chan struct{} // closed when the first state with figures is published
	once      sync.Once

	// source, when set, is where the edge takes its state from instead
	// of ClickHouse (a fleet's leader); tag names the state it gave last
	// ("": the published state was loaded from ClickHouse).
	source StateSource
	tag    string
	// tagNow is tag, for readers that do not hold the jobs' lock
	// (FollowedTag).
	tagNow atomic.Pointer[string]
	// onPublish, when set, is given every state to be published with
	// figures, before they are built (OnPublish).
	onPublish func(r *replica.Replica, snapshots int64)
	// changeWindow is how far back the listings' change log reaches, from
	// the listings' watermark (SetChangeWindow).
	changeWindow time.Duration
	// spare is room a follower made ahead for its next delta's listings
	// (makeSpare); spareMaking is set while it is being made.
	spare       atomic.Pointer[replica.Spare]
	spareMaking atomic.Bool
	// building is closed when the state this edge reads or builds is
	// published or given up; nil while it builds none (Building).
	building atomic.Pointer[chan struct{}]
}

// Building returns a channel closed once the state this edge is reading
// (a fleet's state) or building (its figures) is published or given up,
// or nil while it builds none. Work that can wait waits on it: the
// answers' precompression, which runs on a thread at the lowest priority
// and so, while the kernel runs it seldom beside a build, holds one of
// the Go scheduler's Ps the build would use (at 5M listings, 11.6 s of
// it in the minute a follower read and built a delta; bench/README,
// sixth round).
func (v *Views) Building() <-chan struct{} {
	if ch := v.building.Load(); ch != nil {
		return *ch
	}
	return nil
}

// startBuilding marks a state's read or build under way until the func it
// returns is called. A mark already under way (a fleet state's read,
// whose build follows) is kept, and the func returned does nothing.
func (v *Views) startBuilding() (end func()) {
	ch := make(chan struct{})
	if !v.building.CompareAndSwap(nil, &ch) {
		return func() {}
	}
	return func() {
		v.building.Store(nil)
		close(ch)
	}
}

// DefaultChangeWindow is how far back the listings' change log reaches
// unless SetChangeWindow says otherwise: 180 days.
const DefaultChangeWindow = 180 * 24 * time.Hour

// SetChangeWindow sets how far back the listings' change log reaches,
// from the newest metadata crawl read. Set it before the jobs start.
func (v *Views) SetChangeWindow(d time.Duration) { v.changeWindow = d }

// changesFrom returns where the change log of a replica with info starts.
func (v *Views) changesFrom(info replica.Info) time.Time {
	return info.ListingsMark.Add(-v.changeWindow)
}

// withChanges returns r with the change log of every metadata version
// in its window, read from ClickHouse.
func (v *Views) withChanges(ctx context.Context, conn driver.Conn, r *replica.Replica) (*replica.Replica, error) {
	start := time.Now()
	log, err := analytics.LoadChanges(ctx, conn, r, v.changesFrom(r.Info()))
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", r.Info().Generation, err)
	}
	v.log.Info("changes loaded", "generation", r.Info().Generation, "changes", log.Len(), "bytes", log.Bytes(), "took", time.Since(start).Round(time.Millisecond))
	return r.WithChanges(log), nil
}

// StateSource is where an edge of a fleet takes its state from instead
// of loading it from ClickHouse (package cron/fleet).
type StateSource interface {
	// Fetch returns the source's newest state when its tag differs from
	// have: a replica read as o says (its generation, the replica it
	// replaces, what is told the count of its listings; the source sets
	// the bound on its size), the count of readings its figures report,
	// and its tag. It returns a nil replica and have when have is
	// current, and an error wrapping ErrNoSource when the edge should
	// load from ClickHouse itself.
	Fetch(ctx context.Context, have string, o replica.ReadOptions) (r *replica.Replica, snapshots int64, tag string, err error)
}

// ErrNoSource says a state source has nothing to give this edge (it
// leads, there is no leader, or the leader is out of reach): the edge
// loads from ClickHouse.
var ErrNoSource = errors.New("no fleet state to follow")

// ErrNoRoom says a source has a newer state for this edge only whole,
// and a whole state does not fit beside the one it holds
// (replica.ReadOptions.NoWhole): the edge keeps its state and asks again.
var ErrNoRoom = errors.New("a whole state does not fit beside the one held")

// FollowFrom makes the views take their state from src when it has one:
// the full and incremental jobs ask src first and load from ClickHouse
// only when it says ErrNoSource, and FollowJob asks it often. Set it
// before the jobs start.
func (v *Views) FollowFrom(src StateSource) { v.source = src }

// OnPublish sets what is given every state to be published with figures
// (a fleet's publisher), before its figures are built. Set it before the
// jobs start.
func (v *Views) OnPublish(f func(r *replica.Replica, snapshots int64)) { v.onPublish = f }

// FollowedTag returns the tag of the fleet state published ("" when the
// published state was loaded from ClickHouse): what the source's watch
// asks a newer state than (fleet.Follower.Watch).
func (v *Views) FollowedTag() string {
	if t := v.tagNow.Load(); t != nil {
		return *t
	}
	return ""
}

// FollowJob returns the job that asks the state source for a newer state
// and publishes it; it does nothing when there is none to follow.
func (v *Views) FollowJob(schedule string) Job {
	return Job{Name: "follow", Schedule: schedule, Quiet: true, Run: func(ctx context.Context) error {
		if v.source == nil {
			return nil
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		if err := v.follow(ctx); err != nil && !errors.Is(err, ErrNoSource) {
			return err
		}
		return nil
	}}
}

// follow publishes the source's state when it is newer than the one
// published. It runs with v.mu held. An error wrapping ErrNoSource says
// the caller should load from ClickHouse.
func (v *Views) follow(ctx context.Context) error {
	v.heavy.Lock()
	defer v.heavy.Unlock()
	cur := v.pub.Load()
	var prev *replica.Replica
	var prevFigures *figures.Figures // a delta's build starts from them
	noRoom := false
	if cur != nil {
		prev, prevFigures = cur.Replica, cur.Figures
		// A whole state needs about the live heap again; a delta fits
		// where it would not, and a leader (ErrNoSource) refreshes on
		// its own, so the source is asked whatever the room.
		noRoom = cur.Figures != nil && !v.secondStateFits()
	}
	// Most asks find nothing new (a 304): the memory policy of a load
	// (a lower GOGC, a collection after) only once a state came.
	start := time.Now()
	spare := v.spare.Load()
	o := replica.ReadOptions{Generation: v.nextGeneration(), Prev: prev, NoWhole: noRoom, Spare: spare}
	whole := false // a whole state was read (a delta's read counts none)
	// From the state's header (a delta's or a whole state's) to its
	// publish, the read and build come first (Building).
	endBuilding, building := func() {}, false
	defer func() { endBuilding() }()
	markBuilding := func() {
		if !building {
			building, endBuilding = true, v.startBuilding()
		}
	}
	// A whole state has no use for the spare: its room goes back to the
	// heap before the state's listings are read.
	o.Counted = func(int) { whole = true; spare.Drop(); markBuilding() }
	if cur == nil {
		// A first state: a heap that only grows, as after a restart's
		// first load from ClickHouse (memory.GrowGC).
		restore := func() {}
		o.Counted = func(n int) { whole, restore = true, memory.GrowGC(n); spare.Drop(); markBuilding() }
		defer func() { restore() }()
	}
	// A delta's apply and the build after it under one setting of the
	// collector (memory.DeltaGC), from the delta's header until the
	// state it replaced is collected after the publish, restored once
	// (endGC): a collection started in the apply ran on through the
	// build, and one ended at the publish found the heap of two states
	// at its goal and marked both (at 5M listings, 7.8 GB and 2.3–3.5 s
	// just before the collection that keeps the room marked one).
	deltaGC, endedGC := false, false
	restoreGC := func() {}
	endGC := func() {
		if !endedGC {
			endedGC = true
			restoreGC()
		}
	}
	defer endGC() // after the collection that follows the publish, and on the ways out
	o.Delta = func(n int) {
		markBuilding()
		if deltaGC {
			return // a chain's later delta: set at the first
		}
		var array int64
		if spare.Cap() < n {
			array = int64(n) * int64(unsafe.Sizeof(views.Listing{}))
		}
		restoreGC, deltaGC = memory.DeltaGC(n, array), true
	}
	r, snapshots, tag, err := v.source.Fetch(ctx, v.tag, o)
	intoSpare := spare != nil && r != nil && !whole && spare.Cap() == 0
	if spare != nil && (r != nil || spare.Cap() == 0 || errors.Is(err, ErrNoSource)) {
		// Taken by the delta, dropped for a whole state, too small for
		// the state read (the next is made for this state), or this
		// edge now leads and loads its states itself.
		spare.Drop()
		v.spare.CompareAndSwap(spare, nil)
	}
	if errors.Is(err, ErrNoRoom) {
		v.waits.Add(1)
		v.reloadFits() // says why, with the figures
		return nil
	}
	if err != nil || r == nil {
		return err
	}
	v.log.Info("fleet state read", "generation", r.Info().Generation, "listings", r.Len(), "took", time.Since(start).Round(time.Millisecond),
		"whole", whole, "into_spare", intoSpare)
	// Room for the next delta's listings, made once this state is
	// published and the one it replaced collected (the defers below run
	// first).
	defer v.makeSpare(r.Len())
	// The replaced state collected once published, its pages kept for
	// the next delta's (memory.CollectKeeping), from the first state
	// on: a delta comes every refresh and needs them again.
	defer v.collectKeeping(r.Len(), true)
	if cur != nil && !deltaGC {
		defer memory.LowerGC(memory.ReloadGCPercent)()
	}
	if cur == nil {
		// A first state: its listings are served while the figures build.
		v.pub.Publish(&served.State{Replica: r})
		v.log.Info("replica published", "generation", r.Info().Generation, "listings", r.Len(), "from", "fleet")
		v.indexText(r)
	} else if v.onBuild != nil {
		v.onBuild()
	}
	if whole {
		// The read's garbage out before the build's allocations. A
		// delta's read leaves little (its new listings share the
		// state's strings and histories), and a collection marks the
		// whole heap: at 5M listings, seconds of both cores between the
		// leader's publish and this edge's.
		memory.Collect()
	}
	gc := memory.BuildGC
	if deltaGC {
		gc = func(int) func() { return func() {} } // set since the delta's header, ended by endGC
	}
	if err := v.publish(r, prevFigures, snapshots, "fleet", gc, "tag", tag); err != nil {
		return err
	}
	v.tag = tag
	v.tagNow.Store(&tag)
	v.indexText(r)
	return nil
}

// makeSpare makes room ahead for the listings of the next delta a
// follower applies (replica.Spare), for n listings and some more, on a
// thread of the lowest priority, unless one is there or being made. The
// apply of a delta writes a new array of every listing; on a VM whose
// host takes back the pages a guest frees, writing it to new pages cost
// 8 s at 5M listings between the leader's publish and the follower's.
// A follower makes it in the minutes between two deltas, where it
// delays nothing. It holds the array's size (448 bytes a listing) until
// the next delta, whose apply would allocate as much: it raises the
// follower's steady memory, not its peak (the peak of a delta's apply and
// build holds that array either way). It is made only when it and the
// rest of a delta's read (deltaReadBytes a listing) fit under the memory
// limit beside the live heap.
func (v *Views) makeSpare(n int) {
	if v.spare.Load() != nil || !v.spareMaking.CompareAndSwap(false, true) {
		return
	}
	room := spareRoom(n)
	bytes := int64(room) * int64(unsafe.Sizeof(views.Listing{}))
	if live, limit := v.memory(); limit > 0 && limit != math.MaxInt64 && live+bytes+int64(n)*deltaReadBytes > limit {
		v.spareMaking.Store(false)
		v.log.Info("no spare for the next delta: it would not fit beside the heap", "live_mib", live>>20, "limit_mib", limit>>20, "spare_mib", bytes>>20)
		return
	}
	go lowprio.Run(func() {
		defer v.spareMaking.Store(false)
		start := time.Now()
		sp := replica.NewSpare(room)
		// Given to the next delta at once: one that comes while the
		// pages are written takes the array as it is (a second array
		// beside it would not fit where the spare was sized to).
		v.spare.Store(sp)
		written := sp.Write()
		v.log.Info("spare made for the next delta", "listings", room, "mib", bytes>>20, "took", time.Since(start).Round(time.Millisecond),
			"every_page", written)
	})
}

// collectAfterLoad collects what a full load replaced and left: for a
// fleet's edge, keeping the pages for the next refresh or delta of
// published's listings (collectKeeping); for a single edge, returning
// them to the system, so that RSS settles at the state's size
// (memory.CollectReplaced).
func (v *Views) collectAfterLoad(published *replica.Replica) {
	if v.source != nil && published != nil {
		v.collectKeeping(published.Len(), false)
		return
	}
	memory.CollectReplaced()
}

// collectKeeping collects what a build of n listings left and keeps the
// freed pages for the next build of a fleet's edge: a follower's delta
// or a leader's refresh, each a new listings array (the spare's size,
// spareRoom), a new replica's text and packs and new figures
// (memory.CollectKeeping). A follower makes the array ahead
// (spareAhead: makeSpare, after this).
func (v *Views) collectKeeping(n int, spareAhead bool) {
	v.keepRoom(n, int64(spareRoom(n))*int64(unsafe.Sizeof(views.Listing{})), spareAhead)
}

// spareRoom is the count of listings the room made ahead for the next
// delta holds, for a state of n: n and the listings a refresh may add.
func spareRoom(n int) int { return n + n/64 + 1024 }

// SpareListings returns the count of listings the room made ahead for
// the next delta holds (0: none; see makeSpare).
func (v *Views) SpareListings() int { return v.spare.Load().Cap() }

// deltaReadBytes is what a delta's read adds to a follower's heap a
// listing besides the listings' array: the new replica's text index,
// packs and digest (about 580 MB at 5M, measured in
// BenchmarkBuildAfterDelta).
const deltaReadBytes = 128

// reloadFits reports whether a full reload fits beside the published
// state under the memory limit: while it runs, the old state and a new
// one about as large are both live, so it needs about the live heap again.
// When it would not fit, the reload waits for a later run (the
// incremental refresh keeps figures current meanwhile) instead of pushing
// the process past its limit.
func (v *Views) reloadFits() bool {
	if v.secondStateFits() {
		return true
	}
	live, limit := v.memory()
	v.log.Warn("full reload waits: a second state would not fit under the memory limit; raise the limit or lower --cache-mb",
		"live_mib", live>>20, "needed_mib", 2*live>>20, "limit_mib", limit>>20)
	return false
}

// secondStateFits is reloadFits without its warning.
func (v *Views) secondStateFits() bool {
	live, limit := v.memory()
	return limit <= 0 || limit == math.MaxInt64 || 2*live <= limit
}

// NewViews returns the builder of the state published in pub.
func NewViews(db *analytics.Lazy, pub *views.Published[served.State], log *slog.Logger) *Views {
	return &Views{db: db, pub: pub, log: log, memory: memory.HeapNow, keepRoom: memory.CollectKeeping, figures: make(chan struct{}), changeWindow: DefaultChangeWindow}
}

// WaitFigures waits until the first state with figures is published, or
// ctx ends. A job that would compete with the first full load for
// ClickHouse and memory (the editions) waits on it, so that the listings
// and then the figures are served as soon as a restart allows.
func (v *Views) WaitFigures(ctx context.Context) error {
	select {
	case <-v.figures:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OnReloadBuild sets what a full reload runs before it builds the new
// figures, where two states are live and its memory peaks: the server
// drops its answer cache there, whose answers belong to the state being
// replaced. Set it before the jobs start.
func (v *Views) OnReloadBuild(f func()) { v.onBuild = f }

func (v *Views) nextGeneration() uint64 {
	if cur := v.pub.Load(); cur != nil {
		return cur.Replica.Info().Generation + 1
	}
	return 1
}

// FullJob returns the job that reloads every listing with its history and
// rebuilds every figure. After a restart it first publishes the bare
// replica, so listings are served while history and figures load. A build
// that fails or is cut short publishes nothing: the last good state keeps
// serving.
func (v *Views) FullJob(schedule string) Job {
	return Job{Name: "views", Schedule: schedule, Run: v.full}
}

func (v *Views) full(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.source != nil {
		if err := v.follow(ctx); !errors.Is(err, ErrNoSource) {
			return err
		}
		v.log.Debug("full load from ClickHouse: no fleet state to follow")
	}
	v.heavy.Lock()
	defer v.heavy.Unlock()
	conn, err := v.db.Conn(ctx)
	if err != nil {
		return err
	}
	gen := v.nextGeneration()
	cur := v.pub.Load()
	o := analytics.ReplicaOptions{Generation: gen, PartSize: v.db.PartSize(), Progress: v.progress(gen)}
	if cur != nil && !v.reloadFits() {
		v.waits.Add(1)
		return nil
	}
	// What a load frees is collected when the job ends: a single edge
	// returns the pages, so that RSS settles at the state's size; a
	// fleet's leader keeps them for its next refresh (collectAfterLoad).
	// The text index of the new state (none to build when it shares the
	// text of the state it replaces) once the replaced state is
	// collected: built before, it would add to the reload's peak, where
	// two states are live. Searches scan until then.
	var published *replica.Replica
	defer func() {
		if published != nil {
			v.indexText(published)
		}
	}()
	defer func() { v.collectAfterLoad(published) }()
	if cur != nil {
		// A reload reads listings and history in one pass over the parts,
		// sharing unchanged strings with the replica it replaces: the old
		// state and one new replica are all that coexist.
		o.History, o.Share = true, cur.Replica
		// Two states are live until the new one is published: the
		// collector runs closer to the live heap meanwhile, which costs
		// the job CPU and keeps the peak RSS near the two states.
		defer memory.LowerGC(memory.ReloadGCPercent)()
		full, err := analytics.LoadReplica(ctx, conn, o)
		if err != nil {
			return fmt.Errorf("generation %d: %w", gen, err)
		}
		if full, err = v.withChanges(ctx, conn, full); err != nil {
			return err
		}
		snapshots, err := analytics.CountSnapshots(ctx, conn)
		if err != nil {
			return err
		}
		if v.onBuild != nil {
			v.onBuild()
		}
		// The dropped answers and what the load left are garbage: one
		// collection now, so that the build, which runs without one
		// (memory.BuildGC), starts from the two states alone.
		memory.Collect()
		if err := v.publish(full, nil, snapshots, "full", memory.BuildGC); err != nil {
			return err
		}
		published = full
		return nil
	}
	// After a restart, the bare replica first: listings are served while
	// history and figures load. Nothing else is in memory yet, and a
	// heap that only grows is marked whole by every collection: the
	// collector runs by a memory goal meanwhile (memory.GrowGC).
	restore := func() {}
	o.Counted = func(n int) { restore = memory.GrowGC(n) }
	r, err := analytics.LoadReplica(ctx, conn, o)
	restore()
	if err != nil {
		return fmt.Errorf("replica generation %d: %w", gen, err)
	}
	v.pub.Publish(&served.State{Replica: r})
	v.log.Info("replica published", "generation", gen, "listings", r.Len(), "load_time", r.Info().LoadTime.Round(time.Millisecond))
	// Searches scan the text until its index is built: after the first
	// answer, so that it does not wait for the index.
	v.indexText(r)
	gen++
	defer memory.LowerGC(memory.ReloadGCPercent)() // the bare replica and the full one are both live
	start := time.Now()
	b := replica.BuilderFrom(r)
	info := r.Info()
	info.Generation, info.HasHistory = gen, true
	if err := analytics.AddHistory(ctx, conn, b, info, v.db.PartSize()); err != nil {
		return fmt.Errorf("history of generation %d: %w", gen, err)
	}
	snapshots, err := analytics.CountSnapshots(ctx, conn)
	if err != nil {
		return err
	}
	info.LoadTime += time.Since(start)
	info.LoadedAt = time.Now().UTC()
	full, err := v.withChanges(ctx, conn, b.Build(info))
	if err != nil {
		return err
	}
	if err := v.publish(full, nil, snapshots, "full", memory.BuildGC); err != nil {
		return err
	}
	published = full
	return nil
}

// progress returns the part-by-part report of a full load: a debug log
// line, and the test hook after the first part.
func (v *Views) progress(gen uint64) func(done, total int) {
	return func(done, total int) {
		v.log.Debug("load progress", "generation", gen, "parts", done, "of", total)
		if done == 1 && v.afterPart != nil {
			v.afterPart()
		}
	}
}

// Heavy returns the lock a full load holds: another job that reads a
// state of every listing holds it too, so that the two never hold their
// memory at once.
func (v *Views) Heavy() sync.Locker { return &v.heavy }

// ReloadsWaiting returns how many full reloads were put off because a
// second state would not have fit under the memory limit.
func (v *Views) ReloadsWaiting() int64 { return v.waits.Load() }

// RefreshJob returns the job that reads again only the listings whose
// metadata or newest reading changed since the last load, merges them into
// the replica, and rebuilds the figures. It waits for the first full build.
func (v *Views) RefreshJob(schedule string) Job {
	return Job{Name: "refresh", Schedule: schedule, Run: v.refresh}
}

func (v *Views) refresh(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.pub.Load()
	if cur == nil || cur.Figures == nil {
		return nil // the full build has not finished yet; it will cover this
	}
	if v.source != nil {
		if err := v.follow(ctx); !errors.Is(err, ErrNoSource) {
			return err
		}
	}
	conn, err := v.db.Conn(ctx)
	if err != nil {
		return err
	}
	r, changed, err := analytics.RefreshReplica(ctx, conn, cur.Replica, v.nextGeneration())
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if changed == 0 {
		return nil
	}
	log, err := analytics.RefreshChanges(ctx, conn, cur.Replica, r, cur.Replica.Changes(), v.changesFrom(r.Info()))
	if err != nil {
		return err
	}
	r = r.WithChanges(log)
	snapshots, err := analytics.CountSnapshots(ctx, conn)
	if err != nil {
		return err
	}
	// Built from the figures published: the merge says which listings
	// it replaced (replica.Merge), so the listing queries' sort orders
	// are merged as a follower's after a delta, not sorted again (at 5M
	// listings, 4.7–5.2 s against 5.8–6.6 s whole: BenchmarkBuildAfterDelta),
	// on cores the leader's followers, building beside it, share.
	if err := v.publish(r, cur.Figures, snapshots, "refresh", nil, "changed", changed); err != nil {
		return err
	}
	if v.source != nil {
		// A fleet's leader keeps the pages for its next refresh, which
		// its followers wait for (collectKeeping); a single edge
		// collects the replaced state as it allocates.
		v.collectKeeping(r.Len(), false)
	}
	v.indexText(r) // none to build when r shares the text of the replica it came from
	return nil
}

// publish builds r's figures and publishes them with r; prev, when not
// nil, is the figures of the state r was read from as a delta, which the
// build starts from (figures.BuildFrom); gc, when not nil, sets the
// collector for the build (memory.BuildGC) and returns what restores it.
func (v *Views) publish(r *replica.Replica, prev *figures.Figures, snapshots int64, kind string, gc func(n int) (restore func()), attrs ...any) error {
	defer v.startBuilding()() // a fleet state's read marked it already
	restore := func() {}
	if gc != nil {
		restore = gc(r.Len())
	}
	if v.onPublish != nil {
		// Handed out before its figures are built: a fleet's followers
		// take the state and build theirs beside the leader's, so that
		// the fleet's edges publish it within seconds of each other.
		v.onPublish(r, snapshots)
	}
	f := figures.BuildFrom(prev, r, snapshots)
	restore()
	v.pub.Publish(&served.State{Replica: r, Figures: f})
	v.tag = "" // a fleet state's publish sets it again
	v.tagNow.Store(new(string))
	v.once.Do(func() { close(v.figures) })
	_, took := f.BuiltAt()
	info := r.Info()
	phases := make([]any, 0, 2*len(f.BuildPhases()))
	for _, p := range f.BuildPhases() {
		phases = append(phases, p.Name, p.Took.Round(time.Millisecond))
	}
	v.log.Debug("views built", phases...)
	v.log.Info("views published", append([]any{"kind", kind, "generation", info.Generation, "listings", r.Len(),
		"load_time", info.LoadTime.Round(time.Millisecond), "build_time", took.Round(time.Millisecond), "merged", f.Merged()}, attrs...)...)
	return nil
}

// indexText builds the text index of r (none when r shares it with the
// replica it came from) and logs how long it took.
func (v *Views) indexText(r *replica.Replica) {
	start := time.Now()
	r.IndexText()
	if took := time.Since(start); took > 10*time.Millisecond {
		v.log.Info("text indexed", "generation", r.Info().Generation, "listings", r.Len(), "took", took.Round(time.Millisecond),
			"index_mib", r.TextIndexBytes()>>20)
	}
}
